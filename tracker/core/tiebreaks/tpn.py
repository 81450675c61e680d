"""``TPN``: the tournament pairing number (the TRF starting rank); lower ranks first.  Both editions."""

from __future__ import annotations

from collections.abc import Sequence

from tracker.core.crosstable import Tournament
from tracker.core.order import TieBreak
from tracker.core.phrases import phrase
from tracker.core.tiebreaks.rule import Column, Final, Rule, Span


def column(t: Tournament, tb: TieBreak) -> Column:
    return Column([-s for s in t.start_nos], 1, t.start_nos)


def final(f: Final, tb: TieBreak) -> Sequence[int]:
    return [-s for s in f.frame.start_nos]


def difference(s: Span, tb: TieBreak, j: int, i: int, weight: list[int] | None) -> tuple[int, int]:
    """No game changes a pairing number: the difference is known."""
    d = s.frame.start_nos[i] - s.frame.start_nos[j]
    return d, d


RULE = Rule(
    kind="TPN",
    name=phrase("tiebreak.TPN.name", "Pairing number"),
    what=phrase("tiebreak.TPN.what", "the player's pairing number (the start list's order)"),
    better=phrase("tiebreak.TPN.better", "lower is better"),
    lower_first=True,
    listed=9,
    column=column,
    final=final,
    difference=difference,
)
