"""Tournament files in and out: TRF16/TRF26 and PGN.

Every reader takes the file's text and its name (for error messages) and
returns a :class:`TournamentFile`: the opening event and the results and
byes as events in round order, ready to be folded by the core or submitted
to a running tracker.  Readers never raise anything but
:class:`~tracker.core.errors.FormatError` (file, line, problem), and
nothing partial is returned.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from tracker.core.events import Event, TournamentOpened


@dataclass(frozen=True, slots=True)
class TournamentFile:
    """A tournament read from a file: how to open it and what happened in it."""

    opened: TournamentOpened
    events: tuple[Event, ...]

    def until_round(self, last: int) -> TournamentFile:
        """The same file cut after round ``last`` (events of later rounds dropped)."""
        kept = tuple(e for e in self.events if getattr(e, "round", 0) <= last)
        return TournamentFile(self.opened, kept)


def slug(name: str) -> str:
    """A tournament id from an event name: ``"Sinquefield Cup 2021"`` → ``"sinquefield-cup-2021"``."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    text = re.sub(r"[^A-Za-z0-9]+", "-", ascii_name).strip("-").lower()
    return text[:64].strip("-") or "tournament"
