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
tracker applies its documented model.  An engine that cannot start, that
does not answer ``uci`` within ``start_timeout`` seconds, that dies, or that
hangs (no answer to a search within ``analysis_timeout`` seconds) is one
warning saying which: the process is killed and the follower goes on with
the results and the feed's own evaluations, without the engine.  Closing
never leaves a traceback: a stuck engine is killed, not waited for.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Coroutine
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import chess
import chess.engine

from tracker.core.boards import GameKey
from tracker.core.events import EvalSource, Evaluation

log = logging.getLogger(__name__)

_T = TypeVar("_T")

#: Nodes per position unless told otherwise: about a tenth of a second for Stockfish on one core.
DEFAULT_NODES: Final = 150_000
START_TIMEOUT: Final = 10.0  # seconds for the engine to answer ``uci`` (and ``isready``)
ANALYSIS_TIMEOUT: Final = 30.0  # seconds for one bounded search's answer before the engine counts as hung


@dataclass(frozen=True, slots=True)
class Analysis:
    """The engine's word on one position of one game: its evaluation and where it comes from."""

    fen: str
    evaluation: Evaluation
    source: EvalSource


class Engine:
    """One UCI engine analysing the newest position of each game (see the module docstring)."""

    def __init__(
        self,
        path: str,
        *,
        nodes: int | None = DEFAULT_NODES,
        seconds: float | None = None,
        start_timeout: float = START_TIMEOUT,
        analysis_timeout: float = ANALYSIS_TIMEOUT,
    ) -> None:
        self.path = path
        self.start_timeout = start_timeout
        self.analysis_timeout = analysis_timeout + (seconds or 0.0)
        self.failure: str | None = None  # why the engine stopped, as logged (once)
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
                found = await self._bounded(self._analyse(fen), self.analysis_timeout)
                if found is None:
                    raise _Stopped(f"hung: no answer to a search within {self.analysis_timeout:g} s")
                self.results[key] = found
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._fail(str(exc) or type(exc).__name__)

    async def _bounded(self, work: Coroutine[Any, Any, _T], seconds: float) -> _T | None:
        """``work``'s answer, or ``None`` when the engine gave none within ``seconds`` (its process is then killed).

        A stuck command is never cancelled (python-chess would then fail in
        its connection-lost callback at shutdown): the process is killed
        and the command ends with the engine's termination.
        """
        task = asyncio.ensure_future(work)
        task.add_done_callback(_retrieved)
        done, _ = await asyncio.wait({task}, timeout=seconds)
        if task in done:
            return task.result()
        self._kill()
        await asyncio.wait({task}, timeout=2.0)
        return None

    @staticmethod
    async def _initialized(engine: chess.engine.UciProtocol) -> bool:
        await engine.initialize()
        return True

    def _fail(self, why: str) -> None:
        """Report the engine's failure once, kill its process, go on without it."""
        self.dead = True
        self._queue.clear()
        if self.failure is None:
            self.failure = why
            log.warning("follow: the engine %s stopped (%s); boards go on with the feed's evaluations", self.path, why)
        self._kill()

    def _kill(self) -> None:
        if self._transport is not None:
            with suppress(ProcessLookupError, OSError):
                self._transport.kill()

    async def _start(self) -> None:
        try:
            self._transport, engine = await chess.engine.UciProtocol.popen(self.path)
        except (FileNotFoundError, PermissionError) as exc:
            raise _Stopped(f"cannot start it: {exc.strerror or exc}") from None
        self._engine = engine
        if not await self._bounded(self._initialized(engine), self.start_timeout):
            raise _Stopped(f"no answer to uci within {self.start_timeout:g} s")
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
        """Stop the analysis and the engine process (killed when it does not quit within a second or two)."""
        if self._task is not None:
            self._task.cancel()
            with suppress(asyncio.CancelledError):
                await self._task
        if self._engine is not None and not self.dead:
            with suppress(Exception):  # a stuck or dead engine: killed, nothing to report at shutdown
                await self._bounded(self._engine.quit(), 2.0)
        self._kill()
        if self._engine is not None:  # reaped before the loop closes (else asyncio complains at exit)
            await asyncio.wait({self._engine.returncode}, timeout=2.0)
        if self._transport is not None:
            self._transport.close()
        self.dead = True


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Mark a command's outcome as seen: an engine killed mid-command is reported once, by :meth:`Engine._fail`."""
    if not task.cancelled():
        task.exception()


class _Stopped(Exception):
    """Why the engine is given up (the warning's words)."""
