"""Finding good scenarios fast: the witnesses a query's proof then only has to confirm.

How this works
--------------

At the root of a rank query the search has the flow's guides (rivals kept
on the right side of the player's score, level or strictly).  Two cheap
procedures turn them into better scenarios before any branching:

* :func:`repair` completes the node with the rivals level with the player
  and ranks it; a rival who ties and lands on the wrong side on the
  tie-breaks is moved one unit off the player's score (below for the best
  rank, above for the worst), and again, a few rounds.
* :func:`polish` is a local search: change one game, or two games of one
  player (a unit passed along), keep the change when it improves the rank,
  or leaves it and brings the rivals on the wrong side closer to the right
  one.  Only games of a rival on the wrong side are tried.

Both only *offer* scenarios to the query's incumbent (each one ranked in
full by :func:`~tracker.core.projection.ranking.ranks`), so they can never
make an answer wrong, only earlier.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import product
from typing import Final

from tracker.core.projection.leaves import Incumbent, Ranker
from tracker.core.projection.node import Objective
from tracker.core.projection.ranking import standing
from tracker.core.tiebreaks.rule import Final as Crosstable

#: Rounds of the tie repair.
REPAIRS: Final = 4


def repair(solver: Ranker, objective: Objective, i: int, inc: Incumbent, bound: int, side: dict[int, int]) -> None:
    """Scenarios with the rivals level with ``i``, then moved off ``i``'s score where the tie-breaks go wrong.

    ``bound`` is the node's proven bound (stop once the incumbent reaches
    it), ``side`` the rivals' ties (:meth:`~tracker.core.projection.node.Node.ties`).
    """
    best = objective == "rank_best"
    score = solver.s_lo[i]
    levels = solver.caps(i, side) if best else solver.needs(i, side)
    rivals = list(levels)
    for _ in range(REPAIRS):
        leaf = solver.complete(solver.levelled(i, levels, best))
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


def polish(
    solver: Ranker, objective: Objective, i: int, inc: Incumbent, bound: int, starts: list[dict[int, int]], effort: int
) -> int:
    """Local search from each of ``starts``: change one game, or two of one player, while it helps.

    The score is the rank, then how far the rivals on the wrong side of
    ``i`` are from the right side (points, one for a tie-break): a change
    is kept when it lowers that pair.  Only games of a rival on the wrong
    side are changed.  The best scenario of each start is ranked in full
    and offered.  At most ``effort`` rankings in all; returns how many were spent.
    """
    free = [g for g in range(solver.k) if solver.assign[g] == -1]
    if not free:
        return 0
    best = objective == "rank_best"
    score = solver.s_lo[i]
    order, frame = solver.order, solver.m.frame
    s = solver.s_lo
    ends = solver.ends
    wrong: list[int] = []

    def measure() -> tuple[int, int]:
        ahead, behind = standing(Crosstable(frame, s, solver.w_lo, solver.p_lo), order, i)
        mine = 1 + len(ahead)
        wrong.clear()
        if best:
            wrong.extend(ahead)
            return mine, sum(s[j] - score + 1 for j in wrong)
        wrong.extend(behind)
        return -mine, sum(score - s[j] + 1 for j in wrong)

    spent = 0
    for start in starts:
        if spent >= effort:
            break
        for g in free:
            solver.apply(g, start.get(g, 0))
        value = measure()
        spent += 1
        while value[0] > bound and spent < effort:
            touched = set(wrong)
            singles = [g for g in free if ends[g][0] in touched or ends[g][1] in touched]
            found = None
            for games in _moves(ends, free, singles):
                was = [solver.assign[g] for g in games]
                for outcomes in product(*(range(len(solver.opts[g])) for g in games)):
                    if any(outcomes[x] == was[x] for x in range(len(games))):
                        continue
                    for x in range(len(games)):
                        solver.undo(games[x])
                        solver.apply(games[x], outcomes[x])
                    spent += 1
                    now = measure()
                    if now < value:
                        found = now
                        break
                    for x in range(len(games)):
                        solver.undo(games[x])
                        solver.apply(games[x], was[x])
                if found is not None or spent >= effort:
                    break
            if found is None:
                break
            value = found
        inc.offer(solver.rank_leaf(tuple(solver.assign)))
        for g in free:
            solver.undo(g)
        if inc.value <= bound:
            break
    return spent


def _moves(ends: list[tuple[int, int]], free: list[int], singles: list[int]) -> Iterator[tuple[int, ...]]:
    """The changes :func:`polish` tries, in order: each game of ``singles`` alone, then each with another free game
    of one of its players (the pairs only once every single has been tried)."""
    for g in singles:
        yield (g,)
    for g in singles:
        a, b = ends[g]
        for h in free:
            if h != g:
                c, d = ends[h]
                if c in (a, b) or d in (a, b):
                    yield (g, h)
