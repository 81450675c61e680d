"""Arbiter projections in a worker process, so they never hold the server's GIL.

An exact projection of ten open games takes a second or more of pure
Python.  Run in a thread it shares the interpreter lock with the event loop,
and every ack and update waits its turn meanwhile; in a process of its own it
costs the server only the pickling of the tournament (a few kB).

:class:`Projector` owns one spawned worker process, started on first use.
The tournament is pickled at once, in the caller's thread, so the live state
may change the moment :meth:`Projector.project` returns control.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from tracker.core.crosstable import Tournament
from tracker.core.projection import Projection, project

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
