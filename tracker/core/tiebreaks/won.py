"""``WON``: games won over the board (C.07 §7).

Forfeit wins and byes are not counted: in a round robin they are not games
won at the board.
"""

from __future__ import annotations

from collections.abc import Sequence

from tracker.core.crosstable import Tournament
from tracker.core.order import TieBreak
from tracker.core.phrases import phrase
from tracker.core.tiebreaks.rule import Column, Final, Rule, Span


def column(t: Tournament, tb: TieBreak) -> Column:
    return Column(t.wins, 1)


def final(f: Final, tb: TieBreak) -> Sequence[int]:
    return f.wins


def difference(s: Span, tb: TieBreak, j: int, i: int, weight: list[int] | None) -> tuple[int, int]:
    return s.w_lo[j] - s.w_hi[i], s.w_hi[j] - s.w_lo[i]


RULE = Rule(
    kind="WON",
    name=phrase("tiebreak.WON.name", "Games won"),
    what=phrase("tiebreak.WON.what", "games won at the board (forfeits and byes not counted)"),
    better=phrase("tiebreak.WON.better", "more is better"),
    listed=2,
    column=column,
    final=final,
    difference=difference,
)
