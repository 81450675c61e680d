"""``BBE``: bottom board elimination (C.07 §12.3): inside each group tied so far, the game points on every
board but the bottom one; where that leaves teams tied, every board but the two bottom ones, and so on.

The value is the team's rank inside its group (1 best), 0 where the group was not separated, lower
first (as the FIDE TEC server prints it).
"""

from __future__ import annotations

from fractions import Fraction

from tracker.core.teams.tiebreaks.rule import TeamRule, TeamTieBreak, fixed
from tracker.core.teams.tiebreaks.tbr import split_by_boards
from tracker.core.teams.view import TeamView


def places(v: TeamView, tb: TeamTieBreak, ranks: list[int]) -> list[Fraction]:
    def kept(i: int, k: int) -> Fraction:
        return sum(v.board_points[i][: v.boards - k], Fraction(0))

    return split_by_boards(v, ranks, kept)


RULE = TeamRule(kind="BBE", listed=12, parse=fixed("BBE"), lower_first=True, places=places)
