"""Boards: the games being played, as their sources report them; never part of the crosstable.

How this works
--------------

A :class:`~tracker.core.events.BoardUpdated` says where one game stands:
its position and, when known, an evaluation.  :class:`BoardSet` keeps the
newest board of each game of one tournament: a board with fewer half-moves
than the one kept is old news and changes nothing, as does a re-delivered
id.  A board is accepted only for a game that may still be played
(:func:`check_board`: the same pairing rules as a result, and no result
yet); a result for the game ends its board (:meth:`BoardSet.end`).

Each board's win/draw/loss estimate (per mille, from White's side) is the
source's own when it gives one, else it comes from the evaluation through
one documented model (:func:`wdl_from_eval`); its most likely result is the
largest of the three, a draw when two are equal.  :meth:`BoardSet.put` says
whether a board changed only its position (``moved``) or also its most
likely result or its estimate, by at least :data:`MOVES_AN_ESTIMATE` per
mille from the last one that counted (``assessed``): only the latter moves
what is derived from the boards (:mod:`tracker.core.live`).

**Boards age.**  The core has no clock: the shell that keeps a board passes
the time it received it (``now``, any monotonic seconds), and a re-delivery
of the board kept (same id: a source saying the game still stands there)
refreshes that time.  A board is *stale* (:func:`is_stale`) when it was not
refreshed for ``after`` seconds, when its source said it stopped following
the game (``ended``), or when its receive time is unknown (a board restored
after a restart, until its source sends it again): a stale board is the
position as last known, not a game known to be live.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Final, Literal

from tracker.core.checks import check_new_game
from tracker.core.crosstable import Tournament
from tracker.core.errors import EventRejected
from tracker.core.events import BoardUpdated, Evaluation, GameResult, ResultRecorded
from tracker.core.phrases import phrase

#: (round, white, black): a game, by start numbers.
GameKey = tuple[int, int, int]
WDL = tuple[int, int, int]
Change = Literal["none", "moved", "assessed"]

#: The eval → WDL model (:func:`wdl_from_eval`): the centipawns at which White's win chance is 50%, and
#: the logistic scale.  After Stockfish's win-rate model, which normalises +1.00 to a 50% win; fixed, not
#: fitted to the move number or the material.
WIN_AT_CP: Final = 100.0
SCALE_CP: Final = 50.0


def wdl_from_eval(evaluation: Evaluation) -> WDL | None:
    """The win/draw/loss estimate (per mille, White's side) of an evaluation; ``None`` when it has none.

    The evaluation's own ``wdl`` when given; a mate is certain (1000/0/0 or 0/0/1000); centipawns ``x``
    give ``win = 1 / (1 + e^((WIN_AT_CP − x) / SCALE_CP))``, ``loss`` the same for ``−x``, the draw the
    rest: about 12/76/12% at 0.00, 50/48/2% at +1.00, 88/12/0% at +2.00.
    """
    if evaluation.wdl is not None:
        return evaluation.wdl
    if evaluation.mate is not None:
        return (1000, 0, 0) if evaluation.mate > 0 else (0, 0, 1000)
    if evaluation.cp is None:
        return None
    x = float(evaluation.cp)
    win = _logistic((x - WIN_AT_CP) / SCALE_CP)
    loss = _logistic((-x - WIN_AT_CP) / SCALE_CP)
    w, lo = round(1000 * win), round(1000 * loss)
    return (w, 1000 - w - lo, lo)


def _logistic(z: float) -> float:
    if z < -60:
        return 0.0
    if z > 60:
        return 1.0
    return 1.0 / (1.0 + math.exp(-z))


def likely_result(wdl: WDL) -> GameResult:
    """The most likely result of an estimate: the largest share; a draw when two shares are equal."""
    win, draw, loss = wdl
    if win > draw and win > loss:
        return "1-0"
    if loss > draw and loss > win:
        return "0-1"
    return "1/2-1/2"


def eval_text(evaluation: Evaluation | None) -> str:
    """The evaluation as broadcasts write it: ``+3.1``, ``−0.4``, ``0.0``, ``#3``, ``#−2``; empty when unknown."""
    if evaluation is None:
        return ""
    if evaluation.mate is not None:
        return f"#{evaluation.mate}" if evaluation.mate >= 0 else f"#−{-evaluation.mate}"
    if evaluation.cp is None:
        return ""
    pawns = round(evaluation.cp / 100, 1)
    if pawns == 0:
        return "0.0"
    return f"+{pawns:.1f}" if pawns > 0 else f"−{-pawns:.1f}"


#: How far (per mille, any of the three shares) an estimate must move from the last one that counted
#: before it counts again: evaluations wobble by a few centipawns from move to move.
MOVES_AN_ESTIMATE: Final = 25


@dataclass(frozen=True, slots=True)
class Board:
    """One game's newest board: the event, its board number in the round (0 when the schedule does not
    say), its estimate (``None`` without an evaluation) and the most likely result (``None`` likewise).
    ``counted`` is the estimate as of the last change that counted (see :meth:`BoardSet.put`); ``received``
    when the board was last received or refreshed, in the shell's monotonic seconds (``None``: unknown, a
    board restored after a restart)."""

    event: BoardUpdated
    number: int
    wdl: WDL | None
    likely: GameResult | None
    counted: WDL | None = None
    received: float | None = None

    @property
    def key(self) -> GameKey:
        return (self.event.round, self.event.white, self.event.black)


BOARD_ELSEWHERE: Final = phrase("rejected.board_elsewhere", "a board for tournament {tournament} was sent to {other}")
GAME_OVER: Final = phrase(
    "rejected.game_over",
    "the game {white}–{black} of round {round} already has a result: "
    "its board is over (a board is refused once the game is decided)",
)


def check_board(t: Tournament, board: BoardUpdated) -> None:
    """Whether ``board`` describes a game of ``t`` that may still be played; changes nothing.

    Raises :class:`EventRejected`: ``game-finished`` when the game already has a result, and the
    pairing rules of a result otherwise (unknown player, a player with another game or a bye in the
    round, a pair that has met, a game outside the schedule).
    """
    if board.tournament != t.id:
        raise EventRejected(BOARD_ELSEWHERE(tournament=board.tournament, other=t.id), code="unknown-tournament")
    w, b = t.player(board.white), t.player(board.black)
    entry = t.entries[w].get(board.round)
    if entry is not None and entry.opponent == b:
        raise EventRejected(GAME_OVER(white=board.white, black=board.black, round=board.round), code="game-finished")
    check_new_game(t, ResultRecorded(board.id, board.tournament, board.round, board.white, board.black, "1-0"))


def is_stale(board: Board, now: float, after: float) -> bool:
    """Whether ``board`` is no longer known to be live at ``now``: see the module docstring."""
    return board.event.ended or board.received is None or now - board.received >= after


def board_age(board: Board, now: float) -> float | None:
    """Seconds since ``board`` was received or refreshed (``None``: unknown, restored after a restart)."""
    return None if board.received is None else max(0.0, now - board.received)


def _moved(before: WDL | None, now: WDL | None) -> bool:
    """Whether an estimate moved enough to count (or appeared, or went)."""
    if before is None or now is None:
        return before != now
    return max(abs(a - b) for a, b in zip(before, now, strict=True)) >= MOVES_AN_ESTIMATE


def board_number(t: Tournament, round_: int, white: int, black: int) -> int:
    """The game's board in its round: its place in the schedule's list of that round (0 without one)."""
    schedule = t.opened.schedule
    if schedule is None or round_ > len(schedule):
        return 0
    for number, pair in enumerate(schedule[round_ - 1], start=1):
        if pair == (white, black):
            return number
    return 0


@dataclass(slots=True)
class BoardSet:
    """The newest board of each game of one tournament (see the module docstring)."""

    boards: dict[GameKey, Board] = field(default_factory=dict)

    def put(self, t: Tournament, event: BoardUpdated, now: float | None = None) -> Change:
        """Keep ``event`` as its game's board (after :func:`check_board`), received at ``now``; say what changed.

        ``none`` for a board with fewer half-moves than the one kept; a re-delivered id refreshes the kept
        board's receive time (``moved``: its age starts again; ``none`` for an ``ended`` board or no ``now``).
        ``now`` ``None`` (a board restored after a restart) keeps the board stale until it is received again.
        """
        key = (event.round, event.white, event.black)
        old = self.boards.get(key)
        if old is not None and old.event.id == event.id:
            if now is None or old.event.ended:
                return "none"
            self.boards[key] = replace(old, received=now)
            return "moved"  # its age starts again (a stale one is live again)
        if old is not None and event.ply < old.event.ply:
            return "none"
        wdl = None if event.evaluation is None else wdl_from_eval(event.evaluation)
        if wdl is None and old is not None and event.ply == old.event.ply:
            wdl = old.wdl  # the same position again, without its evaluation: keep the one known
        likely = None if wdl is None else likely_result(wdl)
        counted = None if old is None else old.counted
        if old is None or old.likely != likely or _moved(counted, wdl):
            change: Change = "assessed" if wdl is not None or old is not None else "moved"
            counted = wdl
        else:
            change = "moved"
        self.boards[key] = Board(event, board_number(t, *key), wdl, likely, counted, now)
        return change

    def next_stale(self, now: float, after: float) -> float | None:
        """The time the next board still live goes stale by age (``None``: every board is stale already)."""
        times = [
            b.received + after for b in self.boards.values() if not is_stale(b, now, after) and b.received is not None
        ]
        return min(times, default=None)

    def live(self, now: float, after: float) -> BoardSet:
        """The boards still live at ``now`` (none stale): what the estimates count.

        A stale board is shown as it was last known, never counted as a game in progress: its source may
        be gone (a follower stopped, a restart) and its position is no evidence of the game's result.
        """
        if not any(is_stale(b, now, after) for b in self.boards.values()):
            return self
        return BoardSet({key: b for key, b in self.boards.items() if not is_stale(b, now, after)})

    def end(self, round_: int, white: int, black: int) -> bool:
        """The game got a result (or was voided): forget its board; whether there was one."""
        return self.boards.pop((round_, white, black), None) is not None

    def prune(self, t: Tournament) -> list[GameKey]:
        """Forget the boards of games that are no longer to be played (a result came by another path)."""
        gone = []
        for key in list(self.boards):
            r, white, black = key
            w, b = t.index.get(white), t.index.get(black)
            if w is None or b is None or r in t.entries[w] or r in t.entries[b]:
                del self.boards[key]
                gone.append(key)
        return gone

    def in_order(self) -> list[Board]:
        """The boards by round, board number, then start numbers."""
        return sorted(self.boards.values(), key=lambda b: (b.event.round, b.number or 1 << 20, b.key))
