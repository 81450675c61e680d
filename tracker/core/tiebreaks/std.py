"""``STD``: standard points (C.07 2026), the score counted 1-½-0 whatever the tournament's scoring.

A result worth more than a draw is 1, a draw ½, less 0 (byes by what they
are worth against the draw), for events with custom scoring such as 3-1-0.
Defined by the 2026 edition only: an order with it under 2024 is refused.
The projection does not compute it.
"""

from __future__ import annotations

from tracker.core.crosstable import Tournament
from tracker.core.order import TieBreak
from tracker.core.phrases import phrase
from tracker.core.tiebreaks.rule import Column, Rule


def halves(units: int, draw: int) -> int:
    """Standard points of one result in halves: more than a draw is a win (2), a draw 1, less 0."""
    if units > draw:
        return 2
    return 1 if units == draw else 0


def column(t: Tournament, tb: TieBreak) -> Column:
    draw = t.units.draw
    return Column([sum(halves(e.units, draw) for e in t.entries[i].values()) for i in range(t.n)], 2)


RULE = Rule(
    kind="STD",
    name=phrase("tiebreak.STD.name", "Standard points"),
    what=phrase(
        "tiebreak.STD.what", "the score counted as 1 for a win, ½ for a draw and 0 for a loss, whatever the scoring"
    ),
    better=phrase("tiebreak.STD.better", "more is better"),
    listed=6,
    editions=frozenset({"2026"}),
    column=column,
)
