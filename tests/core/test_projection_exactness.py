"""Exactness claims with many games open, checked by searches that share nothing with the solver.

With 16–24 games open no test can enumerate every outcome (3²⁴ ≈ 3·10¹¹),
so each claim is checked where a wrong bound would show first: around the
scenario that reaches it.  For a player, every outcome of a handful of games
(their own and their closest rivals') is enumerated with the rest fixed to
the claim's scenario, each outcome recorded as ordinary results and ranked
by :func:`standings` (:func:`corrections_walk`): no outcome may go beyond an
extreme reported exact, and the scenario must reach it.  Stakes are checked
the same way with random outcomes under the stake's condition.  The
previous seq's answer, reused, must give what a fresh search and brute
force give.
"""

from __future__ import annotations

import itertools
import pickle
import random
from fractions import Fraction

import pytest

from tests.core.test_projection import (
    TID,
    Case,
    _id,
    brute_force,
    check_exact,
    corrections_walk,
    random_case,
)
from tests.core.test_projection_scenarios import check_scenarios, with_lines
from tests.core.test_stakes import brute_force_stakes
from tracker.core.events import GameResult, ResultCorrected, ResultRecorded
from tracker.core.projection import Projection, Scenario, project
from tracker.core.projection.analysis import analyse
from tracker.core.projection.stakes import Stakes, stakes

#: Games enumerated around each claim (3⁶ = 729 outcomes).
AROUND = 6


def _as_outcome(case: Case, scenario: Scenario) -> list[GameResult]:
    """A scenario's results in the case's pending order."""
    by_game = {(g.round, g.white, g.black): g.result for g in scenario}
    return [by_game[(r, w, b)] for r, w, b in case.pending]


def _around(case: Case, start_no: int, outcome: list[GameResult], width: int) -> list[int]:
    """The player's own pending games, then those of the rivals closest to them on points in ``outcome``."""
    t = case.tournament(
        ResultRecorded(_id(), TID, r, w, b, res) for (r, w, b), res in zip(case.pending, outcome, strict=True)
    )
    score = {p.start_no: t.score[k] for k, p in enumerate(t.opened.players)}
    rivals = sorted(score, key=lambda s: (abs(score[s] - score[start_no]), s))
    chosen: list[int] = []
    for s in rivals:  # the player first: their distance is 0
        chosen += [k for k, (_, w, b) in enumerate(case.pending) if s in (w, b) and k not in chosen]
        if len(chosen) >= width:
            break
    return chosen[:width]


def _check_claims_around(p: Projection, case: Case, start_nos: list[int]) -> None:
    options = case.options()
    for s in start_nos:
        pp = p.player(s)
        for name in ("rank_best", "rank_worst", "ks_min", "ks_max"):
            reached = pp.reached[name]
            if not reached.exact:
                continue
            base = _as_outcome(case, reached.scenario)
            games = _around(case, s, base, AROUND)
            outcomes = []
            for picks in itertools.product(*(options[k] for k in games)):
                outcome = list(base)
                for k, res in zip(games, picks, strict=True):
                    outcome[k] = res
                outcomes.append(tuple(outcome))
            truth = corrections_walk(case, outcomes)
            rank_lo, rank_hi = truth.ranks[s]
            ks_lo, ks_hi = truth.ks[s]
            claim = {"rank_best": pp.rank_best, "rank_worst": pp.rank_worst, "ks_min": pp.ks_min, "ks_max": pp.ks_max}
            seen = {"rank_best": rank_lo, "rank_worst": rank_hi, "ks_min": ks_lo, "ks_max": ks_hi}[name]
            assert seen == claim[name], f"{name} of {s}: {claim[name]} claimed exact, {seen} around its scenario"
            assert pp.rank_best <= rank_lo and rank_hi <= pp.rank_worst, f"rank of {s}"
            assert pp.ks_min <= ks_lo and ks_hi <= pp.ks_max, f"KS of {s}"


@pytest.mark.parametrize(("seed", "left", "players"), [(1616, 16, (1, 11)), (2424, 24, (2, 15))])
def test_exact_extremes_with_many_open_games_hold_against_every_outcome_around_them(
    seed: int, left: int, players: tuple[int, ...]
) -> None:
    rng = random.Random(seed)
    case = random_case(rng, 16, left, tail=True, scheduled=True, order=("DE", "SB", "KS", "WON"))
    p = project(case.tournament())
    assert p.remaining == left
    assert all(r.exact for pp in p.players for r in pp.reached.values()), "every extreme is exact here"
    check_scenarios(p, case)
    _check_claims_around(p, case, list(players))


def _sampled_under(case: Case, k: int, result: GameResult, rng: random.Random, count: int) -> list[tuple[str, ...]]:
    options = case.options()
    return [tuple(result if g == k else rng.choice(o) for g, o in enumerate(options)) for _ in range(count)]


def test_stakes_with_twenty_four_open_games_hold_against_sampled_outcomes() -> None:
    rng = random.Random(2400)
    case = with_lines(random_case(rng, 16, 24, tail=True, scheduled=True), (1, 4), playoff=False)
    k = stakes(case.tournament())
    assert k.exact and len(k.games) == 24
    checked = 0
    for g in k.games:
        index = next(j for j, (r, w, b) in enumerate(case.pending) if (r, w, b) == (g.round, g.white, g.black))
        for o in g.outcomes:
            for stake in o.stakes:
                if stake.after not in ("clinched", "eliminated") or checked >= 8:
                    continue
                checked += 1
                truth = corrections_walk(case, _sampled_under(case, index, o.result, rng, 40))
                best, worst = truth.ranks[stake.start_no]
                if stake.after == "eliminated":
                    assert best > stake.places, f"{stake.text} after {g.white}-{g.black} {o.result}"
                else:
                    assert worst <= stake.places, f"{stake.text} after {g.white}-{g.black} {o.result}"
    assert checked > 0


# -- one search per seq, and the previous seq's answer -------------------------------------------------


def _landed(case: Case, k: int, result: GameResult) -> Case:
    """``case`` with its ``k``-th pending game recorded as ``result``."""
    r, w, b = case.pending[k]
    return Case(
        [*case.events, ResultRecorded(_id(), TID, r, w, b, result)],
        [g for j, g in enumerate(case.pending) if j != k],
        case.withdrawn,
        case.n,
        case.cycles,
        case.win,
        case.line_games,
    )


def _values(p: Projection) -> list[tuple[int, int, Fraction, Fraction]]:
    return [(pp.rank_best, pp.rank_worst, pp.ks_min, pp.ks_max) for pp in p.players]


def _states(k: Stakes) -> tuple[object, ...]:
    return (k.players, tuple((g.white, g.black, tuple(o.stakes for o in g.outcomes)) for g in k.games))


@pytest.mark.parametrize("seed", range(6))
def test_the_previous_answer_is_reused_when_a_result_lands_inside_it_and_changes_nothing_but_time(seed: int) -> None:
    rng = random.Random(3200 + seed)
    n = rng.randint(4, 7)
    case = with_lines(random_case(rng, n, rng.randint(3, 6), tail=True), (1, 2), playoff=seed % 2 == 0)
    first = analyse(case.tournament())
    assert first.memory is not None and pickle.loads(pickle.dumps(first.memory)) == first.memory
    k = rng.randrange(len(case.pending))
    after = _landed(case, k, rng.choice(case.options()[k]))
    reused = analyse(after.tournament(), previous=first.memory)
    fresh = analyse(after.tournament())
    assert reused.reused and not fresh.reused
    check_exact(reused.projection, after, brute_force(after))
    check_scenarios(reused.projection, after)
    assert _values(reused.projection) == _values(fresh.projection)
    assert _states(reused.stakes) == _states(fresh.stakes)
    today, _ = brute_force_stakes(after, seed % 2 == 0)
    for pl in reused.stakes.players:
        for (places, _), state in zip(reused.stakes.lines, pl.states, strict=True):
            assert state == today[(pl.start_no, places)]


def test_a_correction_of_an_earlier_result_is_not_inside_the_previous_answer_and_starts_afresh() -> None:
    rng = random.Random(77)
    case = random_case(rng, 6, 4, tail=True)
    first = analyse(case.tournament())
    played = next(e for e in case.events if isinstance(e, ResultRecorded) and e.result in ("1-0", "0-1"))
    swapped: GameResult = "0-1" if played.result == "1-0" else "1-0"
    corrected = Case(
        [*case.events, ResultCorrected(_id(), TID, played.round, played.white, played.black, swapped)],
        case.pending,
        case.withdrawn,
        case.n,
        case.cycles,
        case.win,
        case.line_games,
    )
    again = analyse(corrected.tournament(), previous=first.memory)
    assert not again.reused
    check_exact(again.projection, corrected, brute_force(corrected))
    other = random_case(random.Random(78), 6, 4, tail=True)
    assert not analyse(other.tournament(), previous=first.memory).reused
