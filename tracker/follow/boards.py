"""The games in progress of a followed PGN, as ``board_updated`` events: at most one per game per interval.

How this works
--------------

Each poll hands :meth:`BoardFeed.boards` the source's games in progress
(:func:`tracker.formats.progress.games_in_progress`).  A game whose players
match the start list becomes a board; it is sent when its position or its
evaluation changed since the last board sent for it, and at most once per
``interval`` seconds per game.  The evaluation is the source's own
``[%eval]`` when it was written for the current position; otherwise the
engine's (``--engine``), once it has analysed that position, or else the
source's last one.  A game that finished (or left the source) is forgotten.
A board unchanged for ``refresh`` seconds is sent again (the same id): the
tracker marks a board stale when its source has not sent it for its stale
time (``tracker up --stale-after``, 120 s by default), and a long think is
not a dead source.  When ``tracker follow`` stops, :meth:`BoardFeed.ended`
gives each game's last board once more with ``ended`` set (id ``…/ended``):
the tracker shows it stale at once rather than live.
Ids are ``{tournament}/board/r{round}/{white}-{black}/{ply}-{digest}``: the
same board gets the same id (a retry changes nothing).
"""

from __future__ import annotations

import hashlib

import msgspec

from tracker.core.boards import GameKey
from tracker.core.events import BoardUpdated, EvalSource, Evaluation
from tracker.follow.engine import Engine
from tracker.follow.names import StartList
from tracker.formats.progress import Progress

#: Seconds between two boards of one game, unless told otherwise (``--board-interval``).
BOARD_INTERVAL = 2.0
#: Seconds after which an unchanged board is sent again, so that the tracker knows the game still stands there.
BOARD_REFRESH = 30.0


class BoardFeed:
    """Boards of one tournament's games in progress (see the module docstring)."""

    def __init__(
        self,
        tournament: str,
        *,
        interval: float = BOARD_INTERVAL,
        engine: Engine | None = None,
        refresh: float = BOARD_REFRESH,
    ) -> None:
        self.tournament = tournament
        self.interval = interval
        self.refresh = refresh
        self.engine = engine
        self._sent: dict[GameKey, tuple[float, tuple[object, ...]]] = {}  # game → (when, what was sent)
        self._last: dict[GameKey, BoardUpdated] = {}  # game → the board sent last

    def ended(self) -> list[BoardUpdated]:
        """Each game's last board again, ``ended``: the follower stops (then it forgets them)."""
        out = [
            msgspec.structs.replace(board, id=f"{board.id[:122]}/ended", ended=True) for board in self._last.values()
        ]
        self._last.clear()
        self._sent.clear()
        return out

    def boards(self, games: list[Progress], start: StartList, now: float) -> list[BoardUpdated]:
        """The boards to send now (``now``: a monotonic clock in seconds)."""
        out: list[BoardUpdated] = []
        seen: set[GameKey] = set()
        for game in games:
            white, black = start.match(game.white), start.match(game.black)
            if white is None or black is None:
                continue
            key = (game.round, white, black)
            seen.add(key)
            evaluation, source = self._evaluation(key, game)
            what = (game.ply, game.fen, evaluation, game.white_clock, game.black_clock)
            last = self._sent.get(key)
            if last is not None and (
                (last[1] == what and now - last[0] < self.refresh) or now - last[0] < self.interval
            ):
                continue
            self._sent[key] = (now, what)
            digest = hashlib.blake2b(repr(what).encode(), digest_size=4).hexdigest()
            out.append(
                board := BoardUpdated(
                    id=f"{self.tournament}/board/r{game.round}/{white}-{black}/{game.ply}-{digest}",
                    tournament=self.tournament,
                    round=game.round,
                    white=white,
                    black=black,
                    ply=min(game.ply, 2000),
                    last_move=game.last_move[:12],
                    fen=game.fen[:100],
                    white_clock=_seconds(game.white_clock),
                    black_clock=_seconds(game.black_clock),
                    evaluation=evaluation,
                    source=source,
                )
            )
            self._last[key] = board
        for key in [k for k in self._sent if k not in seen]:
            del self._sent[key]
            self._last.pop(key, None)
            if self.engine is not None:
                self.engine.forget(key)
        return out

    def _evaluation(self, key: GameKey, game: Progress) -> tuple[Evaluation | None, EvalSource | None]:
        own = None if game.eval_ply is None else Evaluation(cp=_clamp(game.cp), mate=game.mate)
        if own is not None and game.eval_ply == game.ply:
            return own, EvalSource(kind="feed")
        if self.engine is not None and not self.engine.dead:
            found = self.engine.analysis(key, game.fen)
            if found is not None:
                return found.evaluation, found.source
            self.engine.want(key, game.fen)
        return (own, EvalSource(kind="feed")) if own is not None else (None, None)


def _seconds(value: float | None) -> float | None:
    return None if value is None else max(0.0, min(value, 86_400.0))


def _clamp(cp: int | None) -> int | None:
    return None if cp is None else max(-100_000, min(cp, 100_000))
