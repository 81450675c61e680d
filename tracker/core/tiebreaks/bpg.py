"""``BPG``: games played with Black (C.07 §7).

Only games played at the board count, as the FIDE TEC tie-break server
counts them in both editions: no forfeit win or loss, no double forfeit and
no bye (none has been played with Black).  Under 2026 the regulation's
§15.2 can be read to keep a round robin's forfeit wins as games (tiebreak-core
reads it so); the server does not, and tracker follows the server (see
docs/tiebreaks.md, "BWG, BPG and ARO").  The projection does not compute it.
"""

from __future__ import annotations

from tracker.core.crosstable import BYE, Tournament
from tracker.core.order import TieBreak
from tracker.core.phrases import phrase
from tracker.core.tiebreaks.rule import Column, Rule


def column(t: Tournament, tb: TieBreak) -> Column:
    return Column(
        [sum(1 for e in t.entries[i].values() if e.opponent != BYE and e.played and not e.white) for i in range(t.n)],
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
