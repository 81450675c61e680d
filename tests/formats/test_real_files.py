"""Files as real arbiter programs write them (issue 19): withdrawals left blank, byte-aligned UTF-8, stray bytes."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from tests.conftest import TEST_DATA
from tracker.cli import main
from tracker.core.errors import EventRejected, FormatError
from tracker.core.events import ByeRecorded
from tracker.core.standings import Standings, standings
from tracker.core.tiebreaks import parse_tiebreak
from tracker.formats import state_from
from tracker.formats.files import read_file
from tracker.formats.trf import export_trf, parse_trf

DATA = TEST_DATA
WITHDRAWAL = DATA / "withdrawal-blank.trf"
HALF = Fraction(1, 2)


def koya(s: Standings) -> dict[int, Fraction]:
    k = s.codes.index("KS")
    return {row.start_no: row.tiebreaks[k] for row in s.rows}


# -- 1. a blank result in a paired round ------------------------------------------------------


def test_withdrawal_left_blank_gives_the_tec_servers_koya_and_final_standings_with_final() -> None:
    s = standings(state_from(read_file(str(WITHDRAWAL), final=True)))
    assert koya(s) == {1: 0, 2: 0, 3: HALF, 4: 1}
    assert not s.provisional
    assert {row.start_no: row.points for row in s.rows} == {1: Fraction(3, 2), 2: HALF, 3: 1, 4: 1}
    assert {row.start_no: row.games for row in s.rows} == {1: 3, 2: 2, 3: 2, 4: 1}


def test_blank_before_the_last_round_with_results_is_an_unplayed_game_worth_zero() -> None:
    tf = read_file(str(WITHDRAWAL))
    unplayed = [e for e in tf.events if isinstance(e, ByeRecorded)]
    assert [(e.round, e.player, e.kind) for e in unplayed] == [(2, 3, "zero"), (2, 4, "zero")]
    assert not any(
        getattr(e, "round", 0) == 3 and {2, 4} & {getattr(e, "white", 0), getattr(e, "black", 0)} for e in tf.events
    )


def test_blank_in_the_last_round_with_results_stays_pending_without_final() -> None:
    tf = read_file(str(WITHDRAWAL))
    s = standings(state_from(tf))
    assert s.provisional
    assert "--final" in tf.notes[1] and "round 3" in tf.notes[1] and "2–4" in tf.notes[1]
    assert "round 2" in tf.notes[0] and "4–3" in tf.notes[0] and "unplayed" in tf.notes[0]


def test_byes_of_a_freshly_paired_round_do_not_make_the_blank_games_before_it_unplayed() -> None:
    # rounds 2 and 3 are paired (their byes are known) but no game after round 1 has a result
    text = (
        "012 Paired ahead\nXXR 3\n"
        + _static(1, "A, A", "2.0")
        + "".join(b.ljust(10) for b in ("   2 w 1", "   3 w", "0000 - U"))
        + "\n"
        + _static(2, "B, B", "1.0")
        + "".join(b.ljust(10) for b in ("   1 b 0", "0000 - U", "   3 w"))
        + "\n"
        + _static(3, "C, C", "1.0")
        + "".join(b.ljust(10) for b in ("0000 - U", "   1 b", "   2 b"))
        + "\n"
    )
    tf = parse_trf(text, "ahead.trf")
    assert [(e.round, e.player, e.kind) for e in tf.events if isinstance(e, ByeRecorded)] == [
        (1, 3, "pab"),
        (2, 2, "pab"),
        (3, 1, "pab"),
    ]
    assert tf.notes == ()
    assert standings(state_from(tf)).provisional


def test_final_reads_every_blank_as_unplayed_and_says_so() -> None:
    tf = read_file(str(WITHDRAWAL), final=True)
    assert [e.id for e in tf.events if isinstance(e, ByeRecorded) and e.round == 3] == [
        "withdrawal-blank/r3/bye/2",
        "withdrawal-blank/r3/bye/4",
    ]
    assert all("--final" in note for note in tf.notes)


def test_unplayed_game_is_exported_as_the_pairing_with_a_blank_result_and_reads_back() -> None:
    tf = read_file(str(WITHDRAWAL))
    text = export_trf(state_from(tf))
    d = next(line for line in text.splitlines() if line.startswith("001    4"))
    assert d[101:110] == "   3 w   "  # round 2: the pairing kept, no result
    assert parse_trf(text, str(WITHDRAWAL)).events == tf.events


def test_standings_json_carries_the_notes_and_final_makes_it_final(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["standings", str(WITHDRAWAL), "--format", "json", "--final"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["provisional"] is False
    assert {row["start_no"]: row["tiebreaks"]["KS"] for row in payload["standings"]} == {1: 0, 2: 0, 3: 0.5, 4: 1}
    assert len(payload["notes"]) == 2 and "--final" in payload["notes"][0]


def test_standings_table_prints_the_notes_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["standings", str(WITHDRAWAL)]) == 0
    captured = capsys.readouterr()
    assert "provisional" in captured.out
    assert "note: round 3: no result yet for 2–4" in captured.err
    assert "note" not in captured.out


# -- 3. encodings ---------------------------------------------------------------------------


def _static(no: int, name: str, points: str) -> str:
    return f"001 {no:>4} m    {name:<33} {'':>4} {'':<3} {'':>11} {'':<10} {points:>4} {no:>4}  "


def two_players(first: str, second: str = "Other, Player") -> str:
    return "012 Encodings\nXXR 1\n" + _static(1, first, "1.0") + "   2 w 1\n" + _static(2, second, "0.0") + "   1 b 0\n"


def test_a_stray_latin1_byte_in_a_utf8_file_names_its_line_and_byte(tmp_path: Path) -> None:
    text = two_players("Zoë, Anna", "Müller, Player")  # line 4 stays UTF-8
    data = text.encode("utf-8").replace("Zoë".encode(), "Zoë".encode("latin-1"))  # one stray byte on line 3
    path = tmp_path / "stray.trf"
    path.write_bytes(data)
    with pytest.raises(FormatError) as caught:
        read_file(str(path))
    assert caught.value.line == 3
    assert "byte 17 of the line (0xEB) is not UTF-8" in caught.value.problem


def test_a_file_that_is_latin1_throughout_is_read_as_such_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "old.trf"
    path.write_bytes(two_players("Zoë, Anna", "Müller, Player").encode("cp1252"))
    tf = read_file(str(path))
    assert [p.name for p in tf.opened.players] == ["Zoë, Anna", "Müller, Player"]
    assert tf.notes == ("the file is not UTF-8: read as Windows-1252, as older arbiter programs write it",)


# -- 2. columns aligned by UTF-8 bytes ----------------------------------------------------------


def byte_aligned(name: str) -> str:
    """``_static`` as a program that pads names to 33 *bytes* writes it (one space fewer per extra byte)."""
    return _static(1, name, "1.0").replace(name + " " * (33 - len(name)), name + " " * (33 - len(name.encode())))


def test_a_utf8_file_aligned_by_bytes_is_read_by_bytes_with_a_note() -> None:
    good = two_players("Dupont, Émile")
    shifted = good.replace(_static(1, "Dupont, Émile", "1.0"), byte_aligned("Dupont, Émile"))
    assert len(shifted) == len(good) - 1  # one space fewer after "Émile"
    tf = parse_trf(shifted, "bytes.trf")
    assert tf.opened.players[0].name == "Dupont, Émile"
    assert tf.events == parse_trf(good, "bytes.trf").events
    assert tf.notes == (
        "line 3: the columns are aligned by UTF-8 bytes, not characters (a name with accents is padded with "
        "fewer spaces): read that way",
    )


def test_a_utf8_file_aligned_by_characters_reads_with_no_note() -> None:
    tf = parse_trf(two_players("Dupont, Émile"), "chars.trf")
    assert tf.opened.players[0].name == "Dupont, Émile"
    assert tf.notes == ()


def test_a_line_misaligned_both_ways_gives_the_character_columns_error() -> None:
    text = two_players("Dupont, Émile").replace("Émile ", "Émile", 1).replace("Émile", "Émile  ", 1)
    with pytest.raises(FormatError) as caught:
        parse_trf(text, "bad.trf")
    assert caught.value.line == 3
    # one space too many: by characters the points column reads "1.", by bytes " 1."; the first is reported
    assert caught.value.problem == "the points (columns 81-84) '1.' are not a number"


# -- 5. messages -------------------------------------------------------------------------------


def test_a_format_error_is_one_line_on_stderr_when_piped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / ("a-rather-long-folder-name-" * 3) / "tournament.trf"
    path.parent.mkdir()
    path.write_bytes(two_players("Zoë, Anna", "Müller, Player").encode().replace("Zoë".encode(), b"Zo\xeb"))
    assert main(["standings", str(path)]) == 1
    err = capsys.readouterr().err
    assert len(err) > 160
    assert err.count("\n") == 1 and err.endswith("save the file as UTF-8 or correct that character\n")


def test_a_truncated_result_block_says_the_line_is_cut_short() -> None:
    lines = two_players("A, A").splitlines()
    lines[-1] = lines[-1][:95]  # player 2's round 1 ends after the opponent's number
    with pytest.raises(FormatError) as caught:
        parse_trf("\n".join(lines), "cut.trf")
    assert caught.value.line == 4
    assert caught.value.problem == (
        "round 1 is cut short: the line ends after opponent 1 (column 95); "
        "a game needs its colour in column 97 and its result in column 99"
    )


def test_a_block_with_an_opponent_and_no_colour_asks_for_the_colour() -> None:
    text = two_players("A, A").replace("   1 b 0", "   1   0")
    with pytest.raises(FormatError) as caught:
        parse_trf(text, "nocolour.trf")
    assert caught.value.line == 4
    assert caught.value.problem == "round 1: a game against 1 needs colour w or b in column 97"


@pytest.mark.parametrize("value", ["-1", "-7", "x"])
def test_after_round_refuses_what_is_not_a_round_number(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["standings", str(WITHDRAWAL), "--after-round", value])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "argument --after-round:" in err
    assert (
        "is not a round number" if value == "x" else f"a round number is 0 (before round 1) or more, not {value}"
    ) in err


def test_after_round_0_gives_the_start_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["standings", str(WITHDRAWAL), "--after-round", "0", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["standings"]
    assert [(row["start_no"], row["points"], row["games"]) for row in rows] == [
        (1, 0, 0),
        (2, 0, 0),
        (3, 0, 0),
        (4, 0, 0),
    ]


def test_unsigned_koya_limit_is_refused_showing_both_spellings() -> None:
    with pytest.raises(EventRejected) as caught:
        parse_tiebreak("KS/L1")
    assert caught.value.code == "unknown-tiebreak"
    assert "KS/L+1 to raise the 50% line" in caught.value.reason
    assert "KS/L+1 = 50% + ½ point under 1-½-0 scoring" in caught.value.reason
    assert "the FIDE TEC tie-break server reads it as a 1% line" in caught.value.reason
    assert parse_tiebreak("KS/L+1").limit == 1 and parse_tiebreak("ks/l-2").limit == -2


def test_unsigned_koya_limit_in_a_trf_202_record_names_the_line() -> None:
    text = two_players("A, A").replace("XXR 1\n", "XXR 1\n202 KS,KS/L2\n")
    with pytest.raises(FormatError) as caught:
        parse_trf(text, "limit.trf")
    assert caught.value.line == 3
    assert "KS/L+2" in caught.value.problem and "2% line" in caught.value.problem


def test_unsigned_koya_limit_on_the_command_line_is_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["standings", str(WITHDRAWAL), "--tiebreaks", "KS/L1"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "KS/L+1" in err and "1% line" in err
