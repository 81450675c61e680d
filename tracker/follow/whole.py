"""Whether a read of a source is whole: a PGN cut in its moves or an HTML error page is not a version of the source.

How this works
--------------

A publisher rewriting its PGN, a proxy answering with an error page, a
file caught half-written: each reads as text that is not the source.  Such
a read must not void what the previous reads recorded, so the follower
asks :func:`why_broken` first.  A PGN is whole when every game's tags are
followed by movetext, no brace comment is left open and the last game (a
read is cut at its end) ends with its game termination marker (``1-0``,
``0-1``, ``1/2-1/2``; a game in progress, ``[Result "*"]``, may omit it); anything
that opens with ``<`` (``<!DOCTYPE html>``, ``<html>``, ``<?xml``) is a page,
not a PGN or TRF.  A TRF is judged by its reader alone (a line cut short
fails it); games missing from a whole read are the confirmation rule's
business (:class:`tracker.follow.follower.Confirm`).
"""

from __future__ import annotations

import re
from typing import Final

MAX_GAMES: Final = 20_000  # games in one read of a source (a double round robin of 100 has 9,900)
_TERMINATION: Final = frozenset({"1-0", "0-1", "1/2-1/2", "*"})
_COMMENT: Final = re.compile(r"\{[^}]*\}|;[^\n]*")
_TAG: Final = re.compile(r'^\s*\[\s*(\w+)\s+"((?:[^"\\]|\\.)*)"\s*\]\s*$')


def why_broken(text: str, *, pgn: bool) -> str | None:
    """``None`` when ``text`` reads as a whole source, else why not, in a few words for the log."""
    head = text.lstrip("\ufeff \t\r\n")
    if head.startswith("<"):
        return "an HTML page, not a PGN or TRF (a proxy's or publisher's error page?)"
    if not pgn:
        return None
    games = 0
    tags: dict[str, str] = {}
    moves: list[str] = []
    in_moves = False

    def finished(last: bool) -> str | None:
        who = f"{tags.get('White', '?')}–{tags.get('Black', '?')}"
        if in_comment:
            return f"game {games} ({who}) cut in a comment"
        tokens = _COMMENT.sub(" ", "\n".join(moves)).split()
        if not tokens:
            return f"game {games} ({who}) cut after its tags"
        # only the last game can be cut (a read is cut at its end); a game in progress ("*") may lack the marker
        if last and tokens[-1] not in _TERMINATION and tags.get("Result", "*") != "*":
            return f"game {games} ({who}) cut in its moves"
        return None

    in_comment = False  # inside a brace comment that spans lines
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("%") and not in_comment:
            continue  # an escaped line (PGN standard §6)
        if stripped.startswith("[") and not in_comment:
            if in_moves:
                if (why := finished(last=False)) is not None:
                    return why
                tags, moves, in_moves = {}, [], False
            if not tags:
                games += 1
                if games > MAX_GAMES:
                    return f"more than {MAX_GAMES} games: refused"
            match = _TAG.match(line)
            if match is None:
                return f"game {games} cut in its tags"
            tags[match.group(1)] = match.group(2)
        elif stripped:
            if not tags:
                return "text before the first game's tags"
            in_moves = True
            moves.append(stripped)
            for char in stripped:
                if in_comment:
                    in_comment = char != "}"
                elif char == "{":
                    in_comment = True
                elif char == ";":
                    break
    if games == 0:
        return None  # the reader says what is wrong with it
    return finished(last=True)
