"""``PTS``: the score itself, always the first criterion (added when an order omits it)."""

from __future__ import annotations

from collections.abc import Sequence

from tracker.core.crosstable import Tournament
from tracker.core.order import TieBreak
from tracker.core.phrases import phrase
from tracker.core.tiebreaks.rule import Column, Final, Rule, Span


def column(t: Tournament, tb: TieBreak) -> Column:
    return Column(t.score, t.units.denominator)


def final(f: Final, tb: TieBreak) -> Sequence[int]:
    return f.score


def difference(s: Span, tb: TieBreak, j: int, i: int, weight: list[int] | None) -> tuple[int, int]:
    return s.s_lo[j] - s.s_hi[i], s.s_hi[j] - s.s_lo[i]


RULE = Rule(
    kind="PTS",
    name=phrase("tiebreak.PTS.name", "Points"),
    what=phrase("tiebreak.PTS.what", "points scored"),
    better=phrase("tiebreak.PTS.better", "more is better"),
    listed=0,
    column=column,
    final=final,
    difference=difference,
)
