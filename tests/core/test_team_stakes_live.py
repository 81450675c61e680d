"""What each board of a team event's last round decides (tracker.core.teams.stakes), against the team
projection computed afresh with that board's result recorded (team-rr-9004: ten teams of four boards)."""

from __future__ import annotations

from tests.conftest import data_file
from tracker.core.apply import fold
from tracker.core.events import Event, ResultRecorded, Teams
from tracker.core.teams.projection import project_teams
from tracker.core.teams.setup import setup_of
from tracker.core.teams.stakes import live_team_stakes, team_lines
from tracker.formats.files import read_file


def _before_last(left: int) -> tuple[list[Event], Teams]:
    tf = read_file(str(data_file("team-rr/team-rr-9004.trf")))
    last = max(getattr(e, "round", 0) for e in tf.events)
    assert isinstance(tf.opened.teams, Teams)
    return [tf.opened, *(e for e in tf.events if getattr(e, "round", 0) <= last - left)], tf.opened.teams


def test_each_board_decides_what_the_projection_after_its_result_says() -> None:
    events, teams = _before_last(1)
    setup = setup_of(teams)
    state = fold(events)
    assert state is not None
    found = live_team_stakes(state, setup)
    assert found is not None and found, "the last round of team-rr-9004 decides something"
    before = {r.team: (r.rank_best, r.rank_worst) for r in project_teams(state, setup).teams}
    names = {team.number: team.name for team in setup.teams}
    lines = team_lines(setup)
    assert lines == (1, 3)
    sentences = 0
    for board in found:
        g = board.game
        for result, exact, stakes, ranges in board.outcomes:
            assert exact
            after_state = fold([*events, ResultRecorded("x", state.id, g.round, g.white, g.black, result)])
            assert after_state is not None
            after = {r.team: (r.rank_best, r.rank_worst) for r in project_teams(after_state, setup).teams}
            assert ranges == {k: v for k, v in after.items() if v != before[k]}, (g, result)
            want = set()
            for team, (best, worst) in after.items():
                for places in lines:
                    if before[team][0] <= places < best:
                        want.add((team, places, "eliminated", f"{names[team]} can no longer finish {_line(places)}"))
                    elif before[team][1] > places >= worst:
                        want.add((team, places, "clinched", f"{names[team]} clinches {_line(places)}"))
            assert {(s.team, s.places, s.after, s.text) for s in stakes} == want, (g, result)
            sentences += len(stakes)
    assert sentences > 0


def _line(places: int) -> str:
    return "1st" if places == 1 else f"top {places}"


def test_with_two_rounds_to_play_nothing_is_computed_live() -> None:
    events, teams = _before_last(2)
    state = fold(events)
    assert state is not None
    assert live_team_stakes(state, setup_of(teams)) is None
