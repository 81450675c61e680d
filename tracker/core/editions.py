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

:func:`record_column` computes one of these columns from the crosstable's
entries (O(n × rounds)); the running sums of
:mod:`tracker.core.crosstable` stay as they are.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Final

from tracker.core.crosstable import BYE, Entry, Tournament
from tracker.core.tiebreaks import Rules, TieBreak

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


def record_column(t: Tournament, tb: TieBreak) -> tuple[list[int], list[Fraction]]:
    """One record-kind column: (sort keys, higher is better; the values shown).

    ``STD`` in half points, ``BPG`` a count, ``ARO`` the rounded average of
    rated opponents (0 without any), ``TPN`` the starting rank (keyed as its
    negative: lower is better), ``RTNG`` the start-list rating.  Raises
    :class:`ValueError` for a kind that is not a record kind (a bug).
    """
    n = t.n
    players = t.opened.players
    if tb.kind == "TPN":
        return [-p.start_no for p in players], [Fraction(p.start_no) for p in players]
    if tb.kind == "RTNG":
        return [p.rating for p in players], [Fraction(p.rating) for p in players]
    if tb.kind == "STD":
        draw = t.units.draw
        halves = [sum(_std_halves(e.units, draw) for e in t.entries[i].values()) for i in range(n)]
        return halves, [Fraction(h, 2) for h in halves]
    if tb.kind == "BPG":
        counts = [
            sum(1 for e in t.entries[i].values() if not e.white and counts_for_own_record(e, t.rules)) for i in range(n)
        ]
        return counts, [Fraction(c) for c in counts]
    if tb.kind == "ARO":
        averages = [
            average_rating([players[e.opponent].rating for e in t.entries[i].values() if counts_for_rating(e, t.rules)])
            for i in range(n)
        ]
        return averages, [Fraction(a) for a in averages]
    raise ValueError(f"{tb.code} is not computed from the record")


def _std_halves(units: int, draw: int) -> int:
    """Standard points of one result in halves: more than a draw is a win (2), a draw 1, less 0."""
    if units > draw:
        return 2
    return 1 if units == draw else 0


def average_rating(ratings: list[int]) -> int:
    """The average of the rated (non-zero) ``ratings``, rounded half up (C.07 §10.1); 0 when there is none."""
    rated = [r for r in ratings if r > 0]
    if not rated:
        return 0
    return (2 * sum(rated) + len(rated)) // (2 * len(rated))
