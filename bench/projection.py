"""Workload 7: the arbiter projection and the spectators' stakes in the last rounds of a round robin.

A 16-player single round robin (Berger pairings, seeded random results)
with every round but the last recorded (8 games left), then the last two
(16 games), timed as ``project`` alone (``repeats`` times: the median and the
spread), with whether every player extreme is exact and how many games'
per-outcome effects are.

Then the issue's cases, three rounds before the end: 16 players (24 games
open, 3²⁴ outcomes) and 20 players (30 games): the projection *and* the
stakes of every pending game from one search
(:func:`tracker.core.projection.analysis.analyse`), whether each is exact,
and the next seq — one more result recorded — with the first answer's
memory reused.  Targets (issue 32): exact in ≤ 1 s (16 players) and ≤ 3 s
(20 players), every extreme with its scenario, the stakes in the same time.

Then the same cases live (:mod:`bench.projection_live`): submit → the
arbiter's exact projection and a spectator's exact stakes through a real
``tracker up``, p99 over a round (target ≤ 3 s).

Then what live projections cost everyone else: a real ``tracker up``, a
20-player round robin with all but the last round recorded (10 games left),
and an arbiter submitting a correction every quarter second.  Subscribed
*with* the token, every submit schedules a projection for that arbiter (the
gateway runs it in a worker process); subscribed without, none runs.  The
two modes alternate in one run; the figure is the submit→ack latency.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time

from websockets.asyncio.client import connect

from bench.common import Result, Row, Sizes, fmt_ms, median, percentile, python, say, timed
from bench.procs import kill_all, start_tracker
from bench.projection_live import live_exact
from bench.scenario import tournament
from tracker.core.apply import step
from tracker.core.crosstable import Tournament
from tracker.core.events import ResultCorrected, encode_event
from tracker.core.projection import project
from tracker.core.projection.analysis import analyse

PLAYERS = 16
LIVE_PLAYERS = 20
TOKEN = "bench-projection-token"
SUBMITS = 16
#: Seconds an arbiter phase waits past its submits for its first projection (a worker spawning under load).
PROJECTION_WAIT = 90.0


def state_before(rounds_left: int, seed: int = 21, players: int = PLAYERS) -> Tournament:
    return states_before(rounds_left, seed, players)[0]


def states_before(rounds_left: int, seed: int = 21, players: int = PLAYERS) -> tuple[Tournament, Tournament]:
    """The state with ``rounds_left`` rounds to play, and the same with the first of those games recorded."""
    opened, results = tournament(f"projection-rr{players}", players, seed)
    last = max(e.round for e in results)
    recorded = [e for e in results if e.round <= last - rounds_left]
    states = []
    for events in (recorded, [*recorded, next(e for e in results if e.round == last - rounds_left + 1)]):
        t, _ = step(None, opened)  # step changes the state in place: one fold per state
        for event in events:
            t, _ = step(t, event)
        states.append(t)
    return states[0], states[1]


def time_analysis(players: int, repeats: int) -> dict[str, object]:
    """Seconds of one search for the projection and the stakes, fresh and with the previous seq's memory."""
    t, after = states_before(3, players=players)
    fresh: list[float] = []
    reused: list[float] = []
    first = second = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        first = analyse(t)
        fresh.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        second = analyse(after, previous=first.memory)
        reused.append(time.perf_counter() - t0)
    assert first is not None and second is not None and second.reused
    return {
        "games": len(t.pending_pairs()),
        "fresh_s": fresh,
        "reused_s": reused,
        "extremes_exact": all(r.exact for p in first.projection.players for r in p.reached.values()),
        "projection_exact": first.projection.exact,
        "stakes_exact": first.stakes.exact,
        "stakes_games": len(first.stakes.games),
        "next_exact": second.projection.exact and second.stakes.exact,
    }


def analysis_rows(result: Result, sizes: Sizes) -> dict[str, object]:
    raw: dict[str, object] = {}
    for players, target in ((16, 1.0), (20, 3.0)):
        found = time_analysis(players, max(1, sizes.projection_repeats // 2))
        raw[f"analysis_{players}"] = found
        fresh, reused = found["fresh_s"], found["reused_s"]
        assert isinstance(fresh, list) and isinstance(reused, list)
        exact = bool(found["projection_exact"] and found["stakes_exact"])
        kind = (
            f"extremes {'exact' if found['projection_exact'] else 'partly bounds'}, each with its scenario; "
            f"stakes of {found['stakes_games']} games {'exact' if found['stakes_exact'] else 'partly unknown'}"
        )
        say(f"  projection+stakes: {players} players, {found['games']} games: median {median(fresh):.2f} s ({kind})")
        result.rows.append(
            Row(
                workload=f"projection + stakes, {players} players, 3 rounds left (one search)",
                size=f"{found['games']} games left (3^{found['games']} outcomes; {kind})",
                measured=(
                    f"median {median(fresh):.2f} s (min {min(fresh):.2f}, max {max(fresh):.2f}, {len(fresh)} runs)"
                ),
                baseline=(
                    f"next seq, one result later, previous answer reused: median {median(reused):.2f} s "
                    f"({'exact' if found['next_exact'] else 'not all exact'})"
                ),
                ratio=f"{median(fresh) / median(reused):.1f}× with reuse",
                target=f"exact in ≤ {target:g} s",
                met=exact and max(fresh) <= target,
            )
        )
    return raw


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
    result = Result("projection", "7. projection and stakes: the last rounds of a round robin")
    with timed(result):
        raw: dict[str, object] = {}
        for rounds_left in (1, 2):
            t = state_before(rounds_left)
            spent, exact, games, per_game = time_projection(t, sizes.projection_repeats)
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
        raw.update(analysis_rows(result, sizes))
        raw["live_exact"] = {players: live_exact(result, players) for players in (16, 20)}
        raw["live"] = live_cost(result)
        result.raw = raw
        result.notes.append(
            "`tracker.core.projection.project` on the live state of a 16-player round robin, all rounds but the "
            "last (or the last two) recorded; then `tracker.core.projection.analysis.analyse` (the projection and "
            "the stakes of every pending game from one search) three rounds before the end, fresh and for the next "
            "seq with the previous answer's memory. The gateway runs them in worker processes, debounced."
        )
    return result
