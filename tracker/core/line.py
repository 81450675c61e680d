"""The Koya line (C.07 §9.2, §14.5): who is on or above 50% of the maximum possible score.

One place says what the line is: :func:`koya_threshold` and :func:`qualifies`
(the test is ≥), and :func:`final_games`, the ``G`` of a finished event.
Which ``G`` applies while games are still to be played is the crosstable's
(:mod:`tracker.core.crosstable`); the projection measures against the final
line.  Points are integer units (:mod:`tracker.core.scoring`); the threshold
is doubled so that the test stays in integers.
"""

from __future__ import annotations

from typing import Literal

Basis = Literal["games", "rounds"]


def koya_threshold(win: int, games: int, limit: int) -> int:
    """Twice the units an opponent must have scored to qualify: ``win × (G + limit)``.

    C.07 §9.2: 50% of the maximum possible score ``win × G``; §14.5 moves the
    line by ``limit`` half-win steps (``KS/L+1``: ½ a win higher).  Doubled
    so that the test stays in integers.
    """
    return win * (games + limit)


def qualifies(score: int, threshold: int) -> bool:
    """Whether an opponent with ``score`` units is on or above the line ``threshold`` (§9.2: the test is ≥)."""
    return 2 * score >= threshold


def final_games(n: int, cycles: int, rounds: int, basis: Basis, never_paired: int) -> int:
    """``G`` once every game is in: the games a participant can play, or the rounds.

    Basis ``games`` (the FIDE TEC reading since Dec 2025): ``(n − 1) × cycles``
    less the players who never had an opponent (withdrawn before their first
    game); basis ``rounds`` (the 2024 reading): the number of rounds.
    """
    if basis == "rounds":
        return rounds
    return (n - 1) * cycles - never_paired
