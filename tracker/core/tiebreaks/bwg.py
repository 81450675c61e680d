"""``BWG``: games won with Black (C.07 §7).

Only games won at the board count: a forfeit win is not a game won with
Black, and a bye has no colour, so the two editions agree.  The projection
does not compute it.
"""

from __future__ import annotations

from tracker.core.crosstable import Tournament
from tracker.core.order import TieBreak
from tracker.core.phrases import phrase
from tracker.core.tiebreaks.rule import Column, Rule


def column(t: Tournament, tb: TieBreak) -> Column:
    win = t.units.win
    won = [sum(1 for e in t.entries[i].values() if e.played and not e.white and e.units == win) for i in range(t.n)]
    return Column(won, 1)


RULE = Rule(
    kind="BWG",
    name=phrase("tiebreak.BWG.name", "Games won with Black"),
    what=phrase("tiebreak.BWG.what", "games won at the board with Black (forfeits not counted)"),
    better=phrase("tiebreak.BWG.better", "more is better"),
    listed=7,
    column=column,
)
