"""``RTNG``: the player's own rating as the start list gives it; higher ranks first.  Both editions."""

from __future__ import annotations

from collections.abc import Sequence

from tracker.core.crosstable import Tournament
from tracker.core.order import TieBreak
from tracker.core.phrases import phrase
from tracker.core.tiebreaks.rule import Column, Final, Rule, Span


def column(t: Tournament, tb: TieBreak) -> Column:
    return Column([p.rating for p in t.opened.players], 1)


def final(f: Final, tb: TieBreak) -> Sequence[int]:
    return f.frame.ratings


def difference(s: Span, tb: TieBreak, j: int, i: int, weight: list[int] | None) -> tuple[int, int]:
    """No game changes a start-list rating: the difference is known."""
    d = s.frame.ratings[j] - s.frame.ratings[i]
    return d, d


RULE = Rule(
    kind="RTNG",
    name=phrase("tiebreak.RTNG.name", "Rating"),
    what=phrase("tiebreak.RTNG.what", "the player's rating in the start list"),
    better=phrase("tiebreak.RTNG.better", "higher is better"),
    listed=10,
    column=column,
    final=final,
    difference=difference,
)
