"""Prize categories (rating bands, women, juniors) beside the place prizes, one prize per player: the reading's
examples, who a rule admits, and the least and most money while games remain against an exhaustive enumeration
of every outcome of the remaining games, with an allocation written here independently of the core's."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from fractions import Fraction

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import berger, fold_all, game, opened
from tests.core.test_prizes import assert_at_stake
from tracker.core.events import Event, GameResult, Player, TournamentOpened
from tracker.core.projection.model import remaining_games
from tracker.core.standings import Row, standings
from tracker.core.worth.categories import PLACE, Category, admits, category
from tracker.core.worth.prizes import SHARINGS, Sharing, awarded, money, money_at_stake, paid

_OUTCOMES: tuple[GameResult, ...] = ("1-0", "1/2-1/2", "0-1")


def _reference(
    rows: Sequence[Row], prizes: Sequence[Fraction], cats: Sequence[Category], sharing: Sharing
) -> dict[int, tuple[Fraction, str | None]]:
    """docs/ratings.md's reading, from the rows alone: every prize with money in it, the highest amount first
    (equal: places, then the categories as declared), to the first player in the standings it admits who has
    none yet; then each list shared among those it pays (the places: everyone without a category prize)."""
    lists = [list(prizes), *(list(c.prizes) for c in cats)]
    names = [PLACE, *(c.name for c in cats)]
    handed = sorted((-a, k, q) for k, amounts in enumerate(lists) for q, a in enumerate(amounts) if a > 0)
    holder: dict[int, int] = {}
    for _, k, _ in handed:
        for r in rows:
            if r.start_no not in holder and (k == 0 or r.start_no in cats[k - 1].eligible):
                holder[r.start_no] = k
                break
    out: dict[int, tuple[Fraction, str | None]] = {}
    for k, amounts in enumerate(lists):
        members = [r for r in rows if holder.get(r.start_no, 0) == k]

        def place(q: int, amounts: list[Fraction] = amounts) -> Fraction:
            return amounts[q] if q < len(amounts) else Fraction(0)

        for r in members:
            by_points = [x for x, o in enumerate(members) if o.points == r.points]
            by_rank = [x for x, o in enumerate(members) if o.rank == r.rank]
            shared = sum((place(x) for x in by_points), Fraction(0)) / len(by_points)
            ranked = sum((place(x) for x in by_rank), Fraction(0)) / len(by_rank)
            value = {"none": ranked, "average": shared, "hort": (ranked + shared) / 2}[sharing]
            out[r.start_no] = (value, names[k] if value > 0 else None)
    return out


def _cat(name: str, eligible: set[int], *prizes: int | Fraction) -> Category:
    return Category(name, "rating<2000", tuple(Fraction(p) for p in prizes), frozenset(eligible))


def _ordered(n: int, results: dict[tuple[int, int], GameResult]) -> list[Event]:
    rounds = berger(n)
    events: list[Event] = [opened(n, schedule=[r.pairs for r in rounds])]
    for r in rounds:
        for w, b in r.pairs:
            events.append(game(r.number, w, b, results.get((w, b), "1/2-1/2")))
    return events


def _line(n: int, draws: dict[int, int]) -> list[Event]:
    """A complete round robin where ``a`` beats ``b`` when ``a < b`` (player 1 first, 2 second, … on points) but
    for the pairs drawn in ``draws`` (``a → b``: ``a`` and ``b`` draw, ``b = a + 1`` ends them equal)."""
    rounds = berger(n)
    results: dict[tuple[int, int], GameResult] = {}
    for r in rounds:
        for w, b in r.pairs:
            if draws.get(min(w, b)) == max(w, b):
                results[(w, b)] = "1/2-1/2"
            else:
                results[(w, b)] = "1-0" if w < b else "0-1"
    return _ordered(n, results)


# -- the reading, on final standings ------------------------------------------------------------------------


def test_the_winner_in_a_category_takes_the_place_prize_and_the_category_prize_passes_down() -> None:
    s = standings(fold_all(_line(5, {})))  # 1 > 2 > 3 > 4 > 5 on points, all clear
    u2000 = _cat("U2000", {1, 3, 4}, 300)
    got = awarded(s, [Fraction(1000), Fraction(600)], "none", [u2000])
    assert got[1] == (1000, PLACE) and got[2] == (600, PLACE)
    assert got[3] == (300, "U2000") and got[4] == (0, None)


def test_a_category_prize_above_the_place_prize_is_taken_and_the_place_passes_down() -> None:
    s = standings(fold_all(_line(5, {})))
    got = awarded(s, [Fraction(1000), Fraction(600), Fraction(100)], "hort", [_cat("U2000", {3, 5}, 300)])
    assert got[3] == (300, "U2000")  # 300 > the 100 of 3rd place
    assert got[4] == (100, PLACE)  # 3rd place goes to the next player without a prize
    assert got[5] == (0, None)


def test_equal_amounts_give_the_place_prize_first() -> None:
    s = standings(fold_all(_line(5, {})))
    got = awarded(s, [Fraction(1000), Fraction(300)], "none", [_cat("U2000", {2, 4}, 300)])
    assert got[2] == (300, PLACE) and got[4] == (300, "U2000") and got[3] == (0, None)


def test_equal_category_prizes_go_by_declared_order() -> None:
    s = standings(fold_all(_line(5, {})))
    cats = [_cat("U2000", {3, 4}, 200), _cat("U1800", {3, 4}, 200)]
    got = awarded(s, [Fraction(1000)], "none", cats)
    assert got[3] == (200, "U2000") and got[4] == (200, "U1800")


def test_players_equal_on_points_share_a_category_prize_under_average() -> None:
    # 3 and 4 end equal on points (they draw), both in the category: average shares 300 and 150 equally
    s = standings(fold_all(_line(6, {3: 4})))
    by_start = {r.start_no: r for r in s.rows}
    assert by_start[3].points == by_start[4].points
    cats = [_cat("U2000", {3, 4}, 300, 150)]
    assert paid(s, [Fraction(1000)], "average", cats)[3] == paid(s, [Fraction(1000)], "average", cats)[4] == 225
    assert by_start[3].rank == by_start[4].rank  # equal on every criterion too: none shares as well
    assert paid(s, [Fraction(1000)], "none", cats)[3] == 225
    # 4 ahead on points of 5, both in the category: none and average pay 300 and 150 by the category's places
    s = standings(fold_all(_line(6, {})))
    cats = [_cat("U2000", {4, 5}, 300, 150)]
    assert [paid(s, [Fraction(1000)], "average", cats)[x] for x in (4, 5)] == [300, 150]


def test_without_categories_the_split_is_the_place_split() -> None:
    s = standings(fold_all(_line(6, {1: 2, 3: 4})))
    for sharing in SHARINGS:
        assert {k: v for k, (v, _) in awarded(s, [Fraction(500), Fraction(200)], sharing).items()} == paid(
            s, [Fraction(500), Fraction(200)], sharing
        )


def test_rules_admit_by_rating_sex_and_age_on_the_start_date() -> None:
    start = (2026, 5, 1)
    p = Player(1, "A", rating=1999, sex="w", birth="2006/05/02")
    assert admits("rating<2000", p, start) and not admits("rating<1999", p, start)
    assert not admits("rating<2000", Player(2, "U"), start)  # unrated: not in a rating band
    assert admits("sex=w", p, start) and not admits("sex=m", p, start) and admits("sex=W", p, start)
    assert admits("age<20", p, start)  # 19 on 1 May 2026: 20 on 2 May
    assert not admits("age<20", Player(3, "B", birth="2006/05/01"), start)  # 20 that very day
    assert not admits("age<20", Player(4, "C", birth="2006"), start)  # 19 or 20: not certainly under 20
    assert admits("age<20", Player(5, "D", birth="2007"), start)
    assert not admits("age<20", p, None)  # no start date: nobody
    c = category("juniors", "age<20", [Fraction(150)], [p, Player(3, "B", birth="2006/05/01")], ["042 2026/05/01"])
    assert c.eligible == frozenset({1})


@pytest.mark.parametrize(("name", "rule"), [("U2000", "rating<=2000"), ("", "sex=w"), ("place", "sex=w")])
def test_a_bad_category_is_refused(name: str, rule: str) -> None:
    with pytest.raises(ValueError):
        category(name, rule, [Fraction(1)], [], [])


# -- exact against every outcome of the remaining games -----------------------------------------------------


@st.composite
def _cases(draw: st.DrawFn) -> tuple[list[Event], list[Fraction], list[Category], Sharing]:
    n = draw(st.integers(5, 7))
    rounds = berger(n)
    left = draw(st.integers(1, 2))
    played = [(r.number, w, b) for r in rounds[: len(rounds) - left] for w, b in r.pairs]
    first = opened(n, schedule=[r.pairs for r in rounds])
    people = tuple(
        msgspec.structs.replace(
            p,
            rating=draw(st.sampled_from([0, 1700, 1900, 2100, 2300])),
            sex=draw(st.sampled_from(["m", "w", ""])),
            birth=draw(st.sampled_from(["", "2000/01/01", "2008/06/30", "2010"])),
        )
        for p in first.players
    )
    first = msgspec.structs.replace(first, players=people, records=("042 2026/05/01",))
    events: list[Event] = [first]
    events += [game(r, w, b, draw(st.sampled_from(_OUTCOMES))) for r, w, b in played]
    amounts = st.integers(0, 12).map(lambda x: Fraction(x * 50))
    prizes = sorted(draw(st.lists(amounts, max_size=3)), reverse=True)
    rules = st.sampled_from(["rating<2000", "rating<2200", "sex=w", "age<20"])
    cats = []
    for k in range(draw(st.integers(1, 3))):
        values = sorted(draw(st.lists(amounts, min_size=1, max_size=2)), reverse=True)
        cats.append(category(f"c{k}", draw(rules), values, people, first.records))
    return events, prizes, cats, draw(st.sampled_from(SHARINGS))


def _finals(events: list[Event]) -> tuple[object, list, list]:
    t = fold_all(events)
    pending = remaining_games(t)
    finals = []
    for outcome in itertools.product(_OUTCOMES, repeat=len(pending)):
        final = fold_all(
            [game(r, t.start_nos[w], t.start_nos[b], res) for (r, w, b), res in zip(pending, outcome, strict=True)],
            t.scenario(),
        )
        finals.append((outcome, standings(final)))
    return t, pending, finals


@settings(max_examples=40, deadline=None)
@given(_cases())
def test_least_and_most_money_with_categories_are_exact_against_every_outcome(
    case: tuple[list[Event], list[Fraction], list[Category], Sharing],
) -> None:
    events, prizes, cats, sharing = case
    t, pending, finals = _finals(events)
    least: dict[int, Fraction] = {}
    most: dict[int, Fraction] = {}
    for _, s in finals:
        split = _reference(s.rows, prizes, cats, sharing)
        assert awarded(s, prizes, sharing, cats) == split  # the core's final split is the reading's
        for sno, (value, _) in split.items():
            least[sno] = min(least.get(sno, value), value)
            most[sno] = max(most.get(sno, value), value)
    for m in money(t, standings(t), prizes, sharing, categories=cats):  # type: ignore[arg-type]
        assert m.exact and not m.final and m.categories
        assert (m.least, m.most) == (least[m.start_no], most[m.start_no]), (m.start_no, sharing)
        for value, named, scenario in (
            (m.least, m.least_from, m.least_scenario),
            (m.most, m.most_from, m.most_scenario),
        ):
            assert len(scenario) == len(pending)
            final = fold_all([game(r or 0, w, b, res) for r, w, b, res in scenario], t.scenario())  # type: ignore[arg-type]
            assert _reference(standings(final).rows, prizes, cats, sharing)[m.start_no] == (value, named)


@settings(max_examples=20, deadline=None)
@given(_cases())
def test_money_at_stake_with_categories_is_exact_against_every_outcome(
    case: tuple[list[Event], list[Fraction], list[Category], Sharing],
) -> None:
    events, prizes, cats, sharing = case
    t, pending, finals = _finals(events)
    first = min(r for r, _, _ in pending if r is not None)
    ranges: dict[tuple, dict[str, dict[int, tuple[Fraction, Fraction]]]] = {}
    for outcome, s in finals:
        split = _reference(s.rows, prizes, cats, sharing)
        for (r, w, b), res in zip(pending, outcome, strict=True):
            if r != first:
                continue
            key = (r, t.start_nos[w], t.start_nos[b])  # type: ignore[attr-defined]
            per = ranges.setdefault(key, {}).setdefault(res, {})
            for sno in key[1:]:
                low, high = per.get(sno, (split[sno][0], split[sno][0]))
                per[sno] = (min(low, split[sno][0]), max(high, split[sno][0]))
    assert_at_stake(money_at_stake(t, prizes, sharing, categories=cats), ranges, sharing)  # type: ignore[arg-type]


def test_a_budget_too_small_with_categories_says_not_exact() -> None:
    rounds = berger(8)
    games = [(r.number, w, b) for r in rounds for w, b in r.pairs]
    first = opened(8, schedule=[r.pairs for r in rounds])
    t = fold_all([first] + [game(r, w, b, "1/2-1/2") for r, w, b in games[:-8]])
    cats = [Category("odd", "sex=w", (Fraction(300),), frozenset({1, 3, 5, 7}))]
    found = money(t, standings(t), [Fraction(1000)], "hort", budget=3, categories=cats)
    assert any(not m.exact for m in found)
    assert all(m.least <= m.most for m in found)


def test_a_tournament_opened_with_players_keeps_the_start_list() -> None:
    # the start list fields the rules read survive the event's decoding (they are the TRF's)
    from tracker.core.events import decode_event, encode_event

    p = Player(1, "A", rating=1900, sex="w", birth="2008/01/02")
    event = msgspec.structs.replace(opened(4), players=(p, *opened(4).players[1:]))
    again = decode_event(encode_event(event))
    assert isinstance(again, TournamentOpened) and again.players[0] == p


# -- tournament_opened declares the categories --------------------------------------------------------------


def _declaring(left: int, *cats: dict[str, object]) -> list[Event]:
    from decimal import Decimal

    from tracker.core.events import PrizeCategory

    rounds = berger(6)
    first = opened(6, schedule=[r.pairs for r in rounds])
    people = tuple(
        msgspec.structs.replace(p, rating=1900 if p.start_no % 2 else 2100, sex="w" if p.start_no > 3 else "m")
        for p in first.players
    )
    declared = tuple(
        PrizeCategory(str(c["name"]), str(c["rule"]), tuple(Decimal(str(x)) for x in c["prizes"]))  # type: ignore[attr-defined]
        for c in cats
    )
    first = msgspec.structs.replace(
        first, players=people, prizes=(Decimal(1000), Decimal(500)), sharing="hort", categories=declared
    )
    events: list[Event] = [first]
    for r in rounds[: len(rounds) - left]:
        for w, b in r.pairs:
            events.append(game(r.number, w, b, "1-0" if w < b else "1/2-1/2"))
    return events


def test_tournament_opened_carries_categories_and_old_events_decode_unchanged() -> None:
    import json

    from tracker.core.events import decode_event, encode_event

    event = _declaring(0, {"name": "U2000", "rule": "rating<2000", "prizes": [300, 150]})[0]
    again = decode_event(encode_event(event))
    assert again == event
    assert "categories" not in json.loads(encode_event(opened(4)))  # unset: an event's bytes are as before
    assert decode_event(encode_event(opened(4))).categories is msgspec.UNSET  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "bad",
    [
        {"name": "U2000", "rule": "rating<=2000", "prizes": [300]},
        {"name": "U2000", "rule": "rating<2000\n", "prizes": [300]},
        {"name": "U2000", "rule": "rating<2000", "prizes": []},
        {"name": "U2000", "rule": "rating<2000", "prizes": [300], "extra": 1},
    ],
)
def test_tournament_opened_decodes_categories_strictly(bad: dict[str, object]) -> None:
    import json

    from tracker.core.errors import DecodeError
    from tracker.core.events import decode_event, encode_event

    body = json.loads(encode_event(opened(4)))
    body["categories"] = [bad]
    with pytest.raises(DecodeError):
        decode_event(json.dumps(body))


@pytest.mark.parametrize(
    "cats",
    [
        [{"name": "place", "rule": "sex=w", "prizes": [300]}],
        [{"name": "w", "rule": "sex=w", "prizes": [300]}, {"name": "w", "rule": "sex=m", "prizes": [300]}],
        [{"name": "U2000", "rule": "rating<2000", "prizes": [150, 300]}],
        [{"name": "U2000", "rule": "rating<2000", "prizes": [-1]}],
    ],
)
def test_tournament_opened_refuses_a_bad_category(cats: list[dict[str, object]]) -> None:
    from tracker.core.apply import step
    from tracker.core.errors import EventRejected

    with pytest.raises(EventRejected, match="prize category") as caught:
        step(None, _declaring(0, *cats)[0])
    assert caught.value.code == "invalid-tournament"


def test_the_live_worth_and_the_stakes_message_pay_the_declared_categories() -> None:
    import json

    from tracker.core.projection.stakes import stakes
    from tracker.core.worth.categories import declared
    from tracker.core.worth.live import live_worth
    from tracker.protocol import stakes_message

    t = fold_all(_declaring(1, {"name": "U2000", "rule": "rating<2000", "prizes": [300, 150]}))
    cats = declared(t.opened)
    assert cats[0].eligible == frozenset({1, 3, 5})
    w = live_worth(t)
    want = {m.start_no: m for m in money(t, standings(t), [Fraction(1000), Fraction(500)], "hort", categories=cats)}
    assert {p.rating.start_no: p.money for p in w.players} == want
    assert w.money == money_at_stake(t, [Fraction(1000), Fraction(500)], "hort", categories=cats)
    message = json.loads(stakes_message(stakes(t), None, w))
    assert message["categories"] == [{"name": "U2000", "rule": "rating<2000", "prizes": [300, 150]}]
    rows = {r["start_no"]: r for r in message["worth"]}
    for sno, m in want.items():
        assert (rows[sno]["prize_min"], rows[sno]["prize_max"]) == (float(m.least), float(m.most))
        assert (rows[sno]["prize_min_from"], rows[sno]["prize_max_from"]) == (m.least_from, m.most_from)
    done = fold_all(_declaring(0, {"name": "U2000", "rule": "rating<2000", "prizes": [300, 150]}))
    final = {p.rating.start_no: p.money for p in live_worth(done).players}
    assert all(m is not None and m.final for m in final.values())
    assert {s: (m.least, m.least_from) for s, m in final.items() if m is not None and m.least} == {
        1: (1000, "place"),
        2: (500, "place"),
        3: (300, "U2000"),
        5: (150, "U2000"),
    }


def test_the_cli_pays_the_tournaments_own_categories_unless_told_otherwise() -> None:
    from tracker.cli.worth import category_settings
    from tracker.i18n import language

    first = _declaring(0, {"name": "U2000", "rule": "rating<2000", "prizes": [300]})[0]
    assert isinstance(first, TournamentOpened)
    en = language("en")
    assert [c.name for c in category_settings(first, None, en)] == ["U2000"]
    assert [c.name for c in category_settings(first, ["women:sex=w:200"], en)] == ["women"]


@pytest.mark.parametrize("sharing", SHARINGS)
def test_fractional_prizes_are_shared_exactly(sharing: Sharing) -> None:
    """Prizes in cents shared among players equal on points stay exact (the integer units once dropped half a
    unit: 0.25 shared Hort-wise by two of three players gave 1/6, not 3/16)."""
    from tests.core.test_prizes import _hort_case

    s = standings(fold_all(_hort_case()))  # 1 and 2 equal on points, 1 ahead on Sonneborn-Berger
    for prizes, cats in (
        ([Fraction(1, 4)], []),
        ([Fraction(1, 4), Fraction(1, 10)], [_cat("c", {3, 4}, Fraction(3, 100), Fraction(1, 100))]),
        ([], [_cat("c", {1, 2}, Fraction(1, 4))]),
    ):
        assert awarded(s, prizes, sharing, cats) == _reference(s.rows, prizes, cats, sharing), prizes
