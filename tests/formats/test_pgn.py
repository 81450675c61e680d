"""PGN game collections read as a round robin: tags, numbering, format, and malformed files."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import REPO
from tracker.core.errors import FormatError
from tracker.core.events import ResultRecorded
from tracker.core.standings import standings
from tracker.formats import TournamentFile, read_tournament_text, state_from
from tracker.formats.pgn import parse_pgn
from tracker.formats.trf import parse_trf

SINQUEFIELD = REPO / "tracker" / "data" / "sinquefield-cup-2021.trf"


def game(white: str, black: str, result: str, round_: str = "1", event: str = "Test Open", **tags: str) -> str:
    """One PGN game with the given tags and a token move list."""
    lines = [f'[Event "{event}"]', f'[Round "{round_}"]', f'[White "{white}"]', f'[Black "{black}"]']
    lines += [f'[{tag} "{value}"]' for tag, value in tags.items()]
    lines.append(f'[Result "{result}"]')
    return "\n".join(lines) + f"\n\n1. e4 e5 {result}\n\n"


def pgn_from(tf: TournamentFile) -> str:
    """The file's games as a broadcast PGN: rounds as "round.board", games in reverse order."""
    names = {p.start_no: p.name for p in tf.opened.players}
    tokens = {"1-0": "1-0", "0-1": "0-1", "1/2-1/2": "1/2-1/2"}
    games = []
    boards: dict[int, int] = {}
    for e in tf.events:
        assert isinstance(e, ResultRecorded)
        boards[e.round] = boards.get(e.round, 0) + 1
        games.append(
            game(names[e.white], names[e.black], tokens[e.result], f"{e.round}.{boards[e.round]}", tf.opened.name)
        )
    return "".join(reversed(games))


def test_pgn_of_sinquefield_gives_the_same_standings_as_its_trf() -> None:
    trf = parse_trf(SINQUEFIELD.read_text(encoding="utf-8"), str(SINQUEFIELD))
    pgn = parse_pgn(pgn_from(trf), "sinquefield.pgn")
    assert pgn.opened.tournament == trf.opened.tournament
    assert (pgn.opened.format, pgn.opened.rounds, len(pgn.events)) == ("single", 9, 45)
    by_trf = standings(state_from(trf))
    by_pgn = standings(state_from(pgn))
    assert by_pgn.codes == by_trf.codes
    rows = {row.name: (row.rank, row.points, row.tiebreaks) for row in by_trf.rows}
    assert {row.name: (row.rank, row.points, row.tiebreaks) for row in by_pgn.rows} == rows


def test_start_numbers_follow_the_alphabetical_order_of_names() -> None:
    text = game("zed", "Anna", "1-0") + game("bob", "Carl", "0-1")
    tf = parse_pgn(text, "t.pgn")
    assert [(p.start_no, p.name) for p in tf.opened.players] == [(1, "Anna"), (2, "bob"), (3, "Carl"), (4, "zed")]
    assert [(e.white, e.black) for e in tf.events if isinstance(e, ResultRecorded)] == [(2, 3), (4, 1)]


def test_round_with_a_board_number_is_the_round() -> None:
    tf = parse_pgn(game("A", "B", "1/2-1/2", "3.1") + game("C", "D", "1-0", "3.2"), "t.pgn")
    assert {e.round for e in tf.events if isinstance(e, ResultRecorded)} == {3}


def test_unfinished_game_records_nothing() -> None:
    tf = parse_pgn(game("A", "B", "1-0", "1") + game("C", "A", "*", "2"), "t.pgn")
    assert [e.id for e in tf.events] == ["test-open/r1/1-2"]


def test_elo_title_and_fide_id_fill_in_the_player() -> None:
    text = game("Carlsen, Magnus", "Caruana, Fabiano", "1-0", WhiteElo="2830", BlackElo="?", WhiteTitle="GM") + game(
        "Caruana, Fabiano", "Carlsen, Magnus", "0-1", "2", BlackFideId="1503014", WhiteElo="2805"
    )
    carlsen, caruana = parse_pgn(text, "t.pgn").opened.players
    assert (carlsen.name, carlsen.rating, carlsen.title, carlsen.fide_id) == ("Carlsen, Magnus", 2830, "GM", "1503014")
    assert (caruana.rating, caruana.title, caruana.fide_id) == (2805, "", "")


def test_double_round_robin_is_inferred_when_a_pair_meets_twice() -> None:
    first = game("A", "B", "1-0", "1") + game("C", "D", "0-1", "1")
    assert parse_pgn(first, "t.pgn").opened.format == "single"
    again = first + game("B", "A", "1/2-1/2", "4")
    tf = parse_pgn(again, "t.pgn")
    assert (tf.opened.format, tf.opened.rounds) == ("double", 6)


def test_event_tag_names_the_tournament_and_gives_the_id() -> None:
    tf = parse_pgn(game("A", "B", "1-0", event="Tata Steel Masters 2025"), "x.pgn")
    assert (tf.opened.name, tf.opened.tournament) == ("Tata Steel Masters 2025", "tata-steel-masters-2025")
    assert parse_pgn(game("A", "B", "1-0"), "x.pgn", "tsm").opened.tournament == "tsm"
    nameless = parse_pgn(game("A", "B", "1-0", event="?"), "games/club-final.pgn")
    assert (nameless.opened.name, nameless.opened.tournament) == ("club-final", "club-final")


def test_read_tournament_text_picks_pgn_by_extension_and_content() -> None:
    text = game("A", "B", "1-0")
    assert read_tournament_text(text, "t.pgn") == read_tournament_text(text, "t.download")


# -- malformed files -------------------------------------------------------------------


def assert_format_error(text: str, line: int, *words: str) -> None:
    with pytest.raises(FormatError) as info:
        parse_pgn(text, "bad.pgn")
    message = str(info.value)
    assert info.value.line == line
    assert message.startswith(f"bad.pgn:{line}: " if line else "bad.pgn: ")
    for word in words:
        assert word in message


OK = game("A", "B", "1-0")  # tags on lines 1-5, moves on 7: the next game starts on line 9


@pytest.mark.parametrize(
    ("second", "words"),
    [
        ('[Event "Test Open"]\n[Round "2"]\n[Black "C"]\n[Result "1-0"]\n\n1-0\n', ("without a White player",)),
        (game("A", "?", "1-0", "2"), ("without a Black player",)),
        (game("A", "C", "2-0", "2"), ("Result '2-0'",)),
        (game("A", "C", "1-0", "?"), ("Round '?'",)),
        (game("A", "C", "1-0", "0"), ("Round '0'",)),
        (game("A", "C", "1-0", "99999999999999999999"), ("not a round number",)),
        (game("C", "C", "1-0", "2"), ("cannot play himself",)),
        (game("A", "C", "1-0", "2", event="Another Event"), ("'Another Event'", "line 1")),
        (game("B", "A", "1-0", "1"), ("already the game on line 1",)),
        (game("A", "C", "1-0", "1"), ("player 1 already has a game against 2 in round 1",)),
    ],
)
def test_malformed_game_gives_format_error_naming_file_and_line(second: str, words: tuple[str, ...]) -> None:
    assert_format_error(OK + second, 9, *words)


def test_pair_meeting_three_times_is_refused() -> None:
    text = OK + game("B", "A", "1-0", "2") + game("A", "B", "1-0", "3")
    assert_format_error(text, 17, "meet 3 times")


def test_one_fide_id_for_two_names_is_refused() -> None:
    text = game("A", "B", "1-0", WhiteFideId="123") + game("A.", "C", "1-0", "2", WhiteFideId="123")
    assert_format_error(text, 10, "FIDE id 123 belongs to both 'A' and 'A.'")


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("", 0, ("no games",)),
        ("\x00\x89PNG\r\n\x1a\n", 1, ("not a text file",)),
        ("just some words", 1, ("without tags",)),
        (game("A", "B", "*").replace('[White "A"]\n', '[White "A"]\n[White "A"]\n'), 0, ()),
    ],
)
def test_files_that_are_not_games_give_format_error(text: str, line: int, words: tuple[str, ...]) -> None:
    if not words:  # a repeated tag is harmless: python-chess keeps the last value
        assert len(parse_pgn(text, "ok.pgn").opened.players) == 2
        return
    assert_format_error(text, line, *words)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.text(max_size=300))
def test_any_text_reads_or_gives_format_error(text: str) -> None:
    with contextlib.suppress(FormatError):
        parse_pgn(text, "fuzz.pgn")


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.data())
def test_damaged_games_read_or_give_format_error(data: st.DataObject) -> None:
    text = OK + game("C", "D", "1/2-1/2", "1.2") + game("A", "C", "0-1", "2")
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(text) - 1))
        text = text[:at] + data.draw(st.sampled_from(list('[]" \n.0123-*/ABC'))) + text[at + 1 :]
    try:
        tf = parse_pgn(text, "fuzz.pgn")
    except FormatError:
        return
    state_from(tf)
