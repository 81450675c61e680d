"""``tracker worker``: the Faust app that applies results to tournaments.

How this works
--------------

One agent consumes ``tracker-results`` (keyed by tournament id).  Per
record it runs the same recipe as the embedded processor: **decode → apply
→ store → publish**:

1. :meth:`Processor.handle <tracker.kafka.processing.Processor.handle>`
   decodes the event and applies it with the core's ``apply`` to the live
   tournament (rebuilt from the table's event log when needed);
2. an accepted event's new event log is assigned to the table
   ``tournaments`` (Faust writes it to the compacted changelog
   ``tracker-tournaments-changelog``);
3. the standings snapshot goes to the compacted ``tracker-snapshots``; then
   :class:`_Publisher` flushes the producer (the changelog record and the
   snapshot are on the broker, ``acks=all``) and sends the ``update`` to
   ``tracker-standings``; a rejected event goes to ``tracker-dead-letters``
   with its code and reason instead.  One flush serves every record applied
   since the last one, so a burst of results costs one broker round trip.

Snapshot before update is what lets a gateway start from the snapshots and
then follow the updates without a gap (see :mod:`tracker.kafka.gateway`);
changelog before update is what makes a seq mean one event for good.

Delivery guarantee
------------------

At least once, end to end; every result counted exactly once.  A results
offset is committed only after the agent finished the record and the
producer was flushed.  A worker that dies (SIGKILL, OOM, lost node) before
that commit has the records since the last commit re-delivered to
whichever worker gets the partition, after that worker recovered the table
from the changelog.  Such a record is either not in the recovered log (it
is applied now, as if for the first time: no update of it was produced,
since updates wait for the changelog) or already in it (``apply`` changes
nothing: the tournament remembers every event id; its update is produced
again, recomputed from the log, in case the crash came before the update
reached the broker).  So every accepted event's update reaches
``tracker-standings`` at least once, always with the same seq and bytes;
gateways drop duplicates by seq.  The agent body never raises (a failed
publish is retried), because Faust acknowledges a record whose processing
raised.

**Every record once, in partition order.**  Which records were applied is
not left to Faust's committed offset: Faust 0.15.3 drops records it fetched
around a rebalance and can commit past them.  :class:`Progress` keeps, per
results partition, the offset of the next record to apply, in the table
``progress`` (changelog ``tracker-progress-changelog``, recovered with the
tournaments of the same partition).  The agent applies only that record
and moves on by one; a record beyond it means records were dropped, and the
partition is sought back to the missing one (a partition that simply stops
short is found by :meth:`_Consumer._watch`).  A record below it is a
re-delivery, applied again as above.  The committed offset follows what
the agent processed, so it can never pass a record that was not.  So the
standings of every tournament go through the same sequence as the embedded
tracker's, takeovers included.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import faust
from faust.transport.drivers import aiokafka as faust_kafka
from faust.types import TP
from faust.types.tuples import ack_lock

from tracker.kafka.processing import Outcome, Processor
from tracker.kafka.topics import (
    APP_ID,
    DEAD_LETTERS,
    DEFAULT_PARTITIONS,
    PROGRESS_TABLE,
    RESULTS,
    SNAPSHOTS,
    STANDINGS,
    TABLE,
    ensure_topics,
    faust_broker,
)

log = logging.getLogger(__name__)

_RAW: dict[str, Any] = {"key_type": bytes, "value_type": bytes, "key_serializer": "raw", "value_serializer": "raw"}
PUBLISH_RETRY_SECONDS = 1.0


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

    def __init__(self, app: _App, table: Any, retry: float) -> None:
        self._app = app
        self._table = table
        self.retry = retry
        self._next: dict[TP, int] = {}
        self._processed: dict[TP, int] = {}
        self._sought: dict[TP, float] = {}
        self.activity: dict[TP, int] = {}
        self.in_hand: TP | None = None
        self.generation = 0

    async def expected(self, tp: TP) -> int:
        """The offset of the next record to apply: known, stored in the table, or the partition's first."""
        found = self._next.get(tp)
        if found is None:
            found = self._next[tp] = await self.peek(tp)
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

    def done(self, tp: TP, offset: int, admitted: Admit) -> None:
        """The agent applied the record at ``offset`` (call it in the agent, for the table)."""
        self.in_hand = None
        self.activity[tp] = self.activity.get(tp, 0) + 1
        if admitted is Admit.NEXT and self._next.get(tp) == offset:
            self._next[tp] = offset + 1
            self._table[_partition_key(tp)] = str(offset + 1).encode()

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
        self.in_hand = None
        self.generation += 1

    async def seek(self, tp: TP, offset: int) -> None:
        """Make the consumer fetch ``tp`` again from ``offset``."""
        self._sought[tp] = time.monotonic()
        await self._app.consumer.seek(tp, offset)

    def _may_seek(self, tp: TP) -> bool:
        """Not while an earlier seek can still bring the missing record (records fetched before it arrive first)."""
        sought = self._sought.get(tp)
        return sought is None or time.monotonic() - sought >= self.retry

    async def _past_deleted(self, tp: TP, expected: int) -> int:
        """``expected``, or the partition's first offset when retention deleted the records before it."""
        earliest = await self._earliest(tp)
        if earliest > expected:
            log.warning("records %d to %d of %s were deleted before they were applied", expected, earliest - 1, tp)
            self._next[tp] = earliest
            return earliest
        return expected

    async def _earliest(self, tp: TP) -> int:
        offsets = await self._app.consumer.earliest_offsets(tp)
        return int(offsets.get(tp) or 0)


def _partition_key(tp: TP) -> bytes:
    return str(tp.partition).encode()


class _Consumer(faust_kafka.Consumer):
    """Faust's Kafka consumer, committing results offsets by :class:`Progress`.

    Faust 0.15.3 drops records fetched around a rebalance, and its commit
    arithmetic can pass over them: it counts a jump in offsets as acknowledged
    records (a "gap", meant for compacted topics) and lets the first run of
    acknowledged offsets start one past the committed offset.  For the results
    topic the committed offset is instead the end of what the agent processed,
    and stalled partitions are sought back (see :meth:`_watch`).
    """

    def _app(self) -> _App:
        app = self.app
        assert isinstance(app, _App)
        return app

    def _new_offset(self, tp: TP) -> int | None:
        if tp.topic != RESULTS:
            return super()._new_offset(tp)
        with ack_lock:
            self._acked[tp].clear()
            self._acked_index[tp].clear()
        progress = self._app().progress
        return None if progress is None else progress.committable(tp)

    async def _add_gap(self, tp: TP, offset_from: int, offset_to: int) -> None:
        if tp.topic != RESULTS:  # results offsets are contiguous: a jump means records missed, not acknowledged
            await super()._add_gap(tp, offset_from, offset_to)

    async def on_start(self) -> None:
        await super().on_start()
        self.add_future(self._watch())

    async def _watch(self) -> None:
        """Seek back a results partition whose fetched records stopped short of the agent.

        When the agent has handled no record of a partition for a whole
        interval, is not stuck on a record, and the fetch position is still
        beyond the next record to apply, those records were fetched and
        dropped: nothing else would bring them back.
        """
        interval = max(1.0, 2 * self.app.conf.broker_commit_interval)
        last: dict[TP, tuple[int, int, int, int]] = {}
        while not self.should_stop:
            progress = self._app().progress
            before = None if progress is None else dict(progress.activity)
            await self.sleep(interval)
            generation = self.app.consumer_generation_id
            if progress is None or self.app.rebalancing:
                last.clear()
                continue
            stuck = progress.in_hand is not None and progress.activity == before
            try:
                for tp in self.assignment():
                    if tp.topic != RESULTS or stuck or tp == progress.in_hand:
                        last.pop(tp, None)
                        continue
                    position = await self.position(tp) or 0
                    expected = await progress.peek(tp)
                    if self.app.rebalancing or self.app.consumer_generation_id != generation:
                        last.clear()
                        break
                    mark = (generation, position, expected, progress.activity.get(tp, 0))
                    if position > expected and last.get(tp) == mark:
                        log.warning(
                            "records %d to %d of %s did not reach the agent: seeking back", expected, position - 1, tp
                        )
                        await progress.seek(tp, expected)
                        last.pop(tp, None)
                    else:
                        last[tp] = mark
            except Exception:  # a rebalance under way: it seeks itself, and this runs again
                log.info("checking for stalled partitions failed", exc_info=True)
                last.clear()


class _Transport(faust_kafka.Transport):
    Consumer = _Consumer


class _App(faust.App):
    """A Faust app whose consumer is :class:`_Consumer`, with the :class:`Progress` of its agent."""

    progress: Progress | None = None

    def _new_transport(self) -> _Transport:
        return _Transport(self.conf.broker_consumer, self)


class _Publisher:
    """Produces updates and dead letters once what came before them is on the broker: one flush for many records.

    The agent writes an accepted event's table value and snapshot (buffered
    by the producer), then hands its outcome here.  This task flushes the
    producer (the changelog records and snapshots of every outcome waiting
    reach the broker, ``acks=all``), then sends those outcomes' updates and
    dead letters in the order they came, and only then tells
    :class:`Progress` that their records may be committed.  So an update
    still never precedes its changelog record or its snapshot, while a burst
    of results costs one broker round trip instead of one each.  At most
    ``limit`` outcomes wait; beyond that the agent waits.
    """

    def __init__(self, app: _App, standings: Any, dead_letters: Any, progress: Progress, limit: int = 1000) -> None:
        self._app = app
        self._standings = standings
        self._dead_letters = dead_letters
        self._progress = progress
        self._limit = limit
        self._waiting: list[tuple[TP, int, int, Outcome | None]] = []
        self._arrived = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()

    async def add(self, tp: TP, offset: int, outcome: Outcome | None) -> None:
        """Publish ``outcome`` (``None``: nothing to publish) of the record at ``offset`` after the next flush."""
        while len(self._waiting) >= self._limit:
            self._room.clear()
            await self._room.wait()
        self._waiting.append((tp, offset, self._progress.generation, outcome))
        self._arrived.set()

    async def run(self) -> None:
        """The publishing loop (a Faust task: it runs as long as the worker)."""
        while True:
            await self._arrived.wait()
            self._arrived.clear()
            batch, self._waiting = self._waiting, []
            self._room.set()
            await _retrying("the changelog and snapshots", self._app.producer.flush)
            for tp, offset, generation, outcome in batch:
                if outcome is not None:
                    key = outcome.tournament.encode()
                    if outcome.update is not None:
                        await _retrying(outcome.tournament, self._standings.send, key=key, value=outcome.update)
                    if outcome.dead_letter is not None:
                        await _retrying(outcome.tournament, self._dead_letters.send, key=key, value=outcome.dead_letter)
                self._progress.published(tp, offset, generation)


async def _retrying(what: str, send: Callable[..., Awaitable[Any]], **kwargs: Any) -> None:
    """Await ``send(**kwargs)`` until it succeeds: a record the agent applied is never left unpublished."""
    while True:
        try:
            await send(**kwargs)
            return
        except Exception:
            log.exception("publishing for %r failed; retrying", what)
            await asyncio.sleep(PUBLISH_RETRY_SECONDS)


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    """Everything a worker needs.

    ``None`` timeouts (seconds) leave Faust's defaults, which Faust also
    reads from ``BROKER_REBALANCE_TIMEOUT``, ``BROKER_SESSION_TIMEOUT``,
    ``BROKER_HEARTBEAT_INTERVAL`` and ``BROKER_COMMIT_INTERVAL``.  A Faust
    worker waits out the rebalance timeout before it joins its group, and a
    dead worker's partitions move after the session timeout.
    ``partitions`` is used only when the topics do not exist yet.
    """

    broker: str
    partitions: int = DEFAULT_PARTITIONS
    data_dir: Path | None = None
    replication: int = 1
    rebalance_timeout: float | None = None
    session_timeout: float | None = None
    heartbeat_interval: float | None = None
    commit_interval: float | None = None
    loglevel: str = "WARNING"


def build_app(settings: WorkerSettings, partitions: int, data_dir: Path, say: Callable[[str], None]) -> Any:
    """The Faust app: topics, the ``tournaments`` table and the agent; returns the ``faust.App``."""
    timeouts: dict[str, Any] = {
        name: value
        for name, value in (
            ("broker_rebalance_timeout", settings.rebalance_timeout),
            ("broker_session_timeout", settings.session_timeout),
            ("broker_heartbeat_interval", settings.heartbeat_interval),
            ("broker_commit_interval", settings.commit_interval),
        )
        if value is not None
    }
    app = _App(
        APP_ID,
        broker=faust_broker(settings.broker),
        store="memory://",
        datadir=str(data_dir),
        topic_partitions=partitions,
        topic_replication_factor=settings.replication,
        producer_acks=-1,
        consumer_auto_offset_reset="earliest",
        web_enabled=False,
        autodiscover=False,
        **timeouts,
    )
    results = app.topic(RESULTS, partitions=partitions, **_RAW)
    standings = app.topic(STANDINGS, partitions=partitions, **_RAW)
    snapshots = app.topic(SNAPSHOTS, partitions=partitions, **_RAW)
    dead_letters = app.topic(DEAD_LETTERS, partitions=partitions, **_RAW)
    table = app.Table(
        TABLE,
        default=None,
        key_type=bytes,  # the types, not only the schema, choose the serializers used in recovery
        value_type=bytes,
        schema=faust.Schema(**_RAW),
        partitions=partitions,
        help="tournament id → the JSON array of its accepted events",
    )
    progress_table = app.Table(
        PROGRESS_TABLE,
        default=None,
        key_type=bytes,
        value_type=bytes,
        schema=faust.Schema(**_RAW),
        partitions=partitions,
        help="results partition → the offset of the next record to apply",
    )
    progress = app.progress = Progress(app, progress_table, retry=max(1.0, 2 * app.conf.broker_commit_interval))
    processor = Processor()

    publisher = _Publisher(app, standings, dead_letters, progress)
    app.task(publisher.run)

    async def apply_results(stream: Any) -> None:
        """decode → apply → store → publish, one record at a time, in partition order."""
        async for event in stream.events():
            tp, offset = event.message.tp, event.message.offset
            admitted = await progress.admit(tp, offset)
            outcome: Outcome | None = None
            if admitted is not Admit.SKIP:
                key, value = event.key, event.value
                outcome = processor.handle(key, value, None if key is None else table.get(key))
                if outcome.log is not None:
                    table[key] = outcome.log  # assigned back: Faust writes it to the changelog
                if outcome.snapshot is not None:
                    await _retrying(outcome.tournament, snapshots.send, key=key, value=outcome.snapshot)
            if admitted is not Admit.SKIP:  # a skipped record comes again: it must not be committed
                await publisher.add(tp, offset, outcome)  # the update follows once the above are on the broker
            progress.done(tp, offset, admitted)  # after add, which may wait: the record is in hand until then

    app.agent(results, name="tracker.apply")(apply_results)

    def assigned(sender: Any, *args: Any, signal: Any, **_: Any) -> None:
        mine = sorted(tp.partition for tp in args[0] if tp.topic == RESULTS)
        say(f"tracker worker: assigned partitions {mine} of {RESULTS}")

    def revoked(sender: Any, *args: Any, signal: Any, **_: Any) -> None:
        processor.forget()
        progress.forget()

    # weak=False: a signal holds weak references by default, and these closures have no other owner.
    # mode's SignalHandlerT spells its signal argument as a string mypy cannot match: hence the ignores.
    app.on_partitions_assigned.connect(assigned, weak=False)  # type: ignore[arg-type]
    app.on_partitions_revoked.connect(revoked, weak=False)  # type: ignore[arg-type]
    return app


def run_worker(settings: WorkerSettings, *, say: Callable[[str], None] | None = None) -> int:
    """Run a worker until SIGTERM/SIGINT; return the process exit code.

    Creates the missing topics first (with ``settings.partitions`` partitions).
    Raises :class:`~tracker.kafka.topics.BrokerError` when the broker cannot
    be reached.
    """
    say = say or _say
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    in_use = loop.run_until_complete(
        ensure_topics(settings.broker, settings.partitions, replication=settings.replication)
    )
    if in_use != settings.partitions:
        say(f"tracker worker: {RESULTS} has {in_use} partitions already; using {in_use}, not {settings.partitions}")
    with tempfile.TemporaryDirectory(prefix="tracker-worker-") as scratch:
        app = build_app(settings, in_use, settings.data_dir or Path(scratch), say)
        worker = faust.Worker(app, loop=loop, loglevel=settings.loglevel, quiet=True, redirect_stdouts=False)
        worker.spinner = None
        say(f"tracker worker: joining group {APP_ID!r} at {settings.broker} ({in_use} partitions)")
        try:
            worker.execute_from_commandline()
        except SystemExit as exc:
            return exc.code if isinstance(exc.code, int) else 1
    return 0  # pragma: no cover - execute_from_commandline always exits


def _say(line: str) -> None:
    print(line, flush=True)
