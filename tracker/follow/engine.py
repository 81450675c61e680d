"""A local UCI engine for the boards a source sends without an evaluation (``tracker follow --engine PATH``).

How this works
--------------

One engine process (python-chess's ``chess.engine``, e.g. Debian's
Stockfish), started on first use.  :meth:`Engine.want` hands it a game's
newest position; a queue keeps only the newest position of each game, so a
game that moved on while the engine was busy is analysed where it is now,
never where it was.  Each analysis is bounded (``nodes``, or ``seconds``),
and the engine is asked for its own win/draw/loss (``UCI_ShowWDL``) when it
offers one; without it the follower's board has the score alone and the
tracker applies its documented model.  An engine that cannot start or that
dies is one warning: the follower goes on with the results and the feed's
own evaluations, without the engine.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, Final

import chess
import chess.engine

from tracker.core.boards import GameKey
from tracker.core.events import EvalSource, Evaluation

log = logging.getLogger(__name__)

#: Nodes per position unless told otherwise: about a tenth of a second for Stockfish on one core.
DEFAULT_NODES: Final = 150_000


@dataclass(frozen=True, slots=True)
class Analysis:
    """The engine's word on one position of one game: its evaluation and where it comes from."""

    fen: str
    evaluation: Evaluation
    source: EvalSource


class Engine:
    """One UCI engine analysing the newest position of each game (see the module docstring)."""

    def __init__(self, path: str, *, nodes: int | None = DEFAULT_NODES, seconds: float | None = None) -> None:
        self.path = path
        self.limit = chess.engine.Limit(nodes=nodes if seconds is None else None, time=seconds)
        self.results: dict[GameKey, Analysis] = {}
        self.dead = False
        self._queue: OrderedDict[GameKey, str] = OrderedDict()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._engine: Any = None
        self._transport: Any = None
        self._name = path

    def want(self, key: GameKey, fen: str) -> None:
        """Analyse ``fen`` for game ``key`` (replacing a position of that game still waiting)."""
        if self.dead:
            return
        known = self.results.get(key)
        if known is not None and known.fen == fen:
            return
        self._queue.pop(key, None)
        self._queue[key] = fen
        self._wake.set()
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="engine")

    @property
    def pid(self) -> int | None:
        """The engine process's id while it runs."""
        return None if self._transport is None or self.dead else int(self._transport.get_pid())

    def forget(self, key: GameKey) -> None:
        """The game ended: nothing more to analyse for it."""
        self._queue.pop(key, None)
        self.results.pop(key, None)

    def analysis(self, key: GameKey, fen: str) -> Analysis | None:
        """The engine's analysis of ``fen`` for game ``key``, when it has finished it."""
        found = self.results.get(key)
        return found if found is not None and found.fen == fen else None

    async def _run(self) -> None:
        try:
            await self._start()
            exited = self._engine.returncode  # a future python-chess resolves when the process exits
            while True:
                while not self._queue:
                    self._wake.clear()
                    waiting = asyncio.ensure_future(self._wake.wait())
                    await asyncio.wait({waiting, exited}, return_when=asyncio.FIRST_COMPLETED)
                    waiting.cancel()
                    if exited.done():  # died while idle: say so now, not at the next position
                        raise chess.engine.EngineTerminatedError(f"engine process died (exit code {exited.result()})")
                key, fen = self._queue.popitem(last=False)
                self.results[key] = await self._analyse(fen)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.dead = True
            self._queue.clear()
            log.warning("follow: the engine %s stopped (%s); boards go on with the feed's evaluations", self.path, exc)

    async def _start(self) -> None:
        self._transport, engine = await chess.engine.popen_uci(self.path)
        self._engine = engine
        self._name = engine.id.get("name", self.path)
        if "UCI_ShowWDL" in engine.options:
            await engine.configure({"UCI_ShowWDL": True})
        log.info("follow: engine %s ready (%s per position)", self._name, self._limit_words())

    async def _analyse(self, fen: str) -> Analysis:
        info = await self._engine.analyse(chess.Board(fen), self.limit)
        score = info["score"].white()
        wdl = info.get("wdl")
        per_mille = None
        if wdl is not None:
            w = wdl.white()
            per_mille = (w.wins, w.draws, w.losses)
        evaluation = Evaluation(cp=score.score(), mate=score.mate(), wdl=per_mille)
        return Analysis(fen, evaluation, EvalSource(kind="engine", engine=self._name[:64], depth=info.get("depth")))

    def _limit_words(self) -> str:
        return f"{self.limit.time:g} s" if self.limit.time else f"{self.limit.nodes} nodes"

    async def aclose(self) -> None:
        """Stop the analysis and the engine process."""
        if self._task is not None:
            self._task.cancel()
            with suppress(asyncio.CancelledError):
                await self._task
        if self._engine is not None:
            with suppress(Exception):
                await asyncio.wait_for(self._engine.quit(), 5)
