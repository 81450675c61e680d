"""``tracker standings FILE --worth``: what results are worth, as a table after the standings (issue 39).

The norm cup of tests/web/test_worth_pages.py (an IM of 2480 against nine GMs of 2600, seven rounds in, the IM
on 3½) exported as tracker writes TRF, read back by the CLI: each row's rating change and performance are
tracker.core.worth.rating's, the IM's norm line its sentence, and with --prizes the money the prize search
gives; in German the words and the decimal comma are German.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from tests.builders import fold_all
from tests.web.test_worth_pages import _events
from tracker.cli import main
from tracker.core.standings import standings
from tracker.core.worth.prizes import money
from tracker.core.worth.rating import one_decimal, rating_changes
from tracker.formats.trf.write import trf_bytes


def _rows(out: str) -> dict[str, list[str]]:
    """The --worth table's rows by player name: the cells between the box's bars."""
    start = out.index("What results are worth") if "What results are worth" in out else out.index("Was die Ergebnisse")
    lines: list[list[str]] = []
    for line in out[start:].splitlines():
        if not line.startswith("│"):
            continue
        cells = [c.strip() for c in line.strip("│").split("│")]
        if cells[1] or not lines:  # a row's first line: its rating cell ("–" or a change) is never empty
            lines.append(cells)
        else:  # a row wrapped on a narrow terminal: its cells go on below
            lines[-1] = [f"{a} {b}".strip() for a, b in zip(lines[-1], cells, strict=True)]
    return {cells[0]: cells[1:] for cells in lines}


def test_the_worth_table_says_each_players_rating_change_performance_norms_and_money(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    t = fold_all(_events())
    path = tmp_path / "norm-cup.trf"
    path.write_bytes(trf_bytes(t))
    assert main(["standings", str(path), "--worth", "--prizes", "1000,600,400", "--sharing", "hort"]) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    changes = {p.name: c for p, c in zip(t.opened.players, rating_changes(t), strict=True)}
    paid = {m.start_no: m for m in money(t, standings(t), (Fraction(1000), Fraction(600), Fraction(400)), "hort")}
    assert set(rows) == set(changes)
    for p in t.opened.players:
        c = changes[p.name]
        value = one_decimal(c.change)
        sign = "+" if value > 0 else "−" if value < 0 else ""
        m = paid[p.start_no]
        prize = f"{m.least}" if m.least == m.most else f"{m.least}–{m.most}"
        assert rows[p.name][:2] == [f"{sign}{abs(value):.1f}", str(c.performance)], p.name
        assert rows[p.name][3] == prize, p.name
    assert rows["Norman, Ada"][2] == "Norman needs 1 from the last 2 games for a GM norm"
    assert rows["Grandmaster2, A"][2] == "–"


def test_the_worth_table_in_german(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = fold_all(_events())
    path = tmp_path / "norm-cup.trf"
    path.write_bytes(trf_bytes(t))
    assert main(["--lang", "de", "standings", str(path), "--worth"]) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    value = one_decimal(next(c for c in rating_changes(t) if c.start_no == 1).change)
    assert rows["Norman, Ada"][0] == f"+{value:.1f}".replace(".", ",")
    assert rows["Norman, Ada"][2] == "Norman braucht 1 aus den letzten 2 Partien für eine GM-Norm"
    assert "Elo ±" in out and "Normen" in out
