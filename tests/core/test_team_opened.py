"""The opening event's ``teams`` (issue 35): optional (an event without it decodes unchanged), checked, and
what the core's standings follow."""

from __future__ import annotations

from decimal import Decimal

import msgspec
import pytest

from tests.gateway.test_team_live import TEAM_FILE
from tracker.core.errors import EventRejected
from tracker.core.events import MatchScoring, Player, TeamEntry, Teams, TournamentOpened, decode_event, encode_event
from tracker.core.standings import standings
from tracker.core.teams.setup import setup_of, teams_of
from tracker.formats import state_from
from tracker.formats.files import read_file


def opened(teams: Teams | msgspec.UnsetType) -> TournamentOpened:
    players = tuple(Player(n, f"P{n}") for n in range(1, 5))
    return TournamentOpened(id="o", tournament="t", name="T", players=players, teams=teams)


def test_an_opening_without_teams_encodes_as_before_and_is_an_individual_event() -> None:
    event = opened(msgspec.UNSET)
    assert b"teams" not in encode_event(event)
    assert standings(state_from(read_file(str(TEAM_FILE)))).teams is not None
    from tracker.core.apply import apply

    state, _ = apply(None, event)
    assert standings(state).teams is None


@pytest.mark.parametrize(
    ("teams", "said"),
    [
        (Teams((TeamEntry(1, "A", (1, 2)), TeamEntry(1, "B", (3, 4)))), "two teams have number 1"),
        (Teams((TeamEntry(1, "A", (1, 2)), TeamEntry(2, "B", (2, 4)))), "team 2 lists player 2"),
        (Teams((TeamEntry(1, "A", (1, 2)), TeamEntry(2, "B", (3, 9)))), "team 2 lists player 9"),
        (Teams((TeamEntry(1, "A", (1, 2)), TeamEntry(2, "B", (3, 4))), tiebreaks=("MPTS", "XYZ")), "XYZ"),
        (
            Teams((TeamEntry(1, "A", (1, 2)), TeamEntry(2, "B", (3, 4))), scoring=MatchScoring(win=Decimal("NaN"))),
            "win",
        ),
    ],
)
def test_teams_that_do_not_make_a_team_event_are_rejected(teams: Teams, said: str) -> None:
    from tracker.core.apply import apply

    with pytest.raises(EventRejected) as caught:
        apply(None, opened(teams))
    assert caught.value.code in ("invalid-tournament", "unknown-tiebreak") and said in str(caught.value)


def test_a_team_files_setup_round_trips_through_the_wire() -> None:
    tf = read_file(str(TEAM_FILE))
    assert isinstance(tf.opened.teams, Teams)
    again = decode_event(encode_event(tf.opened))
    assert isinstance(again, TournamentOpened) and again.teams == tf.opened.teams
    assert teams_of(setup_of(tf.opened.teams)) == tf.opened.teams
    assert msgspec.json.decode(encode_event(tf.opened))["teams"]["colours"] == "WBWB"
