"""``TPR``: the tournament performance rating (C.07 §10, both editions), ``ARO + dp``.

``ARO`` is the average rating of the opponents as :mod:`~tracker.core.tiebreaks.aro` computes it (rounded
half up; games played at the board only, as the FIDE TEC server counts them in both editions: forfeits,
byes and unrated opponents left out); ``dp`` is FIDE B.02 table 8.1(a) of ``p``, the player's fractional
score in those same games (1, ½, 0 per game whatever the tournament's scoring), rounded to two decimals
(:func:`tracker.core.worth.tables.dp_of`).  A player
without such a game has no performance: the column shows 0.  The projection does not compute it.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Final

from tracker.core.crosstable import BYE, Tournament
from tracker.core.order import TieBreak
from tracker.core.phrases import phrase
from tracker.core.tiebreaks.aro import average_rating
from tracker.core.tiebreaks.rule import Column, Rule
from tracker.core.worth.tables import dp_of

#: A game's fractional score for ``p`` by TRF code (a game of less than one move as the result it records).
GAME_SCORE: Final[dict[str, Fraction]] = {
    "1": Fraction(1),
    "W": Fraction(1),
    "=": Fraction(1, 2),
    "D": Fraction(1, 2),
    "0": Fraction(0),
    "L": Fraction(0),
}
#: The same in halves (integers: summed per game, made a fraction once per player).
GAME_HALVES: Final[dict[str, int]] = {code: int(2 * score) for code, score in GAME_SCORE.items()}


def performance(t: Tournament, i: int) -> int | None:
    """Player ``i``'s TPR on the crosstable as it stands, or ``None`` without a game against a rated opponent."""
    players = t.opened.players
    games = [
        e
        for e in t.entries[i].values()
        if e.opponent != BYE and e.played and players[e.opponent].rating > 0 and e.code in GAME_SCORE
    ]
    if not games:
        return None
    aro = average_rating([players[e.opponent].rating for e in games])
    return aro + dp_of(Fraction(sum(GAME_HALVES[e.code] for e in games), 2 * len(games)))


def column(t: Tournament, tb: TieBreak) -> Column:
    return Column([performance(t, i) or 0 for i in range(t.n)], 1)


RULE = Rule(
    kind="TPR",
    name=phrase("tiebreak.TPR.name", "Performance rating"),
    what=phrase(
        "tiebreak.TPR.what", "the average rating of the rated opponents plus FIDE's rating difference for the score"
    ),
    better=phrase("tiebreak.TPR.better", "higher is better"),
    listed=8,
    column=column,
)
