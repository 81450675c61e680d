"""Workload 15: the team projection — 10 teams of 4 boards, one and two rounds before the end (issue 35).

``tests/data/team-rr/team-rr-9004.trf`` (a 10-team, 4-board round robin with the FIDE TEC server's values)
cut after round 8 (one round left: 5 matches, 20 board games, 3²⁰ board outcomes) and after round 7
(40 board games): timed as :func:`tracker.core.teams.projection.project_teams` alone (``repeats`` times:
the median and the spread, wall and CPU), with whether every team's best and worst rank is exact.  Then
the board stakes of the last round (:func:`tracker.core.teams.projection.board_stakes`: the projection
with each board's result fixed, 20 boards × 3 results).  Target: the last round exact in ≤ 1 s.
"""

from __future__ import annotations

import time

from bench.common import REPO, Result, Row, Sizes, fmt_ms, median, say, timed
from tracker.core.crosstable import Tournament
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
        result.raw = raw
        result.notes.append(
            "`tracker.core.teams.projection.project_teams` on team-rr-9004 (10 teams, 4 boards, TEC values) cut "
            "after round 8 and after round 7: every team's best and worst rank on match then game points, each "
            "with its scenario; then `board_stakes` (the projection with each pending board's result fixed)."
        )
    return result
