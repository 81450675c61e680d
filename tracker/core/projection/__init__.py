"""Arbiter projections: what the remaining games of a round robin can still change.

How this works
--------------

The *remaining games* are the pairs :meth:`Tournament.pending_pairs` lists
(every meeting of the round robin without a result), placed in their
scheduled round when the tournament has a schedule (``round`` is ``None``
otherwise, and colours are then a guess: the lower start number, or the
reverse of the pair's previous game).  A withdrawn player's remaining games
are forfeit wins for the opponent (``--`` when both have withdrawn), as
:class:`~tracker.core.events.PlayerWithdrawn` says; they have one outcome and
are not enumerated.  Byes not yet recorded are not projected (a free round
normally scores nothing); a tournament that is already complete has no
remaining games.

Everything is measured against the **final** line, the one C.07 §9.2 uses
once all games are in (:meth:`Tournament.line_games` of a complete
tournament): an opponent qualifies when ``2·score ≥ win·(G + limit)``, with
``G = (n − 1) × cycles`` less the players who never had an opponent (basis
``games``) or ``G`` = the number of rounds (basis ``rounds``).  The KS
reported is plain ``KS`` (limit 0); ranks use the tournament's whole
tie-break order, ``KS/L±n`` included.

*Exact*: each player's best and worst rank and lowest and highest KS is
found by :class:`~tracker.core.projection.solver.Solver`, a branch and
bound over the undecided games (see that module), with a complete scenario
that reaches it.  Leaves are ranked by
:func:`~tracker.core.projection.ranking.ranks`, which reproduces
:func:`tracker.core.standings.standings` on a complete crosstable (PTS, then
each criterion on the groups still tied, DE inside each group, shared
ranks).  A query that exceeds its node budget reports a proven bound and
the best scenario found, flagged not exact.  Per-game effects are the same
queries with that game's outcome fixed, searched to the end when at most
``exact_limit`` games are undecided; beyond, they are what the search already
knows without a search of their own (the best scenario it ranked under that
outcome, within the proven bounds: the unconditional extreme and the
interval bounds under the outcome), flagged on the game unless the two meet.
That knowledge is a fresh solver's, the state's alone: the projection's own
solver knows what its searches before learnt, and a memory reused from the
last seq, so two arbiters would see two ranges for one state.

*Lines* declared by the tournament (the first ``places`` places) follow
from the rank extremes: clinched when the worst rank is inside, eliminated
when the best is outside, open otherwise (the two extremes' scenarios show
how).  With a play-off for 1st, line 1 and play-off membership are judged
on points: the *lead* over a player (the best score of the others minus
theirs) is minimised, maximised and brought to zero by the same solver.

*Bounds* (``exact_limit < 0``, the cheapest answer): each player's final
score lies in [recorded + worst outcomes, recorded + best outcomes].  An
opponent is clinched when even their minimum is on the line, eliminated
when even their maximum is below it; KS lies between the points certainly
scored against clinched opponents and the most that can be scored against
all opponents not eliminated; the rank lies between 1 + the players
certainly ahead on points and n − the players certainly behind.  These are
sound (every outcome's value lies inside) but usually not tight; the
scenarios are the best of a few tried.  Per-game effects are the same
bounds with that game's outcome fixed.

Qualification statuses are exact in both modes: a player's minimum and
maximum final scores are each reached by some outcome of the remaining
games.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Final

from tracker.core.crosstable import Tournament
from tracker.core.projection.bounds import Intervals, bounds, bounds_given, intervals
from tracker.core.projection.model import Model, model_of
from tracker.core.projection.result import (
    EXTREMES,
    ExtremeName,
    GameProjection,
    LineProjection,
    LineStatus,
    OpponentStatus,
    OutcomeEffect,
    PlayerProjection,
    PlayoffProjection,
    Projection,
    Reached,
    Scenario,
    ScenarioGame,
    Status,
)
from tracker.core.projection.solver import Solver, scaled

#: Nodes the player extremes may expand in all (a few seconds of search, each fail-first probe counted as a node;
#: fewer past 30 games: solver.scaled), and per query.
BUDGET: Final = 105_000
QUERY_BUDGET: Final = 37_500
#: Nodes each extreme leaves for every one after it in the first pass (most need no more than a few hundred).
RESERVE: Final = 600
#: Nodes an extreme may spend in the first pass (the hardest then search again with what is left).
FIRST_CAP: Final = 12_000
#: open games beyond which the player extremes are bounds only: the search's depth is the number of open games
SEARCH_DEPTH: Final = 400
#: open games beyond which the per-game effects are bounds only (a search per player, extreme and outcome is too many)
SEARCHED_GAMES: Final = 64

# -- the projection -------------------------------------------------------------------


def project(t: Tournament, *, exact_limit: int = 12, budget: int = BUDGET, solver: Solver | None = None) -> Projection:
    """Project ``t``'s final KS, ranks, lines and qualifications over its remaining games.

    Every player extreme is searched exactly (within ``budget`` nodes in all;
    an extreme the budget cannot settle is a labelled bound), each with a
    scenario that reaches it.  Per-game effects are exact when at most
    ``exact_limit`` games remain undecided, budgeted beyond.  A negative
    ``exact_limit`` gives the interval bounds alone (``exact=False``).  The
    last three rounds of a 16-player round robin (24 games) take about a
    second; call it off the hot path.  ``solver`` is a
    :class:`~tracker.core.projection.solver.Solver` of ``t``'s model to
    search with (and to leave what it learnt in: the stakes read it,
    :func:`~tracker.core.projection.analysis.analyse`); by default a fresh
    one.  Reads ``t`` and changes nothing in it; raises nothing for a valid
    tournament (:class:`~tracker.core.errors.ProjectionUnavailable` for an
    order the projection does not rank by).
    """
    m = solver.m if solver is not None else model_of(t)
    n = m.n
    iv = intervals(m)
    den = t.units.denominator

    def points(units: int) -> Fraction:
        return Fraction(units, den)

    # the search descends one game per level (recursively): past SEARCH_DEPTH open games, bounds only,
    # and no scenario (one per player would be O(n × games))
    small = len(m.undecided) <= SEARCH_DEPTH
    searched = exact_limit >= 0 and small
    if solver is None and small:
        solver = Solver(m)
    # extremes[i][objective]: (value, attained, exact, scenario indices)
    extremes: list[dict[ExtremeName, tuple[int, int, bool, tuple[int, ...]]]] = [{} for _ in range(n)]
    if searched:
        assert solver is not None
        left = scaled(budget, m)
        # every extreme in turn, each leaving RESERVE nodes for every one after it (so one hard extreme cannot
        # leave the later ones unsearched); then what is left for those still open, in turn
        queries = [(i, objective) for i in range(n) for objective in EXTREMES]
        for first in (True, False):
            for q, (i, objective) in enumerate(queries):
                known = extremes[i].get(objective)
                if known is not None and known[2]:
                    continue
                share = min(FIRST_CAP, left - RESERVE * (len(queries) - 1 - q)) if first else min(QUERY_BUDGET, left)
                e = solver.solve(i, objective, budget=max(0, share))
                left -= solver.nodes
                extremes[i][objective] = (e.value, e.attained, e.exact, e.scenario)
    else:
        low, high = bounds(iv)
        for i in range(n):
            for objective, value in (
                ("rank_best", low[n + i]),
                ("rank_worst", high[n + i]),
                ("ks_min", low[i]),
                ("ks_max", high[i]),
            ):
                if solver is not None:
                    e = solver.solve(i, objective, budget=0)  # the best tried scenario
                    extremes[i][objective] = (value, e.attained, e.attained == value, e.scenario)
                else:
                    extremes[i][objective] = (value, value, False, ())

    def scenario(indices: tuple[int, ...]) -> Scenario:
        if not indices and m.undecided:
            return ()  # no scenario reported: the value beside it is a bound
        return _scenario(t, m, indices)

    statuses: list[Status] = [
        "clinched" if iv.clinched(j) else "open" if iv.alive(j) else "eliminated" for j in range(n)
    ]
    declared = tuple((line.places, line.name or _line_name(line.places)) for line in t.opened.lines)
    playoff = t.opened.playoff
    by_start = sorted(range(n), key=lambda i: t.start_nos[i])
    players = []
    for i in by_start:
        ex = extremes[i]
        reached: dict[ExtremeName, Reached] = {
            objective: Reached(exact, points(attained) if objective.startswith("ks") else attained, scenario(indices))
            for objective, (_, attained, exact, indices) in ex.items()
        }
        po = _playoff(solver, i, scenario) if playoff and solver is not None and searched else None
        players.append(
            PlayerProjection(
                start_no=t.start_nos[i],
                ks_min=points(ex["ks_min"][0]),
                ks_max=points(ex["ks_max"][0]),
                rank_best=ex["rank_best"][0],
                rank_worst=ex["rank_worst"][0],
                points_min=points(iv.s_min[i]),
                points_max=points(iv.s_max[i]),
                qualification=statuses[i],
                opponents=tuple(OpponentStatus(t.start_nos[j], statuses[j]) for j in by_start if j != i),
                reached=reached,
                lines=tuple(
                    _line(places, name, ex, scenario, solver if playoff and places == 1 and searched else None, i)
                    for places, name in declared
                ),
                playoff=po,
            )
        )
    games = _games(t, m, solver, iv, exact_limit, points)
    exact = (
        searched
        and all(r.exact for p in players for r in p.reached.values())
        and all(line.status != "unknown" for p in players for line in p.lines)
        and all(p.playoff is None or p.playoff.exact for p in players)
    )
    return Projection(
        tournament=t.id,
        seq=t.seq,
        exact=exact,
        remaining=len(m.games),
        line=Fraction(m.thresholds[0], 2 * den),
        players=tuple(players),
        games=games,
        lines=declared,
        playoff=playoff,
    )


def _line_name(places: int) -> str:
    return "1st" if places == 1 else f"top {places}"


def _scenario(t: Tournament, m: Model, indices: tuple[int, ...]) -> Scenario:
    """Every remaining game (forfeits included) with the result ``indices`` gives the undecided ones."""
    chosen = iter(indices)
    games = []
    for g in m.games:
        o = g.options[0] if len(g.options) == 1 else g.options[next(chosen)]
        games.append(ScenarioGame(g.round, t.start_nos[g.white], t.start_nos[g.black], o.result))
    return tuple(games)


def _line(
    places: int,
    name: str,
    ex: dict[ExtremeName, tuple[int, int, bool, tuple[int, ...]]],
    make: Callable[[tuple[int, ...]], Scenario],
    solver: Solver | None,
    i: int,
) -> LineProjection:
    """The status of one line for one player; ``solver`` when line 1 is decided on points (a play-off)."""
    if solver is not None:
        low = solver.solve(i, "lead_min")
        high = solver.solve(i, "lead_max")
        zero = solver.solve(i, "lead_zero")
        inside = make(low.scenario) if low.attained < 0 else None
        outside = make(high.scenario) if high.attained > 0 else None
        tie = make(zero.scenario) if zero.attained == 0 else None
        if not (low.exact and high.exact and zero.exact):
            status: LineStatus = "unknown"
        elif high.value < 0:
            status = "clinched"
        elif low.value > 0:
            status = "eliminated"
        else:
            status = "open"
        return LineProjection(places, name, status, inside, outside, tie)
    best_value, best_attained, _, best_at = ex["rank_best"]
    worst_value, worst_attained, _, worst_at = ex["rank_worst"]
    inside = make(best_at) if best_attained <= places else None
    outside = make(worst_at) if worst_attained > places else None
    if worst_value <= places:
        status = "clinched"
    elif best_value > places:
        status = "eliminated"
    elif inside is not None and outside is not None:
        status = "open"
    else:
        status = "unknown"
    return LineProjection(places, name, status, inside, outside)


def _playoff(solver: Solver, i: int, scenario: Callable[[tuple[int, ...]], Scenario]) -> PlayoffProjection:
    """Play-off membership for 1st: can ``i`` tie for the most points, must they, are they at least tied first."""
    zero = solver.solve(i, "lead_zero")
    high = solver.solve(i, "lead_max")
    low = solver.solve(i, "lead_min")
    # in the play-off in every outcome: the lead is 0 at both ends
    must = high.value == 0 and low.value == 0
    status: Status = "clinched" if must else "open" if zero.value == 0 else "eliminated"
    return PlayoffProjection(
        status=status,
        scenario=scenario(zero.scenario) if zero.attained == 0 else None,
        secured=high.value <= 0,
        exact=zero.exact and high.exact and low.exact,
    )


def _games(
    t: Tournament,
    m: Model,
    solver: Solver | None,
    iv: Intervals,
    exact_limit: int,
    points: Callable[[int], Fraction],
) -> tuple[GameProjection, ...]:
    """Each remaining game and what each of its outcomes leaves possible."""
    n = m.n
    by_start = sorted(range(n), key=lambda i: t.start_nos[i])
    k = len(m.undecided)
    # beyond SEARCHED_GAMES open games, n × 4 searches per outcome cost more than they tell: bounds only
    searched = exact_limit >= 0 and k <= SEARCHED_GAMES
    unlimited = searched and k <= exact_limit
    overall = bounds(iv)
    # beyond exact_limit, what a solver knows without a search depends on the searches before (and on a memory
    # of the last seq): a fresh solver's knowledge is the state's alone, the same for every arbiter
    alone = Solver(m) if searched and not unlimited else None
    undecided = iter(range(k))  # m.undecided keeps m.games' order
    games = []
    for g in m.games:
        if len(g.options) == 1:
            games.append(
                GameProjection(
                    g.round, t.start_nos[g.white], t.start_nos[g.black], (OutcomeEffect(g.options[0].result, {}, {}),)
                )
            )
            continue
        index = next(undecided)
        ranges: list[tuple[Sequence[int], Sequence[int]]] = []
        touched: list[int] | set[int] = by_start
        exact = True
        if not searched:  # each outcome patches the overall bounds where it differs: only those players can move
            given = [bounds_given(iv, overall, g, option) for option in g.options]
            ranges.extend(given)
            touched = {j % n for lo, hi in given for j in (*lo.patch, *hi.patch)}
            exact = False
        for o, option in enumerate(g.options if searched else ()):
            lows, highs = [0] * (2 * n), [0] * (2 * n)
            # beyond exact_limit: what the search already knows (no search of its own), within the interval bounds
            under = None if unlimited else bounds_given(iv, overall, g, option)
            for i in range(n):
                for objective in EXTREMES:
                    slot = i if objective.startswith("ks") else n + i
                    low = objective in ("ks_min", "rank_best")
                    assert solver is not None  # searched
                    if under is None:
                        e = solver.solve(i, objective, {index: o})
                    else:  # a solver of the state alone: see the module docstring
                        assert alone is not None  # beyond exact_limit
                        e = alone.known_extreme(i, objective, index, o, (under[0] if low else under[1])[slot])
                    exact = exact and e.exact
                    (lows if low else highs)[slot] = e.value
            ranges.append((lows, highs))
        moving = by_start if touched is by_start else sorted(touched, key=lambda i: t.start_nos[i])
        ks_moved = [i for i in moving if len({(lo[i], hi[i]) for lo, hi in ranges}) > 1]
        rank_moved = [i for i in moving if len({(lo[n + i], hi[n + i]) for lo, hi in ranges}) > 1]
        outcomes = tuple(
            OutcomeEffect(
                o.result,
                {t.start_nos[i]: (points(lo[i]), points(hi[i])) for i in ks_moved},
                {t.start_nos[i]: (lo[n + i], hi[n + i]) for i in rank_moved},
            )
            for o, (lo, hi) in zip(g.options, ranges, strict=True)
        )
        games.append(GameProjection(g.round, t.start_nos[g.white], t.start_nos[g.black], outcomes, exact))
    return tuple(games)


__all__ = [
    "GameProjection",
    "LineProjection",
    "LineStatus",
    "OpponentStatus",
    "OutcomeEffect",
    "PlayerProjection",
    "PlayoffProjection",
    "Projection",
    "Reached",
    "Scenario",
    "ScenarioGame",
    "Status",
    "project",
]
