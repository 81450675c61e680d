"""Every condition at once: under which outcome of each undecided game can a player still get to a target?

How this works
--------------

The stakes ask, for one player and one line, the same threshold question
under every (game, outcome) *condition*: "can she still finish in the top 3
if this game is drawn?".  Asked one by one, each question repeats most of
the others' work.  :func:`cover` answers all of them with one depth-first
search over the undecided games that explores only the region where the
target is reached, and a subtree only while it can still answer something:

* a subtree whose optimistic bound misses the target holds no scenario that
  reaches it: pruned (the bounds of :class:`~tracker.core.projection.node.Node`,
  the flow's included);
* a subtree whose bounds meet at the target or better reaches it with every
  completion: every condition it holds is answered yes;
* a subtree holding no condition still open is pruned;
* where the search leaves the flow's guide (and at its root) the node's own
  guide is completed and ranked: a scenario that reaches the target answers
  yes for each outcome it contains.

When the search ends, a condition never answered yes is proven out of reach
(each of its scenarios lay in a subtree pruned by its bound).  The player's
own games are branched on first (their score settles, which the flow needs),
then the games with an outcome still open, by the same weights as the
extremes' search.  A search that spends its node budget leaves the open
conditions open (``None``).
"""

from __future__ import annotations

from tracker.core.projection.leaves import OWN_RESULT, SIGN, Ranker
from tracker.core.projection.node import Objective

#: Objectives the flow relaxation tightens (Node.tighten).
_TIGHTENED = frozenset({"rank_best", "rank_worst", "lead_min"})


class _Spent(Exception):
    """The node budget ran out."""


def cover(
    node: Ranker, i: int, objective: Objective, target: int, answers: list[bool | None], budget: int
) -> tuple[list[bool | None], int]:
    """Complete ``answers`` (one per condition index, :class:`~tracker.core.projection.leaves.Known`'s) for ``i``.

    ``answers[c]`` is True when some completion under condition ``c``
    gets ``i``'s ``objective`` to ``target`` or better, False when none
    does, None while open; the ones given are trusted.  Returns the answers
    (a new list; None where the ``budget`` of nodes ran out first) and the
    nodes spent.  For an objective ``i``'s own results move one way, their
    own games are fixed at their best (worst) first, so the other outcomes
    of those games are left as given: ask :meth:`Solver.reach`.  The node
    is left as it was found.
    """
    search = _Cover(node, i, objective, SIGN[objective] * target, list(answers), budget)
    own = OWN_RESULT.get(objective)
    fixed = [g for g in node.of_player[i] if node.assign[g] == -1] if own is not None else []
    for g in fixed:  # dominance, as for the extremes: it holds under any condition on another game
        node.apply(g, node.own_outcome(g, i, own is True))
    try:
        search.visit()
        finished = True
    except _Spent:
        finished = False
    # what the search held: every condition but the other outcomes of the player's own games it fixed
    held = [c for c in range(1, node.known.width)]
    for g in fixed:
        held = [c for c in held if not (search.offsets[g] <= c < search.offsets[g] + len(node.opts[g]))]
        held.append(search.offsets[g] + node.assign[g])
        node.undo(g)
    if finished:
        for c in held:
            if search.answers[c] is None:
                search.answers[c] = False
    return search.answers, search.nodes


class _Cover:
    def __init__(
        self, node: Ranker, i: int, objective: Objective, goal: int, answers: list[bool | None], budget: int
    ) -> None:
        self.node = node
        self.i = i
        self.objective = objective
        self.sign = SIGN[objective]
        self.goal = goal
        self.answers = answers
        self.budget = budget
        self.nodes = 0
        self.offsets = node.known.offsets
        self.own = set(node.of_player[i])

    def _open(self) -> bool:
        """Whether a condition the node holds is still open."""
        n, answers, offsets = self.node, self.answers, self.offsets
        for g in range(n.k):
            o = n.assign[g]
            if o != -1:
                if answers[offsets[g] + o] is None:
                    return True
            elif any(answers[offsets[g] + x] is None for x in range(len(n.opts[g]))):
                return True
        return False

    def _all_reached(self) -> None:
        """Every completion of the node reaches the goal: each condition it holds is answered yes."""
        n, answers, offsets = self.node, self.answers, self.offsets
        for g in range(n.k):
            o = n.assign[g]
            for x in (o,) if o != -1 else range(len(n.opts[g])):
                answers[offsets[g] + x] = True

    def _reached(self, scenario: tuple[int, ...]) -> None:
        for g, o in enumerate(scenario):
            self.answers[self.offsets[g] + o] = True

    def visit(self, fresh: bool = True) -> None:
        n, i, objective = self.node, self.i, self.objective
        weight = [0] * n.n
        side: dict[int, int] = {}
        lo, hi = n.bounds(objective, i, weight, side)
        if lo > self.goal or not self._open():
            return
        if lo == hi or n.free == 0:
            self._all_reached()
            return
        self.nodes += 1
        if self.nodes > self.budget:
            raise _Spent
        prefer = -1
        g = self._branch(weight)
        if objective in _TIGHTENED:
            tight, guide = n.tighten(objective, i, lo, self.goal + 1, side)
            if tight > self.goal:
                return
            if guide is not None:
                if fresh:  # a scenario from the guide where the search turned off its last guide's way
                    self.nodes += 1  # a ranking costs about what a node does
                    leaf = n.complete(guide.outcomes())
                    if self.sign * leaf.value(objective, i) <= self.goal:
                        self._reached(leaf.scenario)
                        if not self._open():
                            return
                prefer = guide.pick(g)
        offsets = self.offsets
        outcomes = sorted(
            range(len(n.opts[g])), key=lambda o: (self.answers[offsets[g] + o] is not None, o != prefer, o)
        )
        for o in outcomes:
            n.apply(g, o)
            try:
                self.visit(o != prefer)
            finally:
                n.undo(g)

    def _branch(self, weight: list[int]) -> int:
        """The player's own undecided game first; then the heaviest game with an open outcome, or any game."""
        n, answers, offsets = self.node, self.answers, self.offsets
        best, best_w, best_open = -1, -1, False
        for g in range(n.k):
            if n.assign[g] != -1:
                continue
            if g in self.own:
                return g
            a, b = n.ends[g]
            w = weight[a] + weight[b]
            is_open = any(answers[offsets[g] + x] is None for x in range(len(n.opts[g])))
            if (is_open, w) > (best_open, best_w):
                best, best_w, best_open = g, w, is_open
        return best
