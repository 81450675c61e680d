"""Arbiters' projections: who gets which projection, when (computed on the shared worker pool)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from websockets.asyncio.server import ServerConnection

from tracker.config import Limits
from tracker.core.crosstable import Tournament
from tracker.gateway.jobs import ARBITERS, Pool, Runner
from tracker.gateway.projector import projection_job


class Projections:
    """Arbiters' projections, debounced, one job per tournament, off the hot path.

    :meth:`updated` is called after every published update; when an arbiter
    watches the tournament, a projection is computed ``delay`` seconds later
    (results arriving meanwhile share it) and sent to every arbiter of it.
    The jobs run on the shared :class:`~tracker.gateway.jobs.Pool` (one
    worker of which is kept for them); a projection is cancelled once no
    arbiter of its tournament is connected.
    """

    def __init__(
        self,
        state: Callable[[str], Tournament | None],
        arbiters: Callable[[str], list[ServerConnection]],
        send: Callable[[ServerConnection, bytes], Coroutine[Any, Any, None]],
        *,
        delay: float,
        limits: Limits | None = None,
        pool: Pool | None = None,
    ) -> None:
        self._arbiters = arbiters
        self._send = send
        self._own = pool is None
        self.pool = pool if pool is not None else Pool(limits if limits is not None else Limits())
        self._sending: set[asyncio.Task[None]] = set()
        self._latest: dict[str, tuple[int, bytes]] = {}  # per tournament: the newest projection sent, and its seq
        self.runner: Runner[Tournament, bytes] = Runner(
            self.pool,
            "projection",
            projection_job,
            state=state,
            publish=self._publish,
            wanted=lambda tournament: bool(arbiters(tournament)),
            delay=delay,
            priority=ARBITERS,
        )

    def updated(self, tournament: str) -> None:
        """A new update of ``tournament`` was published."""
        if not self._arbiters(tournament):
            self._latest.pop(tournament, None)  # nobody to send it to: what is kept goes
        self.runner.updated(tournament)

    def joined(self, conn: ServerConnection, tournament: str) -> None:
        """An arbiter subscribed: the newest projection at once, and one for the current seq unless it exists."""
        latest = self._latest.get(tournament)
        if latest is not None:
            self._deliver(conn, tournament, latest[1])
        self.runner.join(tournament)

    def running(self) -> list[int]:
        """The pids of the worker processes alive now."""
        return self.pool.running()

    def _publish(self, tournament: str, seq: int, data: bytes) -> None:
        self._latest[tournament] = (seq, data)
        for conn in self._arbiters(tournament):
            self._deliver(conn, tournament, data)

    def _deliver(self, conn: ServerConnection, tournament: str, data: bytes) -> None:
        task = asyncio.create_task(self._send(conn, data), name=f"projection-to-{tournament}")
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def aclose(self) -> None:
        """Cancel every projection (and, when the pool is this object's own, stop its worker processes)."""
        for task in list(self._sending):
            task.cancel()
        await asyncio.gather(*self._sending, return_exceptions=True)
        if self._own:
            await self.pool.aclose()
