"""``BPG``: games played with Black (C.07 §7).

Which forfeits count depends on the edition
(:func:`tracker.core.editions.counts_for_own_record`: under 2026 a forfeit
loss is not a game of the player's own record).  The projection does not
compute it.
"""

from __future__ import annotations

from tracker.core.crosstable import Tournament
from tracker.core.editions import counts_for_own_record
from tracker.core.order import TieBreak
from tracker.core.phrases import phrase
from tracker.core.tiebreaks.rule import Column, Rule


def column(t: Tournament, tb: TieBreak) -> Column:
    rules = t.rules
    return Column(
        [sum(1 for e in t.entries[i].values() if not e.white and counts_for_own_record(e, rules)) for i in range(t.n)],
        1,
    )


RULE = Rule(
    kind="BPG",
    name=phrase("tiebreak.BPG.name", "Games with Black"),
    what=phrase("tiebreak.BPG.what", "games played with Black"),
    better=phrase("tiebreak.BPG.better", "more is better"),
    listed=7,
    column=column,
)
