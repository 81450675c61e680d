"""Team chances from ratings (tracker.core.teams.chances): against the exact probabilities of an enumeration
of every outcome of the last round's boards, and against the team projection's certainties."""

from __future__ import annotations

import itertools

from tests.conftest import data_file
from tracker.core.apply import fold
from tracker.core.events import Event, ResultRecorded, Teams
from tracker.core.projection.chances import DRAW_RATE, game_probabilities
from tracker.core.teams.chances import team_chances
from tracker.core.teams.projection import pending_boards, project_teams
from tracker.core.teams.setup import setup_of
from tracker.core.teams.view import team_view
from tracker.formats.files import read_file

RESULTS = ("1-0", "1/2-1/2", "0-1")


def _before_last(name: str) -> tuple[list[Event], Teams]:
    tf = read_file(str(data_file(f"team-rr/{name}.trf")))
    last = max(getattr(e, "round", 0) for e in tf.events)
    assert isinstance(tf.opened.teams, Teams)
    return [tf.opened, *(e for e in tf.events if getattr(e, "round", 0) < last)], tf.opened.teams


def test_chances_of_first_and_the_medals_match_an_enumeration_of_the_last_round() -> None:
    events, teams = _before_last("team-rr-9001")  # four teams: two matches, eight boards, 3^8 outcomes
    setup = setup_of(teams)
    state = fold(events)
    assert state is not None
    boards = pending_boards(state, setup)
    assert len(boards) == 8
    ratings = {p.start_no: p.rating for p in state.opened.players}
    exact_first = {team.number: 0.0 for team in setup.teams}
    exact_top2 = {team.number: 0.0 for team in setup.teams}
    for outcome in itertools.product(range(3), repeat=len(boards)):
        p = 1.0
        for g, k in zip(boards, outcome, strict=True):
            p *= game_probabilities(ratings[g.white], ratings[g.black], draw_rate=DRAW_RATE, white_edge=0.0)[k]
        final = fold(
            [*events, *(ResultRecorded(f"x{i}", state.id, g.round, g.white, g.black, RESULTS[k]) for i, (g, k) in
                        enumerate(zip(boards, outcome, strict=True)))]
        )  # fmt: skip
        assert final is not None
        v = team_view(final, setup)
        scores = {team.number: (v.mp[i], v.gp[i]) for i, team in enumerate(setup.teams)}
        for team, score in scores.items():
            above = sum(1 for s in scores.values() if s > score)
            level = sum(1 for s in scores.values() if s == score)
            if above == 0:
                exact_first[team] += p / level
            exact_top2[team] += p * max(0, min(2, above + level) - above) / level
    found = team_chances(state, setup, (1, 2), ("MPTS", "GPTS"), seed=7, runs=20_000)
    for c in found.teams:
        assert abs(c.first - exact_first[c.team]) < 0.02, (c.team, c.first, exact_first[c.team])
        assert abs(c.lines[1] - exact_top2[c.team]) < 0.02, (c.team, c.lines[1], exact_top2[c.team])
        assert c.lines[0] == c.first
    assert abs(sum(c.first for c in found.teams) - 1.0) < 1e-9
    assert abs(sum(c.lines[1] for c in found.teams) - 2.0) < 1e-9


def test_the_projection_s_certainties_are_certain_in_the_chances() -> None:
    events, teams = _before_last("team-rr-9004")
    setup = setup_of(teams)
    state = fold(events)
    assert state is not None
    ranges = {r.team: (r.rank_best, r.rank_worst) for r in project_teams(state, setup).teams}
    found = team_chances(state, setup, (1, 3), seed=state.seq, runs=2_000)
    assert found == team_chances(state, setup, (1, 3), seed=state.seq, runs=2_000)  # seeded: the same numbers
    certain = 0
    for c in found.teams:
        best, worst = ranges[c.team]
        if best > 3:
            assert c.lines[1] == 0.0, c
        if best > 1:
            assert c.first == 0.0, c
        if worst <= 3:
            assert c.lines[1] == 1.0, c
        certain += (best > 3) + (best > 1) + (worst <= 3)
    assert certain >= 3
