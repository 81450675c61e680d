"""Team tie-breaks against ``tiebreak-core`` (PyPI), a second reference where it covers them (issue 35).

tiebreak-core 1.2 computes C.07's team criteria from match records.  Where its reading and the FIDE TEC
server's differ, the server stands (tests/formats/test_team_real_files.py): its Koya line counts every
round (``total_rounds × win / 2``), the server the matches a team can play (an odd team count has one bye
each), so Koya is compared on even team counts only; it has no adjusted score for trailing byes, which
these events (zero-point byes only) never need.  Compared here: the four extended Sonneborn-Bergers, the
team Koya on both scores, MPVGP and the board count.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.test_team_standings import Event, generate, match_points
from tracker.core.teams.standings import team_standings
from tracker.formats import state_from
from tracker.formats.trf import parse_trf
from tracker.formats.trf.read import team_setup_of

team = pytest.importorskip("tiebreak_core.team")

COMPARED = ["EMMSB", "EMGSB", "EGMSB", "EGGSB", "MPVGP", "BC", "KS:MP", "KS:GP"]


def records(ev: Event) -> dict[int, object]:
    out = {}
    for i in range(ev.teams):
        sides = ev.sides[i]
        matches = [
            team.TeamMatch(
                opponent_id=s.opponent + 1 if s.opponent is not None else -1,
                round_number=r,
                mp=float(match_points(ev, s)),
                gp=float(sum(s.boards)),
                kind=team.PLAYED if s.opponent is not None else team.UNPLAYED,
            )
            for r, s in sorted(sides.items())
        ]
        boards = tuple(float(sum(s.boards[b] for s in sides.values())) for b in range(ev.boards))
        out[i + 1] = team.TeamRecord(
            team_id=i + 1,
            mp=sum(m.mp for m in matches),
            gp=sum(m.gp for m in matches),
            matches=matches,
            board_points=boards,
        )
    return out


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from(["MP", "GP"]))
def test_team_values_equal_tiebreak_cores(seed: int, primary: str) -> None:
    ev = generate(random.Random(seed))
    tf = parse_trf(ev.text, "random.trf")
    setup = team_setup_of(tf)
    assert setup is not None
    codes = [c for c in COMPARED if not c.startswith("KS") or ev.teams % 2 == 0]
    order = ("MPTS" if primary == "MP" else "GPTS", *codes)
    table = team_standings(state_from(tf), setup, order)
    teams = records(ev)
    fmt = team.TeamFormat(mp_win=float(ev.win), mp_draw=float(ev.draw), max_gp_per_match=float(ev.boards))
    for row in table.rows:
        ours = dict(zip(table.codes, row.tiebreaks, strict=True))
        for code in codes:
            theirs = team.calculate_team(teams[row.team], teams, code, ev.rounds, fmt, primary)
            assert float(ours[code]) == pytest.approx(theirs), (row.team, code)
