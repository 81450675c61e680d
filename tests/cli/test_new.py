"""``tracker new``: a start list without a pairing program, FIDE's Berger tables as its schedule (issue 28, item 9).

The expected tables are FIDE's (Handbook C.05, Annex 1), written out here as data: for 8 players round 1
is 1–8, 2–7, 3–6, 4–5 and each later round follows from the construction the annex describes (player n
fixed, the others turning), so the tables can be checked by hand against the published ones.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tracker.core.errors import FormatError
from tracker.formats import state_from
from tracker.formats.berger import berger_schedule, berger_table
from tracker.formats.startlist import berger_tournament, parse_startlist
from tracker.formats.trf import export_trf, parse_trf

#: FIDE Berger table for 7 or 8 players (C.05 Annex 1), round by round, White first.
FIDE_8 = [
    [(1, 8), (2, 7), (3, 6), (4, 5)],
    [(8, 5), (6, 4), (7, 3), (1, 2)],
    [(2, 8), (3, 1), (4, 7), (5, 6)],
    [(8, 6), (7, 5), (1, 4), (2, 3)],
    [(3, 8), (4, 2), (5, 1), (6, 7)],
    [(8, 7), (1, 6), (2, 5), (3, 4)],
    [(4, 8), (5, 3), (6, 2), (7, 1)],
]
#: FIDE Berger table for 9 or 10 players.
FIDE_10 = [
    [(1, 10), (2, 9), (3, 8), (4, 7), (5, 6)],
    [(10, 6), (7, 5), (8, 4), (9, 3), (1, 2)],
    [(2, 10), (3, 1), (4, 9), (5, 8), (6, 7)],
    [(10, 7), (8, 6), (9, 5), (1, 4), (2, 3)],
    [(3, 10), (4, 2), (5, 1), (6, 9), (7, 8)],
    [(10, 8), (9, 7), (1, 6), (2, 5), (3, 4)],
    [(4, 10), (5, 3), (6, 2), (7, 1), (8, 9)],
    [(10, 9), (1, 8), (2, 7), (3, 6), (4, 5)],
    [(5, 10), (6, 4), (7, 3), (8, 2), (9, 1)],
]

CSV = """name,rating,fide_id,federation,title
"Ødegård, Åse",1850,1234567,NOR,WFM
"Müller, Jürgen",1900,,GER,
"Nuñez, José",1700,22334455,ESP,
"Smith, Anne",,,,
"Łukasz, Żółć",2010,,POL,
"""


def test_the_8_and_10_player_tables_are_fides() -> None:
    assert [list(r.pairs) for r in berger_table(8)] == FIDE_8
    assert [list(r.pairs) for r in berger_table(10)] == FIDE_10


def test_an_odd_field_uses_the_next_table_and_whoever_meets_the_last_number_is_free() -> None:
    for n, table in ((7, FIDE_8), (9, FIDE_10)):
        rounds = berger_table(n)
        for r, fide in zip(rounds, table, strict=True):
            assert list(r.pairs) == [p for p in fide if n + 1 not in p]
            assert r.free == next(a if b == n + 1 else b for a, b in fide if n + 1 in (a, b))


@pytest.mark.parametrize("n", range(3, 21))
def test_every_pair_meets_once_per_cycle_and_colours_balance(n: int) -> None:
    for cycles in (1, 2):
        rounds = berger_schedule(n, cycles)
        assert len(rounds) == (n - 1 + n % 2) * cycles
        games = [frozenset(p) for r in rounds for p in r.pairs]
        assert len(games) == n * (n - 1) // 2 * cycles and len(set(games)) == n * (n - 1) // 2
        whites = [sum(1 for r in rounds for w, _ in r.pairs if w == p) for p in range(1, n + 1)]
        assert max(whites) - min(whites) <= (1 if cycles == 1 else 2)
        if cycles == 2:  # the second cycle: the same games with colours reversed
            per = len(rounds) // 2
            first = {(r.number, p) for r in berger_table(n) for p in r.pairs}
            assert {(r.number - per, (b, w)) for r in rounds[per:] for w, b in r.pairs} == first


def test_a_double_round_robin_swaps_the_first_cycles_last_two_rounds() -> None:
    rounds = berger_schedule(8, 2)
    assert [list(r.pairs) for r in rounds[:7]] == [*FIDE_8[:5], FIDE_8[6], FIDE_8[5]]


def test_a_csv_start_list_becomes_a_trf_that_reads_back_with_its_schedule() -> None:
    players = parse_startlist(CSV, "club.csv")
    assert [p.name for p in players][:2] == ["Ødegård, Åse", "Müller, Jürgen"]
    assert (players[0].rating, players[0].fide_id, players[0].federation, players[0].title) == (
        1850,
        "1234567",
        "NOR",
        "WFM",
    )
    tf = berger_tournament(players, "Club Championship 2026", start_date="2026/04/01")
    text = export_trf(state_from(tf), "utf-8")  # names as they are (the Latin-1 default: test_trf_encoding.py)
    back = parse_trf(text, "club.trf")
    assert back.opened.players == players
    assert back.opened.schedule == tuple(tuple(sorted(r.pairs)) for r in berger_table(5))  # TRF has no boards
    assert back.opened.rules == "2026" and "042 2026/04/01" in back.opened.records
    assert [(e.round, e.player) for e in back.events] == [(r.number, r.free) for r in berger_table(5)]  # type: ignore[attr-defined]
    line = next(x for x in text.splitlines() if x.startswith("001    1"))
    # TRF16/26 columns: start rank 5-8, title 11-13, name 15-47, rating 49-52, federation 54-56, FIDE id 58-68
    assert (line[4:8], line[10:13], line[14:47].rstrip(), line[48:52], line[53:56], line[57:68].strip()) == (
        "   1",
        "WFM",
        "Ødegård, Åse",
        "1850",
        "NOR",
        "1234567",
    )
    assert line[91:101] == "0000 - Z  " and line[101:107] == "   2 w"  # round 1 free, round 2 against 2


def test_a_text_start_list_reads_names_ratings_and_ids() -> None:
    text = "# club\nCarlsen, Magnus 2830 1503014\nSo, Wesley 2770\n\nCaruana, Fabiano\n"
    players = parse_startlist(text, "players.txt")
    assert [(p.start_no, p.name, p.rating, p.fide_id) for p in players] == [
        (1, "Carlsen, Magnus", 2830, "1503014"),
        (2, "So, Wesley", 2770, ""),
        (3, "Caruana, Fabiano", 0, ""),
    ]


@pytest.mark.parametrize(
    ("text", "path", "words"),
    [
        ("Carlsen, Magnus\n", "p.txt", "at least 2 players"),
        ("rating\n2000\n", "p.csv", "no 'name' column"),
        ("name,rating\nA,abc\nB,2000\n", "p.csv", "not a number from 0 to 4000"),
        ("name,fide_id\nA,1\nB,1\n", "p.csv", "already on line 2"),
        (f"{'X' * 40}\nB\n", "p.txt", "longer than TRF's 33 columns"),
    ],
)
def test_a_bad_start_list_gives_one_sentence_with_its_line(text: str, path: str, words: str) -> None:
    with pytest.raises(FormatError) as exc:
        parse_startlist(text, path)
    assert words in str(exc.value)


def test_tracker_new_writes_a_file_tracker_replay_and_standings_read(tmp_path: Path) -> None:
    players = tmp_path / "club.csv"
    players.write_text(CSV, encoding="utf-8")
    out = tmp_path / "club.trf"
    cli = [sys.executable, "-m", "tracker.cli"]
    done = subprocess.run(
        [*cli, "new", str(players), "--name", "Club 2026", "--cycles", "2", "--tiebreaks", "SB,KS", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "5 players, 10 rounds" in done.stderr
    tf = parse_trf(out.read_text(encoding="latin-1"), str(out))  # Latin-1 by default, as the FIDE TEC server reads
    assert tf.opened.format == "double" and tf.opened.rounds == 10 and tf.opened.tiebreaks == ("PTS", "SB", "KS")
    assert "192 FIDE_DOUBLEROUNDROBIN" in tf.opened.records
    assert tf.opened.schedule == tuple(tuple(sorted(r.pairs)) for r in berger_schedule(5, 2))
    shown = subprocess.run([*cli, "standings", str(out)], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and "Club 2026" in shown.stdout
    bad = subprocess.run([*cli, "new", str(tmp_path / "missing.csv")], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "cannot read the file" in bad.stderr
