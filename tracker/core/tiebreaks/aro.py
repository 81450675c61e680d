"""``ARO``: the average rating of the opponents (C.07 §10.1), rounded half up to a whole number.

Opponents without a rating (0) are left out; which forfeits count depends on
the edition (:func:`tracker.core.editions.counts_for_rating`: under 2026 a
forfeit is not a game for a rating-based tie-break).  The projection does
not compute it.
"""

from __future__ import annotations

from tracker.core.crosstable import Tournament
from tracker.core.editions import counts_for_rating
from tracker.core.order import TieBreak
from tracker.core.phrases import phrase
from tracker.core.tiebreaks.rule import Column, Rule


def average_rating(ratings: list[int]) -> int:
    """The average of the rated (non-zero) ``ratings``, rounded half up (C.07 §10.1); 0 when there is none."""
    rated = [r for r in ratings if r > 0]
    if not rated:
        return 0
    return (2 * sum(rated) + len(rated)) // (2 * len(rated))


def column(t: Tournament, tb: TieBreak) -> Column:
    players, rules = t.opened.players, t.rules
    return Column(
        [
            average_rating([players[e.opponent].rating for e in t.entries[i].values() if counts_for_rating(e, rules)])
            for i in range(t.n)
        ],
        1,
    )


RULE = Rule(
    kind="ARO",
    name=phrase("tiebreak.ARO.name", "Average rating of opponents"),
    what=phrase("tiebreak.ARO.what", "the average rating of the rated opponents, rounded"),
    better=phrase("tiebreak.ARO.better", "higher is better"),
    listed=8,
    column=column,
)
