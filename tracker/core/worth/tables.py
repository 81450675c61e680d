"""FIDE B.02 (rating regulations, in force since 1 March 2024) tables 8.1(a) and 8.1(b), exactly.

Table 8.1(a) turns a fractional score ``p`` (rounded to two decimals) into the rating difference ``dp``
(performance ratings, C.07's ``TPR``, norms); table 8.1(b) turns a rating difference ``D`` into the
higher-rated player's expected score ``PD`` (the lower-rated player's is ``1 − PD``).  Both are Elo's
tables as B.02 prints them; they are close to, but not, the normal distribution with σ = 200·√2 (the
test module says where they differ), so they are written out, not computed.
"""

from __future__ import annotations

from bisect import bisect_left
from fractions import Fraction
from typing import Final

#: Table 8.1(a): ``DP[k]`` is ``dp`` for ``p = 0.50 + k/100`` (k = 0 … 50); below 0.50, ``dp(p) = −dp(1 − p)``.
DP: Final[tuple[int, ...]] = (
    0, 7, 14, 21, 29, 36, 43, 50, 57, 65,
    72, 80, 87, 95, 102, 110, 117, 125, 133, 141,
    149, 158, 166, 175, 184, 193, 202, 211, 220, 230,
    240, 251, 262, 273, 284, 296, 309, 322, 336, 351,
    366, 383, 401, 422, 444, 470, 501, 538, 589, 677,
    800,
)  # fmt: skip

#: Table 8.1(b): ``PD_UPPER[k]`` is the largest difference ``D`` whose ``PD`` is ``0.50 + k/100`` (k = 0 … 49);
#: a difference above the last (735) has ``PD = 1.00``.
PD_UPPER: Final[tuple[int, ...]] = (
    3, 10, 17, 25, 32, 39, 46, 53, 61, 68,
    76, 83, 91, 98, 106, 113, 121, 129, 137, 145,
    153, 162, 170, 179, 188, 197, 206, 215, 225, 235,
    245, 256, 267, 278, 290, 302, 315, 328, 344, 357,
    374, 391, 411, 432, 456, 484, 517, 559, 619, 735,
)  # fmt: skip


def round_hundredths(p: Fraction) -> int:
    """``p`` in hundredths, rounded half up (B.02 rounds a fractional score to two decimals before 8.1(a))."""
    return int((p * 200 + 1) // 2)


def dp_of(p: Fraction) -> int:
    """Table 8.1(a): the rating difference of the fractional score ``p`` (0 ≤ p ≤ 1), ``p`` rounded to 0.01.

    Raises :class:`ValueError` for ``p`` outside [0, 1].
    """
    if not 0 <= p <= 1:
        raise ValueError(f"a fractional score lies in [0, 1], not {p}")
    k = round_hundredths(p) - 50
    return DP[k] if k >= 0 else -DP[-k]


def expected(difference: int) -> Fraction:
    """Table 8.1(b): the expected score of the player rated ``difference`` points above the opponent.

    ``difference`` may be negative (the lower-rated player: ``1 − PD``); it is used as given: capping it at
    400 is the caller's decision (B.02 §8.3.1 as in force on the event's date:
    :func:`tracker.core.worth.rating.cap_rule`).
    """
    return Fraction(expected_hundredths(difference), 100)


def expected_hundredths(difference: int) -> int:
    """:func:`expected` in hundredths (an integer: a player's expectation is summed over the games in these)."""
    pd = 50 + bisect_left(PD_UPPER, abs(difference))
    return pd if difference >= 0 else 100 - pd
