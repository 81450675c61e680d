"""Workload 7, live: submit → the arbiter's exact projection and a spectator's exact stakes (issue 32).

A real ``tracker up`` with its default limits, one round robin (16 or 20
players, seeded random results) with every round but the last three
recorded, an arbiter subscribed with the token (projections) and a
spectator subscribed with ``"stakes": true``.  Then the first of the three
rounds, one result at a time: each submit waits until the arbiter has an
exact projection and the spectator exact stakes of that seq (or a minute),
and the figure is the time from the submit to each — the p99 over the whole
round (the target: ≤ 3 s).  Preliminary bounds and projections cut short
do not count; a seq that never got an exact answer counts as a miss.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from bench.common import Result, Row, fmt_ms, median, percentile, python, say
from bench.procs import kill_all, start_tracker
from bench.scenario import tournament
from tracker.core.events import encode_event

TOKEN = "bench-projection-live-token"
#: Seconds one result may wait for its exact projection and stakes before it counts as a miss.
PATIENCE = 60.0
TARGET_S = 3.0


async def _exact(ws: ClientConnection, kind: str, seq: int, until: float) -> float | None:
    """When (perf_counter) ``ws`` got an exact ``kind`` message of ``seq`` or later; ``None``: not by ``until``."""
    try:
        async with asyncio.timeout(max(0.0, until - time.perf_counter())):
            while True:
                message = json.loads(await ws.recv())
                if message["type"] != kind or message.get("seq", -1) < seq:
                    continue
                if message.get("exact") and not message.get("preliminary") and "cut_short" not in message:
                    return time.perf_counter()
    except TimeoutError:
        return None


async def _submit(ws: ClientConnection, event: Any) -> int:
    await ws.send(json.dumps({"type": "submit", "token": TOKEN, "event": json.loads(encode_event(event))}))
    while True:
        reply = json.loads(await ws.recv())
        if reply.get("id") == event.id:
            assert reply["type"] == "ack", reply
            return int(reply["seq"])


async def _round(port: int, players: int) -> dict[str, list[float | None]]:
    url = f"ws://127.0.0.1:{port}/ws"
    opened, results = tournament(f"exact-live-{players}", players, 21)
    last = max(e.round for e in results)
    recorded = [e for e in results if e.round <= last - 3]
    played = [e for e in results if e.round == last - 2]
    async with connect(url, max_size=None, compression=None) as feeder:
        for event in [opened, *recorded]:
            await _submit(feeder, event)
        async with (
            connect(url, max_size=None, compression=None) as arbiter,
            connect(url, max_size=None, compression=None) as spectator,
        ):
            tid = opened.tournament
            await arbiter.send(json.dumps({"type": "subscribe", "tournament": tid, "token": TOKEN}))
            await spectator.send(json.dumps({"type": "subscribe", "tournament": tid, "stakes": True}))
            seq = await _submit(feeder, played[0])  # the first result: workers spawn, nothing is measured
            until = time.perf_counter() + 3 * PATIENCE
            await asyncio.gather(_exact(arbiter, "projection", seq, until), _exact(spectator, "stakes", seq, until))
            spent: dict[str, list[float | None]] = {"projection": [], "stakes": []}
            for event in played[1:]:
                started = time.perf_counter()
                seq = await _submit(feeder, event)
                until = started + PATIENCE
                got = await asyncio.gather(
                    _exact(arbiter, "projection", seq, until), _exact(spectator, "stakes", seq, until)
                )
                for kind, at in zip(("projection", "stakes"), got, strict=True):
                    spent[kind].append(None if at is None else at - started)
    return spent


def live_exact(result: Result, players: int) -> dict[str, list[float | None]]:
    """One row per field size: submit → exact projection and stakes, p99 over a round."""
    with tempfile.TemporaryDirectory(prefix="bench-projection-live-") as data:
        proc, port = start_tracker(python(), data, TOKEN, stock=True)
        try:
            spent = asyncio.run(_round(port, players))
        finally:
            kill_all([proc])
    figures = []
    met = True
    for kind in ("projection", "stakes"):
        got = [s for s in spent[kind] if s is not None]
        missed = len(spent[kind]) - len(got)
        p99 = percentile(got, 99) if got else float("inf")
        met = met and not missed and p99 <= TARGET_S
        figures.append(
            f"{kind} p50 {fmt_ms(1000 * median(got)) if got else '—'}, p99 {fmt_ms(1000 * p99) if got else '—'}"
            + (f", {missed} missed" if missed else "")
        )
        say(f"  projection live, {players} players: {figures[-1]}")
    n = len(spent["projection"])
    result.rows.append(
        Row(
            workload=f"live: submit → exact projection and stakes, {players} players, 3 rounds left",
            size=(
                f"{n} results of the third-last round, one after another (its first, while the worker processes "
                f"start, not counted), default limits; {players * 3 // 2} games open at the round's start"
            ),
            measured="; ".join(figures),
            baseline="—",
            ratio="—",
            target=f"both exact in ≤ {TARGET_S:g} s (p99 over the round)",
            met=met,
        )
    )
    return spent
