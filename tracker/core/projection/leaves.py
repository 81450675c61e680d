"""Evaluated scenarios, and the best one known for every player, objective and condition.

Every complete scenario the search ranks (a :class:`Leaf`) is remembered
for every (player, objective) it improves, both unconditionally and under
each (game, outcome) it contains: a later query, with or without one game
fixed, starts from the best scenario already seen, and the stakes read
"can this still happen if that game ends so" straight from the table when
some leaf already shows it.

Values are kept *minimised*: rank (best), minus rank (worst), KS, minus
KS, lead, minus lead, absolute lead.  A condition is an index: 0 for none,
``offset[g] + o`` for game ``g`` ending with outcome ``o``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final as Constant

from tracker.core.order import TieBreak
from tracker.core.projection.model import Model
from tracker.core.projection.node import Node, Objective
from tracker.core.projection.ranking import ranks
from tracker.core.tiebreaks import rule_of
from tracker.core.tiebreaks.rule import Final

UNCONDITIONAL: Constant = 0
#: Each objective's sign: the search minimises ``sign × value``.
SIGN: Constant[dict[Objective, int]] = {
    "rank_best": 1,
    "rank_worst": -1,
    "ks_min": 1,
    "ks_max": -1,
    "lead_min": 1,
    "lead_max": -1,
    "lead_zero": 1,
}
#: Objectives a player's own result moves one way: the result that is best for them, per objective.
OWN_RESULT: Constant[dict[Objective, bool]] = {
    "rank_best": True,
    "rank_worst": False,
    "lead_min": True,
    "lead_max": False,
}
#: The projected KS: plain Koya (limit 0), whatever the order ranks by.
_KS: Constant = TieBreak("KS", "KS")
_NONE: Constant = 1 << 60
#: The objectives recorded from the start; the leads only once a query asks for one.
RANKS_AND_KS: Constant[tuple[Objective, ...]] = ("rank_best", "rank_worst", "ks_min", "ks_max")
LEADS: Constant[tuple[Objective, ...]] = ("lead_min", "lead_max", "lead_zero")


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
        if objective == "rank_best" or objective == "rank_worst":
            return self.ranks[i]
        if objective == "ks_min" or objective == "ks_max":
            return self.ks[i]
        if objective == "lead_zero":
            return abs(self.lead[i])
        return self.lead[i]

    def minimised(self, objective: Objective) -> list[int]:
        """Every player's value for ``objective``, signed so that lower is better."""
        if objective == "rank_best":
            return self.ranks
        if objective == "rank_worst":
            return [-r for r in self.ranks]
        if objective == "ks_min":
            return self.ks
        if objective == "ks_max":
            return [-v for v in self.ks]
        if objective == "lead_min":
            return self.lead
        if objective == "lead_max":
            return [-v for v in self.lead]
        return [abs(v) for v in self.lead]


def leads(score: Sequence[int]) -> list[int]:
    """Per player: the best score among the others minus theirs."""
    ordered = sorted(score, reverse=True)
    top, second = ordered[0], ordered[1] if len(ordered) > 1 else ordered[0]
    alone = score.count(top) == 1
    return [(second if alone and s == top else top) - s for s in score]


class Known:
    """The leaves seen so far and, per (objective, player, condition), the best value and its leaf."""

    def __init__(self, n: int, sizes: Sequence[int]) -> None:
        self.n = n
        self.offsets: list[int] = []
        width = 1
        for size in sizes:
            self.offsets.append(width)
            width += size
        self.width = width
        self.leaves: list[Leaf] = []
        self._best: dict[Objective, list[list[int]]] = {}
        self._where: dict[Objective, list[list[int]]] = {}
        # per (objective, player): the worst of its best values; a leaf no better than it improves nothing
        self._ceiling: dict[Objective, list[int]] = {}
        for objective in RANKS_AND_KS:
            self._track(objective)

    def condition(self, g: int, o: int) -> int:
        """The index of the condition "game ``g`` ends with outcome ``o``"."""
        return self.offsets[g] + o

    def _track(self, objective: Objective) -> None:
        self._best[objective] = [[_NONE] * self.width for _ in range(self.n)]
        self._where[objective] = [[-1] * self.width for _ in range(self.n)]
        self._ceiling[objective] = [_NONE] * self.n
        for index, leaf in enumerate(self.leaves):
            self._update(objective, leaf, index)

    def record(self, leaf: Leaf) -> None:
        """Remember ``leaf`` wherever it improves on the best known."""
        index = len(self.leaves)
        self.leaves.append(leaf)
        for objective in self._best:
            self._update(objective, leaf, index)

    def _update(self, objective: Objective, leaf: Leaf, index: int) -> None:
        offsets, scenario = self.offsets, leaf.scenario
        conditions: list[int] = [UNCONDITIONAL]
        for g in range(len(offsets)):
            conditions.append(offsets[g] + scenario[g])
        ceiling = self._ceiling[objective]
        best_of = self._best[objective]
        where_of = self._where[objective]
        for p, v in enumerate(leaf.minimised(objective)):
            if v >= ceiling[p]:
                continue
            best = best_of[p]
            where = where_of[p]
            changed = False
            for c in conditions:
                if v < best[c]:
                    best[c] = v
                    where[c] = index
                    changed = True
            if changed:
                ceiling[p] = max(best)

    def witnesses(self) -> list[int]:
        """The leaves that are the best known for some objective, player and condition (indices, in order)."""
        found: set[int] = set()
        for rows in self._where.values():
            for row in rows:
                found.update(row)
        found.discard(-1)
        return sorted(found)

    def unpack(self, condition: int) -> tuple[int, int]:
        """The (game, outcome) of a condition index; (-1, 0) for none."""
        if condition == UNCONDITIONAL:
            return -1, 0
        g = bisect_right(self.offsets, condition) - 1
        return g, condition - self.offsets[g]

    def best(self, objective: Objective, p: int, condition: int) -> tuple[int, Leaf] | None:
        """The best minimised value known for ``p`` under ``condition``, and the leaf that gives it."""
        if objective not in self._best:
            self._track(objective)
        index = self._where[objective][p][condition]
        return None if index < 0 else (self._best[objective][p][condition], self.leaves[index])


class Incumbent:
    """The best scenario a query knows (minimised value), started from every leaf evaluated so far."""

    __slots__ = ("i", "objective", "scenario", "sign", "value")

    def __init__(self, objective: Objective, i: int, value: int, scenario: tuple[int, ...] | None) -> None:
        self.objective = objective
        self.i = i
        self.sign = SIGN[objective]
        self.value = value
        self.scenario = scenario

    def offer(self, leaf: Leaf) -> None:
        v = self.sign * leaf.value(self.objective, self.i)
        if v < self.value:
            self.value = v
            self.scenario = leaf.scenario


class Ranker(Node):
    """A node that ranks the scenarios completing it and remembers the best ones (:attr:`known`)."""

    def __init__(self, m: Model) -> None:
        super().__init__(m)
        ks_final = rule_of(_KS).final
        assert ks_final is not None  # Koya is projectable
        self._ks_final = ks_final
        self.known = Known(self.n, [len(opts) for opts in self.opts])
        self.leaves = 0

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
        leaf = self.rank_leaf(tuple(scenario))
        for g in range(self.k):
            self.undo(g)
        for g, o in enumerate(saved):
            if o != -1:
                self.apply(g, o)
        return leaf

    def complete(self, guide: dict[int, int] | None = None) -> Leaf:
        """Evaluate the current node completed with the guide's outcomes (or each free game's first)."""
        free = [g for g in range(self.k) if self.assign[g] == -1]
        for g in free:
            self.apply(g, guide.get(g, 0) if guide else 0)
        leaf = self.rank_leaf(tuple(self.assign))
        for g in free:
            self.undo(g)
        return leaf

    def rank_leaf(self, scenario: tuple[int, ...]) -> Leaf:
        score = self.s_lo
        final = Final(self.m.frame, score, self.w_lo, self.p_lo)
        leaf = Leaf(scenario, ranks(final, self.order), list(self._ks_final(final, _KS)), score.copy(), leads(score))
        self.leaves += 1
        self.known.record(leaf)
        return leaf

    def seed(self, seed: int) -> None:
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
