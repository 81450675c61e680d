"""TRF result codes: what each game result and bye is written as, and what each code is worth.

A game is two codes, White's and Black's (``1 0``, ``= =``, ``+ -``, …; the
short forms ``W D L`` for games under one hour); a bye is one (``F H Z U``).
The crosstable stores codes; the TRF reader and writer and ``tracker follow``
translate them with these tables.
"""

from __future__ import annotations

from typing import Final

from tracker.core.events import ByeKind, GameResult
from tracker.core.scoring import Units

#: TRF result codes per game result: (white's code, black's code).
GAME_CODES: Final[dict[GameResult, tuple[str, str]]] = {
    "1-0": ("1", "0"),
    "1/2-1/2": ("=", "="),
    "0-1": ("0", "1"),
    "+-": ("+", "-"),
    "-+": ("-", "+"),
    "--": ("-", "-"),
}
SHORT_CODES: Final = {"1": "W", "=": "D", "0": "L"}
BYE_CODES: Final[dict[ByeKind, str]] = {"full": "F", "half": "H", "zero": "Z", "pab": "U"}


def code_units(u: Units, code: str) -> int:
    """The units a player scores with TRF code ``code`` under scoring ``u``."""
    return {
        "1": u.win,
        "W": u.win,
        "=": u.draw,
        "D": u.draw,
        "0": u.loss,
        "L": u.loss,
        "+": u.forfeit_win,
        "-": u.forfeit_loss,
        "F": u.full_bye,
        "H": u.half_bye,
        "Z": u.zero_bye,
        "U": u.pab,
    }[code]


#: (White's TRF code, Black's TRF code) → (result token, short).
RESULT_OF_CODES: Final[dict[tuple[str, str], tuple[GameResult, bool]]] = {
    **{codes: (result, False) for result, codes in GAME_CODES.items()},
    **{
        (SHORT_CODES[w], SHORT_CODES[b]): (result, True)
        for result, (w, b) in GAME_CODES.items()
        if w in SHORT_CODES and b in SHORT_CODES
    },
}
