"""Arbiter projections in a worker process, so they never hold the server's GIL.

An exact projection of ten open games takes a second or more of pure
Python.  Run in a thread it shares the interpreter lock with the event loop,
and every ack and update waits its turn meanwhile; in a process of its own it
costs the server only the pickling of the tournament (a few kB).

:class:`Projector` owns one spawned worker process, started on first use.
The tournament is pickled at once, in the caller's thread, so the live state
may change the moment :meth:`Projector.project` returns control.
:class:`Projections` decides when to project and who receives it.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import pickle
from collections.abc import Awaitable, Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from websockets.asyncio.server import ServerConnection

from tracker.core.crosstable import Tournament
from tracker.core.projection import Projection, project
from tracker.protocol import projection_message

log = logging.getLogger(__name__)


def _project_pickled(state: bytes) -> Projection:
    """Runs in the worker process."""
    tournament: Tournament = pickle.loads(state)
    return project(tournament)


class Projector:
    """Projections computed one at a time in a spawned worker process."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None

    async def project(self, state: Tournament) -> Projection | None:
        """The projection of ``state``, or ``None`` when the worker process died (a new one serves the next)."""
        payload = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, _project_pickled, payload)
        except BrokenProcessPool:
            log.warning("the projection process died; starting another for the next projection")
            self.close()
            return None

    def close(self) -> None:
        """Stop the worker process (a projection under way is abandoned)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


class Projections:
    """Arbiters' projections, debounced, one task per tournament, off the hot path.

    :meth:`updated` is called after every published update; when an arbiter
    watches the tournament, a projection is computed ``delay`` seconds later
    (results arriving meanwhile share it) and sent to every arbiter of it.
    """

    def __init__(
        self,
        state: Callable[[str], Tournament | None],
        arbiters: Callable[[str], list[ServerConnection]],
        send: Callable[[ServerConnection, bytes], Awaitable[None]],
        *,
        delay: float,
    ) -> None:
        self._state = state
        self._arbiters = arbiters
        self._send = send
        self.delay = delay
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._projector = Projector()

    def updated(self, tournament: str) -> None:
        """A new update of ``tournament`` was published."""
        if self._arbiters(tournament):
            self.schedule(tournament, self.delay)

    def schedule(self, tournament: str, delay: float) -> None:
        """Project ``tournament`` after ``delay`` seconds, unless a projection of it is already due."""
        if tournament in self._tasks:
            return
        task = asyncio.create_task(self._project(tournament, delay), name=f"project-{tournament}")
        self._tasks[tournament] = task
        task.add_done_callback(lambda _: self._tasks.pop(tournament, None))

    async def _project(self, tournament: str, delay: float) -> None:
        await asyncio.sleep(delay)
        state = self._state(tournament)
        if state is None:
            return
        result = await self._projector.project(state)  # pickled before the first await: a consistent copy
        if result is None:
            return
        data = projection_message(result)
        for conn in self._arbiters(tournament):
            await self._send(conn, data)

    async def aclose(self) -> None:
        for task in list(self._tasks.values()):
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        self._projector.close()
