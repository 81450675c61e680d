"""Which results records a worker has applied: per partition, the offset of the next one.

See :class:`Progress`; :mod:`tracker.kafka._faust_patch` makes Faust's
consumer commit by it.
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import Callable
from typing import Any

from faust.types import TP

log = logging.getLogger(__name__)


class Admit(enum.Enum):
    """What the agent does with a results record, by its offset (see :class:`Progress`)."""

    NEXT = "next"
    """The record the partition is at: apply it, then the partition moves on by one."""
    AGAIN = "again"
    """Applied before (a re-delivery): apply it again, which changes nothing but republishes its update."""
    SKIP = "skip"
    """Beyond records that never reached the agent: those come first (the partition was sought back)."""


class Progress:
    """Per results partition, the offset of the next record the agent must apply.

    This, not Faust's committed offset, is what says which records were
    applied.  It moves one record at a time, so every record below it was
    applied and published, in partition order; it lives in memory and in the
    ``progress`` table, whose changelog sits beside the tournaments' logs of
    the same partition, so a worker that takes a partition over recovers it
    with the state it describes.

    A record beyond it means records in between were fetched but never
    reached the agent (Faust 0.15.3 drops records fetched around a
    rebalance, and may commit past them): the partition is sought back to
    the missing record, and the records beyond are skipped until it comes.
    A partition whose records stop short of the fetch position is sought
    back the same way by :meth:`_Consumer._watch`.  A record below it was
    applied before; applying it again changes nothing (a tournament
    remembers every event id) but republishes its update.
    """

    def __init__(
        self, consumer: Callable[[], Any], table: Any, retry: float, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._consumer = consumer  # Faust's consumer, looked up when needed: the app creates it on start
        self._clock = clock
        self._table = table
        self.retry = retry
        self._next: dict[TP, int] = {}
        self._processed: dict[TP, int] = {}
        self._sought: dict[TP, float] = {}
        self._unstored: set[TP] = set()
        self.activity: dict[TP, int] = {}
        self.processed_at: dict[TP, float] = {}
        """When the agent last processed (applied or applied again) a record of each partition, by ``clock``."""
        self.in_hand: TP | None = None
        self.generation = 0

    async def expected(self, tp: TP) -> int:
        """The offset of the next record to apply: known, stored in the table, or the partition's first."""
        found = self._next.get(tp)
        if found is None:
            found = self._next[tp] = await self.peek(tp)
        return found

    def position(self, tp: TP) -> int | None:
        """The offset of the next record to apply when known now (in memory or in the table), else ``None``.

        Unlike :meth:`peek` it never asks the broker: the worker's health
        check reads it, and must not wait on the consumer it watches.
        """
        found = self._next.get(tp)
        if found is None:
            stored = self._table.get(_partition_key(tp))
            found = int(stored) if stored is not None else None
        return found

    async def peek(self, tp: TP) -> int:
        """What :meth:`expected` says, without remembering it (the agent has the last word)."""
        found = self._next.get(tp)
        if found is None:
            stored = self._table.get(_partition_key(tp))
            found = int(stored) if stored is not None else await self._earliest(tp)
        return found

    async def admit(self, tp: TP, offset: int) -> Admit:
        """What to do with the record at ``offset``; seeks back when records before it are missing."""
        self.in_hand = tp
        self.activity[tp] = self.activity.get(tp, 0) + 1
        expected = await self.expected(tp)
        if offset > expected and self._may_seek(tp):
            expected = await self._past_deleted(tp, expected)
            if offset > expected:
                log.warning("records %d to %d of %s never reached the agent: seeking back", expected, offset - 1, tp)
                await self.seek(tp, expected)
        if offset < expected:
            return Admit.AGAIN
        if offset > expected:
            return Admit.SKIP
        self._sought.pop(tp, None)
        return Admit.NEXT

    def done(self, tp: TP, offset: int, admitted: Admit, *, store: bool = True) -> None:
        """The agent applied the record at ``offset`` (call it in the agent, for the table).

        With ``store=False`` the new position is written to the table only
        by the next :meth:`store` of ``tp``: an agent that applies a batch
        writes each partition's position once per batch, not once per record.
        """
        self.in_hand = None
        self.activity[tp] = self.activity.get(tp, 0) + 1
        if admitted is not Admit.SKIP:
            self.processed_at[tp] = self._clock()
        if admitted is Admit.NEXT and self._next.get(tp) == offset:
            self._next[tp] = offset + 1
            if store:
                self._table[_partition_key(tp)] = str(offset + 1).encode()
            else:
                self._unstored.add(tp)

    def store(self, tp: TP) -> None:
        """Write ``tp``'s position to the table if :meth:`done` moved it without writing it (call it in the agent)."""
        if tp in self._unstored:
            self._unstored.discard(tp)
            self._table[_partition_key(tp)] = str(self._next[tp]).encode()

    def published(self, tp: TP, offset: int, generation: int) -> None:
        """What the record at ``offset`` led to is produced: it may be committed (unless revoked since)."""
        if generation == self.generation:
            self._processed[tp] = max(self._processed.get(tp, 0), offset + 1)

    def committable(self, tp: TP) -> int | None:
        """The offset Kafka may have as committed: every record below it was processed and published."""
        return self._processed.get(tp)

    def forget(self) -> None:
        """Partitions were revoked: what they are at is read from the table again when they come back."""
        self._next.clear()
        self._processed.clear()
        self._sought.clear()
        self._unstored.clear()
        self.in_hand = None
        self.generation += 1

    async def seek(self, tp: TP, offset: int) -> None:
        """Make the consumer fetch ``tp`` again from ``offset``."""
        self._sought[tp] = self._clock()
        await self._consumer().seek(tp, offset)

    def _may_seek(self, tp: TP) -> bool:
        """Not while an earlier seek can still bring the missing record (records fetched before it arrive first)."""
        sought = self._sought.get(tp)
        return sought is None or self._clock() - sought >= self.retry

    async def _past_deleted(self, tp: TP, expected: int) -> int:
        """``expected``, or the partition's first offset when retention deleted the records before it."""
        earliest = await self._earliest(tp)
        if earliest > expected:
            log.warning("records %d to %d of %s were deleted before they were applied", expected, earliest - 1, tp)
            self._next[tp] = earliest
            return earliest
        return expected

    async def _earliest(self, tp: TP) -> int:
        offsets = await self._consumer().earliest_offsets(tp)
        return int(offsets.get(tp) or 0)


def _partition_key(tp: TP) -> bytes:
    return str(tp.partition).encode()
