"""``ARO``: the average rating of the opponents (C.07 §10.1), rounded half up to a whole number.

The opponents of games played at the board, as the FIDE TEC tie-break server
counts them in both editions: a forfeit's opponent (win, loss or double
forfeit) is left out, as are byes and opponents without a rating (0).  (The
2024 edition keeps a round robin's forfeits as games, §15.2; the server
does not for ARO, and tracker follows the server: docs/tiebreaks.md.)  The
projection does not compute it.
"""

from __future__ import annotations

from tracker.core.crosstable import BYE, Tournament
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
    players = t.opened.players
    return Column(
        [
            average_rating(
                [players[e.opponent].rating for e in t.entries[i].values() if e.opponent != BYE and e.played]
            )
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
