"""Stakes, chances and cues: the late-round intelligence, checked against enumeration and by hand."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import pytest

from tests.core.test_projection import TID, Case, _id, random_case
from tests.core.test_projection_scenarios import with_lines
from tracker.core.events import ResultRecorded
from tracker.core.projection.chances import chances, game_probabilities
from tracker.core.projection.cues import Insight, Placing, cues
from tracker.core.projection.stakes import LineState, lines_of, stakes
from tracker.core.standings import Standings, standings


def _state(seen: set[str], playoff_line: bool) -> LineState:
    if seen == {"in"}:
        return "clinched"
    if playoff_line and "out" not in seen:
        return "playoff"
    if "in" not in seen and "playoff" not in seen:
        return "eliminated"
    return "open"


def _where(s: Standings, start_no: int, places: int, playoff_line: bool) -> str:
    if not playoff_line:
        return "in" if s.row(start_no).rank <= places else "out"
    top = max(row.points for row in s.rows)
    mine = s.row(start_no).points
    if mine < top:
        return "out"
    return "in" if sum(row.points == top for row in s.rows) == 1 else "playoff"


def brute_force_stakes(case: Case, playoff: bool) -> tuple[dict[tuple[int, int], LineState], set[tuple[int, ...]]]:
    """Today's state per (player, line) and every (game, outcome, player, line, before, after) change."""
    t = case.tournament()
    lines = lines_of(t)
    seen: dict[tuple[int, int], set[str]] = {}
    given: dict[tuple[int, int, int, int], set[str]] = {}  # (game, outcome, player, places)
    options = case.options()
    for outcome in itertools.product(*options):
        extra = [ResultRecorded(_id(), TID, r, w, b, res) for (r, w, b), res in zip(case.pending, outcome, strict=True)]
        s = standings(case.tournament(extra))
        for row in s.rows:
            for places, _ in lines:
                where = _where(s, row.start_no, places, playoff and places == 1)
                seen.setdefault((row.start_no, places), set()).add(where)
                for g, res in enumerate(outcome):
                    if len(options[g]) > 1:
                        given.setdefault((g, options[g].index(res), row.start_no, places), set()).add(where)
    today = {key: _state(states, playoff and key[1] == 1) for key, states in seen.items()}
    changes = set()
    for (g, o, start_no, places), states in given.items():
        after = _state(states, playoff and places == 1)
        if after != today[(start_no, places)]:
            w, b = case.pending[g][1:]
            changes.add((w, b, o, start_no, places, _code(today[(start_no, places)]), _code(after)))
    return today, changes


_CODES = {"clinched": 1, "playoff": 2, "open": 3, "eliminated": 4, "unknown": 5}


def _code(state: LineState) -> int:
    return _CODES[state]


@pytest.mark.parametrize("seed", range(30))
def test_stakes_equal_an_enumeration_of_every_outcome(seed: int) -> None:
    rng = random.Random(1500 + seed)
    n = rng.randint(3, 7)
    case = random_case(rng, n, rng.randint(1, 6), withdraw=rng.random() < 0.2)
    playoff = seed % 2 == 0
    case = with_lines(case, tuple(sorted(rng.sample(range(1, n + 1), min(n, 2)))), playoff=playoff)
    k = stakes(case.tournament())
    assert k.exact
    today, changes = brute_force_stakes(case, playoff)
    for p in k.players:
        for (places, _), state in zip(k.lines, p.states, strict=True):
            assert state == today[(p.start_no, places)], f"{p.start_no} on {places}"
    reported = {
        (g.white, g.black, o, s.start_no, s.places, _code(s.before), _code(s.after))
        for g in k.games
        for o, outcome in enumerate(g.outcomes)
        for s in outcome.stakes
    }
    assert reported == changes


def test_a_tournament_without_lines_has_stakes_for_first_place_and_words_for_people() -> None:
    case = random_case(random.Random(4), 6, 3, tail=True, withdraw=False)
    k = stakes(case.tournament())
    assert k.lines == ((1, "1st"),)
    texts = [s.text for g in k.games for o in g.outcomes for s in o.stakes]
    assert texts, "the last round of six players decides something about 1st"
    assert all(t.startswith("P") and ("1st" in t) for t in texts)


def test_sixteen_open_games_with_three_lines_and_a_play_off_are_exact() -> None:
    case = random_case(random.Random(99), 16, 16, tail=True, order=("DE", "SB", "KS", "WON"))
    case = with_lines(case, (1, 3, 8), playoff=True)
    k = stakes(case.tournament())
    assert k.exact and len(k.games) == 16
    assert any(s.after == "eliminated" for g in k.games for o in g.outcomes for s in o.stakes)


# -- chances -------------------------------------------------------------------------------


def test_game_probabilities_keep_the_elo_expectation_and_the_draw_model() -> None:
    win, draw, loss = game_probabilities(2700, 2700, draw_rate=0.5, white_edge=0)
    assert (win, draw, loss) == pytest.approx((0.25, 0.5, 0.25))
    win, draw, loss = game_probabilities(2800, 2600, draw_rate=0.6, white_edge=0)
    expected = 1 / (1 + 10 ** (-200 / 400))
    assert win + draw / 2 == pytest.approx(expected)
    assert win > loss >= 0 and draw < 0.6
    assert sum(game_probabilities(3000, 1000, draw_rate=1.0, white_edge=0)) == pytest.approx(1.0)


@pytest.mark.parametrize("playoff", [False, True])
def test_chances_sum_to_one_per_place_and_per_player_and_repeat_per_seed(playoff: bool) -> None:
    case = random_case(random.Random(77), 8, 8, tail=True)
    case = with_lines(case, (1, 3), playoff=playoff)
    t = case.tournament()
    c = chances(t, seed=5)
    assert c.runs == 10_000
    n = len(c.players)
    assert sum(p.first for p in c.players) == pytest.approx(1.0)
    # by rank (issue 38): a rank held by k players sums to k, the k - 1 ranks it covers after it to 0
    assert sum(sum(p.positions[place] for p in c.players) for place in range(n)) == pytest.approx(n)
    for p in c.players:
        assert sum(p.positions) == pytest.approx(1.0)
        assert 0.0 <= p.first <= 1.0
        assert (p.playoff is not None) == playoff
    assert sum(p.lines[1] for p in c.players) >= 3 - 1e-9  # top 3: shared ranks may put more inside
    assert chances(t, seed=5) == c
    assert chances(t, seed=6) != c


def test_chances_stay_inside_the_exact_answers() -> None:
    """An estimate never contradicts the exact states: 0 where eliminated, 1 where clinched."""
    case = with_lines(random_case(random.Random(21), 7, 4, tail=True), (1, 3), playoff=False)
    t = case.tournament()
    k = stakes(t)
    c = chances(t, seed=1, runs=2000)
    for pk, pc in zip(k.players, c.players, strict=True):
        for state, chance in zip(pk.states, pc.lines, strict=True):
            if state == "clinched":
                assert chance == 1.0
            if state == "eliminated":
                assert chance == 0.0


def test_chances_of_a_complete_tournament_are_certain() -> None:
    case = random_case(random.Random(3), 5, 0)
    t = case.tournament()
    s = standings(t)
    c = chances(t, seed=9, runs=50)
    leaders = [r.start_no for r in s.rows if r.rank == 1]
    for p in c.players:
        assert p.first == pytest.approx(1 / len(leaders) if p.start_no in leaders else 0.0)


def test_chances_reject_nonsense_parameters() -> None:
    t = random_case(random.Random(3), 4, 2).tournament()
    with pytest.raises(ValueError):
        chances(t, seed=1, runs=0)
    with pytest.raises(ValueError):
        chances(t, seed=1, draw_rate=1.5)


# -- cues ----------------------------------------------------------------------------------


def _insight(order: list[tuple[int, int, str, str]], states: dict[int, tuple[LineState, ...]], seq: int = 1) -> Insight:
    """``order``: (start_no, rank, points, SB) rows in standings order."""
    return Insight(
        tournament="t",
        seq=seq,
        codes=("SB",),
        placings=tuple(
            Placing(no, f"Name{no}, First", rank, Fraction(points), (Fraction(sb),)) for no, rank, points, sb in order
        ),
        lines=((1, "1st"), (3, "top 3")),
        states=states,
    )


BASE = [(1, 1, "5", "10"), (2, 2, "4", "9"), (3, 3, "4", "8"), (4, 4, "2", "3")]
OPEN: dict[int, tuple[LineState, ...]] = {
    1: ("open", "clinched"),
    2: ("open", "open"),
    3: ("open", "open"),
    4: ("eliminated", "open"),
}


def test_no_cue_when_nothing_changed() -> None:
    x = _insight(BASE, OPEN)
    assert cues(x, x) == ()
    assert cues(x, _insight(BASE, {**OPEN, 2: ("unknown", "open")}, seq=2)) == ()


def test_a_line_clinched_or_lost_fires_once_per_player_and_line() -> None:
    before = _insight(BASE, OPEN)
    after = _insight(BASE, {**OPEN, 2: ("open", "clinched"), 4: ("eliminated", "eliminated")}, seq=2)
    got = cues(before, after)
    assert [(c.kind, c.players, c.line) for c in got] == [("clinched", (2,), "top 3"), ("lost", (4,), "top 3")]
    assert got[0].text == "Name2 clinches top 3"
    assert got[1].text == "Name4 can no longer finish top 3"
    play = cues(before, _insight(BASE, {**OPEN, 1: ("playoff", "clinched")}, seq=2))
    assert [(c.kind, c.text) for c in play] == [("clinched", "Name1 is sure of at least a play-off for 1st")]


def test_a_new_leader_fires_and_a_shared_lead_names_both() -> None:
    before = _insight(BASE, OPEN)
    swapped = [(2, 1, "6", "9"), (1, 2, "5", "10"), (3, 3, "4", "8"), (4, 4, "2", "3")]
    got = cues(before, _insight(swapped, OPEN, seq=2))
    assert [(c.kind, c.players, c.text) for c in got] == [("leader", (2,), "Name2 leads")]
    shared = [(1, 1, "5", "10"), (2, 1, "5", "10"), (3, 3, "4", "8"), (4, 4, "2", "3")]
    got = cues(before, _insight(shared, OPEN, seq=2))
    assert [(c.kind, c.players, c.text) for c in got] == [("leader", (1, 2), "Name1 and Name2 share the lead")]


def test_an_overtake_on_a_tie_break_fires_but_not_one_on_points() -> None:
    before = _insight(BASE, OPEN)
    on_sb = [(1, 1, "5", "10"), (3, 2, "4", "9.5"), (2, 3, "4", "9"), (4, 4, "2", "3")]
    got = cues(before, _insight(on_sb, OPEN, seq=2))
    assert [(c.kind, c.players, c.text) for c in got] == [("overtake", (3, 2), "Name3 overtakes Name2 on SB")]
    on_points = [(1, 1, "5", "10"), (3, 2, "5", "9"), (2, 3, "4", "9"), (4, 4, "2", "3")]
    assert cues(before, _insight(on_points, OPEN, seq=2)) == ()
