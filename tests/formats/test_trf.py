"""TRF16/TRF26 in and out: published tie-break values, codes, round trips, and every way a file can be wrong."""

from __future__ import annotations

import contextlib
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO, TEST_DATA
from tracker.core.errors import FormatError
from tracker.core.events import ByeRecorded, ResultRecorded, Scoring
from tracker.core.standings import Standings, standings
from tracker.formats import TournamentFile, read_tournament_text, state_from
from tracker.formats.trf import export_trf, parse_trf

DATA = TEST_DATA
SHARED = REPO / "tracker" / "data"
EXERCISE16 = SHARED / "fide-tec-exercise16-rr6.trf"
SINQUEFIELD = SHARED / "sinquefield-cup-2021.trf"
ALL_FILES = [EXERCISE16, SINQUEFIELD, *sorted(DATA.glob("*.trf"))]


def read(path: Path, tournament_id: str | None = None) -> TournamentFile:
    return parse_trf(path.read_text(encoding="utf-8"), str(path), tournament_id)


def table(tf: TournamentFile, *tiebreaks: str) -> Standings:
    if tiebreaks:
        tf = TournamentFile(msgspec.structs.replace(tf.opened, tiebreaks=tiebreaks), tf.events)
    return standings(state_from(tf))


def column(s: Standings, code: str) -> dict[int, Fraction]:
    k = s.codes.index(code)
    return {row.start_no: row.tiebreaks[k] for row in s.rows}


def player(no: int, name: str, points: str, *blocks: str) -> str:
    """A 001 line with the static part in the right columns and ``blocks`` (10 columns each) from 92."""
    return f"001 {no:>4} m    {name:<33} {'':>4} {'':<3} {'':>11} {'':<10} {points:>4} {no:>4}  " + "".join(
        b.ljust(10) for b in blocks
    )


def trf(*lines: str) -> str:
    return "\n".join(lines) + "\n"


# -- published values ------------------------------------------------------------------


def test_fide_exercise_16_gives_the_published_koya_sb_and_points() -> None:
    s = table(read(EXERCISE16), "KS", "KS/L-2", "SB")
    half = Fraction(1, 2)
    assert column(s, "KS") == {1: 2, 2: half, 3: half, 4: 1, 5: half, 6: 0}
    assert column(s, "SB") == {1: Fraction(37, 4), 2: Fraction(25, 4), 3: Fraction(25, 4), 4: Fraction(17, 4)} | {
        5: Fraction(13, 4),
        6: Fraction(9, 4),
    }
    assert {no: v for no, v in column(s, "KS/L-2").items() if no <= 3} == {1: Fraction(7, 2)} | {
        2: Fraction(7, 2),
        3: Fraction(7, 2),
    }
    assert {row.start_no: row.points for row in s.rows} == {1: 3.5, 2: 3.5, 3: 3.5, 4: 1.5, 5: 1.5, 6: 1.5}
    assert not s.provisional


def test_sinquefield_cup_2021_gives_the_published_koya_of_the_tied_players() -> None:
    s = table(read(SINQUEFIELD))
    ks = {row.name.split(",")[0]: row.tiebreaks[s.codes.index("KS")] for row in s.rows}
    assert (ks["Caruana"], ks["Dominguez Perez"], ks["So"]) == (Fraction(2), Fraction(5, 2), Fraction(2))
    assert (ks["Mamedyarov"], ks["Shankland"], ks["Xiong"]) == (Fraction(5, 2), Fraction(3, 2), Fraction(5, 2))


def test_exercise_16_forfeit_is_read_with_the_opponent_kept() -> None:
    tf = read(EXERCISE16)
    game = next(e for e in tf.events if isinstance(e, ResultRecorded) and e.round == 4 and 5 in (e.white, e.black))
    assert (game.white, game.black, game.result) == (5, 6, "-+")


# -- what the codes mean ---------------------------------------------------------------


def test_forfeit_keeps_the_opponent_and_gives_the_win_points() -> None:
    tf = read(DATA / "forfeits.trf")
    game = next(e for e in tf.events if isinstance(e, ResultRecorded) and e.id.endswith("/r1/2-3"))
    assert game.result == "-+"
    t = state_from(tf)
    assert t.entries[t.index[3]][1].code == "+"
    assert t.games[t.index[3]] == 3


def test_double_forfeit_is_a_loss_for_both() -> None:
    tf = read(DATA / "forfeits.trf")
    game = next(e for e in tf.events if isinstance(e, ResultRecorded) and e.round == 2 and e.white == 4)
    assert (game.black, game.result) == (3, "--")
    t = state_from(tf)
    for no in (3, 4):
        entry = t.entries[t.index[no]][2]
        assert (entry.code, entry.units, entry.is_game) == ("-", 0, True)


def test_short_game_codes_are_case_insensitive_and_marked_short() -> None:
    tf = read(DATA / "forfeits.trf")
    round3 = {(e.white, e.black): (e.result, e.short) for e in tf.events if isinstance(e, ResultRecorded)} | {}
    assert round3[(2, 4)] == ("1-0", True)  # written as lower-case "w" / "l"
    assert round3[(3, 1)] == ("1/2-1/2", True)


def test_bye_codes_become_half_full_pab_and_zero_byes() -> None:
    tf = read(DATA / "byes.trf")
    byes = {(e.round, e.player): e.kind for e in tf.events if isinstance(e, ByeRecorded)}
    assert byes == {(1, 1): "half", (2, 4): "full", (3, 2): "pab", (4, 5): "zero", (5, 3): "zero"}
    s = table(tf)
    assert {row.start_no: row.points for row in s.rows} == {1: 4, 2: Fraction(7, 2), 3: Fraction(5, 2)} | {
        4: Fraction(3, 2),
        5: 1,
    }


@pytest.mark.parametrize(("block", "kind"), [("0000 - -", "zero"), ("0000 - z", "zero"), ("        ", "zero")])
def test_no_opponent_with_dash_z_or_blank_is_a_zero_bye(block: str, kind: str) -> None:
    text = trf(
        player(1, "A", "1.0", "   2 w 1", block),
        player(2, "B", "1.0", "   1 b 0", "0000 - F"),
    )
    tf = parse_trf(text, "bye.trf")
    assert [(e.player, e.kind) for e in tf.events if isinstance(e, ByeRecorded)] == [(1, kind), (2, "full")]


def test_line_ending_before_the_last_played_round_gives_zero_byes() -> None:
    tf = read(DATA / "byes.trf")
    assert ByeRecorded(id="bye-cup/r5/bye/3", tournament="bye-cup", round=5, player=3, kind="zero") in tf.events
    t = state_from(tf)
    assert all(set(entries) == set(range(1, 6)) for entries in t.entries)


def test_paired_game_without_result_records_nothing_yet() -> None:
    text = trf(
        "XXR 3",
        player(1, "A", "1.0", "   2 w 1", "   3 w"),
        player(2, "B", "0.0", "   1 b 0", "0000 - Z"),
        player(3, "C", "0.0", "0000 - Z", "   1 b"),
    )
    tf = parse_trf(text, "live.trf")
    assert [e.id for e in tf.events] == ["live/r1/1-2", "live/r1/bye/3", "live/r2/bye/2"]


# -- header records --------------------------------------------------------------------


def test_events_come_round_by_round_games_by_white_then_byes_with_deterministic_ids() -> None:
    tf = read(DATA / "byes.trf")
    assert [e.id for e in tf.events[:6]] == [
        "bye-cup/r1/2-5",
        "bye-cup/r1/3-4",
        "bye-cup/r1/bye/1",
        "bye-cup/r2/1-2",
        "bye-cup/r2/5-3",
        "bye-cup/r2/bye/4",
    ]
    assert tf.opened.id == "bye-cup/opened"
    # every round is fully paired in the file, so the schedule is known
    assert tf.opened.schedule == (
        ((2, 5), (3, 4)),
        ((1, 2), (5, 3)),
        ((3, 1), (4, 5)),
        ((1, 4), (2, 3)),
        ((4, 2), (5, 1)),
    )


def test_tournament_id_is_given_or_the_slug_of_the_name_or_of_the_file_name() -> None:
    assert read(SINQUEFIELD).opened.tournament == "sinquefield-cup-2021"
    assert read(SINQUEFIELD, "sq21").opened.tournament == "sq21"
    nameless = trf(player(1, "A", "1.0", "   2 w 1"), player(2, "B", "0.0", "   1 b 0"))
    tf = parse_trf(nameless, "some/dir/My Club Final.trf")
    assert (tf.opened.tournament, tf.opened.name) == ("my-club-final", "My Club Final")


def test_players_keep_their_start_list_fields() -> None:
    ann = read(DATA / "forfeits.trf").opened.players[0]
    assert (ann.start_no, ann.name, ann.rating, ann.title, ann.federation) == (1, "Able, Ann", 2450, "IM", "GER")
    assert (ann.fide_id, ann.birth, ann.sex) == ("1234567", "1990/01/02", "w")


def test_round_count_comes_from_xxr_or_142_or_what_the_round_robin_needs() -> None:
    assert read(SINQUEFIELD).opened.rounds == 9
    assert read(DATA / "byes.trf").opened.rounds == 5  # 142
    short = trf(player(1, "A", "1.0", "   2 w 1"), player(2, "B", "0.0", "   1 b 0"), player(3, "C", "0.0"))
    tf = parse_trf(short, "three.trf")
    assert (tf.opened.rounds, tf.opened.format) == (3, "single")


def test_double_round_robin_is_read_from_192_or_from_the_rounds() -> None:
    text = (DATA / "double.trf").read_text(encoding="utf-8")
    assert parse_trf(text, "d.trf").opened.format == "double"
    without_192 = text.replace("192 FIDE_DOUBLEROUNDROBIN\n", "")
    assert parse_trf(without_192, "d.trf").opened.format == "double"
    assert read(SINQUEFIELD).opened.format == "single"


def test_162_gives_three_one_zero_scoring_and_points_in_that_scoring() -> None:
    tf = read(DATA / "three-one-zero.trf")
    assert tf.opened.scoring == Scoring(win=Decimal(3), draw=Decimal(1), loss=Decimal(0))
    s = table(tf)
    assert {row.start_no: row.points for row in s.rows} == {1: 7, 2: 5, 3: 1, 4: 3}


def test_212_defines_the_tiebreak_order() -> None:
    assert read(DATA / "three-one-zero.trf").opened.tiebreaks == ("PTS", "KS", "KS/L-1", "SB", "WON")


def test_202_gets_pts_prepended() -> None:
    assert read(DATA / "double.trf").opened.tiebreaks == ("PTS", "KS", "SB")


def test_no_tiebreak_record_gives_the_default_order() -> None:
    assert read(SINQUEFIELD).opened.tiebreaks == ("PTS", "DE", "SB", "KS", "WON")


def test_records_tracker_does_not_interpret_are_kept_verbatim() -> None:
    assert read(DATA / "three-one-zero.trf").opened.records == ("032 FRA", "042 2025/09/01", "102 Some Arbiter")
    assert read(DATA / "double.trf").opened.records == ("192 FIDE_DOUBLEROUNDROBIN", "###  comment kept for export")


def test_trailing_spaces_and_crlf_line_ends_are_tolerated() -> None:
    text = EXERCISE16.read_text(encoding="utf-8")
    padded = "\r\n".join(line + "   " for line in text.splitlines()) + "\r\n"
    assert parse_trf(padded, str(EXERCISE16)) == read(EXERCISE16)


def test_read_tournament_text_picks_trf_by_extension_and_content() -> None:
    text = SINQUEFIELD.read_text(encoding="utf-8")
    assert read_tournament_text(text, "sq.trf") == read_tournament_text(text, "sq.results")


# -- export and round trips --------------------------------------------------------------


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name)
def test_export_then_parse_gives_the_same_tournament_file(path: Path) -> None:
    tf = read(path)
    again = parse_trf(export_trf(state_from(tf)), str(path))
    assert again.opened == tf.opened
    assert again.events == tf.events


def test_export_of_a_round_in_progress_round_trips_to_the_rounds_played() -> None:
    partial = read(SINQUEFIELD).until_round(3)
    text = export_trf(state_from(partial))
    assert parse_trf(text, str(SINQUEFIELD)) == partial
    # the schedule is known, so rounds 4-9 are written as pairings with blank results
    caruana = next(line for line in text.splitlines() if "Caruana" in line)
    assert caruana[121:].split() == ["6", "w", "10", "b", "9", "w", "3", "b", "7", "w", "4", "b"]


def test_export_writes_scheduled_pending_games_with_a_blank_result() -> None:
    tf = read(SINQUEFIELD)
    pairs = tuple(
        tuple((e.white, e.black) for e in tf.events if isinstance(e, ResultRecorded) and e.round == r)
        for r in range(1, 10)
    )
    in_play = tuple(e for e in tf.until_round(4).events if e.id != "sinquefield-cup-2021/r4/1-6")
    scheduled = TournamentFile(msgspec.structs.replace(tf.opened, schedule=pairs), in_play)
    text = export_trf(state_from(scheduled))
    caruana = next(line for line in text.splitlines() if "Caruana" in line)
    assert caruana[121:127] == "   6 w"  # round 4 against So, White, no result yet
    assert caruana[127:131] == "    "  # blank result, then the later rounds' pairings
    assert parse_trf(text, str(SINQUEFIELD)).events == scheduled.events


def test_export_puts_points_and_rank_in_their_columns() -> None:
    text = export_trf(state_from(read(DATA / "three-one-zero.trf")))
    lines = text.splitlines()
    assert lines[:6] == [
        "012 Football Scoring Blitz",
        "062 4",
        "XXR 3",
        "142 3",
        "162  W 3.0    D 1.0    L 0.0",
        "202 KS,KS/L-1,SB,WON",
    ]
    ant = next(line for line in lines if line.startswith("001    1"))
    assert (ant[80:84], ant[85:89], ant[91:99]) == (" 7.0", "   1", "   4 w 1")


def test_scoring_162_cannot_say_is_exported_as_xxs_and_read_back() -> None:
    tf = read(DATA / "byes.trf")
    odd = Scoring(
        win=Decimal(3),
        draw=Decimal(1),
        forfeit_win=Decimal(2),
        half_bye=Decimal("1.5"),
        full_bye=Decimal(2),
        zero_bye=Decimal("0.5"),
        pab=Decimal(3),
    )
    changed = TournamentFile(msgspec.structs.replace(tf.opened, scoring=odd), tf.events)
    text = export_trf(state_from(changed))
    assert "XXS FW=2.0 FPB=2.0 HPB=1.5 ZPB=0.5 FL=0.0" in text.splitlines()
    assert parse_trf(text, str(DATA / "byes.trf")) == changed


def test_export_names_the_format_when_the_rounds_would_mislead() -> None:
    tf = read(SINQUEFIELD)
    longer = TournamentFile(msgspec.structs.replace(tf.opened, rounds=18, format="single"), tf.events)
    text = export_trf(state_from(longer))
    assert "192 BERGER_ROUNDROBIN" in text.splitlines()
    assert parse_trf(text, "x.trf").opened.format == "single"


# -- malformed files -------------------------------------------------------------------

GOOD = (DATA / "forfeits.trf").read_text(encoding="utf-8").splitlines()  # lines 4-7 are players 1-4


def broken(line: int, old: str, new: str) -> str:
    lines = list(GOOD)
    assert old in lines[line - 1], (old, lines[line - 1])
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    return trf(*lines)


def assert_format_error(text: str, line: int, *words: str) -> None:
    with pytest.raises(FormatError) as info:
        parse_trf(text, "bad.trf")
    message = str(info.value)
    assert info.value.line == line
    assert message.startswith(f"bad.trf:{line}: " if line else "bad.trf: ")
    for word in words:
        assert word in message


@pytest.mark.parametrize(
    ("line", "old", "new", "words"),
    [
        (6, "2 b +", "2 b  +", ("round 1 is misaligned",)),
        (5, "1.5    2    ", "1.5    2     ", ("misaligned",)),
        (4, "001    1", "001    A", ("starting rank", "'A'")),
        (4, "001    1 w", "001     1w", ("column 9 must be blank",)),
        (4, "2450", "24x0", ("rating",)),
        (4, "2450", "4100", ("above 4000",)),
        (4, "   4 w 1", "   9 w 1", ("opponent 9 is not a player",)),
        (4, "   4 w 1", "   3 w 1", ("paired with 3", "line 6")),
        (5, "   3 w -", "   4 w -", ("paired with 4", "line 7")),
        (4, "   4 w 1", "   4 b 1", ("both have colour 'b'", "line 7")),
        (4, "   4 w 1", "   4 w 0", ("codes 0 (player 1, White) and 0", "line 7", "do not make one result")),
        (4, "   4 w 1", "   4 w X", ("unknown result code 'X'",)),
        (4, "   4 w 1", "   4 q 1", ("unknown colour",)),
        (4, "   4 w 1", "   4 w H", ("bye code H with opponent 4",)),
        (4, "   4 w 1", "   4 - 1", ("needs colour w or b",)),
        (4, "   4 w 1", "   1 w 1", ("paired with himself",)),
        (4, "2.0    1", "2.5    1", ("points column says 2.5", "add up to 2.0")),
        (4, "2.0    1", "2,0    1", ("points", "not a number")),
        (7, "001    4", "001    3", ("starting rank 3 is already used on line 6",)),
        (3, "XXR 3", "XXR 99999999999999999999", ("number of rounds",)),
        (3, "XXR 3", "XXR 5000", ("1 to 999",)),
        (2, "022 Testville", "hello world", ("not a TRF record",)),
        (2, "022 Testville", "012 Another name", ("second tournament name",)),
        (2, "022 Testville", "202 BH,SB", ("unknown tie-break code 'BH'",)),
        (2, "022 Testville", "162  W 3.0    Q 1.0", ("unknown scoring code 'Q'",)),
        (2, "022 Testville", "162  W 0.0", ("win must be worth more than 0",)),
        (2, "022 Testville", "162  W three", ("cannot read the scoring",)),
        (2, "022 Testville", "XXS WW=1 BW=2", ("two values",)),
    ],
)
def test_malformed_line_gives_format_error_naming_file_and_line(
    line: int, old: str, new: str, words: tuple[str, ...]
) -> None:
    assert_format_error(broken(line, old, new), line, *words)


def test_bye_with_a_colour_is_refused() -> None:
    assert_format_error(trf(player(1, "A", "1.0", "0000 w F"), player(2, "B", "0.0", "0000 - Z")), 1, "colour w")


def test_pair_meeting_twice_in_a_single_round_robin_is_refused_by_the_core() -> None:
    text = trf(
        "XXR 3",
        player(1, "A", "1.0", "   2 w 1", "   2 b 0"),
        player(2, "B", "1.0", "   1 b 0", "   1 w 1"),
        player(3, "C", "1.0", "   4 w 1", "   4 b 0"),
        player(4, "D", "1.0", "   3 b 0", "   3 w 1"),
    )
    assert_format_error(text, 3, "already met")


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("", 0, ("empty file",)),
        ("  \n\n \n", 0, ("empty file",)),
        ("\x00\x01\x02PK\x03\x04", 1, ("not a text file",)),
        ("012 ok\n012 broken \ud800 surrogate\n", 2, ("not a text file",)),
        ("012 Just a name\n022 Town\n", 0, ("no player records",)),
        (trf("012 Solo", player(1, "A", "0.0")), 2, ("at least 2 players",)),
        ("junk", 1, ("not a TRF record",)),
    ],
)
def test_files_that_are_not_a_round_robin_give_format_error(text: str, line: int, words: tuple[str, ...]) -> None:
    assert_format_error(text, line, *words)


def test_invalid_tournament_id_is_refused() -> None:
    with pytest.raises(FormatError, match="invalid tournament id"):
        parse_trf(SINQUEFIELD.read_text(encoding="utf-8"), "sq.trf", "no spaces allowed")


@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_any_text_reads_or_gives_format_error(text: str) -> None:
    with contextlib.suppress(FormatError):
        parse_trf(text, "fuzz.trf")


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.data())
def test_damaged_real_file_reads_or_gives_format_error(data: st.DataObject) -> None:
    text = EXERCISE16.read_text(encoding="utf-8")
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(text) - 1))
        text = text[:at] + data.draw(st.sampled_from(list("0123456789 =+-wbWDLHFUZ.\nx"))) + text[at + 1 :]
    try:
        tf = parse_trf(text, "fuzz.trf")
    except FormatError:
        return
    state_from(tf)  # whatever reads must fold
