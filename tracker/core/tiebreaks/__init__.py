"""Tie-break codes as in TRF26 records 202/212 and FIDE's code list.

Supported (FIDE C.07, 2026 edition, as it applies to round robins):

``PTS``
    the score itself (always first; added when a list omits it).
``DE``
    direct encounter (C.07 §6), applied recursively inside each group of
    players tied on everything before it.  Its value is the place inside that
    group (1 = best, shared places repeat); 0 when the group stays tied or
    when there is no tie to break.  Lower is better.
``WON``
    games won over the board.  Forfeit wins and byes are not counted (in a
    round robin they are not games won at the board).
``SB``
    Sonneborn-Berger: the sum, over a player's games, of the points scored
    in the game times the opponent's score (C.07 §9.1).  Forfeits count as
    games (§15.2); byes have no opponent and add nothing.
``KS``, ``KS/L±n``
    Koya (C.07 §9.2): points scored against the opponents whose score is at
    least 50% of the maximum, with the line moved by ``n`` half-win steps
    (§14.5).  The line itself is :func:`koya_threshold` and the test
    :func:`qualifies`, here and nowhere else; :mod:`tracker.core.crosstable`
    says which ``G`` applies while games are still to be played.
``STD``
    standard points (C.07 2026): the score counted as 1-½-0 whatever the
    tournament's scoring (a result worth more than a draw is 1, a draw ½,
    less 0), for events with custom scoring such as 3-1-0.  2026 only.
``BPG``
    games played with Black (C.07 §7).  Which forfeits count depends on the
    edition (:mod:`tracker.core.editions`).
``ARO``
    average rating of the opponents (C.07 §10.1), rounded to a whole
    number; opponents without a rating (0) are left out.  Which forfeits
    count depends on the edition.
``TPN``
    the tournament pairing number (the TRF starting rank); lower is better.
``RTNG``
    the player's own rating as given in the start list; higher is better.

The values of ``STD``, ``BPG``, ``ARO``, ``TPN`` and ``RTNG`` are computed by
:mod:`tracker.core.editions` from the crosstable when standings are built.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from tracker.core.errors import EventRejected

Kind = Literal["PTS", "DE", "WON", "SB", "KS", "STD", "BPG", "ARO", "TPN", "RTNG"]
Rules = Literal["2024", "2026"]
#: Codes whose value does not come from the running sums of the crosstable.
RECORD_KINDS: Final = frozenset({"STD", "BPG", "ARO", "TPN", "RTNG"})
#: Codes defined by the 2026 edition only.
ONLY_2026: Final = frozenset({"STD"})
_SIMPLE: Final = ("PTS", "DE", "WON", "SB", "KS", "STD", "BPG", "ARO", "TPN", "RTNG")
Basis = Literal["games", "rounds"]

_KS_LIMIT: Final = re.compile(r"^KS/L([+-]?)(\d{1,2})$")


@dataclass(frozen=True, slots=True)
class TieBreak:
    """One parsed code: its canonical text, its kind and, for Koya, the limit."""

    code: str
    kind: Kind
    limit: int = 0


def parse_tiebreak(text: str) -> TieBreak:
    """Parse one code (case-insensitive), e.g. ``"KS/L-2"``.

    Raises :class:`EventRejected` (code ``unknown-tiebreak``) for a code
    tracker does not compute, and for a Koya limit without a sign
    (``KS/L1``): TRF26 and C.07 §14.5 write ``KS/L+1``, and the FIDE TEC
    server reads the unsigned form as a percentage line.
    """
    code = text.strip().upper()
    if code in _SIMPLE:
        return TieBreak(code, code)  # type: ignore[arg-type]  # narrowed by the membership test
    match = _KS_LIMIT.match(code)
    if match:
        sign, digits = match.groups()
        if not sign:
            raise EventRejected(
                f"tie-break code {text.strip()!r} has no sign: write KS/L+{digits} to raise the 50% line by "
                f"{digits} × half a win (KS/L+1 = 50% + ½ point under 1-½-0 scoring) or KS/L-{digits} to lower it; "
                f"tracker refuses KS/L{digits} because the FIDE TEC tie-break server reads it as a {digits}% line",
                code="unknown-tiebreak",
            )
        limit = -int(digits) if sign == "-" else int(digits)
        if limit == 0:
            return TieBreak("KS", "KS")
        return TieBreak(f"KS/L{limit:+d}", "KS", limit)
    raise EventRejected(
        f"unknown tie-break code {text!r}; tracker computes PTS, DE, WON, SB, KS, KS/L±n, STD, BPG, ARO, TPN and RTNG",
        code="unknown-tiebreak",
    )


def parse_tiebreaks(codes: tuple[str, ...] | list[str], rules: Rules = "2026") -> tuple[TieBreak, ...]:
    """Parse an ordered list, put ``PTS`` first and drop repeats.

    Raises :class:`EventRejected` (``unknown-tiebreak``) as
    :func:`parse_tiebreak` does, and for a code the edition ``rules`` does not
    define (``STD`` under 2024).
    """
    parsed = [TieBreak("PTS", "PTS")]
    for text in codes:
        if not text.strip():
            continue
        tb = parse_tiebreak(text)
        if tb.kind in ONLY_2026 and rules != "2026":
            raise EventRejected(
                f"tie-break {tb.code} is defined by the 2026 edition of C.07, not by the {rules} edition "
                "this tournament runs under (use rules 2026, or leave it out)",
                code="unknown-tiebreak",
            )
        if tb not in parsed:
            parsed.append(tb)
    return tuple(parsed)


def parse_code_list(text: str) -> tuple[str, ...]:
    """Split a TRF26 202/212-style list (``"PTS,DE,SB KS"``) into codes."""
    return tuple(part for part in re.split(r"[,\s]+", text.strip()) if part)


# -- the Koya line (C.07 §9.2, §14.5) -------------------------------------------------


def koya_threshold(win: int, games: int, limit: int) -> int:
    """Twice the units an opponent must have scored to qualify: ``win × (G + limit)``.

    C.07 §9.2: 50% of the maximum possible score ``win × G``; §14.5 moves the
    line by ``limit`` half-win steps (``KS/L+1``: ½ a win higher).  Doubled
    so that the test stays in integers.
    """
    return win * (games + limit)


def qualifies(score: int, threshold: int) -> bool:
    """Whether an opponent with ``score`` units is on or above the line ``threshold`` (§9.2: the test is ≥)."""
    return 2 * score >= threshold


def final_games(n: int, cycles: int, rounds: int, basis: Basis, never_paired: int) -> int:
    """``G`` once every game is in: the games a participant can play, or the rounds.

    Basis ``games`` (the FIDE TEC reading since Dec 2025): ``(n − 1) × cycles``
    less the players who never had an opponent (withdrawn before their first
    game); basis ``rounds`` (the 2024 reading): the number of rounds.
    """
    if basis == "rounds":
        return rounds
    return (n - 1) * cycles - never_paired
