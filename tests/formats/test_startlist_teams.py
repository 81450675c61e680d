"""``tracker new`` with a team start list (issue 35): teams in board order become a team round robin's TRF.

The TRF it writes is read back by the reader every team file goes through: the same teams, line-ups and board
colours, the team round robin's rounds, FIDE's Berger tables over the teams as the schedule; a reserve may play a
board of their team's match, nobody a board of a match their team does not play.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tracker.cli import main
from tracker.core.apply import Batch
from tracker.core.errors import EventRejected, FormatError, InvalidPairing
from tracker.core.events import ResultRecorded
from tracker.core.standings import standings
from tracker.formats import state_from
from tracker.formats.berger import berger_schedule
from tracker.formats.files import read_file
from tracker.formats.startlist import berger_team_tournament, parse_startlist, start_list_teams
from tracker.formats.trf.read import team_setup_of

TEXT = """\
# a club cup: four teams, three boards, two of them with a reserve
Armenia:
Aronian, Levon 2750
Sargissian, Gabriel 2680
Melkumyan, Hrant 2650
Petrosian, Tigran L. 2600
Beta Club:
One, Bob 2400
Two, Bob 2300
Three, Bob 2200
Gamma:
One, Gus 2100
Two, Gus 2000
Three, Gus 1950
Four, Gus 1900
Delta:
One, Dan 1900
Two, Dan 1800
Three, Dan 1700
"""


def _new(tmp_path: Path, text: str, name: str = "cup.txt", *options: str) -> Path:
    source, out = tmp_path / name, tmp_path / "cup.trf"
    source.write_text(text, encoding="utf-8")
    assert main(["new", str(source), "-o", str(out), *options]) == 0
    return out


def test_a_text_team_start_list_becomes_a_team_round_robin_that_reads_back(tmp_path: Path) -> None:
    tf = read_file(str(_new(tmp_path, TEXT)))
    setup = team_setup_of(tf)
    assert setup is not None
    names = {p.start_no: p.name for p in tf.opened.players}
    assert [(t.name, [names[p] for p in t.players]) for t in setup.teams] == [
        ("Armenia", ["Aronian, Levon", "Sargissian, Gabriel", "Melkumyan, Hrant", "Petrosian, Tigran L."]),
        ("Beta Club", ["One, Bob", "Two, Bob", "Three, Bob"]),
        ("Gamma", ["One, Gus", "Two, Gus", "Three, Gus", "Four, Gus"]),
        ("Delta", ["One, Dan", "Two, Dan", "Three, Dan"]),
    ]
    assert (setup.boards, setup.colours, setup.team_rounds()) == (3, "WBW", 3)
    assert tf.opened.schedule is not None
    line_up = {t.number: t.players[:3] for t in setup.teams}
    for r, berger in enumerate(berger_schedule(4), start=1):
        expected = set()
        for a, b in berger.pairs:  # Berger's White is named first: White on boards 1 and 3
            for k, colour in enumerate("WBW"):
                first, second = line_up[a][k], line_up[b][k]
                expected.add((first, second) if colour == "W" else (second, first))
        assert set(tf.opened.schedule[r - 1]) == expected, r
    s = standings(state_from(tf))
    assert s.teams is not None and [r.name for r in s.teams.rows] == ["Armenia", "Beta Club", "Gamma", "Delta"]


def test_a_reserve_plays_a_board_of_the_teams_match_and_nobody_a_board_of_another_match(tmp_path: Path) -> None:
    tf = read_file(str(_new(tmp_path, TEXT)))
    setup = team_setup_of(tf)
    assert setup is not None and tf.opened.schedule is not None
    armenia = setup.teams[0]
    reserve = armenia.players[3]  # Petrosian
    tid = tf.opened.tournament
    (a, b), *_ = berger_schedule(4)[0].pairs  # round 1's first match
    batch = Batch()
    batch.fold(tf.opened)
    opponent_team = setup.teams[b - 1] if a == armenia.number else setup.teams[a - 1]
    assert armenia.number in (a, b)
    # board 3 (White for the first-named): the reserve instead of Melkumyan, with either colour
    batch.fold(ResultRecorded(f"{tid}/x1", tid, 1, reserve, opponent_team.players[2], "1-0"))
    state = batch.finish()
    assert state is not None and state.entries[state.index[reserve]][1].is_game
    # a board between two teams that do not meet in round 1 is refused
    stranger = next(t for t in setup.teams if t.number not in (armenia.number, opponent_team.number))
    with pytest.raises(InvalidPairing, match="schedule has no game"):
        batch.fold(ResultRecorded(f"{tid}/x2", tid, 1, armenia.players[0], stranger.players[0], "1-0"))
    # nor a board between two players of one team
    with pytest.raises(EventRejected):
        batch.fold(ResultRecorded(f"{tid}/x3", tid, 1, armenia.players[0], armenia.players[1], "1-0"))


def test_an_odd_number_of_teams_gives_the_free_team_a_bye_on_its_boards(tmp_path: Path) -> None:
    csv = "name,rating,team\nA1,2000,Alpha\nA2,1990,Alpha\nB1,1980,Beta\nB2,1970,Beta\nC1,1960,Gamma\nC2,1950,Gamma\n"
    tf = read_file(str(_new(tmp_path, csv, "cup.csv")))
    setup = team_setup_of(tf)
    assert setup is not None and setup.team_rounds() == 3
    free = {r.number: r.free for r in berger_schedule(3)}
    byes = {(e.round, e.player) for e in tf.events if type(e).__name__ == "ByeRecorded"}
    assert byes == {(r, p) for r, team in free.items() for p in setup.teams[(team or 0) - 1].players}
    view = standings(state_from(tf)).teams
    assert view is not None
    sides = {(r, team): side for team, per in enumerate(view.view.sides, start=1) for r, side in per.items()}
    for r, team in free.items():
        assert team is not None and not sides[(r, team)].is_match


def test_the_boards_option_leaves_the_rest_of_each_team_as_reserves(tmp_path: Path) -> None:
    tf = read_file(str(_new(tmp_path, TEXT, "cup.txt", "--boards", "2")))
    setup = team_setup_of(tf)
    assert setup is not None and (setup.boards, setup.colours) == (2, "WB")
    assert tf.opened.schedule is not None and all(len(r) == 4 for r in tf.opened.schedule)


@pytest.mark.parametrize(
    ("text", "name", "words"),
    [
        ("Alpha:\nA1\nA2\nB1\n", "t.txt", "at least 2 teams"),
        ("A0\nAlpha:\nA1\nBeta:\nB1\n", "t.txt", "a player without a team, but line 3 names one"),
        ("name,team\nA1,Alpha\nB1,\n", "t.csv", "a player without a team"),
        (f"{'X' * 33}:\nA1\nBeta:\nB1\n", "t.txt", "longer than TRF's 32 columns"),
        (":\nA1\n", "t.txt", "a team heading without a name"),
    ],
)
def test_a_team_start_list_that_does_not_make_teams_is_refused(text: str, name: str, words: str) -> None:
    with pytest.raises(FormatError, match=words):
        start_list_teams(text, name)


def test_a_team_shorter_than_its_boards_and_boards_without_teams_are_refused(tmp_path: Path) -> None:
    text = "Alpha:\nA1\nA2\nBeta:\nB1\n"
    players = parse_startlist(text, "t.txt")
    teams = start_list_teams(text, "t.txt")
    assert teams is not None
    with pytest.raises(FormatError, match="'Beta' has 1 players for 2 boards"):
        berger_team_tournament(players, teams, "Cup", boards=2, path="t.txt")
    source = tmp_path / "open.txt"
    source.write_text("Ann\nBob\n", encoding="utf-8")
    assert main(["new", str(source), "--boards", "2"]) != 0
