"""Workload 15: the team projection — 10 teams of 4 boards, one and two rounds before the end (issue 35).

``tests/data/team-rr/team-rr-9004.trf`` (a 10-team, 4-board round robin with the FIDE TEC server's values)
cut after round 8 (one round left: 5 matches, 20 board games, 3²⁰ board outcomes) and after round 7
(40 board games): timed as :func:`tracker.core.teams.projection.project_teams` alone (``repeats`` times:
the median and the spread, wall and CPU), with whether every team's best and worst rank is exact.  Then
the board stakes of the last round (:func:`tracker.core.teams.projection.board_stakes`: the projection
with each board's result fixed, 20 boards × 3 results).  Target: the last round exact in ≤ 1 s.

**Live**: a board result to a subscriber's update, the team event against the same event read as an
individual one.  One ``tracker up``; the file's opening and rounds 1–8 go into two tournaments, the team
event as the file says and a copy without its teams (the same 40 players, games and results: an individual
round robin's standings); a subscriber follows both (full updates); then the round-9 boards, recorded and
corrected back and forth, alternate between the two, one every 50 ms: submit → the update with the ack's
seq at the subscriber, p50 and p99 per kind, the ratio team / individual.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time

import msgspec
from websockets.asyncio.client import ClientConnection, connect

from bench.common import REPO, Result, Row, Sizes, fmt_ms, median, percentile, python, say, timed
from bench.procs import kill_all, start_tracker
from tracker.core.crosstable import Tournament
from tracker.core.events import Event, ResultCorrected, ResultRecorded, TournamentOpened, encode_event
from tracker.core.teams.projection import board_stakes, project_teams
from tracker.core.teams.setup import TeamSetup
from tracker.formats import state_from
from tracker.formats.files import read_file
from tracker.formats.trf.read import team_setup_of

FILE = REPO / "tests" / "data" / "team-rr" / "team-rr-9004.trf"
ROUNDS = 9
TARGET_MS = 1000.0


def state_after(last: int) -> tuple[Tournament, TeamSetup]:
    tf = read_file(str(FILE)).until_round(last)
    setup = team_setup_of(tf, str(FILE))
    assert setup is not None
    return state_from(tf), setup


def time_projection(last: int, repeats: int) -> dict[str, object]:
    t, setup = state_after(last)
    wall: list[float] = []
    cpu: list[float] = []
    exact = True
    games = 0
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        p = project_teams(t, setup)
        wall.append((time.perf_counter() - w0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        exact, games = exact and p.exact, p.remaining
    return {"wall_ms": wall, "cpu_ms": cpu, "exact": exact, "games": games}


def time_stakes(last: int, repeats: int) -> dict[str, object]:
    t, setup = state_after(last)
    wall: list[float] = []
    exact = True
    boards = 0
    for _ in range(repeats):
        w0 = time.perf_counter()
        stakes = board_stakes(t, setup)
        wall.append((time.perf_counter() - w0) * 1000)
        exact = exact and all(o.exact for s in stakes for o in s.outcomes)
        boards = len(stakes)
    return {"wall_ms": wall, "exact": exact, "boards": boards}


TOKEN = "bench-teams-token-0123"
LIVE_TARGET = 2.0  # team p99 ≤ 2 × individual p99


async def _submit(ws: ClientConnection, event: Event) -> int:
    await ws.send(json.dumps({"type": "submit", "token": TOKEN, "event": json.loads(encode_event(event))}))
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), timeout=30))
        if message.get("type") == "error":
            raise RuntimeError(f"the server refused {event.id}: {message}")
        if message.get("id") == event.id and message.get("type") in ("ack", "rejected"):
            assert message["type"] == "ack", message
            seq: int = message["seq"]
            return seq


async def _live(url: str, samples: int) -> dict[str, list[float]]:
    tf = read_file(str(FILE))
    team_id = "bench-teams-team"
    solo_id = "bench-teams-solo"
    opened = msgspec.structs.replace(tf.opened, tournament=team_id, id=f"{team_id}/open")
    solo: TournamentOpened = msgspec.structs.replace(
        tf.opened, tournament=solo_id, id=f"{solo_id}/open", teams=msgspec.UNSET
    )
    board_games = [e for e in tf.events if isinstance(e, ResultRecorded)]
    before = [e for e in board_games if e.round < ROUNDS]
    last = [e for e in board_games if e.round == ROUNDS]
    arrived: dict[tuple[str, int], float] = {}
    got = asyncio.Event()

    async def follow(ws: ClientConnection) -> None:
        async for raw in ws:
            message = json.loads(raw)
            if message.get("type") in ("update", "snapshot") and "seq" in message:
                arrived[(message["tournament"], message["seq"])] = time.perf_counter()
                got.set()

    async with connect(url, max_size=None) as arbiter, connect(url, max_size=None) as viewer:
        for tid, first in ((team_id, opened), (solo_id, solo)):
            await _submit(arbiter, first)
            for e in before:
                await _submit(arbiter, msgspec.structs.replace(e, tournament=tid, id=f"{tid}/{e.id}"))
        for tid in (team_id, solo_id):
            await viewer.send(json.dumps({"type": "subscribe", "tournament": tid}))
        task = asyncio.create_task(follow(viewer))
        await asyncio.sleep(0.5)
        spent: dict[str, list[float]] = {"team": [], "individual": []}
        k = 0
        while min(len(v) for v in spent.values()) < samples:
            g = last[k // 2 % len(last)]
            lap = k // (2 * len(last))
            for kind, tid in (("team", team_id), ("individual", solo_id)):
                result = g.result if lap % 2 == 0 else ("0-1" if g.result == "1-0" else "1-0")
                event: Event = (
                    ResultRecorded(f"{tid}/live/{k}", tid, g.round, g.white, g.black, result)
                    if lap == 0
                    else ResultCorrected(f"{tid}/live/{k}", tid, g.round, g.white, g.black, result)
                )
                sent = time.perf_counter()
                seq = await _submit(arbiter, event)
                deadline = time.perf_counter() + 10
                while (tid, seq) not in arrived and time.perf_counter() < deadline:
                    got.clear()
                    await asyncio.wait_for(got.wait(), timeout=10)
                spent[kind].append(arrived[(tid, seq)] - sent)
                await asyncio.sleep(0.05)
            k += 2
        task.cancel()
    return spent


def time_live(samples: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory(prefix="tracker-bench-teams-") as data:
        up, port = start_tracker(python(), data, TOKEN, stock=True)
        try:
            return asyncio.run(_live(f"ws://127.0.0.1:{port}/ws", samples))
        finally:
            up.stop()
            kill_all([up])


def run(sizes: Sizes) -> Result:
    result = Result("teams", "15. team projection: 10 teams of 4 boards, the last rounds")
    repeats = max(3, sizes.projection_repeats)
    with timed(result):
        raw: dict[str, object] = {}
        for left in (1, 2):
            fig = time_projection(ROUNDS - left, repeats)
            raw[f"project_{left}"] = fig
            wall, cpu = fig["wall_ms"], fig["cpu_ms"]
            assert isinstance(wall, list) and isinstance(cpu, list)
            kind = "every rank exact" if fig["exact"] else "some ranks are bounds"
            say(f"  team projection, {left} round(s) left: median {median(wall):.1f} ms ({kind})")
            result.rows.append(
                Row(
                    workload=f"team projection, {left} round{'s' if left > 1 else ''} left",
                    size=f"10 teams × 4 boards, {fig['games']} board games left ({kind}, each with its scenario)",
                    measured=(
                        f"median {fmt_ms(median(wall))} (min {fmt_ms(min(wall))}, max {fmt_ms(max(wall))}; "
                        f"CPU median {fmt_ms(median(cpu))}; {len(wall)} runs)"
                    ),
                    baseline="—",
                    ratio="—",
                    target=f"exact in ≤ {TARGET_MS / 1000:g} s" if left == 1 else "reported",
                    met=(bool(fig["exact"]) and max(wall) <= TARGET_MS) if left == 1 else None,
                )
            )
        stakes = time_stakes(ROUNDS - 1, max(1, repeats // 2))
        raw["stakes_1"] = stakes
        wall = stakes["wall_ms"]
        assert isinstance(wall, list)
        say(f"  board stakes, 1 round left: median {median(wall):.0f} ms")
        result.rows.append(
            Row(
                workload="board stakes, 1 round left",
                size=f"{stakes['boards']} boards × 3 results ({'exact' if stakes['exact'] else 'some bounds'})",
                measured=f"median {fmt_ms(median(wall))} ({len(wall)} runs)",
                baseline="—",
                ratio="—",
                target="reported",
                met=None,
            )
        )
        live = time_live(max(60, sizes.projection_repeats * 20))
        raw["live"] = live
        team99, solo99 = percentile(live["team"], 99) * 1000, percentile(live["individual"], 99) * 1000
        say(f"  board result → subscriber: team p99 {team99:.1f} ms, individual p99 {solo99:.1f} ms")
        result.rows.append(
            Row(
                workload="board result → subscriber, team event vs the same read as individual",
                size=f"team-rr-9004 round 9, {len(live['team'])} results each, alternating, one every 50 ms",
                measured=(
                    f"team p50 {fmt_ms(median(live['team']) * 1000)}, p99 {fmt_ms(team99)}; individual p50 "
                    f"{fmt_ms(median(live['individual']) * 1000)}, p99 {fmt_ms(solo99)}"
                ),
                baseline=f"individual p99 {fmt_ms(solo99)}",
                ratio=f"{team99 / solo99:.2f}×",
                target=f"≤ {LIVE_TARGET:g}× the individual p99",
                met=team99 <= LIVE_TARGET * solo99,
            )
        )
        result.raw = raw
        result.notes.append(
            "`tracker.core.teams.projection.project_teams` on team-rr-9004 (10 teams, 4 boards, TEC values) cut "
            "after round 8 and after round 7: every team's best and worst rank on match then game points, each "
            "with its scenario; then `board_stakes` (the projection with each pending board's result fixed)."
        )
        result.notes.append(
            "Live: one `tracker up`, the file's rounds 1–8 in two tournaments (the team event, and a copy without "
            "its teams: the same players and games as an individual round robin), one subscriber on both (full "
            "updates); the round-9 board results recorded, then corrected back and forth, alternating between "
            "the two, one every 50 ms: submit → the update with the ack's seq at the subscriber."
        )
    return result
