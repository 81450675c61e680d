"""Publishing a worker's outcomes once what precedes them is on the broker: one flush for many records."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from faust.types import TP

from tracker.kafka.processing import Outcome
from tracker.kafka.progress import Progress

log = logging.getLogger(__name__)


PUBLISH_RETRY_SECONDS = 1.0


class Publisher:
    """Produces updates and dead letters once what came before them is on the broker: one flush for many records.

    The agent writes a batch's table entries and its snapshots (buffered by
    the producer), then hands the batch's outcomes here.  This task flushes the
    producer (the changelog records and snapshots of every outcome waiting
    reach the broker, ``acks=all``), then sends those outcomes' updates and
    dead letters in the order they came, and only then tells
    :class:`Progress` that their records may be committed.  So an update
    still never precedes its changelog record or its snapshot, while a burst
    of results costs one broker round trip instead of one each.  At most
    ``limit`` released outcomes wait; beyond that the agent waits (staged
    ones do not count: a batch is never kept waiting for itself).
    """

    def __init__(
        self,
        flush: Callable[[], Awaitable[None]],
        standings: Any,
        dead_letters: Any,
        progress: Progress,
        limit: int = 1000,
    ) -> None:
        self._flush = flush  # the producer's flush: every record sent so far is on the broker
        self._standings = standings
        self._dead_letters = dead_letters
        self._progress = progress
        self._limit = limit
        self._waiting: list[tuple[TP, int, int, Outcome | None]] = []
        self._staged: list[tuple[TP, int, int, Outcome | None]] = []
        self._arrived = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()

    async def add(self, tp: TP, offset: int, outcome: Outcome | None) -> None:
        """Publish ``outcome`` (``None``: nothing to publish) of the record at ``offset`` after the next flush."""
        await self.stage(tp, offset, outcome)
        self.release()

    async def stage(self, tp: TP, offset: int, outcome: Outcome | None) -> None:
        """Like :meth:`add`, but held back until :meth:`release`: what must precede it may not be sent yet.

        The agent stages a batch's outcomes as it applies the records, sends
        the batch's snapshots, then releases them.
        """
        while len(self._waiting) >= self._limit:
            self._room.clear()
            await self._room.wait()
        self._staged.append((tp, offset, self._progress.generation, outcome))

    def release(self) -> None:
        """The staged outcomes may go out after the next flush."""
        if self._staged:
            self._waiting += self._staged
            self._staged = []
            self._arrived.set()

    async def run(self) -> None:
        """The publishing loop (a Faust task: it runs as long as the worker)."""
        while True:
            await self._arrived.wait()
            self._arrived.clear()
            batch, self._waiting = self._waiting, []
            self._room.set()
            await retrying("the changelog and snapshots", self._flush)
            for tp, offset, generation, outcome in batch:
                if outcome is not None:
                    key = outcome.tournament.encode()
                    if outcome.update is not None:
                        await retrying(outcome.tournament, self._standings.send, key=key, value=outcome.update)
                    if outcome.dead_letter is not None:
                        await retrying(outcome.tournament, self._dead_letters.send, key=key, value=outcome.dead_letter)
                self._progress.published(tp, offset, generation)


async def retrying(what: str, send: Callable[..., Awaitable[Any]], **kwargs: Any) -> None:
    """Await ``send(**kwargs)`` until it succeeds: a record the agent applied is never left unpublished."""
    while True:
        try:
            await send(**kwargs)
            return
        except Exception:
            log.exception("publishing for %r failed; retrying", what)
            await asyncio.sleep(PUBLISH_RETRY_SECONDS)
