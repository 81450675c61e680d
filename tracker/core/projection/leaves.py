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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final as Constant

from tracker.core.projection.node import Objective

UNCONDITIONAL: Constant = 0
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
        conditions = [UNCONDITIONAL, *(off + o for off, o in zip(self.offsets, leaf.scenario, strict=True))]
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

    def best(self, objective: Objective, p: int, condition: int) -> tuple[int, Leaf] | None:
        """The best minimised value known for ``p`` under ``condition``, and the leaf that gives it."""
        if objective not in self._best:
            self._track(objective)
        index = self._where[objective][p][condition]
        return None if index < 0 else (self._best[objective][p][condition], self.leaves[index])
