"""What differs between the 2024 and 2026 editions of FIDE C.07, and the tie-breaks it touches.

How this works
--------------

A tournament names its edition (``TournamentOpened.rules``, default
``2026``).  Koya (§9.2), its limit modifier (§14.5), Sonneborn-Berger, DE and
the points are the same in both editions; in a round robin forfeits count as
games for them in both (§15.2).  What the 2026 edition changes (§15.2):

* **rating-based tie-breaks** (``ARO``): a forfeit is not a game, so the
  opponent of a forfeit win or loss is left out of the average.  Under
  2024 every scheduled opponent of a game (forfeits included) counts.
* **the player's own-record tie-breaks** (``BPG``): a forfeit *loss* is not
  a game of the player's own record; a forfeit win still is.  Under 2024
  both count (a forfeit is a regular game in a round robin).
* ``STD`` (standard points, for custom scoring such as 3-1-0) exists only in
  2026; :func:`tracker.core.tiebreaks.parse_tiebreaks` refuses it under 2024.

``TPN`` (pairing number) and ``RTNG`` (start-list rating) are the same in
both.  :data:`DIFFERENCES` is the table the README shows.

:func:`counts_for_rating` and :func:`counts_for_own_record` are the policy the
rules of ``ARO`` and ``BPG`` (:mod:`tracker.core.tiebreaks`) read; each rule
says which editions define it (``STD``: 2026 only).
"""

from __future__ import annotations

from typing import Final

from tracker.core.crosstable import BYE, Entry
from tracker.core.events import Rules

#: (rule, 2024, 2026) — what differs, as the README's table shows it.
DIFFERENCES: Final[tuple[tuple[str, str, str], ...]] = (
    ("Koya (§9.2), limit modifier (§14.5), SB, DE, PTS", "as in 2026", "unchanged (word for word)"),
    ("forfeits for SB and KS in a round robin (§15.2)", "games", "games"),
    ("forfeits for rating-based tie-breaks (ARO)", "games: the opponent counts", "not games: left out"),
    (
        "forfeit losses for own-record tie-breaks (BPG)",
        "games: a forfeit loss with Black counts",
        "not games (forfeit wins still count)",
    ),
    ("STD (standard points, for custom scoring)", "not defined: refused", "1-½-0 per result"),
    ("TPN, RTNG", "pairing number (lower first), start-list rating", "the same"),
)


def counts_for_rating(e: Entry, rules: Rules) -> bool:
    """Whether ``e`` is a game for a rating-based tie-break (C.07 2026 §15.2: forfeits are not)."""
    if e.opponent == BYE:
        return False
    return e.played or rules == "2024"


def counts_for_own_record(e: Entry, rules: Rules) -> bool:
    """Whether ``e`` is a game of the player's own record (C.07 2026 §15.2: a forfeit loss is not)."""
    if e.opponent == BYE:
        return False
    return e.played or rules == "2024" or e.code == "+"
