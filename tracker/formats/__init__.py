"""Tournament files in and out: TRF16/TRF26 and PGN.

Every reader takes the file's text and its name (for error messages) and
returns a :class:`TournamentFile`: the opening event and the results and
byes as events in round order, ready to be folded by the core or submitted
to a running tracker.  Readers never raise anything but
:class:`~tracker.core.errors.FormatError` (file, line, problem), and
nothing partial is returned.
"""

from __future__ import annotations

from tracker.formats.base import (
    TournamentFile,
    bye_id,
    check_characters,
    checked_file,
    file_stem,
    game_id,
    slug,
    state_from,
    tournament_id_for,
)
from tracker.formats.pgn import parse_pgn
from tracker.formats.trf import parse_trf

__all__ = [
    "TournamentFile",
    "bye_id",
    "check_characters",
    "checked_file",
    "file_stem",
    "game_id",
    "read_tournament_text",
    "slug",
    "state_from",
    "tournament_id_for",
]


def read_tournament_text(
    text: str, path: str, tournament_id: str | None = None, *, final: bool = False
) -> TournamentFile:
    """Read a TRF16/TRF26 or PGN file's text, choosing the reader by extension, then by content.

    ``.pgn`` is PGN and ``.trf``/``.txt`` are TRF; any other name is PGN when
    the first non-blank character is ``[`` (a PGN tag) and TRF otherwise.
    ``final`` (the event is over) is passed to the TRF reader: see :func:`~tracker.formats.trf.parse_trf`.
    Raises :class:`~tracker.core.errors.FormatError` as the chosen reader does.
    """
    name = path.lower()
    if name.endswith(".pgn"):
        return parse_pgn(text, path, tournament_id)
    if name.endswith((".trf", ".txt")):
        return parse_trf(text, path, tournament_id, final=final)
    if text.lstrip("\ufeff \t\r\n").startswith("["):
        return parse_pgn(text, path, tournament_id)
    return parse_trf(text, path, tournament_id, final=final)
