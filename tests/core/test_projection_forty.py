"""Forty open games: the extremes exact within the projection's node budget, and the Koya search behind them.

A round robin of 16 players with 5 rounds to play (40 games, 3⁴⁰ outcomes)
is far beyond any enumeration; the projection's own node budgets bound the
search, so "exact" here is the solver's claim within a fixed number of
nodes, the same on any machine.  Each claim is checked the way
test_projection_exactness.py checks its own: the extreme's scenario,
recorded as results and ranked by :func:`standings`, reaches it, and no
outcome of the games around it goes beyond it.

The highest and lowest KS of a player with many games open come from
searches over the sets of opponents on the line (:meth:`Node.koya_most`)
and below it (:meth:`Node.koya_least`); on small round robins they are held
against every outcome: never beyond the extreme (a sound bound, whatever the
scoring), and equal to it, with a scenario that reaches it, under 1-½-0.
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from tests.core.test_projection import brute_force, random_case
from tests.core.test_projection_exactness import _check_claims_around
from tests.core.test_projection_scenarios import check_scenarios
from tracker.core.events import DEFAULT_TIEBREAKS
from tracker.core.projection import project
from tracker.core.projection.model import model_of
from tracker.core.projection.solver import Solver


#: Seeds of random_case that draw 1-½-0 scoring (the other scoring's Koya search is a bound, not the extreme).
@pytest.mark.parametrize("seed", [4016])
def test_every_extreme_with_forty_open_games_is_exact_and_reached_by_its_scenario(seed: int) -> None:
    rng = random.Random(seed)
    case = random_case(rng, 16, 40, tail=True, scheduled=True, order=DEFAULT_TIEBREAKS)
    assert case.win == 1, "a 1-½-0 case"
    p = project(case.tournament())
    assert p.remaining == 40
    not_exact = [(pp.start_no, name) for pp in p.players for name, r in pp.reached.items() if not r.exact]
    assert not not_exact, f"extremes left as bounds: {not_exact}"
    check_scenarios(p, case)
    _check_claims_around(p, case, [8])


#: (players, seed) of random_case with 40 games open in the issue's two shapes, 16 players with 5 rounds to play and
#: 20 with 4 (forfeits and both Koya bases drawn as the generator draws them), under both scorings: 1-½-0 (16/1,
#: 20/8) and 3-1-0 (16/9, 20/5).  Before the search branched fail-first one step from the bound, 16/9, 20/5 and
#: 20/8 left worst ranks as bounds.
SHAPES = [(16, 1), (16, 9), (20, 5), (20, 8)]


@pytest.mark.parametrize(("players", "seed"), SHAPES)
def test_every_extreme_with_forty_open_games_in_either_shape_and_scoring_is_exact(players: int, seed: int) -> None:
    rng = random.Random(seed)
    case = random_case(rng, players, 40, tail=True, scheduled=True, order=DEFAULT_TIEBREAKS)
    p = project(case.tournament())
    assert p.remaining == 40
    assert len({r for r, _, _ in case.pending}) == (5 if players == 16 else 4), "the shape's rounds to play"
    not_exact = [(pp.start_no, name) for pp in p.players for name, r in pp.reached.items() if not r.exact]
    assert not not_exact, f"extremes left as bounds: {not_exact}"
    check_scenarios(p, case)
    # the claims around the player last on points now, whose worst rank is the most contested
    t = case.tournament()
    last = min(range(t.n), key=lambda k: (t.score[k], t.start_nos[k]))
    _check_claims_around(p, case, [t.start_nos[last]])


def test_the_shapes_draw_both_scorings() -> None:
    drawn = (
        random_case(random.Random(seed), players, 40, tail=True, order=DEFAULT_TIEBREAKS) for players, seed in SHAPES
    )
    wins = {case.win for case in drawn}
    assert wins == {Fraction(1), Fraction(3)}


@pytest.mark.parametrize("seed", range(24))
def test_the_koya_set_searches_bound_the_koya_extremes_and_reach_them_under_one_half_zero(seed: int) -> None:
    rng = random.Random(seed)
    case = random_case(rng, rng.choice((6, 7)), rng.randint(4, 6), order=DEFAULT_TIEBREAKS)
    t = case.tournament()
    truth = brute_force(case)
    solver = Solver(model_of(t))
    den = t.units.denominator
    one_half_zero = case.win == 1
    for i, start_no in enumerate(t.start_nos):
        bound, guide, _ = solver.koya_most(i, 1 << 30)
        highest = truth.ks[start_no][1]
        assert Fraction(bound, den) >= highest, f"KS of {start_no}: bound {bound} under {highest}"
        if one_half_zero:
            assert Fraction(bound, den) == highest, f"KS of {start_no}: {bound} units, highest {highest}"
            if guide is not None:
                assert solver.complete(guide).ks[i] == bound, f"the guide of {start_no} misses its bound"
        least, guide, _ = solver.koya_least(i, 1 << 30)
        lowest = truth.ks[start_no][0]
        assert Fraction(least, den) <= lowest, f"KS of {start_no}: bound {least} over {lowest}"
        if one_half_zero:
            assert Fraction(least, den) == lowest, f"KS of {start_no}: {least} units, lowest {lowest}"
            if guide is not None:
                assert solver.complete(guide).ks[i] == least, f"the guide of {start_no} misses its bound"
