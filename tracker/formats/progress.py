"""The games in progress of a broadcast PGN: where each stands, as the source writes it.

How this works
--------------

A live broadcast PGN holds every game of the event; a game still being
played has the result ``*``.  :func:`games_in_progress` reads the tags of
every game (cheap, as :mod:`tracker.formats.pgn` does) and the moves of the
unfinished ones only, with python-chess: the half-moves played, the last
move in SAN, the position (FEN), each side's clock from the last ``[%clk]``
after one of its moves, and the evaluation of the last move that carries an
``[%eval]`` (centipawns or mate, from White's side) together with the ply it
was given at.  Names are returned as written: matching them to the start
list is the follower's job.  Text in, values out: no I/O.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Final

import chess
import chess.pgn

from tracker.formats.pgn import round_of

#: Games read at most from one source (a broadcast of one event has a few dozen).
MAX_GAMES: Final = 2000


@dataclass(frozen=True, slots=True)
class Progress:
    """One game in progress: its round, the players' names, where it stands.

    ``eval_ply`` is the ply of the move whose ``[%eval]`` gave ``cp``/``mate``
    (``None``: no evaluation in the source); the evaluation is older than the
    position when ``eval_ply < ply``.
    """

    round: int
    white: str
    black: str
    ply: int
    last_move: str
    fen: str
    white_clock: float | None
    black_clock: float | None
    cp: int | None
    mate: int | None
    eval_ply: int | None


def games_in_progress(text: str) -> list[Progress]:
    """Every game of ``text`` whose result is ``*``, with a numeric round and both names; the rest is skipped.

    A game whose moves python-chess cannot read (an illegal move) is read as far as it is legal.
    Raises nothing for any text.
    """
    handle = io.StringIO(text.removeprefix("\ufeff"))
    found: list[Progress] = []
    for _ in range(MAX_GAMES):
        offset = handle.tell()
        headers = chess.pgn.read_headers(handle)
        if headers is None:
            break
        if headers.get("Result", "*") != "*":
            continue
        r = round_of(headers.get("Round", ""))
        white, black = headers.get("White", "").strip(), headers.get("Black", "").strip()
        if r is None or not white or not black:
            continue
        after = handle.tell()
        handle.seek(offset)
        game = chess.pgn.read_game(handle)
        handle.seek(after)
        if game is None:
            continue
        found.append(_progress(r, white, black, game))
    return found


def _progress(r: int, white: str, black: str, game: chess.pgn.Game) -> Progress:
    node: chess.pgn.GameNode = game
    clocks: dict[bool, float | None] = {chess.WHITE: None, chess.BLACK: None}
    cp: int | None = None
    mate: int | None = None
    eval_ply: int | None = None
    last_move = ""
    for child in game.mainline():
        mover = not child.turn()  # the side that just moved
        clock = child.clock()
        if clock is not None:
            clocks[mover] = clock
        score = child.eval()
        if score is not None:
            white_pov = score.white()
            cp, mate = white_pov.score(), white_pov.mate()
            eval_ply = child.ply()
        node = child
    if node is not game:
        assert isinstance(node, chess.pgn.ChildNode)
        last_move = node.san()
    board = node.board()
    return Progress(
        round=r,
        white=white,
        black=black,
        ply=node.ply(),
        last_move=last_move,
        fen=board.fen(),
        white_clock=clocks[chess.WHITE],
        black_clock=clocks[chess.BLACK],
        cp=cp,
        mate=mate,
        eval_ply=eval_ply,
    )
