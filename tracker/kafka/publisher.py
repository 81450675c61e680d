"""Publishing a worker's outcomes once what precedes them is on the broker: one flush for many records."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from faust.types import TP

from tracker.kafka.batches import Delivery, Produce, Record
from tracker.kafka.processing import Outcome
from tracker.kafka.progress import Progress
from tracker.kafka.topics import DEAD_LETTERS, STANDINGS

log = logging.getLogger(__name__)
T = TypeVar("T")


PUBLISH_RETRY_SECONDS = 1.0


class Publisher:
    """Produces updates and dead letters once what came before them is on the broker: one flush for many records.

    The agent produces a batch's changelog records and snapshots (handed to
    the producer, and to :meth:`release` as a :class:`~tracker.kafka.batches.Delivery`)
    and its positions (buffered by Faust's producer), then releases the
    batch's outcomes here.  This task flushes the producer and waits for
    those deliveries (the changelog records and snapshots of every outcome
    waiting are on the broker, ``acks=all``), then produces those outcomes'
    updates and dead letters in the order they came (``produce``: a batch per
    partition), waits until the broker has them, and only then tells
    :class:`Progress` that their records may be committed.  So an update
    still never precedes its changelog record or its snapshot, while a burst
    of results costs one broker round trip instead of one each.  At most
    ``limit`` released outcomes wait; beyond that the agent waits (staged
    ones do not count: a batch is never kept waiting for itself).
    """

    def __init__(
        self,
        flush: Callable[[], Awaitable[None]],
        produce: Produce,
        progress: Progress,
        limit: int = 1000,
        *,
        standings: str = STANDINGS,
        dead_letters: str = DEAD_LETTERS,
    ) -> None:
        self._flush = flush  # the producer's flush: every record sent so far is on the broker
        self._produce = produce
        self._standings = standings
        self._dead_letters = dead_letters
        self._progress = progress
        self._limit = limit
        self._waiting: list[tuple[TP, int, int, Outcome | None]] = []
        self._staged: list[tuple[TP, int, int, Outcome | None]] = []
        self._before: list[Delivery] = []
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

    def release(self, before: Delivery | None = None) -> None:
        """The staged outcomes may go out after the next flush, once ``before`` (their records) is delivered."""
        if before is not None:
            self._before.append(before)
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
            before, self._before = self._before, []
            self._room.set()
            await retrying("the changelog and snapshots", self._flush)
            for delivery in before:
                await delivery.delivered()
            records: list[Record] = []
            for _, _, _, outcome in batch:
                if outcome is not None:
                    key = outcome.tournament.encode()
                    if outcome.update is not None:
                        records.append((self._standings, None, key, outcome.update))
                    if outcome.dead_letter is not None:
                        records.append((self._dead_letters, None, key, outcome.dead_letter))
            if records:
                sent: Delivery = await retrying_result("the updates", self._produce, records)
                await sent.delivered()
            for tp, offset, generation, _ in batch:
                self._progress.published(tp, offset, generation)


async def retrying(what: str, send: Callable[..., Awaitable[Any]], **kwargs: Any) -> None:
    """Await ``send(**kwargs)`` until it succeeds: a record the agent applied is never left unpublished."""
    await retrying_result(what, lambda: send(**kwargs))


async def retrying_result(what: str, send: Callable[..., Awaitable[T]], *args: Any) -> T:
    """Await ``send(*args)`` until it succeeds; return what it returned."""
    while True:
        try:
            return await send(*args)
        except Exception:
            log.exception("publishing for %r failed; retrying", what)
            await asyncio.sleep(PUBLISH_RETRY_SECONDS)
