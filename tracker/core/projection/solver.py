"""Exact extremes by branch and bound, each with a scenario that reaches it.

How this works
--------------

One query asks for one extreme of one player — best or worst final rank,
lowest or highest final KS, lowest, highest or smallest absolute lead —
optionally with some games' outcomes fixed (the per-game effects, the
stakes of a pending game).  :meth:`Solver.solve` answers with an
:class:`Extreme`: the value, a complete scenario (an outcome index for every
undecided game) that reaches it, and whether the value is proven.
:meth:`Solver.reach` asks less: whether some completion gets to a given
value (a line: "can she still finish in the top 3 if this game is drawn?"),
with a scenario when it does; it stops at the first such scenario.

The search is depth-first over the undecided games.  At every node,
:class:`~tracker.core.projection.node.Node` gives *sound* bounds on the
objective over all completions of the games fixed so far: the cheap
interval bounds, then, where the relaxation covers the objective, the
tighter flow bounds of :meth:`~tracker.core.projection.node.Node.tighten`
together with a guide (an outcome per game).  A node whose optimistic bound
cannot beat the best scenario known is pruned; at the root the guide's
scenario is ranked (it often reaches the bound, which ends the query);
children are visited best bound first, the guide's outcome first among
equals; the game branched on is one that touches what is still undecided
about the player (a rival whose score straddles theirs, an opponent whose
score moves a tie-break difference or crosses the line), so games that
cannot change the answer are never enumerated.  A node whose bounds meet
is not expanded: the rest is completed with any outcomes and ranked once
(so every value comes with a scenario that was actually evaluated).

Dominance: a player's own result only moves their rank (and their lead)
one way (a better result raises their score and lowers the opponent's;
every player ahead after it was ahead before), so for the best rank the
player's own open games are fixed to wins, for the worst to losses, before
searching; their score is then settled, which the flow bounds need.

Every evaluated leaf improves the best-known scenario of every (player,
objective), unconditionally and under each (game, outcome) it contains
(:class:`~tracker.core.projection.leaves.Known`), so later queries usually
start at their optimum and only have to prove it.  A query that exceeds its
node budget stops with the best scenario found (``attained``) and the best
bound proven (``value``), ``exact=False``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import product as _product
from typing import Final as Constant

from tracker.core.order import TieBreak
from tracker.core.projection.leaves import UNCONDITIONAL, Known, Leaf, leads
from tracker.core.projection.model import Model
from tracker.core.projection.node import Node, Objective
from tracker.core.projection.ranking import ranks
from tracker.core.tiebreaks import rule_of
from tracker.core.tiebreaks.rule import Final

#: The four extremes every player gets.
OBJECTIVES: Constant[tuple[Objective, ...]] = ("rank_best", "rank_worst", "ks_min", "ks_max")
#: Nodes one query may expand before it settles for bounds.
DEFAULT_BUDGET: Constant = 4000
_SIGN: Constant[dict[Objective, int]] = {
    "rank_best": 1,
    "rank_worst": -1,
    "ks_min": 1,
    "ks_max": -1,
    "lead_min": 1,
    "lead_max": -1,
    "lead_zero": 1,
}
#: Objectives a player's own result moves one way: the result that is best for them, per objective.
_OWN_RESULT: Constant[dict[Objective, bool]] = {
    "rank_best": True,
    "rank_worst": False,
    "lead_min": True,
    "lead_max": False,
}
#: Objectives the flow relaxation tightens (Node.tighten).
_TIGHTENED: Constant = frozenset({"rank_best", "rank_worst", "lead_min"})
#: The projected KS: plain Koya (limit 0), whatever the order ranks by.
_KS: Constant = TieBreak("KS", "KS")
_FAR: Constant = 1 << 60
#: A node's bounds (optimistic, pessimistic), the weights that choose the game to branch on, the rivals' ties.
_Assessed = tuple[tuple[int, int], list[int], dict[int, int]]
#: Rankings the local search at the root of a rank query may spend.
_POLISH: Constant = 1500
#: Rounds of the tie repair at the root of a rank query.
_REPAIRS: Constant = 4

__all__ = ["DEFAULT_BUDGET", "OBJECTIVES", "Extreme", "Leaf", "Objective", "Reach", "Solver"]


@dataclass(frozen=True, slots=True)
class Extreme:
    """One extreme of one player: ``value`` (rank, or KS in units), proven when ``exact``.

    ``scenario`` gives an outcome index (into ``Game.options``) for every
    undecided game, in :attr:`Model.undecided` order; it reaches
    ``attained``.  ``exact`` means ``attained == value`` and no outcome goes
    beyond it; otherwise ``value`` is a sound bound (no outcome goes beyond
    it either) that no scenario found reaches.
    """

    value: int
    attained: int
    scenario: tuple[int, ...]
    exact: bool


@dataclass(frozen=True, slots=True)
class Reach:
    """Whether some completion gets a player's objective to a target: ``possible`` (``None``: budget ran out).

    ``scenario`` is one that does when ``possible``; ``None`` otherwise.
    """

    possible: bool | None
    scenario: tuple[int, ...] | None


class _Budget(Exception):
    """The node budget of a query ran out (caught inside the query)."""


class _Incumbent:
    """The best scenario a query knows (minimised value), started from every leaf evaluated so far."""

    __slots__ = ("i", "objective", "scenario", "sign", "value")

    def __init__(self, objective: Objective, i: int, value: int, scenario: tuple[int, ...] | None) -> None:
        self.objective = objective
        self.i = i
        self.sign = _SIGN[objective]
        self.value = value
        self.scenario = scenario

    def offer(self, leaf: Leaf) -> None:
        v = self.sign * leaf.value(self.objective, self.i)
        if v < self.value:
            self.value = v
            self.scenario = leaf.scenario


class Solver(Node):
    """Queries over one model; see the module docstring.  Not thread-safe (it mutates its own arrays)."""

    def __init__(
        self, m: Model, *, budget: int = DEFAULT_BUDGET, seed: int = 15, scenarios: Iterable[tuple[int, ...]] = ()
    ) -> None:
        super().__init__(m)
        self.budget = budget
        ks_final = rule_of(_KS).final
        assert ks_final is not None  # Koya is projectable
        self._ks_final = ks_final
        self.known = Known(self.n, [len(opts) for opts in self.opts])
        self.leaves = 0
        self.nodes = 0
        self.open_bound: int | None = None
        self.floor = -_FAR
        self.hint: tuple[int, ...] | None = None
        self.limit = budget
        self._proven: dict[tuple[Objective, int, int], tuple[Extreme, int]] = {}
        self._reached: dict[tuple[Objective, int, int, int], tuple[Reach, int]] = {}
        for scenario in scenarios:
            self.evaluate(scenario)
        self._seed(seed)

    # -- leaves --------------------------------------------------------------------

    def evaluate(self, scenario: tuple[int, ...] | list[int]) -> Leaf:
        """Rank the crosstable ``scenario`` completes (an outcome index per undecided game).

        Records the scenario as the best known wherever it improves.  Raises
        :class:`ValueError` for a scenario of the wrong length.
        """
        if len(scenario) != self.k:
            raise ValueError(f"a scenario gives {self.k} outcomes, not {len(scenario)}")
        saved = self.assign.copy()
        for g in range(self.k):
            if saved[g] != -1:
                self.undo(g)
        for g, o in enumerate(scenario):
            self.apply(g, o)
        leaf = self._rank_leaf(tuple(scenario))
        for g in range(self.k):
            self.undo(g)
        for g, o in enumerate(saved):
            if o != -1:
                self.apply(g, o)
        return leaf

    def _complete(self, guide: dict[int, int] | None = None) -> Leaf:
        """Evaluate the current node completed with the guide's outcomes (or each free game's first)."""
        free = [g for g in range(self.k) if self.assign[g] == -1]
        for g in free:
            self.apply(g, guide.get(g, 0) if guide else 0)
        leaf = self._rank_leaf(tuple(self.assign))
        for g in free:
            self.undo(g)
        return leaf

    def _rank_leaf(self, scenario: tuple[int, ...]) -> Leaf:
        score = self.s_lo
        final = Final(self.m.frame, score, self.w_lo, self.p_lo)
        leaf = Leaf(scenario, ranks(final, self.order), list(self._ks_final(final, _KS)), score.copy(), leads(score))
        self.leaves += 1
        self.known.record(leaf)
        return leaf

    def _seed(self, seed: int) -> None:
        """A few scenarios for a start: all White wins, all draws, all Black wins, some pseudo-random.

        The pseudo-random ones come from a fixed linear congruential sequence
        (the core imports no ``random``): the same model always starts the same way.
        """
        if self.k == 0:
            self.evaluate(())
            return
        for pick in (0, 1, 2):
            self.evaluate([min(pick, len(opts) - 1) for opts in self.opts])
        x = seed
        for _ in range(8):
            picks = []
            for opts in self.opts:
                x = (x * 1103515245 + 12345) % (1 << 31)
                picks.append((x >> 16) % len(opts))
            self.evaluate(picks)

    # -- queries -------------------------------------------------------------------

    def _condition(self, fixed: dict[int, int]) -> int | None:
        """The known-table index of ``fixed`` (none or one game), ``None`` for more than one game."""
        if not fixed:
            return UNCONDITIONAL
        if len(fixed) == 1:
            ((g, o),) = fixed.items()
            return self.known.condition(g, o)
        return None

    def _start(self, objective: Objective, i: int, condition: int | None) -> _Incumbent:
        found = self.known.best(objective, i, condition) if condition is not None else None
        if found is None:
            return _Incumbent(objective, i, _FAR, None)
        return _Incumbent(objective, i, found[0], found[1].scenario)

    def solve(
        self, i: int, objective: Objective, fixed: dict[int, int] | None = None, *, budget: int | None = None
    ) -> Extreme:
        """The ``objective`` extreme of player ``i`` over every outcome of the games not in ``fixed``.

        ``fixed`` maps undecided-game indices to outcome indices.  Raises
        nothing for a valid index; an expensive query returns a bound
        (``exact=False``) once it has expanded ``budget`` nodes.
        """
        fixed = fixed or {}
        condition = self._condition(fixed)
        limit = self.budget if budget is None else budget
        memo = (objective, i, condition) if condition is not None else None
        known = self._proven.get(memo) if memo is not None else None
        self.nodes = 0
        if known is not None and (known[0].exact or known[1] >= limit):
            return known[0]
        sign = _SIGN[objective]
        incumbent = self._start(objective, i, condition)
        # a condition cannot beat the unconditional extreme: once proven, it is a floor
        floor = -_FAR
        if fixed:
            unconditional = self.solve(i, objective)
            self.nodes = 0
            if unconditional.exact:
                floor = sign * unconditional.value
                if incumbent.value == floor and incumbent.scenario is not None:
                    result = Extreme(unconditional.value, unconditional.value, incumbent.scenario, True)
                    if memo is not None:
                        self._proven[memo] = (result, limit)
                    return result
        self._search(objective, i, fixed, floor, limit, incumbent, self._hint(objective, i, fixed))
        value, scenario = incumbent.value, incumbent.scenario
        assert scenario is not None  # every node with bounds that meet is completed; the root at least
        proven = value if self.open_bound is None else min(value, self.open_bound)
        result = Extreme(sign * proven, sign * value, scenario, proven == value)
        if memo is not None:
            self._proven[memo] = (result, limit)
        return result

    def reach(
        self,
        i: int,
        objective: Objective,
        target: int,
        fixed: dict[int, int] | None = None,
        *,
        budget: int | None = None,
    ) -> Reach:
        """Whether some outcome of the games not in ``fixed`` gives ``i`` an ``objective`` at ``target`` or better.

        Better is lower for ``rank_best``, ``ks_min``, ``lead_min`` and
        ``lead_zero``, higher for the others (``reach(i, "rank_worst", 4)``:
        can ``i`` finish 4th or lower?).  ``possible`` is ``None`` when the
        search spent ``budget`` nodes without deciding.
        """
        fixed = fixed or {}
        sign = _SIGN[objective]
        goal = sign * target
        condition = self._condition(fixed)
        limit = self.budget if budget is None else budget
        self.nodes = 0
        if condition is not None:
            found = self.known.best(objective, i, condition)
            if found is not None and found[0] <= goal:
                return Reach(True, found[1].scenario)
            proven = self._proven.get((objective, i, condition))
            if proven is not None and sign * proven[0].value > goal:
                return Reach(False, None)
            memo = (objective, i, condition, goal)
            known = self._reached.get(memo)
            if known is not None and (known[0].possible is not None or known[1] >= limit):
                return known[0]
        if fixed:
            # nothing under a condition beats the unconditional extreme: a proven one may settle it
            proven = self._proven.get((objective, i, UNCONDITIONAL))
            if proven is not None and sign * proven[0].value > goal:
                return Reach(False, None)
            unconditional = self.reach(i, objective, target, budget=limit)
            self.nodes = 0
            if unconditional.possible is False:
                return unconditional
        # nothing at the goal or better is known: a virtual incumbent just past it prunes everything that cannot
        incumbent = _Incumbent(objective, i, goal + 1, None)
        self._search(objective, i, fixed, goal, limit, incumbent, self._hint(objective, i, fixed))
        if incumbent.value <= goal:
            result = Reach(True, incumbent.scenario)
        else:
            result = Reach(None if self.open_bound is not None else False, None)
        if condition is not None:
            self._reached[(objective, i, condition, goal)] = (result, limit)
        return result

    def _hint(self, objective: Objective, i: int, fixed: dict[int, int]) -> tuple[int, ...] | None:
        """For a query under a condition: the best scenario known without it (one game away, usually)."""
        if not fixed:
            return None
        found = self.known.best(objective, i, UNCONDITIONAL)
        return None if found is None else found[1].scenario

    def _search(
        self,
        objective: Objective,
        i: int,
        fixed: dict[int, int],
        floor: int,
        limit: int,
        incumbent: _Incumbent,
        hint: tuple[int, ...] | None = None,
    ) -> None:
        """Branch and bound under ``fixed`` (undone afterwards); ``open_bound`` says what the budget left open.

        ``hint`` is a scenario to start the local search at the root from (its free games' outcomes).
        """
        self.floor = floor
        self.hint = hint
        decided = [g for g in range(self.k) if self.assign[g] != -1]
        for g, o in fixed.items():
            self.apply(g, o)
        own = _OWN_RESULT.get(objective)
        if own is not None:
            # dominance: i's own free games at i's best (worst) result
            for g in self.of_player[i]:
                if self.assign[g] == -1:
                    self.apply(g, self.own_outcome(g, i, own))
        self.nodes = 0
        self.limit = limit
        self.open_bound = None
        try:
            if incumbent.scenario is None and incumbent.value >= _FAR:
                incumbent.offer(self._complete())
            with contextlib.suppress(_Budget):  # the budget ran out: open_bound holds what is proven
                self._node(objective, i, self._assess(objective, i), -_FAR, incumbent, True)
        finally:
            for g in range(self.k):
                if self.assign[g] != -1 and g not in decided:
                    self.undo(g)

    def _assess(self, objective: Objective, i: int) -> _Assessed:
        weight = [0] * self.n
        side: dict[int, int] = {}
        return self.bounds(objective, i, weight, side), weight, side

    def _node(
        self, objective: Objective, i: int, assessed: _Assessed, inherited: int, inc: _Incumbent, root: bool
    ) -> None:
        """Search the node ``assessed`` describes; ``inherited`` is a bound proven for a node above it."""
        (cheap, hi), weight, side = assessed
        lo = max(cheap, inherited, self.floor)
        if inc.value <= lo:
            return
        if lo == hi or self.free == 0:
            inc.offer(self._complete())
            return
        self.nodes += 1
        if self.nodes > self.limit:
            self._left_open(lo)
            raise _Budget
        guide = None
        if objective in _TIGHTENED:
            tight, guide = self.tighten(objective, i, cheap, inc.value, side)
            lo = max(lo, tight)
            if inc.value <= lo:
                return
            if root and guide is not None:
                starts = []
                if objective != "lead_min":
                    starts = self.starts(objective, i, side)
                if objective == "rank_best" or objective == "lead_min":
                    starts.insert(0, guide.outcomes())
                for scenario in starts:
                    inc.offer(self._complete(scenario))
                    if inc.value <= lo:
                        return
                if objective != "lead_min":
                    self._repair(objective, i, inc, lo, side)
                    if inc.value <= lo:
                        return
                    self._polish(objective, i, inc, lo, starts)
                    if inc.value <= lo:
                        return
        g = self._branch(weight)
        prefer = guide.pick(g) if guide is not None else -1
        children = []
        for o in range(len(self.opts[g])):
            self.apply(g, o)
            child = self._assess(objective, i)
            self.undo(g)
            children.append((child[0], o != prefer, o, child))
        children.sort(key=lambda c: c[:3])
        for k, ((child_lo, _), _, o, child) in enumerate(children):
            if inc.value <= max(child_lo, lo):
                continue
            self.apply(g, o)
            try:
                self._node(objective, i, child, lo, inc, False)
            except _Budget:
                for (later, _), _, _, _ in children[k + 1 :]:
                    if max(later, lo) < inc.value:
                        self._left_open(max(later, lo))
                raise
            finally:
                self.undo(g)

    def _repair(self, objective: Objective, i: int, inc: _Incumbent, bound: int, side: dict[int, int]) -> None:
        """Scenarios with the rivals level with ``i``, then moved off ``i``'s score where the tie-breaks go wrong.

        The best rank: rivals capped at ``i``'s score; a rival who ties and
        is ranked ahead is capped one unit below next time.  The worst rank:
        rivals lifted to ``i``'s score; a rival who ties and is ranked behind
        is lifted one unit above.  A few rounds, each one scenario ranked.
        """
        best = objective == "rank_best"
        score = self.s_lo[i]
        levels = self.caps(i, side) if best else self.needs(i, side)
        rivals = list(levels)
        for _ in range(_REPAIRS):
            leaf = self._complete(self.levelled(i, levels, best))
            inc.offer(leaf)
            if inc.value <= bound:
                return
            mine = leaf.ranks[i]
            wrong = [
                j
                for j in rivals
                if leaf.score[j] == score
                and levels[j] == score
                and (leaf.ranks[j] < mine if best else leaf.ranks[j] > mine)
            ]
            if not wrong:
                return
            for j in wrong:
                levels[j] = score - 1 if best else score + 1

    def _polish(self, objective: Objective, i: int, inc: _Incumbent, bound: int, starts: list[dict[int, int]]) -> None:
        """Local search from ``starts``, the incumbent and the hint: change a game, or two of a player, while it helps.

        The score is the rank, then how far the rivals on the wrong side of
        ``i`` are from the right side (points, one for a tie-break): a change
        is kept when it lowers that pair.  Only games of a rival on the wrong
        side are changed.  The best scenario of each start is ranked in full
        and offered.  At most ``_POLISH`` rankings per start.
        """
        free = [g for g in range(self.k) if self.assign[g] == -1]
        if not free:
            return
        best = objective == "rank_best"
        score = self.s_lo[i]
        order, frame = self.order, self.m.frame
        s, n = self.s_lo, self.n
        wrong: list[int] = []

        def measure() -> tuple[int, int]:
            r = ranks(Final(frame, s, self.w_lo, self.p_lo), order)
            mine = r[i]
            wrong.clear()
            if best:
                wrong.extend(j for j in range(n) if r[j] < mine)
                return mine, sum(s[j] - score + 1 for j in wrong)
            wrong.extend(j for j in range(n) if j != i and r[j] > mine)
            return -mine, sum(score - s[j] + 1 for j in wrong)

        seeds = [
            *starts,
            *(dict(zip(free, (known[g] for g in free), strict=True)) for known in (inc.scenario, self.hint) if known),
        ]
        for start in seeds:
            for g in free:
                self.apply(g, start.get(g, 0))
            value = measure()
            spent = 0
            while value[0] > bound and spent < _POLISH:
                touched = set(wrong)
                singles = [g for g in free if touched & set(self.ends[g])]
                pairs = [(g, h) for g in singles for h in free if h != g and set(self.ends[g]) & set(self.ends[h])]
                found = None
                for games in (*((g,) for g in singles), *pairs):
                    was = [self.assign[g] for g in games]
                    for outcomes in _product(*(range(len(self.opts[g])) for g in games)):
                        if any(o == w for o, w in zip(outcomes, was, strict=True)):
                            continue
                        for g, o in zip(games, outcomes, strict=True):
                            self.undo(g)
                            self.apply(g, o)
                        spent += 1
                        now = measure()
                        if now < value:
                            found = now
                            break
                        for g, o in zip(games, was, strict=True):
                            self.undo(g)
                            self.apply(g, o)
                    if found is not None or spent >= _POLISH:
                        break
                if found is None:
                    break
                value = found
            measure_leaf = self._rank_leaf(tuple(self.assign))
            inc.offer(measure_leaf)
            for g in free:
                self.undo(g)
            if inc.value <= bound:
                return

    def _left_open(self, bound: int) -> None:
        self.open_bound = bound if self.open_bound is None else min(self.open_bound, bound)

    def _branch(self, weight: list[int]) -> int:
        best, best_w = -1, -1
        for g in range(self.k):
            if self.assign[g] != -1:
                continue
            a, b = self.ends[g]
            w = weight[a] + weight[b]
            if w > best_w:
                best, best_w = g, w
        return best
