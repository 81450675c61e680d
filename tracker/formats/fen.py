"""Whether a board's ``fen`` is a chess position: python-chess reads it (the core parses no FEN)."""

from __future__ import annotations

from functools import cache

# python-chess is imported at the first position read, not with the server: building its attack tables is a
# tenth of a `tracker up` start, and most servers never see a board.


@cache
def _impossible() -> int:
    """What makes a position impossible, not just sloppy: castling rights and an en passant square that do not
    fit are kept (a feed's hand-written FEN often has them), as python-chess itself plays on from them."""
    import chess

    return (
        chess.STATUS_NO_WHITE_KING
        | chess.STATUS_NO_BLACK_KING
        | chess.STATUS_TOO_MANY_KINGS
        | chess.STATUS_TOO_MANY_WHITE_PAWNS
        | chess.STATUS_TOO_MANY_BLACK_PAWNS
        | chess.STATUS_PAWNS_ON_BACKRANK
        | chess.STATUS_TOO_MANY_WHITE_PIECES
        | chess.STATUS_TOO_MANY_BLACK_PIECES
        | chess.STATUS_OPPOSITE_CHECK
    )


def fen_problem(fen: str) -> str | None:
    """What is wrong with ``fen`` as a position, in a few words; ``None`` when it is one (or is empty)."""
    if not fen:
        return None
    import chess

    try:
        board = chess.Board(fen)
    except ValueError as exc:
        return str(exc).split(": '", 1)[0][:120]  # not the text itself: it came from the client
    status = board.status() & _impossible()
    if status:
        names = [flag.name for flag in chess.Status if flag in status and flag.name]
        return ", ".join(name.lower().replace("_", " ") for name in names)
    return None
