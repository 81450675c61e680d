"""The round to play's matches before any board is in (tracker.core.teams.standings.upcoming), against each
team file's own last round: every board pairing the file has, on the board the teams' order gives it, White
and Black as the file has them, and the first-named team the one with the event's colour on board 1."""

from __future__ import annotations

import pytest

from tests.conftest import data_file
from tracker.core.apply import fold
from tracker.core.events import ResultRecorded, Teams
from tracker.core.standings import standings
from tracker.core.teams.setup import setup_of
from tracker.formats.files import read_file
from tracker.protocol import standings_payload


@pytest.mark.parametrize("number", range(9001, 9009))
def test_the_last_rounds_matches_are_listed_before_its_first_board(number: int) -> None:
    tf = read_file(str(data_file(f"team-rr/team-rr-{number}.trf")))
    assert isinstance(tf.opened.teams, Teams)
    last = max(e.round for e in tf.events if isinstance(e, ResultRecorded))
    state = fold([tf.opened, *(e for e in tf.events if getattr(e, "round", 0) < last)])
    assert state is not None
    s = standings(state)
    assert s.teams is not None
    setup = setup_of(tf.opened.teams)
    in_file = {(e.white, e.black) for e in tf.events if isinstance(e, ResultRecorded) and e.round == last}
    listed = {(w, b) for u in s.teams.upcoming for _, w, b in u.boards}
    assert listed == in_file
    place = {p: k + 1 for team in setup.teams for k, p in enumerate(team.players)}
    for u in s.teams.upcoming:
        assert u.round == last
        first = setup.teams[u.first].players
        for board, white, black in u.boards:
            assert board == place[white] == place[black]
            first_white = setup.colour(board, s.teams.boards) == "W"
            assert (white in first) == first_white, (u, board)
    rounds = {r["round"]: r for r in standings_payload(s)["matches"]}
    pending = rounds[last]["matches"]
    assert len(pending) == len(s.teams.upcoming) and not any(m["complete"] for m in pending)
    assert all(b["result"] is None for m in pending for b in m["boards"])
    assert {(b["white"], b["black"]) for m in pending for b in m["boards"]} == in_file
