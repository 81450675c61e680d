"""Reading a tournament file from disk: bytes to text to a :class:`TournamentFile`.

The one place that opens a tournament file; every command (``standings``,
``replay``, ``follow``, the demo) and the tests read files through it.
"""

from __future__ import annotations

from pathlib import Path

from tracker.core.errors import FormatError
from tracker.formats import TournamentFile


def read_file(path: str, tournament_id: str | None = None, *, final: bool = False) -> TournamentFile:
    """Read a TRF or PGN file (by extension; TRF otherwise).

    Raises :class:`FormatError` when the file cannot be read or parsed.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise FormatError(path, 0, f"cannot read the file: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")  # TRF files from older arbiter programs
    if path.lower().endswith(".pgn"):
        from tracker.formats.pgn import parse_pgn

        return parse_pgn(text, path, tournament_id)
    from tracker.formats.trf import parse_trf

    return parse_trf(text, path, tournament_id, final=final)
