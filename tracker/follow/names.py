"""Matching a source's player names to the tournament's start list, never guessing."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Final

from tracker.core.events import (
    Player,
)

_FOLD: Final = str.maketrans({"ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "æ": "ae", "œ": "oe", "ı": "i"})
_APOSTROPHES: Final = re.compile(r"['’`´]")
_SEPARATORS: Final = re.compile(r"[^\w,]+|_")


def _plain(text: str) -> str:
    """Case-folded, without diacritics, punctuation turned to spaces (commas kept)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c)).translate(_FOLD)
    return _SEPARATORS.sub(" ", _APOSTROPHES.sub("", stripped))


def name_key(name: str) -> str:
    """A name in "first last" order, plain: ``"Vachier-Lagrave, Maxime"`` → ``"maxime vachier lagrave"``.

    "Last, First" is turned around at the first comma; everything
    :func:`_plain` ignores is ignored.  Returns ``""`` for a name with no
    letters or digits.
    """
    plain = _plain(name)
    last, comma, first = plain.partition(",")
    ordered = f"{first} {last}" if comma else plain
    return " ".join(ordered.replace(",", " ").split())


def token_key(name: str) -> str:
    """The name's words in alphabetical order: the same for "Last, First" and "First Last" whatever the order."""
    return " ".join(sorted(name_key(name).split()))


class StartList:
    """The tournament's players, looked up by name.

    A name matches a player when their :func:`name_key` are equal, or else
    when their :func:`token_key` are equal and no other player shares that
    key.  Nothing else matches: initials, nicknames and typos are reported.
    """

    def __init__(self, players: Iterable[tuple[int, str]]) -> None:
        self.names: dict[int, str] = {}
        self._exact: dict[str, set[int]] = {}
        self._tokens: dict[str, set[int]] = {}
        for start_no, name in players:
            self.names[start_no] = name
            self._exact.setdefault(name_key(name), set()).add(start_no)
            self._tokens.setdefault(token_key(name), set()).add(start_no)

    @classmethod
    def of(cls, players: Iterable[Player]) -> StartList:
        """The start list of a ``tournament_opened`` event's players."""
        return cls((p.start_no, p.name) for p in players)

    def match(self, name: str) -> int | None:
        """The start number of the one player called ``name``; ``None`` when nobody or several are."""
        for index, key in ((self._exact, name_key(name)), (self._tokens, token_key(name))):
            found = index.get(key, set())
            if len(found) == 1:
                return next(iter(found))
            if len(found) > 1:
                return None
        return None

    def why_not(self, name: str) -> str:
        """Why :meth:`match` found no player for ``name``, in one phrase."""
        several = self._exact.get(name_key(name)) or self._tokens.get(token_key(name))
        if several and len(several) > 1:
            listed = ", ".join(f"{no} {self.names[no]}" for no in sorted(several))
            return f"{name!r} could be any of {listed}"
        return f"{name!r} is not in the start list"

    def short(self, start_no: int) -> str:
        """The player's family name for messages (the part before a comma), or the start number."""
        name = self.names.get(start_no)
        return (name.split(",")[0].strip() or name) if name else str(start_no)
