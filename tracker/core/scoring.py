"""Exact points: a scoring system turned into integer units.

Every score inside the core is an ``int`` count of *units*, where one unit is
``1/denominator`` of a point and ``denominator`` is the least common
denominator of the scoring system's values (2 for 1-½-0, 1 for 3-1-0).
Integer arithmetic is exact and fast; :meth:`Units.points` turns units back
into a :class:`~fractions.Fraction` at the edge.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from math import lcm

from tracker.core.events import Scoring


@dataclass(frozen=True, slots=True)
class Units:
    """A :class:`Scoring` in integer units of ``1/denominator`` point."""

    denominator: int
    win: int
    draw: int
    loss: int
    forfeit_win: int
    forfeit_loss: int
    full_bye: int
    half_bye: int
    zero_bye: int
    pab: int

    def points(self, units: int) -> Fraction:
        """``units`` as an exact number of points."""
        return Fraction(units, self.denominator)


def units_of(scoring: Scoring) -> Units:
    """Convert a scoring system to integer units (exactly; no rounding)."""
    win = Fraction(scoring.win)
    draw = Fraction(scoring.draw)
    values = {
        "win": win,
        "draw": draw,
        "loss": Fraction(scoring.loss),
        "forfeit_win": _or(scoring.forfeit_win, win),
        "forfeit_loss": Fraction(scoring.forfeit_loss),
        "full_bye": _or(scoring.full_bye, win),
        "half_bye": _or(scoring.half_bye, draw),
        "zero_bye": Fraction(scoring.zero_bye),
        "pab": _or(scoring.pab, win),
    }
    denominator = lcm(*(v.denominator for v in values.values()))
    ints = {k: int(v * denominator) for k, v in values.items()}
    return Units(denominator=denominator, **ints)


def _or(value: Decimal | None, default: Fraction) -> Fraction:
    return default if value is None else Fraction(value)
