"""What the boards say about the tournament: the standings "if the games ended now", the live chances,
and the stakes sentences of the games in progress.  Estimates, always kept apart from the official values.

How this works
--------------

* :func:`as_it_stands` plays each game in progress to its most likely
  result (:func:`tracker.core.boards.likely_result` of its board) on a
  scenario copy of the crosstable (:meth:`Tournament.scenario`) and ranks
  it under the tournament's whole tie-break order, Koya's qualifying set
  included; it says what differs from the official standings (rank moves,
  who would reach or fall below the 50% line).  A game whose board has no
  evaluation stays unplayed.  The official state is never changed.
* :func:`live_chances` is :func:`tracker.core.projection.chances.chances`
  with each game in progress drawn from its board's win/draw/loss and the
  games still to come from the ratings, seeded by the official seq: a game
  whose board is certain gives the chances of its result recorded.
* :func:`board_stakes` words where a board stands against the stakes of
  its game: "Caruana is winning on board 1 (+3.1): if it holds,
  Vachier-Lagrave can no longer finish 1st".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from tracker.core.apply import step
from tracker.core.boards import Board, BoardSet, GameKey, eval_text
from tracker.core.crosstable import Tournament
from tracker.core.errors import EventRejected
from tracker.core.events import GameResult, ResultRecorded
from tracker.core.phrases import Said, phrase, render
from tracker.core.projection.chances import RUNS, Chances, chances
from tracker.core.projection.stakes import Stakes, surname
from tracker.core.standings import Standings, standings
from tracker.core.worth.rating import RatingChange, rating_change

#: A board's win share (per mille) from which its side is "winning" rather than "better".
WINNING: Final = 600


@dataclass(frozen=True, slots=True)
class AsItStands:
    """The standings if every game in progress ended with its most likely result, after official ``seq``.

    ``results`` are the results assumed, ``(round, white, black, result)``; ``moves`` the players whose
    rank differs from the official one, ``(start no, official rank, rank as it stands)``; ``reached`` /
    ``fell`` those who would be on / below the 50% line who officially are not / are.
    """

    seq: int
    results: tuple[tuple[int, int, int, GameResult], ...]
    standings: Standings
    moves: tuple[tuple[int, int, int], ...]
    reached: tuple[int, ...]
    fell: tuple[int, ...]
    #: the rating changes (FIDE B.02) and performances of the players of the assumed results, as they would
    #: then be (start-list order); every other player's are the official ones
    ratings: tuple[RatingChange, ...] = ()


def as_it_stands(t: Tournament, boards: BoardSet, official: Standings | None = None) -> AsItStands:
    """The standings "if the games ended now" (see the module docstring); ``official`` is ``standings(t)``.

    Raises nothing for boards :func:`~tracker.core.boards.check_board` accepted and not since ended;
    a board whose game can no longer be played is skipped.
    """
    official = official if official is not None else standings(t)
    scenario = t.scenario()
    results: list[tuple[int, int, int, GameResult]] = []
    for board in boards.in_order():
        if board.likely is None:
            continue
        r, white, black = board.key
        event = ResultRecorded(f"live/{r}/{white}/{black}", t.id, r, white, black, board.likely)
        try:
            step(scenario, event, explain=False)
        except EventRejected:  # a board its game outlived: skipped
            continue
        results.append((r, white, black, board.likely))
    live = standings(scenario)
    before = {row.start_no: row for row in official.rows}
    moves = tuple(
        (row.start_no, before[row.start_no].rank, row.rank)
        for row in live.rows
        if row.start_no in before and before[row.start_no].rank != row.rank
    )
    reached = tuple(sorted(r.start_no for r in live.rows if r.qualified and not before[r.start_no].qualified))
    fell = tuple(sorted(r.start_no for r in live.rows if not r.qualified and before[r.start_no].qualified))
    playing = sorted({scenario.index[no] for _, white, black, _ in results for no in (white, black)})
    ratings = tuple(rating_change(scenario, i) for i in playing)
    return AsItStands(t.seq, tuple(results), live, moves, reached, fell, ratings)


def board_estimates(boards: BoardSet) -> dict[tuple[int, int], tuple[float, float, float]]:
    """Each game in progress with an estimate, by (white, black): its win/draw/loss as probabilities."""
    return {
        (board.event.white, board.event.black): (board.wdl[0] / 1000, board.wdl[1] / 1000, board.wdl[2] / 1000)
        for board in boards.boards.values()
        if board.wdl is not None
    }


def live_chances(t: Tournament, boards: BoardSet, *, runs: int = RUNS) -> Chances:
    """The chances with each game in progress drawn from its board (see the module docstring)."""
    return chances(t, seed=t.seq, runs=runs, boards=board_estimates(boards))


@dataclass(frozen=True, slots=True)
class BoardStake:
    """One game in progress and what it decides if it ends as its board says: ``text`` in plain words."""

    round: int
    white: int
    black: int
    board: int
    result: GameResult
    text: str
    said: Said


HOLDS: Final = phrase("board.holds", "{where:phrase}: if it holds, {stakes:phrases}")
WITH_EVAL: Final = phrase("board.eval", "{where:phrase} ({eval})")
LEVEL_ON_BOARD: Final = phrase("board.level", "Board {board} is level")
LEVEL_GAME: Final = phrase("board.level.game", "{white:player}–{black:player} is level")
WINNING_ON_BOARD: Final = phrase("board.winning", "{side:player} is winning on board {board}")
WINNING_GAME: Final = phrase("board.winning.game", "{side:player} is winning against {rival:player}")
BETTER_ON_BOARD: Final = phrase("board.better", "{side:player} is better on board {board}")
BETTER_GAME: Final = phrase("board.better.game", "{side:player} is better against {rival:player}")


def board_stakes(k: Stakes, boards: BoardSet, names: dict[int, str]) -> tuple[BoardStake, ...]:
    """Per game in progress whose most likely result decides something (``k``'s stakes of that outcome).

    ``names`` are the players' names by start number.  A board of a game ``k`` does not list (its stakes
    were computed before the board's game was paired, or the game decides nothing) says nothing.
    """
    by_game: dict[GameKey, dict[GameResult, list[Said]]] = {}
    for game in k.games:
        if game.round is None:
            continue
        by_game[(game.round, game.white, game.black)] = {o.result: [s.said for s in o.stakes] for o in game.outcomes}

    def short(start_no: int) -> str:
        return surname(names.get(start_no, str(start_no)))

    found = []
    for board in boards.in_order():
        likely = board.likely
        stakes = None if likely is None else by_game.get(board.key, {}).get(likely)
        if likely is None or not stakes:
            continue
        e = board.event
        said = HOLDS(where=where(board), stakes=stakes)
        found.append(BoardStake(e.round, e.white, e.black, board.number, likely, render(said, short), said))
    return tuple(found)


def where(board: Board) -> Said:
    """Where a board stands: "Caruana is winning on board 1 (+3.1)", "Board 2 is level (0.0)"."""
    e = board.event
    value = eval_text(e.evaluation)
    if board.likely in ("1-0", "0-1"):
        wdl = board.wdl or (0, 1000, 0)
        ahead = board.likely == "1-0"
        side, rival = (e.white, e.black) if ahead else (e.black, e.white)
        winning = (wdl[0] if ahead else wdl[2]) >= WINNING
        on_board, in_game = (WINNING_ON_BOARD, WINNING_GAME) if winning else (BETTER_ON_BOARD, BETTER_GAME)
        said = on_board(side=side, board=board.number) if board.number else in_game(side=side, rival=rival)
    else:
        said = LEVEL_ON_BOARD(board=board.number) if board.number else LEVEL_GAME(white=e.white, black=e.black)
    return WITH_EVAL(where=said, eval=value) if value else said
