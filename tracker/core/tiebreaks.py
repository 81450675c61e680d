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
    (§14.5).  See :mod:`tracker.core.crosstable` for the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from tracker.core.errors import EventRejected

Kind = Literal["PTS", "DE", "WON", "SB", "KS"]

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
    tracker does not compute.
    """
    code = text.strip().upper()
    if code in ("PTS", "DE", "WON", "SB", "KS"):
        return TieBreak(code, code)  # type: ignore[arg-type]  # narrowed by the membership test
    match = _KS_LIMIT.match(code)
    if match:
        sign, digits = match.groups()
        limit = -int(digits) if sign == "-" else int(digits)
        if limit == 0:
            return TieBreak("KS", "KS")
        return TieBreak(f"KS/L{limit:+d}", "KS", limit)
    raise EventRejected(
        f"unknown tie-break code {text!r}; tracker computes PTS, DE, WON, SB, KS and KS/L±n",
        code="unknown-tiebreak",
    )


def parse_tiebreaks(codes: tuple[str, ...] | list[str]) -> tuple[TieBreak, ...]:
    """Parse an ordered list, put ``PTS`` first and drop repeats."""
    parsed = [TieBreak("PTS", "PTS")]
    for text in codes:
        if not text.strip():
            continue
        tb = parse_tiebreak(text)
        if tb not in parsed:
            parsed.append(tb)
    return tuple(parsed)


def parse_code_list(text: str) -> tuple[str, ...]:
    """Split a TRF26 202/212-style list (``"PTS,DE,SB KS"``) into codes."""
    return tuple(part for part in re.split(r"[,\s]+", text.strip()) if part)
