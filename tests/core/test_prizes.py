"""Prize money per place with sharing none/average/hort: the issue's Hort example, and the least and most money
while games remain against an exhaustive enumeration of the remaining games (small round robins)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import berger, fold_all, game, opened
from tracker.core.events import Event, GameResult
from tracker.core.projection.model import remaining_games
from tracker.core.standings import Standings, standings
from tracker.core.worth.prizes import SHARINGS, Sharing, money, money_at_stake, paid

PRIZES = [Fraction(1000), Fraction(600)]
_STANDINGS = (sys.executable, "-m", "tracker.cli", "standings")


def _hort_case() -> list[Event]:
    # 1 and 2 both finish on 2 of 3, 1 ahead on Sonneborn-Berger (1 beat 3, who drew 4; 2 beat 4, who lost to 3)
    return [
        opened(4),
        game(1, 1, 2, "1/2-1/2"),
        game(1, 3, 4, "1-0"),
        game(2, 1, 3, "1-0"),
        game(2, 2, 4, "1-0"),
        game(3, 4, 1, "1/2-1/2"),
        game(3, 3, 2, "1/2-1/2"),
    ]


def test_hort_example_1st_and_2nd_equal_on_points() -> None:
    """The issue's example: 1st–2nd equal on points, prizes 1000/600: hort 900 and 700, average 800 and 800,
    none 1000 and 600 by the tie-break order."""
    s = standings(fold_all(_hort_case()))
    first, second = s.rows[0], s.rows[1]
    assert first.points == second.points and first.rank == 1 and second.rank == 2
    assert (first.start_no, second.start_no) == (1, 2)
    expected = {"hort": (900, 700), "average": (800, 800), "none": (1000, 600)}
    for sharing, (a, b) in expected.items():
        split = paid(s, PRIZES, sharing)  # type: ignore[arg-type]
        assert (split[1], split[2]) == (a, b), sharing
        assert sum(split.values()) == 1600


def test_final_standings_carry_prize_in_the_json(tmp_path: Path) -> None:
    from tracker.formats.trf import export_trf

    path = tmp_path / "hort.trf"
    path.write_text(export_trf(fold_all(_hort_case())), encoding="utf-8")
    got = {}
    for sharing in SHARINGS:
        out = subprocess.run(
            [*_STANDINGS, str(path), "--format", "json", "--prizes", "1000,600", "--sharing", sharing],
            capture_output=True,
            text=True,
            check=True,
        )
        document = json.loads(out.stdout)
        rows = {r["start_no"]: r for r in document["standings"]}
        assert "prize_min" not in rows[1]
        got[sharing] = (rows[1]["prize"], rows[2]["prize"], rows[3]["prize"])
        assert document["sharing"] == sharing and document["prizes"] == [1000, 600]
    assert got == {"none": (1000, 600, 0), "average": (800, 800, 0), "hort": (900, 700, 0)}


def test_prizes_out_of_order_are_refused(tmp_path: Path) -> None:
    from tracker.formats.trf import export_trf

    path = tmp_path / "t.trf"
    path.write_text(export_trf(fold_all(_hort_case())), encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "tracker.cli", "standings", str(path), "--format", "json", "--prizes", "600,1000"],
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0 and "non-increasing" in out.stderr


# -- exact against every outcome of the remaining games -----------------------------------------------------

_OUTCOMES: tuple[GameResult, ...] = ("1-0", "1/2-1/2", "0-1")


def _split(s: Standings, prizes: list[Fraction], sharing: Sharing) -> dict[int, Fraction]:
    """The reference split, from the rows alone: places 0, 1, …; a group equal on points (and, for none, on
    every criterion: the same rank) shares the prizes of its places equally; hort is half of each."""
    place = [prizes[p] if p < len(prizes) else Fraction(0) for p in range(len(s.rows))]
    out = {}
    for row in s.rows:
        by_points = [p for p, r in enumerate(s.rows) if r.points == row.points]
        by_rank = [p for p, r in enumerate(s.rows) if r.rank == row.rank]
        shared = sum((place[p] for p in by_points), Fraction(0)) / len(by_points)
        ranked = sum((place[p] for p in by_rank), Fraction(0)) / len(by_rank)
        out[row.start_no] = {"none": ranked, "average": shared, "hort": (ranked + shared) / 2}[sharing]
    return out


@st.composite
def _cases(draw: st.DrawFn) -> tuple[int, list[Event], list[Fraction], Sharing]:
    n = draw(st.integers(3, 6))
    rounds = berger(n)
    games = [(r.number, w, b) for r in rounds for w, b in r.pairs]
    left = draw(st.integers(1, min(6, len(games))))
    played = games[: len(games) - left]
    events: list[Event] = [opened(n, schedule=[r.pairs for r in rounds])]
    events += [game(r, w, b, draw(st.sampled_from(_OUTCOMES))) for r, w, b in played]
    count = draw(st.integers(1, n))
    prizes = sorted((Fraction(draw(st.integers(0, 20)) * 50) for _ in range(count)), reverse=True)
    return n, events, prizes, draw(st.sampled_from(SHARINGS))


@settings(max_examples=60, deadline=None)
@given(_cases())
def test_least_and_most_money_are_exact_against_every_outcome(case: tuple[int, list[Event], list, Sharing]) -> None:
    _, events, prizes, sharing = case
    t = fold_all(events)
    pending = remaining_games(t)
    least: dict[int, Fraction] = {}
    most: dict[int, Fraction] = {}
    for outcome in itertools.product(_OUTCOMES, repeat=len(pending)):
        final = fold_all(
            [game(r, t.start_nos[w], t.start_nos[b], res) for (r, w, b), res in zip(pending, outcome, strict=True)],
            t.scenario(),
        )
        for sno, value in _split(standings(final), prizes, sharing).items():
            least[sno] = min(least.get(sno, value), value)
            most[sno] = max(most.get(sno, value), value)
    for m in money(t, standings(t), prizes, sharing):
        assert m.exact and not m.final
        assert (m.least, m.most) == (least[m.start_no], most[m.start_no]), (m.start_no, sharing)
        for value, scenario in ((m.least, m.least_scenario), (m.most, m.most_scenario)):
            assert len(scenario) == len(pending)
            final = fold_all([game(r or 0, w, b, res) for r, w, b, res in scenario], t.scenario())
            assert _split(standings(final), prizes, sharing)[m.start_no] == value


def test_a_complete_tournament_pays_the_final_split() -> None:
    t = fold_all(_hort_case())
    for m in money(t, standings(t), PRIZES, "hort"):
        assert m.final and m.least == m.most
    assert {m.start_no: m.least for m in money(t, standings(t), PRIZES, "hort")}[1] == 900


@pytest.mark.parametrize("sharing", SHARINGS)
def test_a_budget_too_small_says_not_exact(sharing: Sharing) -> None:
    rounds = berger(8)
    games = [(r.number, w, b) for r in rounds for w, b in r.pairs]
    t = fold_all([opened(8, schedule=[r.pairs for r in rounds])] + [game(r, w, b, "1/2-1/2") for r, w, b in games[:-8]])
    found = money(t, standings(t), PRIZES, sharing, budget=3)
    assert any(not m.exact for m in found)
    assert all(m.least <= m.most for m in found)


# -- tournament_opened declares the prizes ------------------------------------------------------------------


def test_tournament_opened_carries_prizes_and_sharing() -> None:
    import msgspec

    from tracker.core.events import decode_event, encode_event

    event = msgspec.structs.replace(opened(4), prizes=(Decimal(1000), Decimal("600.50")), sharing="average")
    again = decode_event(encode_event(event))
    assert again == event and again.prizes == (Decimal(1000), Decimal("600.50"))  # type: ignore[union-attr]
    old = json.loads(encode_event(opened(4)))
    del old["prizes"], old["sharing"]
    assert decode_event(json.dumps(old)).sharing == "hort"  # type: ignore[union-attr]  # events before them decode


@pytest.mark.parametrize("prizes", [(Decimal(600), Decimal(1000)), (Decimal(1000), Decimal(-1))])
def test_tournament_opened_refuses_prizes_out_of_order(prizes: tuple[Decimal, ...]) -> None:
    import msgspec

    from tracker.core.apply import step
    from tracker.core.errors import EventRejected

    with pytest.raises(EventRejected, match="non-increasing") as caught:
        step(None, msgspec.structs.replace(opened(4), prizes=prizes))
    assert caught.value.code == "invalid-tournament"


def test_the_cli_pays_the_tournaments_own_prizes_unless_told_otherwise() -> None:
    import msgspec

    from tracker.cli.worth import prize_settings
    from tracker.i18n import language

    declared = msgspec.structs.replace(opened(4), prizes=(Decimal(1000), Decimal(600)), sharing="none")
    en = language("en")
    assert prize_settings(declared, None, None, en) == ((Fraction(1000), Fraction(600)), "none")
    assert prize_settings(declared, None, "hort", en) == ((Fraction(1000), Fraction(600)), "hort")
    assert prize_settings(declared, "500", None, en) == ((Fraction(500),), "hort")
    assert prize_settings(opened(4), None, None, en) == (None, "hort")


@settings(max_examples=40, deadline=None)
@given(_cases())
def test_money_at_stake_per_outcome_is_exact_against_every_outcome(
    case: tuple[int, list[Event], list, Sharing],
) -> None:
    """For each game of the round being played and each outcome, its players' least and most money given that
    result equal an enumeration of the other remaining games; a player is listed exactly when the outcomes
    leave them different money ranges."""
    _, events, prizes, sharing = case
    t = fold_all(events)
    pending = remaining_games(t)
    first = min(r for r, _, _ in pending if r is not None)
    ranges: dict[tuple, dict[str, dict[int, tuple[Fraction, Fraction]]]] = {}
    for outcome in itertools.product(_OUTCOMES, repeat=len(pending)):
        final = fold_all(
            [game(r, t.start_nos[w], t.start_nos[b], res) for (r, w, b), res in zip(pending, outcome, strict=True)],
            t.scenario(),
        )
        split = _split(standings(final), prizes, sharing)
        for (r, w, b), res in zip(pending, outcome, strict=True):
            if r != first:
                continue
            key = (r, t.start_nos[w], t.start_nos[b])
            per = ranges.setdefault(key, {}).setdefault(res, {})
            for sno in key[1:]:
                low, high = per.get(sno, (split[sno], split[sno]))
                per[sno] = (min(low, split[sno]), max(high, split[sno]))
    assert_at_stake(money_at_stake(t, prizes, sharing), ranges, sharing)


def assert_at_stake(found: dict[Any, Any], ranges: dict[Any, Any], sharing: Sharing) -> None:
    """``found`` (money_at_stake's answer) against ``ranges`` (per game and result, each player's least and most
    over every outcome of the rest): a player is listed for a game exactly when its results leave them different
    money, once per result, exact and with the enumerated least and most."""
    assert set(found) <= set(ranges)
    for key, per in ranges.items():
        for sno in key[1:]:
            differ = len({per[res][sno] for res in per}) > 1
            listed = {res: [x for x in found.get(key, {}).get(res, ()) if x.start_no == sno] for res in per}
            if not differ:
                assert not any(listed.values()), (key, sno)
                continue
            for res, xs in listed.items():
                assert len(xs) == 1 and xs[0].exact, (key, sno, res)
                assert (xs[0].least, xs[0].most) == per[res][sno], (key, sno, res, sharing)
