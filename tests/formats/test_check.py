"""``tracker check FILE`` and ``tracker standings --rules/--tiebreaks`` on real files and crafted variants.

A consistent file is tracker's own export (ranks from its standings, values
written as ``XXT`` records); each variant changes one thing an arbiter
program gets wrong — two places swapped, a Sonneborn-Berger value computed
without the forfeit, Koya on the other basis, BPG under the other edition, a
typing error — and the check must name the players and the cause.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import msgspec
import pytest

from tests.builders import fold_all, game, opened
from tests.conftest import data_file
from tracker.cli import main
from tracker.core.events import Event, Player
from tracker.core.standings import Standings, standings
from tracker.formats.files import read_file
from tracker.formats.trf import export_trf

EXERCISE = data_file("fide-tec-exercise16-rr6.trf")


def _values(s: Standings, codes: Sequence[str]) -> list[str]:
    """``XXT`` records for ``codes`` (in the file's order) from standings ``s``."""
    lines = []
    for row in sorted(s.rows, key=lambda r: r.start_no):
        values = [str(float(row.tiebreaks[s.codes.index(c)])) for c in codes]
        lines.append(f"XXT {row.start_no} {' '.join(values)}")
    return lines


def _exported(tmp_path: Path, events: Sequence[Event], name: str, xxt: Sequence[str] = ()) -> Path:
    text = export_trf(fold_all(events))
    path = tmp_path / name
    path.write_text(text + "".join(f"{line}\n" for line in xxt), encoding="utf-8")
    return path


def _exercise(codes: tuple[str, ...] = ("PTS", "DE", "SB", "KS")) -> list[Event]:
    tf = read_file(str(EXERCISE))
    return [msgspec.structs.replace(tf.opened, tiebreaks=codes), *tf.events]


def _check(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> tuple[int, dict[str, object]]:
    code = main(["check", str(path), "--format", "json", *args])
    return code, json.loads(capsys.readouterr().out)


def _swap_ranks(text: str, a: int, b: int) -> str:
    """The rank column (86-89) of start numbers ``a`` and ``b`` exchanged."""
    lines = text.splitlines()
    rank = {int(line[4:8]): line[85:89] for line in lines if line.startswith("001")}
    out = []
    for line in lines:
        if line.startswith("001") and int(line[4:8]) in (a, b):
            other = b if int(line[4:8]) == a else a
            line = line[:85] + rank[other] + line[89:]
        out.append(line)
    return "\n".join(out) + "\n"


def test_a_consistent_export_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = _exercise()
    s = standings(fold_all(events))
    path = _exported(tmp_path, events, "ok.trf", _values(s, ("DE", "SB", "KS")))
    code, report = _check(capsys, path)
    assert (code, report["agrees"], report["disagreements"]) == (0, True, [])
    assert report["checked"] == 6 + 6 * 3
    assert main(["check", str(path)]) == 0
    assert "agree" in capsys.readouterr().out


def test_swapped_places_are_flagged_with_both_names_and_the_deciding_criterion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = _exercise()
    good = _exported(tmp_path, events, "good.trf")
    ranks = {r.start_no: r.rank for r in standings(fold_all(events)).rows}
    first, second = sorted(ranks, key=ranks.__getitem__)[:2]  # Alyx 1st, then the next on SB
    bad = tmp_path / "swapped.trf"
    bad.write_text(_swap_ranks(good.read_text(encoding="utf-8"), first, second), encoding="utf-8")
    code, report = _check(capsys, bad)
    assert code == 1
    found = report["disagreements"]
    assert isinstance(found, list)
    assert sorted(d["start_no"] for d in found) == sorted([first, second])
    assert all(d["what"] == "rank" for d in found)
    assert all("order" in d["cause"] and "the other way" in d["cause"] for d in found)
    assert main(["check", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "the official standings disagree on 2" in out
    names = {p.start_no: p.name for p in read_file(str(EXERCISE)).opened.players}
    assert names[first] in out and names[second] in out


def test_sb_computed_without_the_forfeit_is_blamed_on_forfeit_handling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Helene (6) won her round-4 game against Franck (5) by forfeit: without it as a game her SB loses 1 × 1½
    events = _exercise()
    s = standings(fold_all(events))
    xxt = _values(s, ("DE", "SB", "KS"))
    xxt[5] = xxt[5].replace(" 2.25 ", " 0.75 ")
    assert " 0.75 " in xxt[5]
    code, report = _check(capsys, _exported(tmp_path, events, "sb.trf", xxt))
    assert code == 1
    (d,) = report["disagreements"]
    assert (d["start_no"], d["name"], d["what"], d["official"], d["computed"]) == (6, "Helene", "SB", 0.75, 2.25)
    assert d["cause"].startswith("forfeit handling")


def test_koya_on_the_rounds_basis_is_blamed_on_the_basis(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 5 players, 5 rounds, 4 games each: line 2 (games basis) or 2½ (rounds basis); 3 scores exactly 2
    results = [(1, 2), (1, 3), (1, 4), (1, 5), (2, 3), (2, 4), (2, 5), (3, 4), (3, 5), (4, 5)]
    rounds = {(1, 2): 1, (3, 4): 1, (1, 3): 2, (2, 5): 2, (1, 4): 3, (3, 5): 3, (1, 5): 4, (2, 4): 4}
    rounds |= {(2, 3): 5, (4, 5): 5}
    games = [game(rounds[(w, b)], w, b, "1-0") for w, b in results]
    events: list[Event] = [opened(5, tiebreaks=("PTS", "KS")), *games]
    on_rounds = standings(fold_all([msgspec.structs.replace(events[0], basis="rounds"), *games]))
    code, report = _check(capsys, _exported(tmp_path, events, "basis.trf", _values(on_rounds, ("KS",))))
    assert code == 1
    found = report["disagreements"]
    assert isinstance(found, list) and found
    assert {d["start_no"] for d in found} == {1, 2}  # 3 (2 points) qualifies only on the games basis
    assert all(d["cause"].startswith("different basis") for d in found)


def test_bpg_that_counts_a_forfeit_is_not_blamed_on_an_edition(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 2 lost round 1 by forfeit with Black; a program that counts it says BPG 2.  Both editions count games
    # played at the board only, as the FIDE TEC server does (tests/core/test_tec_readings.py): 1, whichever
    # edition the file is read under, so the edition is not the cause.
    players = tuple(Player(start_no=k, name=f"P{k}", rating=2000) for k in range(1, 5))
    first = msgspec.structs.replace(opened(4, tiebreaks=("PTS", "BPG")), players=players)
    games = [
        game(1, 1, 2, "+-"),
        game(1, 4, 3, "1/2-1/2"),
        game(2, 2, 3, "1-0"),
        game(2, 1, 4, "1/2-1/2"),
        game(3, 4, 2, "1/2-1/2"),
        game(3, 1, 3, "1-0"),
    ]
    values = _values(standings(fold_all([first, *games])), ("BPG",))
    assert values[1] == "XXT 2 1.0"
    values[1] = "XXT 2 2.0"
    path = _exported(tmp_path, [first, *games], "edition.trf", values)
    for rules in ("2024", "2026"):
        code, report = _check(capsys, path, "--rules", rules)
        assert code == 1
        found = report["disagreements"]
        assert isinstance(found, list)
        bpg = [d for d in found if d["what"] == "BPG"]
        assert [(d["start_no"], d["official"], d["computed"]) for d in bpg] == [(2, 2, 1)]
        assert not any(d["cause"].startswith("different edition") for d in found)


def test_a_typing_error_has_no_usual_cause(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = _exercise()
    xxt = _values(standings(fold_all(events)), ("DE", "SB", "KS"))
    xxt[0] = re.sub(r" 2\.0$", " 2.5", xxt[0])  # Alyx's KS 2 typed as 2½
    code, report = _check(capsys, _exported(tmp_path, events, "typo.trf", xxt))
    assert code == 1
    (d,) = report["disagreements"]
    assert (d["name"], d["what"]) == ("Alyx", "KS")
    assert d["cause"].startswith("no usual cause")


def test_the_shared_files_without_tiebreak_records_say_the_default_order_was_used(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, report = _check(capsys, data_file("sinquefield-cup-2021.trf"))
    assert code == 1
    found = report["disagreements"]
    assert isinstance(found, list)
    assert all("names no tie-breaks" in d["cause"] for d in found)


def test_a_file_without_ranks_or_values_has_nothing_to_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = export_trf(fold_all(_exercise()))
    bare = "\n".join(line[:85] + "    " + line[89:] if line.startswith("001") else line for line in text.splitlines())
    path = tmp_path / "bare.trf"
    path.write_text(bare + "\n", encoding="utf-8")
    assert main(["check", str(path)]) == 2
    assert "no ranks" in capsys.readouterr().err


def test_standings_with_std_tpn_rtng_and_rules(capsys: pytest.CaptureFixture[str]) -> None:
    path = "tests/data/three-one-zero.trf"  # 3-1-0 scoring, started 2025/09/01: read under 2024
    assert main(["standings", path, "--tiebreaks", "PTS,STD,TPN,RTNG", "--format", "json"]) == 1
    assert "2026 edition" in capsys.readouterr().err
    assert main(["standings", path, "--tiebreaks", "PTS,STD,TPN,RTNG", "--rules", "2026", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["rules"] == "2026"
    rows = {r["start_no"]: r for r in doc["standings"]}
    assert list(rows[1]["tiebreaks"])[:3] == ["STD", "TPN", "RTNG"]
    # Ant: W = W (7 points under 3-1-0) → STD 2½; Dog: L W - → STD 1
    assert (rows[1]["points"], rows[1]["tiebreaks"]["STD"]) == (7, 2.5)
    assert (rows[4]["points"], rows[4]["tiebreaks"]["STD"]) == (3, 1)
    assert rows[3]["tiebreaks"]["TPN"] == 3
    assert main(["standings", path, "--rules", "2024"]) == 0
    assert "C.07 2024" in capsys.readouterr().out
