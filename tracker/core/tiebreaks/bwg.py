"""``BWG``: games won with Black (C.07 §7).

Only games won at the board with Black count, as the FIDE TEC tie-break
server counts them: a forfeit win is not one, and a bye — a pairing-allocated
bye (``U``) too, though it scores like a win and is "played" for other
rules — has no colour and no opponent.  The two editions agree (see
docs/tiebreaks.md, "BWG, BPG and ARO").  The projection does not compute it.
"""

from __future__ import annotations

from tracker.core.crosstable import BYE, Tournament
from tracker.core.order import TieBreak
from tracker.core.phrases import phrase
from tracker.core.tiebreaks.rule import Column, Rule


def column(t: Tournament, tb: TieBreak) -> Column:
    win = t.units.win
    won = [
        sum(1 for e in t.entries[i].values() if e.opponent != BYE and e.played and not e.white and e.units == win)
        for i in range(t.n)
    ]
    return Column(won, 1)


RULE = Rule(
    kind="BWG",
    name=phrase("tiebreak.BWG.name", "Games won with Black"),
    what=phrase("tiebreak.BWG.what", "games won at the board with Black (forfeits not counted)"),
    better=phrase("tiebreak.BWG.better", "more is better"),
    listed=7,
    column=column,
)
