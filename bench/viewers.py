"""Workload 11: what viewers cost the arbiter — the ack with 1,000 subscribers against 1, and a big tie.

**Ack with an audience.**  ``tracker up`` with one 10-player tournament; an
arbiter corrects a game back and forth, a result every half second, and
times submit → ack.  Alternated: with one subscriber, then with 1,000
(one :mod:`bench.fanout_client` process holding the connections, reading
every update).  Since the ack is sent once the event is durable and before
the fan-out (:mod:`tracker.embedded.processor`), the audience should not
show in the ack; the fan-out's own latency is the server's
``tracker_fanout_latency_seconds`` histogram.

**A big tie.**  In-process: a 500-player round robin after two all-drawn
rounds (everyone on the same points, most of them tied on everything), and
one result applied (fold, standings, diff, summary), twenty times.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from bench.common import Result, Row, Sizes, median, percentile, python, say
from bench.procs import Proc, kill_all, start, start_tracker
from tracker.core.events import Event, Player, ResultCorrected, ResultRecorded, TournamentOpened, encode_event

TOKEN = "bench-viewers-token-0123"
TID = "bench-audience"
TARGET_ACK = 1.5  # ack p50 with 1,000 subscribers ≤ 1.5 × with 1
TARGET_TIE = 100.0  # ms per result of the 500-player tie


def _berger(n: int) -> list[list[tuple[int, int]]]:
    """Rounds of an ``n``-player (even) round robin by the circle method."""
    ring = list(range(2, n + 1))
    rounds = []
    for r in range(n - 1):
        pairs = [(1, ring[0]) if r % 2 == 0 else (ring[0], 1)]
        pairs += [(ring[k], ring[-k]) for k in range(1, n // 2)]
        rounds.append(pairs)
        ring = ring[-1:] + ring[:-1]
    return rounds


def _opened(tid: str, n: int) -> TournamentOpened:
    return TournamentOpened(
        f"{tid}/open", tid, tid, tuple(Player(start_no=k, name=f"Player {k}") for k in range(1, n + 1))
    )


async def _acks(url: str, seconds: float, tag: str) -> list[float]:
    spent: list[float] = []
    pairs = _berger(10)[0]
    w, b = pairs[0]
    async with connect(url) as ws:
        k = 0
        until = time.perf_counter() + seconds
        while time.perf_counter() < until:
            k += 1
            event = ResultCorrected(f"{tag}/{k}", TID, 1, w, b, "0-1" if k % 2 else "1-0")
            sent = time.perf_counter()
            await ws.send(json.dumps({"type": "submit", "token": TOKEN, "event": json.loads(encode_event(event))}))
            await _reply(ws, event.id)
            spent.append(time.perf_counter() - sent)
            await asyncio.sleep(max(0.0, 0.5 - (time.perf_counter() - sent)))
    return spent


async def _reply(ws: ClientConnection, event_id: str) -> None:
    while True:
        message = json.loads(await ws.recv())
        if message.get("id") == event_id and message.get("type") in ("ack", "rejected"):
            return


async def _open(url: str) -> None:
    events: list[Event] = [_opened(TID, 10)]
    events += [ResultRecorded(f"{TID}/r1/{w}-{b}", TID, 1, w, b, "1-0") for w, b in _berger(10)[0]]
    async with connect(url) as ws:
        for event in events:
            await ws.send(json.dumps({"type": "submit", "token": TOKEN, "event": json.loads(encode_event(event))}))
            await _reply(ws, event.id)


def _audience(url: str, count: int, updates: int) -> Proc:
    client = start(
        [python(), "-m", "bench.fanout_client", url, TID, str(count), str(updates), "deflate", '{"updates": "delta"}'],
        f"{count} subscribers",
        stdin=True,
    )
    client.expect(r"^ready", timeout=300)
    return client


def tie_ms(n: int = 500, results: int = 20) -> list[float]:
    from tracker.core.apply import apply, fold
    from tracker.core.standings import standings

    rounds = _berger(n)
    events: list[Event] = [_opened("bench-tie", n)]
    for r, pairs in enumerate(rounds[:2], start=1):
        events += [ResultRecorded(f"t/{r}/{w}-{b}", "bench-tie", r, w, b, "1/2-1/2") for w, b in pairs]
    t = fold(events)
    assert t is not None
    before = standings(t)
    spent = []
    for w, b in rounds[2][:results]:
        started = time.perf_counter()
        t, update = apply(t, ResultRecorded(f"t/3/{w}-{b}", "bench-tie", 3, w, b, "1-0"), before)
        spent.append((time.perf_counter() - started) * 1000)
        assert update is not None
        before = update.standings
    return spent


def run(sizes: Sizes) -> Result:
    result = Result("viewers", "11. viewers: the arbiter's ack with 1,000 subscribers, and a 500-player tie")
    started = time.perf_counter()
    seconds = sizes.boards_seconds / 2
    raw: dict[str, Any] = {"seconds": seconds}
    procs: list[Proc] = []
    try:
        with tempfile.TemporaryDirectory(prefix="bench-viewers-") as data:
            up, port = start_tracker(python(), data, TOKEN, stock=True)
            procs.append(up)
            url = f"ws://127.0.0.1:{port}/ws"
            asyncio.run(_open(url))
            alone, crowd = [], []
            for k in range(2):
                one = _audience(url, 1, 10_000)
                procs.append(one)
                alone += asyncio.run(_acks(url, seconds, f"one-{k}"))
                one.send("quit\n")
                many = _audience(url, 1000, 10_000)
                procs.append(many)
                say(f"  viewers: 1,000 subscribers connected (round {k + 1})")
                crowd += asyncio.run(_acks(url, seconds, f"many-{k}"))
                many.send("quit\n")
            raw["alone"], raw["crowd"] = alone, crowd
    finally:
        kill_all(procs)
    raw["tie_ms"] = tie_ms()
    a, c = median(raw["alone"]) * 1000, median(raw["crowd"]) * 1000
    ratio = c / a if a else float("inf")
    result.rows.append(
        Row(
            "embedded: the arbiter's ack with 1,000 delta subscribers reading every update",
            f"{len(raw['crowd'])} acks, a result every 0.5 s",
            f"p50 {c:.1f} ms, p99 {percentile(raw['crowd'], 99) * 1000:.1f} ms",
            f"with 1 subscriber: p50 {a:.1f} ms, p99 {percentile(raw['alone'], 99) * 1000:.1f} ms",
            f"{ratio:.2f}×",
            f"p50 ≤ {TARGET_ACK}×",
            ratio <= TARGET_ACK,
        )
    )
    tie = median(raw["tie_ms"])
    result.rows.append(
        Row(
            "core: one result of a 500-player round robin after two all-drawn rounds",
            f"{len(raw['tie_ms'])} results, fold + standings + diff + summary",
            f"{tie:.1f} ms (median; max {max(raw['tie_ms']):.1f} ms)",
            "—",
            "—",
            f"< {TARGET_TIE:.0f} ms",
            tie < TARGET_TIE,
        )
    )
    result.raw = raw
    result.seconds = time.perf_counter() - started
    return result
