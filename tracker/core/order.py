"""A tie-break order as TRF26 records 202/212 write it: codes, parsed.

:class:`TieBreak` is one parsed code; what each kind means is the rule table
of :mod:`tracker.core.tiebreaks`, which parses codes into these values.  The
crosstable keeps the parsed order of its tournament (the Koya limits it keeps
sums for), so this value sits below both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TieBreak:
    """One parsed code: its canonical text, its kind (a key of the rule table) and, for Koya, the limit."""

    code: str
    kind: str
    limit: int = 0


def parse_code_list(text: str) -> tuple[str, ...]:
    """Split a TRF26 202/212-style list (``"PTS,DE,SB KS"``) into codes."""
    return tuple(part for part in re.split(r"[,\s]+", text.strip()) if part)
