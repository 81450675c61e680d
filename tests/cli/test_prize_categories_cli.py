"""``tracker standings FILE --category NAME:RULE:P1,…``: prize categories on the command line (issue 39).

A six-player round robin written as tracker writes TRF (start list ratings, sexes, birth dates, the ``042``
start date), read back by the CLI: the JSON rows say which list pays each player (``prize_from``) once every
game is in and, while games remain, ``prize_min``/``prize_max`` with the list of each; a bad ``--category``
is one line on stderr naming what is wrong, and nothing on stdout.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import msgspec
import pytest

from tests.builders import berger, fold_all, game, opened
from tracker.cli import main
from tracker.core.events import Event, GameResult
from tracker.core.standings import standings
from tracker.core.worth.categories import category
from tracker.core.worth.prizes import money
from tracker.formats.trf.write import trf_bytes

_PEOPLE = [  # (rating, sex, birth)
    (2300, "m", "1990/01/01"),
    (2250, "w", "1995/03/03"),
    (1950, "m", "2009/07/07"),
    (1900, "w", "1988/02/02"),
    (1800, "m", "1970/05/05"),
    (0, "w", "2010"),
]


def _events(left: int = 0) -> list[Event]:
    """1 beats everyone, 2 everyone but 1, … (player k on 6 − k), the last ``left`` rounds unplayed."""
    rounds = berger(6)
    first = opened(6, schedule=[r.pairs for r in rounds])
    people = tuple(
        msgspec.structs.replace(p, rating=r, sex=s, birth=b)
        for p, (r, s, b) in zip(first.players, _PEOPLE, strict=True)
    )
    events: list[Event] = [msgspec.structs.replace(first, players=people, records=("042 2026/05/01",))]
    for r in rounds[: len(rounds) - left]:
        for w, b in r.pairs:
            result: GameResult = "1-0" if w < b else "0-1"
            events.append(game(r.number, w, b, result))
    return events


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str, left: int = 0) -> tuple[int, str, str]:
    path = tmp_path / "cats.trf"
    path.write_bytes(trf_bytes(fold_all(_events(left))))
    code = main(["standings", str(path), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


_CATS = ["--category", "U2000:rating<2000:300,150", "--category", "women:sex=w:200", "--category", "juniors:age<20:150"]


def test_final_rows_say_which_prize_each_player_gets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(tmp_path, capsys, "--format", "json", "--prizes", "1000,250", "--sharing", "hort", *_CATS)
    assert code == 0
    document = json.loads(out)
    rows = {r["start_no"]: r for r in document["standings"]}
    # places 1000, 250; U2000 300 (to 3, above 2nd place's 250), 150; women 200; juniors 150
    got = {sno: (r["prize"], r["prize_from"]) for sno, r in rows.items()}
    assert got == {
        1: (1000, "place"),
        2: (250, "place"),  # the women's 200 is less than 2nd place's 250
        3: (300, "U2000"),  # a junior too, but the U2000 prize is worth more
        4: (200, "women"),  # 200 > U2000's 150
        5: (150, "U2000"),
        6: (150, "juniors"),  # unrated: no rating band; born 2010
    }
    assert [c["name"] for c in document["categories"]] == ["U2000", "women", "juniors"]
    assert document["categories"][0] == {
        "name": "U2000",
        "rule": "rating<2000",
        "prizes": [300, 150],
        "eligible": [3, 4, 5],
    }


def test_while_games_remain_rows_carry_the_least_and_most_with_their_lists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(tmp_path, capsys, "--format", "json", "--prizes", "1000,250", *_CATS, left=2)
    assert code == 0
    rows = {r["start_no"]: r for r in json.loads(out)["standings"]}
    t = fold_all(_events(2))
    cats = [
        category("U2000", "rating<2000", [Fraction(300), Fraction(150)], t.opened.players, t.opened.records),
        category("women", "sex=w", [Fraction(200)], t.opened.players, t.opened.records),
        category("juniors", "age<20", [Fraction(150)], t.opened.players, t.opened.records),
    ]
    for m in money(t, standings(t), [Fraction(1000), Fraction(250)], "hort", categories=cats):
        row = rows[m.start_no]
        assert "prize" not in row
        assert (row["prize_min"], row["prize_max"]) == (float(m.least), float(m.most))
        assert (row["prize_min_from"], row["prize_max_from"]) == (m.least_from, m.most_from)
        assert row["prize_exact"] is True
    assert rows[6]["prize_max_from"] is not None and rows[1]["prize_max_from"] == "place"


def test_categories_alone_need_no_place_prizes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(tmp_path, capsys, "--format", "json", "--category", "women:sex=w:200")
    assert code == 0
    rows = {r["start_no"]: r for r in json.loads(out)["standings"]}
    assert (rows[2]["prize"], rows[2]["prize_from"]) == (200, "women")
    assert (rows[1]["prize"], rows[1]["prize_from"]) == (0, None)


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("U2000", "--category takes NAME:RULE:PRIZES"),
        ("U2000:rating<=2000:300", "rule is rating<N, sex=w, sex=m or age<N, not 'rating<=2000'"),
        ("place:sex=w:300", "needs a name of its own"),
        (":sex=w:300", "needs a name of its own"),
        ("U2000:rating<2000:150,300", "150,300 is not in non-increasing order"),
        ("U2000:rating<2000:abc", "--category takes NAME:RULE:PRIZES"),
    ],
)
def test_a_bad_category_is_one_line_naming_what_is_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, said: str
) -> None:
    code, out, err = _run(tmp_path, capsys, "--format", "json", "--category", value)
    assert code != 0 and out == ""
    assert said in err and len(err.strip().splitlines()) == 1, err


def test_a_category_named_twice_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(tmp_path, capsys, "--category", "w:sex=w:200", "--category", "w:sex=m:100")
    assert code != 0 and out == "" and "needs a name of its own" in err and "'w'" in err


def test_the_worth_table_names_a_category_prize(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(tmp_path, capsys, "--worth", "--prizes", "1000,250", *_CATS)
    assert code == 0
    assert "300 (U2000)" in out and "150 (juniors)" in out
