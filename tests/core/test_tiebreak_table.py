"""The tie-break table: one rule per kind that every consumer reads, and a kind added by registering one rule."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import column, fold_all, game, opened, ranks
from tracker.core.errors import EventRejected, ProjectionUnavailable
from tracker.core.projection import project
from tracker.core.standings import standings
from tracker.core.tiebreaks import RULES, known_codes, parse_tiebreak, register, rule_of, unregister
from tracker.core.tiebreaks import ks as koya
from tracker.core.tiebreaks.rule import Column, Rule
from tracker.protocol import column_words

CORE = Path(__file__).resolve().parents[2] / "tracker" / "core"


def _events() -> list:
    # 1 beats 2, 3 beats 4, 1–3 and 2–4 drawn: 1 and 3 tie on 1½, 2 and 4 on ½
    return [
        game(1, 1, 2, "1-0"),
        game(1, 3, 4, "1-0"),
        game(2, 1, 3, "1/2-1/2"),
        game(2, 2, 4, "1/2-1/2"),
    ]


@pytest.fixture
def koya_again() -> Iterator[Rule]:
    """A test-only kind: Koya under a second name (``KOYA``), registered as one rule, as a new module would be."""
    rule = replace(koya.RULE, kind="KOYA", name="Koya again", syntax="", parse=None, listed=50)
    register(rule)
    yield rule
    unregister("KOYA")


@pytest.fixture
def unprojectable() -> Iterator[Rule]:
    """A test-only kind with a live column and nothing for the projection: the start number, higher first."""

    def reverse(t, tb):  # type: ignore[no-untyped-def]
        return Column(list(t.start_nos), 1)

    rule = Rule(kind="REV", name="Reverse", what=lambda tb: "test", better="", listed=51, column=reverse)
    register(rule)
    yield rule
    unregister("REV")


def test_every_module_of_the_package_is_one_kind_of_the_table() -> None:
    modules = {p.stem for p in (CORE / "tiebreaks").glob("*.py") if p.stem not in ("__init__", "rule")}
    assert {rule.kind.lower() for rule in RULES.values()} == modules
    assert next(iter(RULES)) == "PTS"


def test_known_codes_are_listed_in_the_tables_order() -> None:
    assert known_codes() == "PTS, DE, WON, SB, KS, KS/L±n, STD, BPG, BWG, ARO, TPR, TPN and RTNG"
    with pytest.raises(EventRejected, match="tracker computes PTS, DE"):
        parse_tiebreak("XYZ")


def test_a_registered_kind_ranks_the_standings_and_the_projection_without_another_change(koya_again: Rule) -> None:
    events = [opened(4, tiebreaks=("PTS", "KOYA", "SB")), *_events()]
    plain = [opened(4, tiebreaks=("PTS", "KS", "SB")), *_events()]
    mine, theirs = standings(fold_all(events)), standings(fold_all(plain))
    assert column(mine, "KOYA") == column(theirs, "KS")
    assert ranks(mine) == ranks(theirs)
    projected, expected = project(fold_all(events)), project(fold_all(plain))
    assert [(p.rank_best, p.rank_worst) for p in projected.players] == [
        (p.rank_best, p.rank_worst) for p in expected.players
    ]
    assert column_words(["KOYA"])[0]["name"] == "Koya again"


def test_a_kind_the_projection_cannot_compute_is_refused_with_one_sentence(unprojectable: Rule) -> None:
    events = [opened(4, tiebreaks=("PTS", "REV")), *_events()]
    s = standings(fold_all(events))
    assert ranks(s)[3] < ranks(s)[1]  # ranked by the live column: 3 before 1
    with pytest.raises(ProjectionUnavailable) as refused:
        project(fold_all(events))
    sentence = str(refused.value)
    assert sentence.startswith("the projection does not compute REV: it ranks only by PTS, DE, WON, SB, KS")
    assert "REV" not in sentence.split(":", 1)[1]


def test_a_kind_is_defined_once() -> None:
    with pytest.raises(ValueError, match="defined twice"):
        register(RULES["SB"])


def test_the_words_travel_per_code_with_the_direction() -> None:
    words = {w["code"]: w for w in column_words(["DE", "KS/L-2", "TPN", "RTNG"])}
    assert words["TPN"]["better"] == "lower is better" and words["TPN"]["lower_first"]
    assert words["RTNG"]["better"] == "higher is better" and not words["RTNG"]["lower_first"]
    assert "moved by -2 half-point steps" in words["KS/L-2"]["what"]
    assert rule_of(parse_tiebreak("ks/l+1")).kind == "KS"


def test_no_consumer_outside_the_table_names_a_kind() -> None:
    """The standings and the projection read the rules: no comparison with a kind's code is left in them."""
    kinds = set(RULES) - {"PTS", "KS"}  # PTS is the score itself; KS is what the projection projects
    readers = [CORE / "standings.py", *sorted((CORE / "projection").glob("*.py"))]
    for path in readers:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                named = [c.value for c in (node.left, *node.comparators) if isinstance(c, ast.Constant)]
                assert not kinds & set(named), f"{path.name}:{node.lineno} compares with a kind's code"


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(3, 14),
    cycles=st.sampled_from(["single", "double"]),
    results=st.lists(st.sampled_from(["1-0", "0-1", "1/2-1/2", "1/2-1/2", "1/2-1/2"]), min_size=1, max_size=200),
    played=st.floats(0.05, 1.0),
)
def test_direct_encounter_scores_its_groups_alike_from_the_live_sums_and_from_a_crosstables_points(
    n: int, cycles: str, results: list[str], played: float
) -> None:
    """The live scoring (sparse for players with fewer games than the group) and the projection's agree."""
    from tests.builders import berger
    from tracker.core.tiebreaks import de

    rounds = berger(n, 2 if cycles == "double" else 1)
    pairs = [(r.number, w, b) for r in rounds for w, b in r.pairs]
    pairs = pairs[: max(1, int(len(pairs) * played))]
    picks = iter(results * (1 + len(pairs) // len(results)))
    t = fold_all([opened(n, format=cycles), *(game(r, w, b, next(picks)) for r, w, b in pairs)])  # type: ignore[arg-type]
    points = [[0] * n for _ in range(n)]
    meetings = [[0] * n for _ in range(n)]
    for i in range(n):
        for e in t.entries[i].values():
            if e.is_game:
                points[i][e.opponent] += e.units
                meetings[i][e.opponent] += 1
    weight = [[2 // m if m else 0 for m in row] for row in meetings]
    everyone = list(range(n))
    for group in (everyone, everyone[: n // 2 + 1], everyone[1::2]):
        if len(group) > 1:
            assert de.resolve(group, de.live_scores(t)) == de.resolve(group, de.final_scores(points, weight))
