"""Workload 7: the arbiter projection before the last round of a 16-player round robin.

A 16-player single round robin (Berger pairings, seeded random results)
with every round but the last recorded (8 games left), then the last two
(16 games, 3¹⁶ ≈ 43 million outcomes: the branch-and-bound solver proves
every player's rank and KS extremes, each with a scenario; target ≤ 2 s),
then three (24 games: reported).  Timed ``repeats`` times on the same
state; the median and the spread are reported, with whether every player
extreme is exact and how many games' per-outcome effects are.

Then what live projections cost everyone else: a real ``tracker up``, a
20-player round robin with all but the last round recorded (10 games left:
an exact projection of about two seconds), and an arbiter submitting a
correction every quarter second.  Subscribed *with* the token, every
submit schedules a projection for that arbiter (the gateway runs it in a
worker process); subscribed without, none runs.  The two modes alternate in
one run; the figure is the submit→ack latency.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time

from websockets.asyncio.client import connect

from bench.common import Result, Row, Sizes, fmt_ms, median, percentile, python, say, timed
from bench.procs import kill_all, start_tracker
from bench.scenario import tournament
from tracker.core.apply import step
from tracker.core.crosstable import Tournament
from tracker.core.events import ResultCorrected, encode_event
from tracker.core.projection import project

PLAYERS = 16
LIVE_PLAYERS = 20
TOKEN = "bench-projection-token"
SUBMITS = 16
#: Seconds an arbiter phase waits past its submits for its first projection (a worker spawning under load).
PROJECTION_WAIT = 90.0


def state_before(rounds_left: int, seed: int = 21) -> Tournament:
    opened, results = tournament("projection-rr16", PLAYERS, seed)
    last = max(e.round for e in results)
    t, _ = step(None, opened)
    for event in results:
        if event.round <= last - rounds_left:
            t, _ = step(t, event)
    return t


def time_projection(t: Tournament, repeats: int) -> tuple[list[float], bool, int, str]:
    """Milliseconds per projection, whether every player extreme is exact, games left, per-game exactness."""
    spent = []
    exact = False
    games = len(t.pending_pairs())
    per_game = ""
    for _ in range(repeats):
        t0 = time.perf_counter()
        p = project(t)
        spent.append(1000 * (time.perf_counter() - t0))
        exact = p.exact
        per_game = f"{sum(g.exact for g in p.games)}/{len(p.games)} games' effects exact"
    return spent, exact, games, per_game


async def _acks_while(url: str, tid: str, arbiter: bool, base: ResultCorrected, k0: int) -> tuple[list[float], int]:
    """Submit→ack milliseconds of ``SUBMITS`` corrections, subscribed as an arbiter (projections) or not.

    Also returns how many projections the connection received meanwhile.
    """
    spent: list[float] = []
    projections = 0
    current = base.result
    async with connect(url, max_size=None, compression=None) as ws:
        subscribe = {"type": "subscribe", "tournament": tid, **({"token": TOKEN} if arbiter else {})}
        await ws.send(json.dumps(subscribe))
        for k in range(SUBMITS):
            await asyncio.sleep(0.25)
            current = next(r for r in ("1-0", "0-1", "1/2-1/2") if r != current)
            event = ResultCorrected(f"{tid}/fix-{k0 + k}", tid, base.round, base.white, base.black, current)
            started = time.perf_counter()
            await ws.send(json.dumps({"type": "submit", "token": TOKEN, "event": json.loads(encode_event(event))}))
            while True:
                reply = json.loads(await ws.recv())
                projections += reply["type"] == "projection"
                if reply.get("id") == event.id and reply["type"] in ("ack", "rejected"):
                    break
            assert reply["type"] == "ack", reply
            spent.append(1000 * (time.perf_counter() - started))
        if arbiter and not projections:
            # under load the first projection (a worker process to spawn, then ~2 s of search) can outlast the
            # submits: the phase is about acks *while* projections run, so wait (bounded) until one has arrived
            async with asyncio.timeout(PROJECTION_WAIT):
                while not projections:
                    projections += json.loads(await ws.recv())["type"] == "projection"
    return spent, projections


async def _live(port: int) -> dict[str, list[float]]:
    """Latencies per mode, and (under ``"projected"``) how many projections arrived in each phase."""
    url = f"ws://127.0.0.1:{port}/ws"
    opened, results = tournament("projection-live", LIVE_PLAYERS, 5)
    last = max(e.round for e in results)
    recorded = [e for e in results if e.round < last]
    async with connect(url, max_size=None, compression=None) as ws:
        for event in [opened, *recorded]:
            await ws.send(json.dumps({"type": "submit", "token": TOKEN, "event": json.loads(encode_event(event))}))
        acks = 0
        while acks < 1 + len(recorded):
            acks += json.loads(await ws.recv())["type"] == "ack"
    base = recorded[-1]
    game = ResultCorrected("-", opened.tournament, base.round, base.white, base.black, base.result)
    latencies: dict[str, list[float]] = {"projections": [], "none": [], "projected": []}
    for turn in range(4):  # alternate: none, projections, none, projections
        mode = "projections" if turn % 2 else "none"
        spent, projected = await _acks_while(url, opened.tournament, mode == "projections", game, turn * SUBMITS)
        latencies[mode] += spent
        latencies["projected"].append(projected)
        await asyncio.sleep(2.5)  # let a projection under way finish before the next phase
    return latencies


def live_cost(result: Result) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory(prefix="bench-projection-") as data:
        proc, port = start_tracker(python(), data, TOKEN, stock=True)
        try:
            latencies = asyncio.run(_live(port))
        finally:
            kill_all([proc])
    with_p, without = latencies["projections"], latencies["none"]
    projected = int(sum(latencies["projected"][1::2]))
    assert projected > 0 and not any(latencies["projected"][0::2]), latencies["projected"]
    say(f"  projection: acks while projections run p50 {median(with_p):.1f} ms, none running {median(without):.1f} ms")
    result.rows.append(
        Row(
            workload="acks while arbiter projections run (10 games open)",
            size=(
                f"{len(with_p)} corrections, 1 every 0.25 s, {LIVE_PLAYERS}-player RR, last round open; "
                f"{projected} projections received meanwhile"
            ),
            measured=f"submit→ack p50 {fmt_ms(median(with_p))}, p99 {fmt_ms(percentile(with_p, 99))}",
            baseline=(f"no projection running: p50 {fmt_ms(median(without))}, p99 {fmt_ms(percentile(without, 99))}"),
            ratio=f"p50 {median(with_p) / median(without):.1f}×",
            target="reported",
            met=None,
        )
    )
    return latencies


def run(sizes: Sizes) -> Result:
    result = Result("projection", "7. projection: last round of a 16-player round robin")
    with timed(result):
        raw = {}
        for rounds_left in (1, 2, 3):
            t = state_before(rounds_left)
            spent, exact, games, per_game = time_projection(t, sizes.projection_repeats if rounds_left < 3 else 1)
            kind = "every extreme exact" if exact else "some extremes are bounds"
            say(f"  projection: {games} games left: median {median(spent):.0f} ms ({kind}; {per_game})")
            raw[rounds_left] = {"ms": spent, "exact": exact, "games": games, "per_game": per_game}
            target = rounds_left == 2
            result.rows.append(
                Row(
                    workload=f"projection, 16 players, {rounds_left} round{'s' if rounds_left > 1 else ''} left",
                    size=f"{games} games left (3^{games} outcomes; {kind}, each with its scenario; {per_game})",
                    measured=(
                        f"median {fmt_ms(median(spent))} (min {fmt_ms(min(spent))}, max {fmt_ms(max(spent))}, "
                        f"{len(spent)} run{'s' if len(spent) > 1 else ''})"
                    ),
                    baseline="—",
                    ratio="—",
                    target="exact in ≤ 2 s" if target else "reported",
                    met=(exact and max(spent) <= 2000) if target else None,
                )
            )
        raw["live"] = live_cost(result)
        result.raw = raw
        result.notes.append(
            "`tracker.core.projection.project` on the live state of a 16-player round robin, all rounds but the "
            "last (or the last two) recorded. The gateway runs it in a worker process "
            "(`tracker/gateway/projector.py`), debounced, for arbiters only."
        )
    return result
