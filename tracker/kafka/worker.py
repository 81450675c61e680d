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
3. the standings snapshot goes to the compacted ``tracker-snapshots``; the
   producer is flushed (the changelog record and the snapshot are on the
   broker, ``acks=all``), then the ``update`` goes to ``tracker-standings``;
   a rejected event goes to ``tracker-dead-letters`` with its code and
   reason instead.

Snapshot before update is what lets a gateway start from the snapshots and
then follow the updates without a gap (see :mod:`tracker.kafka.gateway`);
changelog before update is what makes a seq mean one event for good.

Delivery guarantee
------------------

At least once, end to end; every result counted exactly once.  Faust
commits a results offset only after the agent finished the record and
flushed the producer.  A worker that dies (SIGKILL, OOM, lost node) before
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

Faust 0.15.3 can drop records it fetched while a rebalance was under way;
:class:`_Consumer` seeks back to the committed offsets once records flow
again, so they are re-delivered.  Records of one partition may then be
applied out of their order in the partition (each one once; an event that
depended on one applied later is rejected first and applied when it comes
again): the final standings are the same, the intermediate ones may differ
from the embedded tracker's around a takeover.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import faust
from faust.transport.drivers import aiokafka as faust_kafka
from faust.types import TP, Message
from faust.types.tuples import ack_lock

from tracker.kafka.processing import Outcome, Processor
from tracker.kafka.topics import (
    APP_ID,
    DEAD_LETTERS,
    DEFAULT_PARTITIONS,
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


class _Consumer(faust_kafka.Consumer):
    """Faust's Kafka consumer, made to re-fetch what a rebalance drops.

    Faust 0.15.3 seeks the partitions to their committed offsets *before* it
    lets records flow again after a rebalance, and drops the records fetched
    in between (the read position moves on regardless); a partition with no
    committed offset is not sought at all.  Either way, records of a
    partition a worker has just taken over could be skipped for good.  This
    consumer seeks again once the flow is resumed and whenever a results
    partition stalls (see :meth:`_watch`), and seeks a results partition
    without a committed offset to its start.  All of it can only re-deliver
    records, which changes nothing (the tournament remembers every event id
    it applied).
    """

    def ack(self, message: Message) -> bool:
        """Acknowledge a results record only if the agent applied it.

        Faust skips a record fetched before a rebalance, or while the flow was
        suspended, and acknowledges it all the same, which would commit past
        it.  Such a record is left uncommitted instead: it is fetched again
        after the next seek (see :meth:`_watch`).
        """
        if message.topic == RESULTS and not self._app().applied(message.tp, message.offset):
            with ack_lock:
                message.acked = True
                self._unacked_messages.discard(message)
            return False
        return super().ack(message)

    def _app(self) -> _App:
        app = self.app
        assert isinstance(app, _App)
        return app

    async def seek_to_committed(self) -> Mapping[TP, int]:
        committed = await super().seek_to_committed()
        for tp, offset in committed.items():
            if tp.topic == RESULTS and not offset:
                await self.seek(tp, 0)
        return committed

    def resume_flow(self) -> None:
        super().resume_flow()
        self.add_future(self._seek_again())

    async def on_start(self) -> None:
        await super().on_start()
        self.add_future(self._watch())

    async def _watch(self) -> None:
        """Seek again when a results partition stalls: fetched past its committed offset, no progress.

        In normal work the committed offset follows the fetch position within
        a commit interval, or records are waiting for the agent; a position
        ahead of it that does not move for two intervals, with nothing
        waiting, means fetched records never reached the agent.
        """
        interval = max(1.0, 2 * self.app.conf.broker_commit_interval)
        last: dict[TP, tuple[int, int]] = {}
        while not self.should_stop:
            await self.sleep(interval)
            try:
                stalled = False
                waiting = {message.tp for message in list(self._unacked_messages)}
                for tp in self.assignment():
                    if tp.topic != RESULTS or tp in waiting:
                        last.pop(tp, None)
                        continue
                    position = await self.position(tp)
                    mark = (position or 0, self._committed_offset.get(tp) or 0)
                    stalled |= mark[0] > mark[1] and last.get(tp) == mark
                    last[tp] = mark
                if stalled:
                    log.warning("records fetched for %s did not reach the agent: seeking back", RESULTS)
                    last.clear()
                    await self.perform_seek()
            except Exception:  # a rebalance under way: it seeks itself
                log.info("checking for stalled partitions failed", exc_info=True)

    async def _seek_again(self) -> None:
        try:
            await self.perform_seek()
        except Exception:  # a rebalance started meanwhile: it seeks again itself
            log.info("seeking to the committed offsets after a rebalance failed", exc_info=True)


class _Transport(faust_kafka.Transport):
    Consumer = _Consumer


class _App(faust.App):
    """A Faust app whose consumer is :class:`_Consumer`, and the results records its agent applied."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._applied: set[tuple[TP, int]] = set()
        super().__init__(*args, **kwargs)

    def done(self, tp: TP, offset: int) -> None:
        """The agent applied (and published) the record at ``offset``."""
        self._applied.add((tp, offset))

    def applied(self, tp: TP, offset: int) -> bool:
        """Whether the agent applied the record at ``offset`` (asked once, by its acknowledgement)."""
        if (tp, offset) in self._applied:
            self._applied.discard((tp, offset))
            return True
        return False

    def forget_applied(self) -> None:
        """Partitions were revoked: their records are acknowledged no more."""
        self._applied.clear()

    def _new_transport(self) -> _Transport:
        return _Transport(self.conf.broker_consumer, self)


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
    processor = Processor()

    async def publish(outcome: Outcome) -> None:
        key = outcome.tournament.encode()
        while True:
            try:
                if outcome.snapshot is not None:
                    await snapshots.send(key=key, value=outcome.snapshot)
                    await app.producer.flush()  # the changelog record and the snapshot reach the broker first
                if outcome.update is not None:
                    await standings.send(key=key, value=outcome.update)
                if outcome.dead_letter is not None:
                    await dead_letters.send(key=key, value=outcome.dead_letter)
                return
            except Exception:
                log.exception("publishing for %r failed; retrying", outcome.tournament)
                await asyncio.sleep(PUBLISH_RETRY_SECONDS)

    async def apply_results(stream: Any) -> None:
        """decode → apply → store → publish, one record at a time, in partition order."""
        async for event in stream.events():
            key, value = event.key, event.value
            outcome = processor.handle(key, value, None if key is None else table.get(key))
            if outcome.log is not None:
                table[key] = outcome.log  # assigned back: Faust writes it to the changelog
            await publish(outcome)
            app.done(event.message.tp, event.message.offset)  # only now may the offset be committed

    app.agent(results, name="tracker.apply")(apply_results)

    def assigned(sender: Any, *args: Any, signal: Any, **_: Any) -> None:
        mine = sorted(tp.partition for tp in args[0] if tp.topic == RESULTS)
        say(f"tracker worker: assigned partitions {mine} of {RESULTS}")

    def revoked(sender: Any, *args: Any, signal: Any, **_: Any) -> None:
        processor.forget()
        app.forget_applied()

    # weak=False: a signal holds weak references by default, and these closures have no other owner.
    # mode's SignalHandlerT spells its signal argument as a string mypy cannot match: hence the ignores.
    app.on_partitions_assigned.connect(assigned, weak=False)  # type: ignore[arg-type]
    app.on_partitions_revoked.connect(revoked, weak=False)  # type: ignore[arg-type]
    return app


def run_worker(
    broker: str,
    *,
    partitions: int = DEFAULT_PARTITIONS,
    data_dir: str | Path | None = None,
    settings: WorkerSettings | None = None,
    say: Callable[[str], None] | None = None,
) -> int:
    """Run a worker until SIGTERM/SIGINT; return the process exit code.

    Creates the missing topics first (with ``partitions`` partitions).
    Raises :class:`~tracker.kafka.topics.BrokerError` when the broker cannot
    be reached.
    """
    settings = settings or WorkerSettings(broker, partitions, Path(data_dir) if data_dir else None)
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
