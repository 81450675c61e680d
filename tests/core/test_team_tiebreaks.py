"""The team tie-breaks on a small hand-made event whose every value is worked out below (issue 35).

Four teams of two boards, A (players 1, 2), B (3, 4), C (5, 6), D (7, 8); the first-named team has White
on board 1 (``352 WB``).  Round 1: A–B 1–1 (A wins board 1, B board 2), C–D 2–0; round 2: A–C and B–D
1–1 (both boards drawn); round 3: D–A and C–B 1–1 (both boards drawn).  So C has 4 MP, 4 GP; A and B 3 MP,
3 GP each; D 2 and 2.  A and B are tied on everything their match and their scores say; only the boards
separate them: A won board 1 of their match, B board 2.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from tests.builders import fold_all, game, opened
from tracker.core.errors import EventRejected
from tracker.core.teams import Team, TeamSetup
from tracker.core.teams.standings import TeamStandings, team_standings
from tracker.core.teams.tiebreaks import TEAM_RULES, parse_team_tiebreaks

SETUP = TeamSetup(
    teams=(Team(1, "A", (1, 2)), Team(2, "B", (3, 4)), Team(3, "C", (5, 6)), Team(4, "D", (7, 8))),
    boards=2,
    colours="WB",
    rounds=3,
)
EVENTS = [
    opened(8),
    game(1, 1, 3, "1-0"),
    game(1, 4, 2, "1-0"),  # board 2: B (first named: A has Black on board 2) wins with White
    game(1, 5, 7, "+-"),
    game(1, 8, 6, "0-1"),
    game(2, 1, 5, "1/2-1/2"),
    game(2, 6, 2, "1/2-1/2"),
    game(2, 3, 7, "1/2-1/2"),
    game(2, 8, 4, "1/2-1/2"),
    game(3, 7, 1, "1/2-1/2"),
    game(3, 2, 8, "1/2-1/2"),
    game(3, 5, 3, "1/2-1/2"),
    game(3, 4, 6, "1/2-1/2"),
]


def table(*codes: str) -> TeamStandings:
    return team_standings(fold_all(EVENTS), SETUP, codes)


def values(t: TeamStandings, code: str) -> dict[str, Fraction]:
    k = t.codes.index(code)
    return {row.name: row.tiebreaks[k] for row in t.rows}


def test_match_and_game_points_come_from_the_boards() -> None:
    t = table("MPTS", "GPTS")
    assert [(r.name, r.match_points, r.game_points) for r in t.rows] == [
        ("C", 4, 4),
        ("A", 3, 3),
        ("B", 3, 3),
        ("D", 2, 2),
    ]
    assert [r.rank for r in t.rows] == [1, 2, 2, 4]
    assert not t.provisional


def test_the_first_named_team_is_the_one_with_the_sequences_colour_on_board_1() -> None:
    view = table("MPTS").view
    firsts = {(m.round, SETUP.teams[m.first].name, SETUP.teams[m.second].name) for m in view.matches}
    assert firsts == {(1, "A", "B"), (1, "C", "D"), (2, "A", "C"), (2, "B", "D"), (3, "D", "A"), (3, "C", "B")}
    forfeit = next(m for m in view.matches if m.round == 1 and SETUP.teams[m.first].name == "C")
    assert [(b.board, b.first_code, b.second_code) for b in forfeit.boards] == [(1, "+", "-"), (2, "1", "0")]


def test_direct_encounter_on_both_scores_leaves_a_and_b_tied() -> None:
    t = table("MPTS", "GPTS", "EDE", "DE")
    assert values(t, "EDE") == values(t, "DE") == {"C": 0, "A": 0, "B": 0, "D": 0}
    assert [r.rank for r in t.rows] == [1, 2, 2, 4]


@pytest.mark.parametrize("code", ["EDET", "EDEB"])
def test_the_longer_forms_split_two_tied_teams_by_the_boards_of_their_match(code: str) -> None:
    # EDET: board 1 of A–B (A won it); EDEB: all boards but the bottom one, i.e. board 1 again
    t = table("MPTS", "GPTS", code)
    assert values(t, code) == {"C": 0, "A": 1, "B": 2, "D": 0}
    assert [(r.name, r.rank) for r in t.rows] == [("C", 1), ("A", 2), ("B", 3), ("D", 4)]


@pytest.mark.parametrize("code", ["EDEC", "EDEBT", "EDEBB"])
def test_the_board_count_stage_ranks_the_higher_weighted_sum_first_as_the_tec_server_does(code: str) -> None:
    # board number × points in A–B: A 1 × 1 = 1, B 2 × 1 = 2.  The server's EDEC/EDEBT/EDEBB stage sorts it
    # higher first (BC on its own, §12.1, ranks the lower sum first): tracker follows the server
    t = table("MPTS", "GPTS", code)
    assert values(t, code) == {"C": 0, "A": 2, "B": 1, "D": 0}


def test_board_count_top_board_and_bottom_board_elimination() -> None:
    t = table("MPTS", "GPTS", "BC", "TBR", "BBE")
    # board points over the event: A 2 on board 1, 1 on board 2; B 1 and 2
    assert values(t, "BC") == {"C": Fraction(6), "A": Fraction(4), "B": Fraction(5), "D": Fraction(3)}
    assert [(r.name, r.rank) for r in t.rows] == [("C", 1), ("A", 2), ("B", 3), ("D", 4)]
    t = table("MPTS", "GPTS", "TBR")
    assert values(t, "TBR") == {"C": 0, "A": 1, "B": 2, "D": 0}
    t = table("MPTS", "GPTS", "BBE")
    assert values(t, "BBE") == {"C": 0, "A": 1, "B": 2, "D": 0}


def test_sonneborn_berger_koya_and_the_secondary_score() -> None:
    t = table("MPTS", "SB:MP", "SB:GP", "ESB", "EGMSB", "KS:MP", "KS:GP", "MPVGP", "TPN")
    # SB:MP of A: B 3 × 1 + C 4 × 1 + D 2 × 1 = 9; ESB (MP primary): the same products with A's game points
    assert values(t, "SB:MP") == {"C": 2 * 2 + 3 + 3, "A": 9, "B": 9, "D": 0 + 3 + 3}
    assert values(t, "ESB") == {"C": 2 * 2 + 3 + 3, "A": 9, "B": 9, "D": 0 + 3 + 3}
    assert values(t, "EGMSB") == values(t, "SB:MP")  # GP and MP are equal in this event
    # the Koya line: 50% of 2 MP × 3 matches = 3 MP: A, B and C qualify
    assert values(t, "KS:MP") == {"C": 1 + 1, "A": 2, "B": 2, "D": 1 + 1}
    assert values(t, "MPVGP") == {"C": 4, "A": 3, "B": 3, "D": 2}
    assert values(t, "TPN") == {"C": 3, "A": 1, "B": 2, "D": 4}
    assert [(r.name, r.rank) for r in t.rows] == [("C", 1), ("A", 2), ("B", 3), ("D", 4)]  # TPN: A before B


def test_game_points_first_make_them_the_primary_score() -> None:
    order = parse_team_tiebreaks(["GPTS", "MPTS", "ESB", "KS", "EDE"])
    assert [(tb.code, tb.scores) for tb in order] == [
        ("GPTS", ("GP",)),
        ("MPTS", ("MP",)),
        ("ESB", ("GP", "MP")),
        ("KS", ("GP",)),
        ("EDE", ("GP", "MP")),
    ]


def test_an_order_without_a_score_gets_match_points_first_and_unknown_codes_are_refused() -> None:
    assert [tb.code for tb in parse_team_tiebreaks(["EDE", "SB:MP"])] == ["MPTS", "EDE", "SB:MP"]
    with pytest.raises(EventRejected, match="unknown team tie-break code 'XYZ'"):
        parse_team_tiebreaks(["MPTS", "XYZ"])


def test_a_match_loses_its_match_points_when_a_board_is_taken_back() -> None:
    from tests.builders import void

    state = fold_all([*EVENTS, void(1, 1, 3)])
    t = team_standings(state, SETUP, ("MPTS", "GPTS"))
    assert t.provisional
    rows = {r.name: (r.match_points, r.game_points) for r in t.rows}
    assert rows["A"] == (2, 2)  # 0 MP from round 1 (incomplete) + 1 + 1; GP: board 2 lost, rounds 2 and 3
    assert rows["B"] == (2, 3)


def test_every_kind_of_the_team_table_has_one_rule() -> None:
    assert list(TEAM_RULES) == [
        "MPTS", "GPTS", "MPVGP", "EDE", "SB", "KS", "BC", "TBR", "BBE", "TPN"
    ]  # fmt: skip


def test_team_byes_score_by_their_kind_and_a_trailing_half_bye_leaves_the_opponents_sonneborn_berger() -> None:
    """Three teams of two boards: each has one free round.  C's round 1 and B's round 2 are zero byes; A's
    round 3 is a half-point bye on both boards (a draw: 1 MP, 1 GP).  A trailing voluntarily unplayed round
    counts 0 in A's total as an opponent's (C.07 §16, the TEC server's adjusted score), as for players."""
    from tests.builders import bye

    setup = TeamSetup(teams=(Team(1, "A", (1, 2)), Team(2, "B", (3, 4)), Team(3, "C", (5, 6))), boards=2, rounds=3)
    events = [
        opened(6),
        game(1, 1, 3, "1-0"),
        game(1, 4, 2, "0-1"),  # A–B 2–0
        bye(1, 5),
        bye(1, 6),
        game(2, 1, 5, "1/2-1/2"),
        game(2, 6, 2, "1/2-1/2"),  # A–C 1–1
        bye(2, 3),
        bye(2, 4),
        game(3, 3, 5, "1-0"),
        game(3, 6, 4, "1/2-1/2"),  # B–C 1½–½
        bye(3, 1, "half"),
        bye(3, 2, "half"),
    ]
    t = team_standings(fold_all(events), setup, ("MPTS", "GPTS", "SB:MP", "KS:MP"))
    assert [(r.name, r.match_points, r.game_points) for r in t.rows] == [
        ("A", 4, 4),
        ("B", 2, Fraction(3, 2)),
        ("C", 1, Fraction(3, 2)),
    ]
    assert not t.provisional
    # SB:MP: A's total as an opponent's is 3 (its round-3 half bye trails); C drew A, lost to B
    assert values(t, "SB:MP") == {"A": 2 * 2 + 1 * 1, "B": 3 * 0 + 1 * 2, "C": 3 * 1 + 2 * 0}
    # the Koya line: 50% of 2 MP × 2 matches (3 rounds less the bye) = 2: A and B qualify
    assert values(t, "KS:MP") == {"A": 2, "B": 0, "C": 1}
    byes = {SETUP.teams[k].name: s.mp for k, sides in enumerate(t.view.sides) for s in sides.values() if not s.is_match}
    assert byes == {"A": 1, "B": 0, "C": 0}
