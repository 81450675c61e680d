"""``tracker standings FILE --project``: the tables carry the values of ``--format json``, cell by cell.

The projection's tables are drawn by :class:`tracker.cli.tables.Grid` (issue 38: rich's layout of a
200-player projection cost eight times its JSON).  Here each table is read back from the text — rows
rejoined across their wrapped lines — and every value is compared with the JSON of the same file: the
players' points, KS and rank ranges with their exactness marks, the opponents' qualification, the
scenarios, the declared lines, and every outcome of every pending game.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.builders import pts
from tests.conftest import data_file
from tracker.cli import main
from tracker.cli.tables import Grid, wrap

SINQUEFIELD = str(data_file("sinquefield-cup-2021.trf"))
_MARK = {"clinched": "✔", "eliminated": "✘", "open": "?", "unknown": "…"}
_RESULT_WORDS = {"1-0": "1–0", "1/2-1/2": "½–½", "0-1": "0–1", "+-": "+/−", "-+": "−/+", "--": "−/−"}
_RESULT_MARK = {"1-0": "1", "1/2-1/2": "=", "0-1": "0", "+-": "+", "-+": "-", "--": "x"}


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Every box in ``text``: its header cells and its physical lines' cells (``┃``/``│`` split, stripped)."""
    found: list[tuple[list[str], list[list[str]]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith("┏"):
            i += 1
            continue
        head: list[list[str]] = []
        body: list[list[str]] = []
        i += 1
        while not lines[i].startswith("┡"):
            head.append([c.strip() for c in lines[i].split("┃")[1:-1]])
            i += 1
        i += 1
        while not lines[i].startswith("└"):
            body.append([c.strip() for c in lines[i].split("│")[1:-1]])
            i += 1
        headers = [" ".join(part for part in column if part) for column in zip(*head, strict=True)]
        found.append((headers, body))
    return found


def rows(body: list[list[str]], key: int) -> list[list[str]]:
    """Physical lines rejoined into rows: a row starts where column ``key`` has text."""
    joined: list[list[str]] = []
    for cells in body:
        if cells[key] or not joined:
            joined.append(list(cells))
        else:
            joined[-1] = [f"{a} {b}".strip() if b else a for a, b in zip(joined[-1], cells, strict=True)]
    return joined


def _table(text: str, heading: str) -> list[list[str]]:
    (body,) = [body for headers, body in tables(text) if heading in headers]
    return body


def _range(cell: str) -> tuple[float, bool, float, bool]:
    lo, hi = cell.split("–")
    return float(pts(lo.rstrip("*"))), not lo.endswith("*"), float(pts(hi.rstrip("*"))), not hi.endswith("*")


def _marks(scenario: list[dict[str, Any]] | None) -> str:
    return "—" if scenario is None else "".join(_RESULT_MARK[g["result"]] for g in scenario)


def _same_values(text: str, doc: dict[str, Any]) -> int:
    """Assert that every projection value of ``doc`` is in the tables of ``text``; return the cells compared."""
    p = doc["projection"]
    names = {row["start_no"]: row["name"] for row in doc["standings"]}
    compared = 0
    players = rows(_table(text, "KS range"), 0)
    assert [int(r[0]) for r in players] == [pl["start_no"] for pl in p["players"]]
    for r, pl in zip(players, p["players"], strict=True):
        _, name, points, ks, rank, opponents, by = r
        exact = pl["exact"]
        assert name == names[pl["start_no"]]
        assert _range(points)[::2] == (pl["points_min"], pl["points_max"])
        assert _range(ks) == (pl["ks_min"], exact["ks_min"], pl["ks_max"], exact["ks_max"])
        assert _range(rank) == (pl["rank_best"], exact["rank_best"], pl["rank_worst"], exact["rank_worst"])
        assert opponents.split() == [f"{o['start_no']}{_MARK[o['status']]}" for o in pl["opponents"]]
        best, worst = pl["scenarios"]["rank_best"], pl["scenarios"]["rank_worst"]
        assert by.replace(" ", "") == f"{_marks(best)}/{_marks(worst)}"
        compared += 7
    if p["lines"]:
        body = _table(text, p["lines"][0]["name"])
        for r, pl in zip(rows(body, 0), p["players"], strict=True):
            assert int(r[0]) == pl["start_no"]
            for cell, line in zip(r[2:], pl["lines"], strict=True):
                expected = _MARK[line["status"]]
                if line["status"] in ("open", "unknown"):
                    expected += f"{_marks(line['inside'])}/{_marks(line['outside'])}"
                assert cell.replace(" ", "") == expected
                compared += 1
    games = rows(_table(text, "Outcome"), 2)
    expected_rows = []
    for g in p["games"]:
        for k, o in enumerate(g["outcomes"]):
            label = f"{names[g['white']]} – {names[g['black']]}" if k == 0 else ""
            ks = ", ".join(f"{e['start_no']}: {_pts(e['min'])}–{_pts(e['max'])}" for e in o["ks"]) or "—"
            ranks = ", ".join(f"{e['start_no']}: {e['best']}–{e['worst']}" for e in o["ranks"]) or "—"
            expected_rows.append(
                [str(g["round"] or "?") if k == 0 else "", label, _RESULT_WORDS[o["result"]], ks, ranks]
            )
    # a game's label may wrap onto its second outcome's line: compare the game's label joined over its rows
    assert [r[2:] for r in games] == [r[2:] for r in expected_rows]
    assert [r[0] for r in games] == [r[0] for r in expected_rows]
    labels = " ".join(r[1] for r in games).split()
    assert labels == " ".join(r[1] for r in expected_rows).split()
    return compared + 5 * len(expected_rows)


def _pts(value: float) -> str:
    whole, half = divmod(round(value * 2), 2)
    return ("" if whole == 0 and half else str(whole)) + ("½" if half else "")


def test_the_table_carries_the_json_values_of_an_exact_projection(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("standings", SINQUEFIELD, "--after-round", "7", "--project", "--lines", "1,3")
    text = _run(capsys, *argv)
    doc = json.loads(_run(capsys, *argv, "--format", "json"))
    assert doc["projection"]["exact"] and doc["projection"]["lines"]
    assert _same_values(text, doc) == 10 * 7 + 10 * 2 + 30 * 5  # players, lines, outcomes


def test_the_table_carries_the_json_values_of_a_fresh_round_robin(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # sound bounds: the * marks and open opponents of a round robin with every game to play; 20 players (190 open
    # games: the search's node budgets end before every extreme is proven; 16 players' 120 are exact since issue 40)
    players = tmp_path / "players.txt"
    players.write_text("".join(f"Player {chr(65 + k)}{chr(97 + k)} Ünal{k}\n" for k in range(20)), encoding="utf-8")
    trf = tmp_path / "fresh.trf"
    assert main(["new", str(players), "-o", str(trf)]) == 0
    capsys.readouterr()
    text = _run(capsys, "standings", str(trf), "--project")
    doc = json.loads(_run(capsys, "standings", str(trf), "--project", "--format", "json"))
    assert not doc["projection"]["exact"] and doc["projection"]["remaining"] == 190
    assert "*" in text
    assert _same_values(text, doc) == 20 * 7 + 190 * 3 * 5


def test_a_grid_fits_its_width_and_wraps_at_spaces() -> None:
    grid = Grid("a title longer than the table is wide", ["No", "Opponents"], [True, False])
    grid.add_row("1", " ".join(f"{k}?" for k in range(2, 40)))
    grid.add_row("12", "—")
    lines = grid.lines(30)
    assert all(len(line) <= 30 for line in lines)
    assert len({len(line) for line in lines if line[0] in "┏┃┡│└"}) == 1  # every box line as wide
    body = rows([[c.strip() for c in line.split("│")[1:-1]] for line in lines if line.startswith("│")], 0)
    assert body == [["1", " ".join(f"{k}?" for k in range(2, 40))], ["12", "—"]]
    assert wrap("abcdefgh", 3) == ["abc", "def", "gh"]
