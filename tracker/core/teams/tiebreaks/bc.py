"""``BC``: board count (C.07 §12.1): the sum over boards of the board number times the game points scored on
that board over the event; the lower sum ranks first.  Forfeits count as the games they score (§12), bye
boards with their points."""

from __future__ import annotations

from fractions import Fraction

from tracker.core.teams.tiebreaks.rule import TeamRule, TeamTieBreak, fixed
from tracker.core.teams.view import TeamView


def board_count(points: tuple[Fraction, ...]) -> Fraction:
    return sum((board * p for board, p in enumerate(points, start=1)), Fraction(0))


def column(v: TeamView, tb: TeamTieBreak) -> list[Fraction]:
    return [board_count(v.board_points[i]) for i in range(v.n)]


RULE = TeamRule(kind="BC", listed=10, parse=fixed("BC"), lower_first=True, column=column)
