"""Reading a tournament file from disk: bytes to text to a :class:`TournamentFile`.

The one place that opens a tournament file; every command (``standings``,
``replay``, ``follow``, the demo) and the tests read files through it.

Encoding
--------

Files are UTF-8.  Older arbiter programs write Windows-1252 (Latin-1 with
a few more letters); such a file is read that way, with a note, when it is
not UTF-8 *and holds no UTF-8 multi-byte sequence at all*.  A file that is
UTF-8 apart from a stray byte (a name pasted from elsewhere) is refused,
naming the line and the byte: decoding the whole of it as Latin-1 would
garble every other name and blame a column far from the real problem.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Final

import msgspec

from tracker.core.errors import FormatError
from tracker.core.events import Rules
from tracker.core.phrases import Said, phrase, render
from tracker.formats.base import TournamentFile

#: A well-formed UTF-8 sequence of two to four bytes (RFC 3629, no surrogates, no overlongs).
_UTF8_MULTIBYTE: Final = re.compile(
    rb"[\xc2-\xdf][\x80-\xbf]"
    rb"|\xe0[\xa0-\xbf][\x80-\xbf]|[\xe1-\xec\xee\xef][\x80-\xbf]{2}|\xed[\x80-\x9f][\x80-\xbf]"
    rb"|\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}|\xf4[\x80-\x8f][\x80-\xbf]{2}"
)


DECODED: Final = phrase(
    "formats.decoded", "the file is not UTF-8: read as {encoding}, as older arbiter programs write it"
)


def decode_text(data: bytes, path: str) -> tuple[str, tuple[Said, ...]]:
    """The text of a tournament file and the notes about its encoding (see the module docstring).

    Returns UTF-8 text with no note, or Windows-1252 text (Latin-1 for bytes
    Windows-1252 leaves undefined) with a note saying so.  Raises
    :class:`FormatError` naming the line and the byte when the file has UTF-8
    multi-byte sequences and also bytes that are not UTF-8.
    """
    try:
        return data.decode("utf-8"), ()
    except UnicodeDecodeError as exc:
        bad = exc.start
    if _UTF8_MULTIBYTE.search(data) is None:
        for encoding, name in (("cp1252", "Windows-1252"), ("latin-1", "Latin-1")):
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError:
                continue
            return text, (DECODED(encoding=name),)
    line = data.count(b"\n", 0, bad) + 1
    column = bad - (data.rfind(b"\n", 0, bad) + 1) + 1
    raise FormatError(
        path,
        line,
        f"byte {column} of the line (0x{data[bad]:02X}) is not UTF-8, though the rest of the file is; "
        "save the file as UTF-8 or correct that character",
    )


def read_file(
    path: str, tournament_id: str | None = None, *, final: bool = False, rules: Rules | None = None
) -> TournamentFile:
    """Read a TRF or PGN file (by extension; TRF otherwise).

    ``rules`` sets the C.07 edition (else the TRF's start date says, else
    2026).  ``final`` (the event is over) goes to the TRF reader
    (:func:`~tracker.formats.trf.parse_trf`).  The result's ``notes`` include
    how the file was decoded when it was not UTF-8.  Raises
    :class:`FormatError` when the file cannot be read, decoded or parsed.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise FormatError(path, 0, f"cannot read the file: {exc.strerror or exc}") from None
    text, notes = decode_text(data, path)
    if path.lower().endswith(".pgn"):
        from tracker.formats.pgn import parse_pgn

        tf = parse_pgn(text, path, tournament_id)
        if rules is not None:
            tf = replace(tf, opened=msgspec.structs.replace(tf.opened, rules=rules))
    else:
        from tracker.formats.trf import parse_trf

        tf = parse_trf(text, path, tournament_id, final=final, rules=rules)
    if not notes:
        return tf
    return replace(tf, notes=tuple(render(n, str) for n in notes) + tf.notes, said=notes + tf.said)
