"""One search per seq: the arbiters' projection and the spectators' stakes from one solver, the last seq's reused.

How this works
--------------

:func:`analyse` builds one :class:`~tracker.core.projection.solver.Solver`
for a tournament's state and runs both consumers on it: the projection
first (its player extremes are what the stakes' states of today read), then
the stakes (their threshold questions start from every scenario the
projection ranked and every bound it proved).  What the search learnt comes
back as a :class:`Memory`: the scenarios that were best somewhere, and every
proven lower bound, keyed by the games themselves (round, White, Black), not
by indices.

The next seq passes that memory back (``previous``).  When the new state is
the old one with some of its undecided games now decided — the results
*landed inside the old scenario space* — the memory carries over: each old
scenario that agrees with the landed results is a scenario of the new
state (those games dropped), and each old bound still holds, because the new
state's completions are a subset of the old ones under those results (a
bound without a condition, or under a landed result, becomes a bound of the
new state; a bound under another game's outcome stays that game's).  A
carried scenario that reaches a carried bound proves an extreme without any
search, which is what one result usually leaves: most extremes do not move.
Anything else (a correction of an older result, a withdrawal, a bye, a
different tie-break order or line, another tournament) is detected by
comparing the crosstables, and the memory is ignored.

The memory is plain tuples (it pickles small, for the gateway's worker
processes) and :func:`analyse` is pure: the same state and memory always
give the same answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from tracker.core.crosstable import Tournament
from tracker.core.projection import SEARCH_DEPTH, Projection, project
from tracker.core.projection.model import Model, model_of
from tracker.core.projection.node import Objective
from tracker.core.projection.solver import Solver
from tracker.core.projection.stakes import Stakes, stakes

#: Scenarios a memory keeps at most (each is ranked again by the next solver: about 0.15 ms per 20 players).
KEPT_SCENARIOS: Final = 1500

#: One undecided game as the memory knows it: round, White, Black (indices), then each outcome's
#: (result, units to White, units to Black, a win for White, a win for Black).
GameKey = tuple[int | None, int, int, tuple[tuple[str, int, int, int, int], ...]]


@dataclass(frozen=True, slots=True)
class Memory:
    """What one analysis learnt, for the next seq's (see the module docstring).

    ``frame`` is everything no result changes (the order, the lines, the
    players' fixed values); ``score``/``wins``/``points`` the decided part of
    the crosstable the search started from; ``games`` its undecided games;
    ``scenarios`` an outcome index per game; ``floors`` proven lower bounds
    of minimised values as (objective, player, game or -1, outcome, bound).
    """

    tournament: str
    seq: int
    frame: tuple[object, ...]
    score: tuple[int, ...]
    wins: tuple[int, ...]
    points: tuple[tuple[int, ...], ...]
    games: tuple[GameKey, ...]
    scenarios: tuple[tuple[int, ...], ...]
    floors: tuple[tuple[Objective, int, int, int, int], ...]


@dataclass(frozen=True, slots=True)
class Analysis:
    """The projection and the stakes of one state, and the memory for the next (``reused``: the last one applied)."""

    projection: Projection
    stakes: Stakes
    memory: Memory | None
    reused: bool


def analyse(t: Tournament, *, previous: Memory | None = None) -> Analysis:
    """The projection and the stakes of ``t`` from one search, starting from ``previous`` where it applies.

    ``previous`` is the :attr:`Analysis.memory` of an earlier state of the
    same tournament; it is used only when ``t`` is that state with some of
    its undecided games decided (:func:`carried` says how), and ignored
    otherwise.  The answers are the ones :func:`project` and :func:`stakes`
    give alone, as exact or more (a carried bound can settle what a budget
    could not).  Raises :class:`~tracker.core.errors.ProjectionUnavailable`
    for an order the projection does not rank by; pure and deterministic.
    """
    m = model_of(t)
    if len(m.undecided) > SEARCH_DEPTH:  # bounds only: nothing to search, nothing to remember
        return Analysis(project(t), stakes(t), None, False)
    solver, reused = _solver(t, m, previous)
    projection = project(t, solver=solver)
    spectators = stakes(t, solver=solver)
    return Analysis(projection, spectators, memory_of(t, m, solver), reused)


def project_again(t: Tournament, *, previous: Memory | None = None) -> tuple[Projection, Memory | None, bool]:
    """The projection alone (nobody asks the stakes) as :func:`analyse` finds it: with the memory, and if reused."""
    m = model_of(t)
    if len(m.undecided) > SEARCH_DEPTH:
        return project(t), None, False
    solver, reused = _solver(t, m, previous)
    return project(t, solver=solver), memory_of(t, m, solver), reused


def stakes_again(t: Tournament, *, previous: Memory | None = None) -> tuple[Stakes, Memory | None, bool]:
    """The stakes alone (no arbiter watches) as :func:`analyse` finds them: with the memory, and if reused."""
    m = model_of(t)
    if len(m.undecided) > SEARCH_DEPTH:
        return stakes(t), None, False
    solver, reused = _solver(t, m, previous)
    return stakes(t, solver=solver), memory_of(t, m, solver), reused


def _solver(t: Tournament, m: Model, previous: Memory | None) -> tuple[Solver, bool]:
    """A solver for ``m`` that starts from what ``previous`` proved, when it applies (then ``True``)."""
    start = carried(previous, t, m) if previous is not None else None
    solver = Solver(m, scenarios=start[0] if start else ())
    if start:
        solver.learn(start[1])
    return solver, start is not None


def _frame(t: Tournament, m: Model) -> tuple[object, ...]:
    f = m.frame
    return (
        tuple(tb.code for tb, _ in m.order),
        tuple(sorted(f.thresholds.items())),
        tuple(f.start_nos),
        tuple(f.ratings),
        tuple(f.trailing),
        tuple(tuple(row) for row in f.de_weight),
        tuple((line.places, line.name) for line in t.opened.lines),
        t.opened.playoff,
        t.units.denominator,
    )


def _games(m: Model) -> tuple[GameKey, ...]:
    return tuple(
        (g.round, g.white, g.black, tuple((o.result, o.white, o.black, o.white_won, o.black_won) for o in g.options))
        for g in m.undecided
    )


def memory_of(t: Tournament, m: Model, solver: Solver) -> Memory:
    """What ``solver`` (over ``t``'s model ``m``) learnt, keyed by the games."""
    scenarios, floors = solver.lessons()
    return Memory(
        tournament=t.id,
        seq=t.seq,
        frame=_frame(t, m),
        score=tuple(m.score),
        wins=tuple(m.wins),
        points=tuple(tuple(row) for row in m.points),
        games=_games(m),
        scenarios=tuple(scenarios[-KEPT_SCENARIOS:]),
        floors=tuple(
            (objective, i, *solver.known.unpack(condition), value)
            for (objective, i, condition), value in sorted(floors.items())
        ),
    )


def carried(
    previous: Memory, t: Tournament, m: Model
) -> tuple[list[tuple[int, ...]], dict[tuple[Objective, int, int], int]] | None:
    """``previous`` in the indices of ``t``'s model ``m``: its scenarios and bounds, or ``None`` if it does not apply.

    It applies when ``m``'s undecided games are some of ``previous``'s and
    the decided crosstable is ``previous``'s plus one outcome of each game
    no longer undecided (those results landed inside the old scenario
    space).  Returns the old scenarios that agree with the landed results
    and the old bounds that still hold, keyed as
    :meth:`~tracker.core.projection.solver.Solver.learn` takes them.
    """
    if previous.tournament != t.id or previous.frame != _frame(t, m):
        return None
    games = _games(m)
    index: list[int] = []  # new game → old game
    used: set[int] = set()
    for game in games:
        k = next((k for k, old in enumerate(previous.games) if k not in used and old == game), None)
        if k is None:
            return None
        index.append(k)
        used.add(k)
    landed: dict[int, int] = {}
    score, wins = list(previous.score), list(previous.wins)
    points = [list(row) for row in previous.points]
    removed = [k for k in range(len(previous.games)) if k not in used]
    if len({(min(w, b), max(w, b)) for _, w, b, _ in (previous.games[k] for k in removed)}) < len(removed):
        return None  # two landed games of one pair: which result is which is not worth guessing
    for k in removed:
        _, w, b, options = previous.games[k]
        change = (m.points[w][b] - points[w][b], m.points[b][w] - points[b][w])
        o = next((o for o, option in enumerate(options) if option[1:3] == change), None)
        if o is None:
            return None
        _, uw, ub, ww, wb = options[o]
        landed[k] = o
        score[w] += uw
        score[b] += ub
        wins[w] += ww
        wins[b] += wb
        points[w][b] += uw
        points[b][w] += ub
    if score != m.score or wins != m.wins or points != m.points:
        return None  # something else changed too (a correction, a forfeit, a bye): start afresh
    scenarios = [
        tuple(old[k] for k in index) for old in previous.scenarios if all(old[k] == o for k, o in landed.items())
    ]
    offsets, width = [], 1
    for g in m.undecided:
        offsets.append(width)
        width += len(g.options)
    new_of = {k: g for g, k in enumerate(index)}
    floors: dict[tuple[Objective, int, int], int] = {}
    for objective, i, k, o, value in previous.floors:
        if k == -1 or landed.get(k) == o:
            condition = 0  # no condition, or a result that landed: the new state's completions are a subset
        elif k in new_of:
            condition = offsets[new_of[k]] + o
        else:
            continue  # under an outcome that did not happen
        key = (objective, i, condition)
        floors[key] = max(value, floors.get(key, value))
    return scenarios, floors
