"""Exact extremes by branch and bound, each with a scenario that reaches it.

How this works
--------------

One query asks for one extreme of one player — best or worst final rank,
lowest or highest final KS — optionally with some games' outcomes fixed (the
per-game effects, and later the stakes of a pending game).  The answer is an
:class:`Extreme`: the value, a complete scenario (an outcome index for every
undecided game) that reaches it, and whether the value is proven.

The search is depth-first over the undecided games with, at every node,
*sound* bounds on the objective over all completions of the games fixed so
far, computed from intervals: each player's final score, the points between
each pair, the wins.

* **Rank.**  ``j`` is certainly ahead of ``i`` when even ``j``'s lowest score
  beats ``i``'s highest; certainly not ahead when the reverse holds.  Two
  players whose scores are both settled and equal go through the tie-break
  order: each criterion compares the *difference* ``j − i`` as an interval
  (Sonneborn-Berger: ``Σ_k (P_jk − P_ik)·S_k`` with the opponents' score
  intervals; Koya: the same over the opponents certainly or possibly on the
  line; WON: the wins), and DE is evaluated once the group tied so far is
  known and every game inside it is decided.  Best rank ≥ 1 + the players
  certainly ahead; worst rank ≤ n − the players certainly not ahead.  At a
  leaf the bounds meet and equal :func:`~tracker.core.projection.ranking.ranks`.
* **KS.**  Between the points certainly scored against opponents certainly on
  the line and the most that can be scored against those who can still be.
* **Lead** (for a play-off for 1st): the best score of the others minus the
  player's own, between ``max lows − own high`` and ``max highs − own low``;
  ``lead_zero`` minimises its absolute value (0: tied for first on points).

A node whose bounds meet is not expanded: the rest is completed with any
outcomes and ranked once (so every value comes with a scenario that was
actually evaluated).  A node whose optimistic bound cannot beat the best
scenario found so far is pruned.  Children are visited best bound first, and
the game branched on is one that touches what is still undecided about the
player (a rival whose score straddles theirs, an opponent whose score moves a
tie-break difference or crosses the line), so games that cannot change the
answer are never enumerated.

Dominance: a player's own result only moves their rank (and their lead)
one way (a better result raises their score and lowers the opponent's;
every player ahead after it was ahead before), so for the best rank the
player's own open games are fixed to wins, for the worst to losses, before
searching.

Every evaluated leaf improves the best-known scenario of every (player,
objective), and of every (game, outcome) condition, so later queries usually
start at their optimum and only have to prove it.  A query that exceeds its
node budget stops with the best scenario found (``attained``) and the best
bound proven (``value``), ``exact=False``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Final as Constant
from typing import Literal

from tracker.core.line import qualifies
from tracker.core.order import TieBreak
from tracker.core.projection.model import Model
from tracker.core.projection.ranking import ranks
from tracker.core.tiebreaks import rule_of
from tracker.core.tiebreaks.rule import Final, Span

Objective = Literal["rank_best", "rank_worst", "ks_min", "ks_max", "lead_min", "lead_max", "lead_zero"]
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
_UNCONDITIONAL: Constant = -1
#: The projected KS: plain Koya (limit 0), whatever the order ranks by.
_KS: Constant = TieBreak("KS", "KS")


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
class Leaf:
    """One complete scenario and what it gives: ranks, plain KS (units), scores (units).

    ``lead[i]`` is the best score among the others minus ``i``'s (negative: alone in first).
    """

    scenario: tuple[int, ...]
    ranks: list[int]
    ks: list[int]
    score: list[int]
    lead: list[int]

    def value(self, objective: Objective, i: int) -> int:
        """What this leaf gives player ``i`` for ``objective`` (a rank, KS or lead in units)."""
        if objective in ("rank_best", "rank_worst"):
            return self.ranks[i]
        if objective in ("ks_min", "ks_max"):
            return self.ks[i]
        if objective == "lead_zero":
            return abs(self.lead[i])
        return self.lead[i]


class _Budget(Exception):
    """The node budget of a query ran out (caught inside :meth:`Solver.solve`)."""


class Solver:
    """Queries over one model; see the module docstring.  Not thread-safe (it mutates its own arrays)."""

    def __init__(self, m: Model, *, budget: int = DEFAULT_BUDGET, seed: int = 15) -> None:
        n = m.n
        self.m = m
        self.n = n
        self.budget = budget
        self.games = m.undecided
        self.k = len(self.games)
        self.ends = [(g.white, g.black) for g in self.games]
        self.opts = [tuple((o.white, o.black, o.white_won, o.black_won) for o in g.options) for g in self.games]
        # per game: lowest and highest units for white and black, most wins for each
        self.span = [
            (
                min(o[0] for o in opts),
                max(o[0] for o in opts),
                min(o[1] for o in opts),
                max(o[1] for o in opts),
                max(o[2] for o in opts),
                max(o[3] for o in opts),
            )
            for opts in self.opts
        ]
        self.s_lo = list(m.score)
        self.s_hi = list(m.score)
        self.p_lo = [row.copy() for row in m.points]
        self.p_hi = [row.copy() for row in m.points]
        self.w_lo = list(m.wins)
        self.w_hi = list(m.wins)
        self.open = [0] * n
        self.of_player: list[list[int]] = [[] for _ in range(n)]
        for g, ((a, b), (la, ha, lb, hb, xa, xb)) in enumerate(zip(self.ends, self.span, strict=True)):
            self.s_lo[a] += la
            self.s_hi[a] += ha
            self.s_lo[b] += lb
            self.s_hi[b] += hb
            self.p_lo[a][b] += la
            self.p_hi[a][b] += ha
            self.p_lo[b][a] += lb
            self.p_hi[b][a] += hb
            self.w_hi[a] += xa
            self.w_hi[b] += xb
            self.open[a] += 1
            self.open[b] += 1
            self.of_player[a].append(g)
            self.of_player[b].append(g)
        self.assign = [-1] * self.k
        self.thr0 = m.thresholds[0]
        self.order = m.order
        ks_final = rule_of(_KS).final
        assert ks_final is not None  # Koya is projectable
        self._ks_final = ks_final
        #: the rules' view of the node: the same lists, mutated in place by _apply and _undo
        self.view = Span(m.frame, self.s_lo, self.s_hi, self.p_lo, self.p_hi, self.w_lo, self.w_hi)
        self.leaves = 0
        self.nodes = 0
        self.open_bound: int | None = None
        self.floor = 0
        self.limit = budget
        # best known value (minimised: sign × objective) and the leaf reaching it, per
        # objective, per condition (game, outcome) or _UNCONDITIONAL, per player
        self._best: dict[tuple[Objective, int, int], list[int]] = {}
        self._where: dict[tuple[Objective, int, int], list[int]] = {}
        self._leaves: list[tuple[int, ...]] = []
        self._proven: dict[tuple[Objective, int, int, int], tuple[Extreme, int]] = {}
        self._seed(seed)

    # -- moves ---------------------------------------------------------------------

    def _apply(self, g: int, o: int) -> None:
        a, b = self.ends[g]
        ua, ub, wa, wb = self.opts[g][o]
        la, ha, lb, hb, xa, xb = self.span[g]
        self.s_lo[a] += ua - la
        self.s_hi[a] += ua - ha
        self.s_lo[b] += ub - lb
        self.s_hi[b] += ub - hb
        self.p_lo[a][b] += ua - la
        self.p_hi[a][b] += ua - ha
        self.p_lo[b][a] += ub - lb
        self.p_hi[b][a] += ub - hb
        self.w_lo[a] += wa
        self.w_hi[a] += wa - xa
        self.w_lo[b] += wb
        self.w_hi[b] += wb - xb
        self.open[a] -= 1
        self.open[b] -= 1
        self.assign[g] = o

    def _undo(self, g: int) -> None:
        o = self.assign[g]
        a, b = self.ends[g]
        ua, ub, wa, wb = self.opts[g][o]
        la, ha, lb, hb, xa, xb = self.span[g]
        self.s_lo[a] -= ua - la
        self.s_hi[a] -= ua - ha
        self.s_lo[b] -= ub - lb
        self.s_hi[b] -= ub - hb
        self.p_lo[a][b] -= ua - la
        self.p_hi[a][b] -= ua - ha
        self.p_lo[b][a] -= ub - lb
        self.p_hi[b][a] -= ub - hb
        self.w_lo[a] -= wa
        self.w_hi[a] -= wa - xa
        self.w_lo[b] -= wb
        self.w_hi[b] -= wb - xb
        self.open[a] += 1
        self.open[b] += 1
        self.assign[g] = -1

    # -- leaves --------------------------------------------------------------------

    def evaluate(self, scenario: tuple[int, ...] | list[int]) -> Leaf:
        """Rank the crosstable ``scenario`` completes (an outcome index per undecided game).

        Records the scenario as the best known for every objective it
        improves.  Raises :class:`ValueError` for a scenario of the wrong length.
        """
        if len(scenario) != self.k:
            raise ValueError(f"a scenario gives {self.k} outcomes, not {len(scenario)}")
        saved = self.assign.copy()
        for g in range(self.k):
            if saved[g] != -1:
                self._undo(g)
        for g, o in enumerate(scenario):
            self._apply(g, o)
        leaf = self._rank_leaf(tuple(scenario))
        for g in range(self.k):
            self._undo(g)
        for g, o in enumerate(saved):
            if o != -1:
                self._apply(g, o)
        return leaf

    def _complete(self) -> Leaf:
        """Evaluate the current node completed with each free game's first outcome."""
        free = [g for g in range(self.k) if self.assign[g] == -1]
        for g in free:
            self._apply(g, 0)
        leaf = self._rank_leaf(tuple(self.assign))
        for g in free:
            self._undo(g)
        return leaf

    def _rank_leaf(self, scenario: tuple[int, ...]) -> Leaf:
        score = self.s_lo
        final = Final(self.m.frame, score, self.w_lo, self.p_lo)
        leaf_ranks = ranks(final, self.order)
        ks = list(self._ks_final(final, _KS))
        leaf = Leaf(scenario, leaf_ranks, ks, score.copy(), _leads(score))
        self._record(leaf)
        return leaf

    def _record(self, leaf: Leaf) -> None:
        self.leaves += 1
        index = len(self._leaves)
        self._leaves.append(leaf.scenario)
        values: dict[Objective, list[int]] = {
            "rank_best": leaf.ranks,
            "rank_worst": [-r for r in leaf.ranks],
            "ks_min": leaf.ks,
            "ks_max": [-v for v in leaf.ks],
            "lead_min": leaf.lead,
            "lead_max": [-v for v in leaf.lead],
            "lead_zero": [abs(v) for v in leaf.lead],
        }
        conditions = [(_UNCONDITIONAL, 0), *enumerate(leaf.scenario)]
        for objective, vals in values.items():
            for g, o in conditions:
                key = (objective, g, o)
                best = self._best.get(key)
                if best is None:
                    self._best[key] = vals.copy()
                    self._where[key] = [index] * self.n
                    continue
                where = self._where[key]
                for p, v in enumerate(vals):
                    if v < best[p]:
                        best[p] = v
                        where[p] = index

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

    # -- bounds --------------------------------------------------------------------

    def _rank_bounds(self, i: int, weight: list[int] | None) -> tuple[int, int]:
        """(best, worst) rank of ``i`` over the completions of the current node.

        Adds to ``weight`` the players whose games can still change the answer.
        """
        n = self.n
        s_lo, s_hi = self.s_lo, self.s_hi
        lo_i, hi_i = s_lo[i], s_hi[i]
        settled = lo_i == hi_i
        ahead = behind = 0
        tied: list[int] = []
        certain = True  # is the group tied with i on points known?
        for j in range(n):
            if j == i:
                continue
            if s_lo[j] > hi_i:
                ahead += 1
            elif s_hi[j] < lo_i:
                behind += 1
            elif settled and s_lo[j] == s_hi[j]:
                tied.append(j)
            else:
                certain = False
                if weight is not None:
                    weight[j] += 4
                    weight[i] += 4
        if tied:
            a, b = self._tie_walk(i, tied, certain, weight)
            ahead += a
            behind += b
        return 1 + ahead, n - behind

    def _tie_walk(self, i: int, tied: list[int], certain: bool, weight: list[int] | None) -> tuple[int, int]:
        """Players of ``tied`` (settled on ``i``'s score) certainly ahead of / certainly not ahead of ``i``.

        Each criterion of the order in turn: a rule with a column compares
        the interval of each difference (:attr:`Rule.difference`); a rule
        decided inside groups is evaluated once the group tied so far is
        known and every game inside it is decided.
        """
        ahead = behind = 0
        group = tied
        for tb, rule in self.order:
            if not group:
                break
            kept: list[int] = []
            if rule.final_places is not None:
                members = [i, *group]
                if not certain or any(self.open[x] for x in members):
                    return ahead, behind  # the rest: undecided
                places = rule.final_places(self.view.settled(), members)
                for j in group:
                    if places[j] < places[i]:
                        ahead += 1
                    elif places[j] > places[i]:
                        behind += 1
                    else:
                        kept.append(j)
            else:
                assert rule.difference is not None  # the model admits projectable rules only
                for j in group:
                    lo, hi = rule.difference(self.view, tb, j, i, weight)
                    if lo > 0:
                        ahead += 1
                    elif hi < 0:
                        behind += 1
                    elif lo == hi == 0:
                        kept.append(j)
                    else:
                        certain = False
            group = kept
        return ahead, behind + len(group)  # equal on everything: a shared rank, not ahead

    def _ks_bounds(self, i: int, weight: list[int] | None) -> tuple[int, int]:
        """(lowest, highest) plain KS of ``i`` over the completions of the current node."""
        thr = self.thr0
        lo = hi = 0
        s_lo, s_hi = self.s_lo, self.s_hi
        row_lo, row_hi = self.p_lo[i], self.p_hi[i]
        for k in range(self.n):
            if row_hi[k] == 0:
                continue
            if qualifies(s_lo[k], thr):
                lo += row_lo[k]
                hi += row_hi[k]
            elif qualifies(s_hi[k], thr):
                hi += row_hi[k]
                if weight is not None:
                    weight[k] += 2
            if weight is not None and row_lo[k] != row_hi[k]:
                weight[k] += 1
                weight[i] += 1
        return lo, hi

    def _lead_bounds(self, i: int, weight: list[int] | None) -> tuple[int, int]:
        """(lowest, highest) lead over ``i`` (best score of the others minus ``i``'s)."""
        others = [j for j in range(self.n) if j != i]
        top_lo = max(self.s_lo[j] for j in others)
        top_hi = max(self.s_hi[j] for j in others)
        if weight is not None:
            weight[i] += 4
            for j in others:
                if self.s_hi[j] >= top_lo and self.s_lo[j] != self.s_hi[j]:
                    weight[j] += 2
        return top_lo - self.s_hi[i], top_hi - self.s_lo[i]

    def _bounds(self, objective: Objective, i: int, weight: list[int] | None = None) -> tuple[int, int]:
        """(optimistic, pessimistic) bound of the minimised quantity ``sign × objective``."""
        if objective == "rank_best":
            return self._rank_bounds(i, weight)
        if objective == "rank_worst":
            best, worst = self._rank_bounds(i, weight)
            return -worst, -best
        if objective in ("ks_min", "ks_max"):
            lo, hi = self._ks_bounds(i, weight)
            return (lo, hi) if objective == "ks_min" else (-hi, -lo)
        lo, hi = self._lead_bounds(i, weight)
        if objective == "lead_min":
            return lo, hi
        if objective == "lead_max":
            return -hi, -lo
        return (0 if lo <= 0 <= hi else min(abs(lo), abs(hi))), max(abs(lo), abs(hi))

    # -- the search ----------------------------------------------------------------

    def solve(
        self, i: int, objective: Objective, fixed: dict[int, int] | None = None, *, budget: int | None = None
    ) -> Extreme:
        """The ``objective`` extreme of player ``i`` over every outcome of the games not in ``fixed``.

        ``fixed`` maps undecided-game indices to outcome indices.  Raises
        nothing for a valid index; an expensive query returns a bound
        (``exact=False``) once it has expanded ``budget`` nodes.
        """
        fixed = fixed or {}
        condition = next(iter(fixed.items())) if len(fixed) == 1 else None
        memo_key = (objective, i, *(condition or (_UNCONDITIONAL, 0)))
        limit = self.budget if budget is None else budget
        known = self._proven.get(memo_key) if len(fixed) <= 1 else None
        if known is not None and (known[0].exact or known[1] >= limit):
            return known[0]
        sign = _SIGN[objective]
        key = (objective, *(condition or (_UNCONDITIONAL, 0)))
        incumbent = _Incumbent(self, objective, i, key if len(fixed) <= 1 else None, fixed)
        # a condition cannot beat the unconditional extreme: once proven, it is a floor
        floor = -(1 << 60)
        if fixed:
            unconditional = self.solve(i, objective)
            if unconditional.exact:
                floor = sign * unconditional.value
                if incumbent.value == floor:
                    result = Extreme(unconditional.value, unconditional.value, incumbent.scenario or (), True)
                    if len(fixed) <= 1:
                        self._proven[memo_key] = (result, limit)
                    return result
        self.floor = floor
        for g, o in fixed.items():
            self._apply(g, o)
        own = _OWN_RESULT.get(objective)
        if own is not None:
            # dominance: i's own free games at i's best (worst) result
            for g in self.of_player[i]:
                if self.assign[g] != -1:
                    continue
                a = self.ends[g][0]
                units = [opt[0] if a == i else opt[1] for opt in self.opts[g]]
                self._apply(g, units.index(max(units) if own else min(units)))
        free_before = [g for g in range(self.k) if self.assign[g] == -1]
        self.nodes = 0
        self.limit = limit
        self.open_bound = None
        if incumbent.scenario is None:
            incumbent.offer(self._complete())
        root = self._bounds(objective, i)
        with contextlib.suppress(_Budget):  # the budget ran out: open_bound holds what is proven
            self._node(objective, i, root, incumbent)
        for g in range(self.k):
            if self.assign[g] != -1 and g not in free_before:
                self._undo(g)
        value, scenario = incumbent.value, incumbent.scenario
        assert scenario is not None  # every node with bounds that meet is completed; the root at least
        proven = value if self.open_bound is None else min(value, self.open_bound)
        result = Extreme(sign * proven, sign * value, scenario, proven == value)
        if len(fixed) <= 1:
            self._proven[memo_key] = (result, limit)
        return result

    def _node(self, objective: Objective, i: int, bound: tuple[int, int], inc: _Incumbent) -> None:
        lo, hi = bound
        lo = max(lo, self.floor)
        if inc.value <= lo:
            return
        if lo == hi or all(o != -1 for o in self.assign):
            inc.offer(self._complete())
            return
        self.nodes += 1
        if self.nodes > self.limit:
            self.open_bound = lo if self.open_bound is None else min(self.open_bound, lo)
            raise _Budget
        weight = [0] * self.n
        self._bounds(objective, i, weight)
        g = self._branch(weight)
        children = []
        for o in range(len(self.opts[g])):
            self._apply(g, o)
            children.append((self._bounds(objective, i), o))
            self._undo(g)
        children.sort()
        for k, (child, o) in enumerate(children):
            if inc.value <= max(child[0], self.floor):
                continue
            self._apply(g, o)
            try:
                self._node(objective, i, child, inc)
            except _Budget:
                for later, _ in children[k + 1 :]:
                    if later[0] < inc.value:
                        self.open_bound = later[0] if self.open_bound is None else min(self.open_bound, later[0])
                raise
            finally:
                self._undo(g)

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


class _Incumbent:
    """The best scenario a query knows, started from every leaf evaluated so far."""

    def __init__(
        self,
        solver: Solver,
        objective: Objective,
        i: int,
        key: tuple[Objective, int, int] | None,
        fixed: dict[int, int],
    ) -> None:
        self.objective = objective
        self.i = i
        self.fixed = fixed
        self.value = 1 << 60
        self.scenario: tuple[int, ...] | None = None
        if key is not None and key in solver._best:
            self.value = solver._best[key][i]
            self.scenario = solver._leaves[solver._where[key][i]]

    def offer(self, leaf: Leaf) -> None:
        v = _SIGN[self.objective] * leaf.value(self.objective, self.i)
        if v < self.value:
            self.value = v
            self.scenario = leaf.scenario


def _leads(score: list[int]) -> list[int]:
    """Per player: the best score among the others minus theirs."""
    ordered = sorted(score, reverse=True)
    top, second = ordered[0], ordered[1] if len(ordered) > 1 else ordered[0]
    alone = score.count(top) == 1
    return [(second if alone and s == top else top) - s for s in score]
