"""Stakes, chances and cues for every subscriber who asks, computed once per update, off the hot path.

How this works
--------------

A subscriber with ``"stakes": true`` gets the latest ``stakes`` message at
once (when one exists) and a new one after each update; ``cue`` messages
come with it when something worth a lower third happened between two of
them.  :class:`StakesFeed` runs one task per tournament, like the arbiters'
projections beside it (:mod:`tracker.gateway.projector`): ``delay``
seconds after an update (updates arriving meanwhile share it) it computes,
in a worker process of its own (a :class:`~tracker.gateway.projector.Projector`,
bounded in time and memory the same way), the stakes, the chances (seeded by
the event's seq: the same state always gives the same estimate) and the
insight the cues compare, encoded in the worker; the server keeps the last
insight per tournament, compares, and hands the bytes to the hub, which
sends them without waiting (and after each subscriber's spoiler delay).
Nothing is computed for a tournament nobody asks stakes of.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from websockets.asyncio.server import ServerConnection

from tracker.config import Limits
from tracker.core.crosstable import Tournament
from tracker.core.projection.chances import chances
from tracker.core.projection.cues import Insight, cues, insight
from tracker.core.projection.stakes import stakes
from tracker.core.standings import standings
from tracker.gateway.projector import Projector
from tracker.protocol import cue_message, stakes_message

log = logging.getLogger(__name__)


def _compute(state: Tournament) -> tuple[bytes, Insight]:
    """Runs in the worker process: the encoded ``stakes`` message and the insight cues compare."""
    k = stakes(state)
    return stakes_message(k, chances(state, seed=state.seq)), insight(standings(state), k)


class StakesFeed:
    """Stakes and cues for the subscribers who asked, one task per tournament (see the module docstring)."""

    def __init__(
        self,
        state: Callable[[str], Tournament | None],
        subscribers: Callable[[str], list[ServerConnection]],
        deliver: Callable[[str, list[ServerConnection], bytes], None],
        *,
        delay: float,
        limits: Limits | None = None,
    ) -> None:
        self._state = state
        self._subscribers = subscribers
        self._deliver = deliver
        self.delay = delay
        self._projector = Projector(limits)
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._again: set[str] = set()
        self._latest: dict[str, tuple[bytes, Insight]] = {}

    def updated(self, tournament: str) -> None:
        """A new update of ``tournament`` was published."""
        if self._subscribers(tournament):
            self.schedule(tournament, self.delay)

    def joined(self, conn: ServerConnection, tournament: str) -> None:
        """``conn`` asked for stakes: the latest now, a fresh one if there is none or it is behind."""
        latest = self._latest.get(tournament)
        state = self._state(tournament)
        if latest is not None:
            self._deliver(tournament, [conn], latest[0])
        if state is not None and (latest is None or latest[1].seq < state.seq):
            self.schedule(tournament, 0.0)

    def schedule(self, tournament: str, delay: float) -> None:
        """Compute after ``delay`` seconds; if a computation is due or running, once more after it."""
        if tournament in self._tasks:
            self._again.add(tournament)
            return
        task = asyncio.create_task(self._run(tournament, delay), name=f"stakes-{tournament}")
        self._tasks[tournament] = task
        task.add_done_callback(lambda _: self._tasks.pop(tournament, None))

    async def _run(self, tournament: str, delay: float) -> None:
        try:
            await asyncio.sleep(delay)  # results arriving meanwhile share one computation
            while self._subscribers(tournament):
                self._again.discard(tournament)
                state = self._state(tournament)
                if state is None:
                    return
                result = await self._projector.run(_compute, state)
                if result is not None:
                    self._publish(tournament, *result)
                if tournament not in self._again:
                    return
                await asyncio.sleep(self.delay)
        finally:
            self._again.discard(tournament)

    def _publish(self, tournament: str, data: bytes, now: Insight) -> None:
        previous = self._latest.get(tournament)
        self._latest[tournament] = (data, now)
        conns = self._subscribers(tournament)
        if previous is not None and previous[1].seq < now.seq:
            for cue in cues(previous[1], now):
                self._deliver(tournament, conns, cue_message(tournament, now.seq, cue))
        self._deliver(tournament, conns, data)

    async def aclose(self) -> None:
        """Cancel every computation and stop the worker process (waits until it is reaped)."""
        for task in list(self._tasks.values()):
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        await asyncio.to_thread(self._projector.close, wait=True)
