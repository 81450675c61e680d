"""What differs between the 2024 and 2026 editions of FIDE C.07, and the tie-breaks it touches.

How this works
--------------

A tournament names its edition (``TournamentOpened.rules``, default
``2026``).  Koya (§9.2), its limit modifier (§14.5), Sonneborn-Berger, DE and
the points are the same in both editions; in a round robin forfeits count as
games for them in both (§15.2).  ``ARO``, ``BPG`` and ``BWG`` count games
played at the board only, in both editions, as the FIDE TEC tie-break server
does (no forfeit, no bye; docs/tiebreaks.md says where a reading of the
regulation's text differs).  What the 2026 edition changes:

* ``STD`` (standard points, for custom scoring such as 3-1-0) exists only in
  2026; :func:`tracker.core.tiebreaks.parse_tiebreaks` refuses it under 2024.

``TPN`` (pairing number) and ``RTNG`` (start-list rating) are the same in
both.  :data:`DIFFERENCES` is the table the README shows; each rule says
which editions define it (``STD``: 2026 only).
"""

from __future__ import annotations

from typing import Final

#: (rule, 2024, 2026) — what differs, as the README's table shows it.
DIFFERENCES: Final[tuple[tuple[str, str, str], ...]] = (
    ("Koya (§9.2), limit modifier (§14.5), SB, DE, PTS", "as in 2026", "unchanged (word for word)"),
    ("forfeits for SB and KS in a round robin (§15.2)", "games", "games"),
    ("forfeits and byes for ARO, BPG, BWG (as the FIDE TEC server reads them)", "not games", "not games"),
    ("STD (standard points, for custom scoring)", "not defined: refused", "1-½-0 per result"),
    ("TPN, RTNG", "pairing number (lower first), start-list rating", "the same"),
)
