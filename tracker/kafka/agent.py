"""The worker's agent: **decode → apply → store → publish**, a batch of results records at a time.

:func:`apply_results` is the body of the Faust agent ``tracker.apply``
(:mod:`tracker.kafka.worker` registers it); :func:`apply_batch` is what it
does with one batch, and takes plain values: records with ``key``,
``value`` and ``message.tp``/``message.offset``, and a :class:`Pipeline`
whose parts (:class:`~tracker.kafka.progress.Progress`,
:class:`~tracker.kafka.publisher.Publisher`, the producer) a test can give
without a broker.  What the recipe guarantees, and why in this order, is
in :mod:`tracker.kafka.worker`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterable, Callable, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from tracker.kafka.batches import Produce, Record
from tracker.kafka.health import WorkerMetrics
from tracker.kafka.processing import Processor
from tracker.kafka.progress import Admit, Progress
from tracker.kafka.publisher import Publisher, retrying_result
from tracker.kafka.topics import CHANGELOG, SNAPSHOTS

BATCH: Final = 500
"""Records the agent takes at a time (fewer when no more arrive within ``BATCH_WITHIN`` seconds)."""
BATCH_WITHIN: Final = 0.01


@dataclass(slots=True)
class Pipeline:
    """What the agent works with.

    ``tournaments`` is the table's store (entries ``tournament/seq`` →
    event bytes, written directly: see
    :func:`tracker.kafka._faust_patch.table_store`); ``produce`` sends the
    changelog records and snapshots a batch per partition; ``name_event``
    makes a record the current event of the task before its table write
    (:func:`tracker.kafka._faust_patch.make_current`); ``metrics``, when
    given, counts the records by what they were admitted as and times the
    batches.
    """

    processor: Processor
    tournaments: MutableMapping[bytes, bytes]
    progress: Progress
    publisher: Publisher
    produce: Produce
    name_event: Callable[[Any], None] = field(default=lambda event: None)
    metrics: WorkerMetrics | None = None


async def apply_results(stream: Any, pipeline: Pipeline) -> None:
    """The agent's body: every batch the stream gives (``stream.take_events``), through :func:`apply_batch`."""
    batches: AsyncIterable[Sequence[Any]] = stream.take_events(BATCH, within=BATCH_WITHIN)
    async for events in batches:
        await apply_batch(events, pipeline)


async def apply_batch(events: Sequence[Any], pipeline: Pipeline) -> None:
    """decode → apply → store → publish ``events``, each in partition order.

    Per record: :meth:`Progress.admit` says whether it is the next one, a
    re-delivery or one beyond a gap (skipped: it comes again); the processor
    applies it; an accepted event's entry goes to the table and to the
    batch's changelog records; its outcome is staged with the publisher.
    Then, once per batch: the snapshot of each tournament touched, the
    changelog records and snapshots handed to the producer, each
    partition's position written after its entries, and the staged outcomes
    released (the publisher sends them once all that is on the broker).
    Never raises: a failed send is retried (Faust acknowledges a record
    whose processing raised).
    """
    started = time.perf_counter()
    progress, processor, publisher = pipeline.progress, pipeline.processor, pipeline.publisher
    last: dict[Any, Any] = {}  # per results partition, its last record in the batch
    records: list[Record] = []  # the batch's changelog records, then its snapshots
    for event in events:
        tp, offset = event.message.tp, event.message.offset
        last[tp] = event
        admitted = await progress.admit(tp, offset)
        if admitted is not Admit.SKIP:  # a skipped record comes again: it must not be committed
            outcome = processor.handle(event.key, event.value, pipeline.tournaments)
            if outcome.entry is not None:
                key, value = outcome.entry
                pipeline.tournaments[key] = value
                records.append((CHANGELOG, tp.partition, key, value))  # the partition Faust would write
            await publisher.stage(tp, offset, outcome)  # may wait: the record is in hand until then
        progress.done(tp, offset, admitted, store=False)
        if pipeline.metrics is not None:
            pipeline.metrics.admitted(admitted)
    for tournament, snapshot in processor.snapshots():  # once per tournament: the latest standings
        records.append((SNAPSHOTS, None, tournament.encode(), snapshot))
    sent = await retrying_result("the changelog and snapshots", pipeline.produce, records)
    for tp, event in last.items():  # each partition's position, once per batch, after its entries
        pipeline.name_event(event)
        progress.store(tp)
    publisher.release(sent)  # the updates follow once all of the above is on the broker
    if pipeline.metrics is not None:
        pipeline.metrics.batch(time.perf_counter() - started, len(events))
