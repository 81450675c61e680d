"""Producing a worker's records a batch per topic partition: one delivery future per batch, not one per record.

How this works
--------------

Faust's ``Topic.send``, and the changelog record of a table write, take a
record through Faust's message future, its producer buffer, a sensor and
then aiokafka's ``send``: several futures, callbacks and event-loop turns
per record, which is most of what a worker spends per record outside
``apply``.  The worker's records come in batches anyway (the records of a
batch of results; the updates of a publisher round), so
:meth:`BatchProducer.send` produces them with aiokafka's batch API
(``create_batch``/``send_batch``): it groups them per topic partition, in
the order given, into batches of the producer's batch size, and enqueues
each batch in that order.  :meth:`Sent.delivered` then waits until the
broker has every record (``acks=all``); a batch the broker did not take is
sent again together with the later batches of its partition, so what a
partition ends with is still every record in the order given (a record may
then be on the broker twice: the changelog gets the same entry again, and
gateways drop an update they had by its seq).  That order holds within one
:meth:`BatchProducer.send`: a batch retried after aiokafka gave up on it
(its own retries ran out) lands after what a later ``send`` put on the same
partition meanwhile.  For a topic where only the newest record of a key
counts (``latest_only``: the snapshots, compacted by key), such a retry
leaves out every record whose key a later ``send`` carried, so an older
snapshot never lands after a newer one; the changelog entries and updates
are all sent again.

A record goes to the partition it names, or (``None``) to the one aiokafka's
``DefaultPartitioner`` gives its key: the partitioner Faust's producer uses
(the worker sets no ``producer_partitioner``), so a tournament's updates and
snapshots stay on the partitions they always had.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from aiokafka.partitioner import DefaultPartitioner

log = logging.getLogger(__name__)

RETRY_SECONDS = 1.0
Record = tuple[str, int | None, bytes, bytes]
"""A record to produce: topic, partition (``None``: by its key), key and value."""
_partitioner = DefaultPartitioner()
_KEYS_CACHED = 100_000


class Delivery(Protocol):
    """Records handed to the producer; :meth:`delivered` returns once the broker has them all."""

    async def delivered(self) -> None: ...


Produce = Callable[[list[Record]], Awaitable[Delivery]]
"""What the worker produces with: :meth:`BatchProducer.send` (a test gives its own)."""


@dataclass(slots=True)
class _Batch:
    topic: str
    partition: int
    records: list[tuple[bytes, bytes]]
    builder: Any
    delivery: asyncio.Future[Any] | None = field(default=None)


class Sent:
    """The batches of one :meth:`BatchProducer.send`, enqueued in order.

    ``superseded(topic, key)`` says whether a later send carried a newer record that replaces this one.
    """

    def __init__(
        self,
        producer: Callable[[], Any],
        batches: list[_Batch],
        superseded: Callable[[str, bytes], bool] = lambda topic, key: False,
    ) -> None:
        self._producer = producer
        self._batches = batches
        self._superseded = superseded

    async def delivered(self) -> None:
        """Return once the broker has every record; never raises.

        A partition's batch that failed is sent again with the batches after
        it (every ``RETRY_SECONDS``) until the broker has them all: a record
        the agent applied is never left unpublished, except a latest-only
        record a later send has superseded (its newer record is the one that counts).
        """
        pending = self._batches
        while pending:
            outcomes = await asyncio.gather(*(_delivery(batch) for batch in pending), return_exceptions=True)
            again: list[_Batch] = []
            failed: set[tuple[str, int]] = set()
            for batch, outcome in zip(pending, outcomes, strict=True):
                tp = (batch.topic, batch.partition)
                if isinstance(outcome, BaseException) and tp not in failed:
                    log.warning("producing %d records to %s/%d failed (%r); retrying", len(batch.records), *tp, outcome)
                    failed.add(tp)
                if tp in failed:
                    again.append(batch)
            if again:
                await asyncio.sleep(RETRY_SECONDS)
                for batch in again:  # a newer record of the key went out meanwhile: this one would land after it
                    batch.records = [
                        (key, value) for key, value in batch.records if not self._superseded(batch.topic, key)
                    ]
                again = [batch for batch in again if batch.records]
                producer = self._producer()
                for batch in again:
                    batch.builder = _builder(producer, batch.records)
                await _enqueue(producer, again)
            pending = again


class BatchProducer:
    """Produces lists of records through an aiokafka producer, a batch per topic partition.

    ``latest_only``: topics where a key's newest record replaces the older ones (see the module's
    docstring): a retry leaves out what a later :meth:`send` superseded.
    """

    def __init__(self, producer: Callable[[], Any], *, latest_only: Iterable[str] = ()) -> None:
        self._producer = producer  # the started AIOKafkaProducer, looked up when needed
        self._partitions: dict[str, list[int]] = {}
        self._by_key: dict[tuple[str, bytes], int] = {}
        self._latest_only = frozenset(latest_only)
        self._sends = 0
        self._newest: dict[tuple[str, bytes], int] = {}  # (latest-only topic, key) → the last send carrying it

    async def send(self, records: list[Record]) -> Sent:
        """Enqueue ``records``, per topic partition in the order given; await :meth:`Sent.delivered` for the broker.

        Waits while a partition's earlier batch is still queued (as aiokafka's
        ``send`` does when a batch is full).  Raises only before anything was
        enqueued, when the broker does not give a topic's partitions.
        """
        producer = self._producer()
        self._sends += 1
        number = self._sends
        grouped: dict[tuple[str, int], list[tuple[bytes, bytes]]] = {}
        for topic, partition, key, value in records:
            if topic in self._latest_only:
                if len(self._newest) >= _KEYS_CACHED:
                    self._newest.clear()  # forgetting only means an old record may be retried, as without this
                self._newest[(topic, key)] = number
            if partition is None:
                partition = await self._partition_of(producer, topic, key)
            grouped.setdefault((topic, partition), []).append((key, value))
        batches: list[_Batch] = []
        for (topic, partition), chunk in grouped.items():
            while chunk:
                builder = producer.create_batch()
                taken = 0
                for key, value in chunk:
                    if builder.append(timestamp=None, key=key, value=value) is None:
                        break
                    taken += 1
                builder.close()  # a batch always takes its first record, however large: taken >= 1
                batches.append(_Batch(topic, partition, chunk[:taken], builder))
                chunk = chunk[taken:]
        await _enqueue(producer, batches)
        return Sent(self._producer, batches, lambda topic, key: self._newest.get((topic, key), number) > number)

    async def _partition_of(self, producer: Any, topic: str, key: bytes) -> int:
        found = self._by_key.get((topic, key))
        if found is None:
            partitions = self._partitions.get(topic)
            if partitions is None:
                partitions = self._partitions[topic] = sorted(await producer.partitions_for(topic))
            if len(self._by_key) >= _KEYS_CACHED:
                self._by_key.clear()
            found = self._by_key[(topic, key)] = _partitioner(key, partitions, partitions)
        return found


def _builder(producer: Any, records: Iterable[tuple[bytes, bytes]]) -> Any:
    builder = producer.create_batch()
    for key, value in records:
        builder.append(timestamp=None, key=key, value=value)
    builder.close()
    return builder


async def _enqueue(producer: Any, batches: list[_Batch]) -> None:
    """``send_batch`` each batch in order; a batch that cannot be enqueued gets a failed delivery (retried)."""
    for batch in batches:
        try:
            batch.delivery = await producer.send_batch(batch.builder, batch.topic, partition=batch.partition)
        except Exception as exc:
            batch.delivery = asyncio.get_running_loop().create_future()
            batch.delivery.set_exception(exc)


async def _delivery(batch: _Batch) -> Any:
    assert batch.delivery is not None
    return await batch.delivery
