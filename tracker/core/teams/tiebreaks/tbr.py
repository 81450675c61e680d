"""``TBR``: top board result (C.07 §12.2): inside each group tied so far, the game points on board 1 over the
event; where that leaves teams tied, board 2, and so on to the last board.

The value is the team's rank inside its group (1 best), 0 where the group was not separated, lower
first (as the FIDE TEC server prints it).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from tracker.core.teams.tiebreaks.rule import TeamRule, TeamTieBreak, fixed, groups_of, place_values
from tracker.core.teams.view import TeamView


def split_by_boards(v: TeamView, ranks: list[int], step: Callable[[int, int], Fraction]) -> list[Fraction]:
    """Split every tied group by ``step(team, k)`` for k = 1 … boards, each pass inside what is still tied."""
    val = list(ranks)
    for k in range(1, v.boards + 1):
        for run in groups_of(val):
            if len(run) == 1:
                continue
            key = {i: step(i, k) for i in run}
            ordered = sorted(run, key=lambda i: (-key[i], i))
            start = val[ordered[0]]
            current = start
            for m, i in enumerate(ordered):
                if m and key[i] != key[ordered[m - 1]]:
                    current = start + m
                val[i] = current
    return place_values(groups_of(ranks), {i: val[i] - ranks[i] + 1 for i in range(v.n)}, v.n)


def places(v: TeamView, tb: TeamTieBreak, ranks: list[int]) -> list[Fraction]:
    return split_by_boards(v, ranks, lambda i, k: v.board_points[i][k - 1])


RULE = TeamRule(kind="TBR", listed=11, parse=fixed("TBR"), lower_first=True, places=places)
