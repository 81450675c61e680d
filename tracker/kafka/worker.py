"""``tracker worker``: the Faust app that applies results to tournaments.

How this works
--------------

One agent (:func:`tracker.kafka.agent.apply_results`) consumes
``tracker-results`` (keyed by tournament id), taking the records in batches
(``stream.take_events``: up to ``BATCH`` records, or what arrived within
``BATCH_WITHIN`` seconds).  Per record it runs the same recipe as the
embedded processor: **decode → apply → store → publish**:

1. :meth:`Processor.handle <tracker.kafka.processing.Processor.handle>`
   decodes the event and applies it with the core's ``apply`` to the live
   tournament (rebuilt from the table's entries when needed);
2. an accepted event's entry (``tournament/seq`` → the event) is stored in
   the table ``tournaments`` and its changelog record (the key and value
   Faust would write, to the results partition's changelog partition) is
   added to the batch's records for the compacted
   ``tracker-tournaments-changelog``: one record of the event's size,
   however long the tournament;
3. the outcome is staged with :class:`~tracker.kafka.publisher.Publisher`.

Then, once per batch: each tournament the batch touched gets **one**
``snapshot`` on the compacted ``tracker-snapshots`` (its latest standings:
only the latest matters), the changelog records and snapshots are handed to
the producer a batch per partition (:mod:`tracker.kafka.batches`: one
delivery future per partition batch, not one Faust ``send`` per record),
each results partition's position is written to the ``progress`` table,
and the batch's outcomes are released to the publisher, which flushes the
producer and waits until the broker has the changelog records and the
snapshots (``acks=all``) and then produces every accepted event's own
``update`` to ``tracker-standings``, in order, a batch per partition too
(every seq still gets its update); a rejected event goes to
``tracker-dead-letters`` with its code and reason instead.  One flush
serves every record applied since the last one, so a burst of results costs
one broker round trip.

Snapshot before update is what lets a gateway start from the snapshots and
then follow the updates without a gap (see :mod:`tracker.kafka.feed`): an
update of the batch never reaches the broker before a snapshot at least as
new as it; changelog before update is what makes a seq mean one event for
good.

Delivery guarantee
------------------

At least once, end to end; every result counted exactly once.  A results
offset is committed only after the agent finished the record and the
producer was flushed.  A worker that dies (SIGKILL, OOM, lost node) before
that commit has the records since the last commit re-delivered to
whichever worker gets the partition, after that worker recovered the table
from the changelog.  A worker killed mid-batch leaves on the changelog the
entries of some prefix of the batch (a partition's records reach the
broker in order).  Each re-delivered record is either not in the recovered
entries (it is applied now, as if for the first time: no update of it was
produced, since updates wait for the changelog) or already in them
(``apply`` changes nothing: the tournament remembers every event id; its
update is produced again, recomputed from the entries, in case the crash
came before the update reached the broker).  So every accepted event's update reaches
``tracker-standings`` at least once, always with the same seq and bytes;
gateways drop duplicates by seq.  The agent body never raises (a failed
publish is retried), because Faust acknowledges a record whose processing
raised.

**Every record once, in partition order.**  Which records were applied is
not left to Faust's committed offset: Faust 0.15.3 drops records it fetched
around a rebalance and can commit past them.  :class:`~tracker.kafka.progress.Progress` keeps, per
results partition, the offset of the next record to apply, in the table
``progress`` (changelog ``tracker-progress-changelog``, recovered with the
tournaments of the same partition).  The agent applies only that record
and moves on by one (written to the table once per batch, after the
batch's entries); a record beyond it means records were dropped, and the
partition is sought back to the missing one (a partition that simply stops
short is found by :meth:`tracker.kafka._faust_patch.Consumer._watch`).  A record below it is a
re-delivery, applied again as above.  The committed offset follows what
the agent processed, so it can never pass a record that was not.  So the
standings of every tournament go through the same sequence as the embedded
tracker's, takeovers included.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import faust

from tracker.config import OAUTHBEARER, KafkaSecurity, WorkerSettings
from tracker.gateway.serve import bound_port
from tracker.kafka._faust_patch import App, busy, check_version, make_current, raw_producer, table_store
from tracker.kafka.agent import Pipeline, apply_results
from tracker.kafka.batches import BatchProducer
from tracker.kafka.health import ANSWER_WITHIN, INTERVAL, Health, WorkerMetrics, health_server, watch
from tracker.kafka.processing import Processor
from tracker.kafka.progress import Progress
from tracker.kafka.publisher import Publisher
from tracker.kafka.topics import (
    APP_ID,
    DEFAULT_PARTITIONS,
    PROGRESS_TABLE,
    RESULTS,
    SNAPSHOTS,
    TABLE,
    await_topics,
    ensure_topics,
    faust_broker,
    ssl_context,
    token_provider,
)

__all__ = ["WorkerSettings", "broker_credentials", "build_app", "run_worker"]

log = logging.getLogger(__name__)
PRODUCER_BATCH_BYTES = 256 * 1024
"""The producer's batch per partition (Faust's default is 16 KiB).  An update carries the whole
standings (kilobytes), and the producer waits for the broker whenever a partition's batch is full,
so small batches cap the worker at a few updates per partition per broker round trip."""
_RAW: dict[str, Any] = {"key_type": bytes, "value_type": bytes, "key_serializer": "raw", "value_serializer": "raw"}


def broker_credentials(security: KafkaSecurity) -> Any:
    """Faust's ``broker_credentials``: ``None``, ``SSLCredentials``, ``SASLCredentials`` or ``OAuthCredentials``.

    Faust passes them to every client it starts (consumer, producer, the
    topic-creating client) as the same aiokafka settings the gateway and
    ``replay`` use: the TLS context carries the client certificate (mTLS),
    OAUTHBEARER the token file's provider.  Raises
    :class:`~tracker.kafka.topics.BrokerError` when a file cannot be used.
    """
    context = ssl_context(security)
    if security.sasl and security.mechanism == OAUTHBEARER:
        return faust.OAuthCredentials(oauth_cb=token_provider(security), ssl_context=context)
    if security.sasl:
        return faust.SASLCredentials(
            username=security.username, password=security.password, ssl_context=context, mechanism=security.mechanism
        )
    if context is not None:
        return faust.SSLCredentials(context)
    return None


def build_app(
    settings: WorkerSettings,
    partitions: int,
    data_dir: Path,
    say: Callable[[str], None],
    metrics: WorkerMetrics | None = None,
) -> Any:
    """The Faust app: topics, the ``tournaments`` and ``progress`` tables, the agent; returns the ``faust.App``.

    With ``metrics``, the agent counts into them, and the app also runs
    :func:`tracker.kafka.health.watch` and keeps their health's phase and
    the rebalance count up to date.
    """
    check_version()
    health = metrics.health if metrics is not None else None
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
    if "PRODUCER_MAX_BATCH_SIZE" not in os.environ:  # Faust reads it there too: an explicit value would win
        timeouts["producer_max_batch_size"] = PRODUCER_BATCH_BYTES
    app = App(
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
        broker_credentials=broker_credentials(settings.security),
        **timeouts,
    )
    results = app.topic(RESULTS, partitions=partitions, **_RAW)
    table = app.Table(
        TABLE,
        default=None,
        key_type=bytes,  # the types, not only the schema, choose the serializers used in recovery
        value_type=bytes,
        schema=faust.Schema(**_RAW),
        partitions=partitions,
        help="tournament id/seq → the event it accepted with that seq",
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
    progress = app.progress = Progress(
        lambda: app.consumer, progress_table, retry=max(1.0, 2 * app.conf.broker_commit_interval)
    )
    producer = BatchProducer(lambda: raw_producer(app), latest_only={SNAPSHOTS})
    publisher = Publisher(lambda: app.producer.flush(), producer.send, progress)
    pipeline = Pipeline(
        processor=Processor(),
        tournaments=table_store(table),  # the entries, read and written without Faust's per-key work
        progress=progress,
        publisher=publisher,
        produce=producer.send,
        name_event=make_current,
        metrics=metrics,
    )
    app.task(publisher.run)
    agent = functools.update_wrapper(functools.partial(apply_results, pipeline=pipeline), apply_results)
    app.agent(results, name="tracker.apply")(agent)
    if health is not None:
        watching = functools.partial(
            watch,
            health,
            lambda: app.consumer.assignment(),
            progress.position,
            lambda: dict(progress.processed_at),
            lambda: busy(app),
            settings.broker,
            settings.security,
            interval=min(INTERVAL, settings.stall_after / 4),
            wait=ANSWER_WITHIN,
        )
        app.task(_without_arguments(watching))

    def assigned(sender: Any, *args: Any, signal: Any, **_: Any) -> None:
        mine = sorted(tp.partition for tp in args[0] if tp.topic == RESULTS)
        say(f"tracker worker: assigned partitions {mine} of {RESULTS}")
        if health is not None and metrics is not None:
            health.phase = "recovering"
            metrics.rebalances.inc()

    def revoked(sender: Any, *args: Any, signal: Any, **_: Any) -> None:
        pipeline.processor.forget()
        progress.forget()
        if health is not None:
            health.phase = "joining the group"

    async def recovered(*_: Any, **__: Any) -> None:
        if health is not None:
            health.phase = "running"

    # weak=False: a signal holds weak references by default, and these closures have no other owner.
    # mode's SignalHandlerT spells its signal argument as a string mypy cannot match: hence the ignores.
    app.on_partitions_assigned.connect(assigned, weak=False)  # type: ignore[arg-type]
    app.on_partitions_revoked.connect(revoked, weak=False)  # type: ignore[arg-type]
    app.on_rebalance_complete.connect(recovered, weak=False)
    return app


def _without_arguments(run: Callable[[], Awaitable[None]]) -> Callable[[], Awaitable[None]]:
    """``run`` as a task that takes no argument (Faust passes the app to a task whose signature has parameters)."""

    async def task() -> None:
        await run()

    return task


def run_worker(settings: WorkerSettings, *, say: Callable[[str], None] | None = None) -> int:
    """Run a worker until SIGTERM/SIGINT; return the process exit code.

    Serves its health endpoint first (with ``settings.health_port``), then
    creates the missing topics (with ``settings.partitions`` partitions), or
    waits for them (``settings.wait_for_topics``).  Raises
    :class:`~tracker.kafka.topics.BrokerError` when the broker cannot be
    reached, refuses the credentials, or the topics do not come, and
    :class:`~tracker.kafka._faust_patch.UnverifiedFaust` for a Faust release
    the worker was not verified on.
    """
    check_version()
    say = say or _say
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    metrics = WorkerMetrics(Health(settings.stall_after))
    server = None
    if settings.health_port is not None:
        server = loop.run_until_complete(
            health_server(metrics.health, metrics, settings.health_host, settings.health_port)
        )
        say(f"tracker worker: health on http://{settings.health_host}:{bound_port(server)}/healthz")
    try:
        return _run(settings, loop, metrics, say)
    finally:
        if server is not None and not loop.is_closed():  # Faust closes the loop when it stops
            server.close()


def _run(
    settings: WorkerSettings, loop: asyncio.AbstractEventLoop, metrics: WorkerMetrics, say: Callable[[str], None]
) -> int:
    health = metrics.health
    security, wait = settings.security, settings.broker_wait
    if settings.wait_for_topics is not None:
        health.phase = "waiting for the topics"
        say(f"tracker worker: waiting up to {settings.wait_for_topics:g} s for the topics at {settings.broker}")
        in_use = loop.run_until_complete(
            await_topics(
                settings.broker, settings.wait_for_topics, partitions=settings.partitions, security=security, wait=wait
            )
        )
    else:
        wanted = settings.partitions or DEFAULT_PARTITIONS
        in_use = loop.run_until_complete(
            ensure_topics(settings.broker, wanted, replication=settings.replication, security=security, wait=wait)
        )
        if in_use != wanted:
            say(f"tracker worker: {RESULTS} has {in_use} partitions already; using {in_use}, not {wanted}")
    health.phase = "joining the group"
    with tempfile.TemporaryDirectory(prefix="tracker-worker-") as scratch:
        app = build_app(settings, in_use, settings.data_dir or Path(scratch), say, metrics)
        # override_logging=False: the CLI's logging (text or JSON lines, on stderr) stays in place
        worker = faust.Worker(
            app, loop=loop, loglevel=settings.loglevel, quiet=True, redirect_stdouts=False, override_logging=False
        )
        worker.spinner = None
        say(f"tracker worker: joining group {APP_ID!r} at {settings.broker} ({in_use} partitions)")
        try:
            worker.execute_from_commandline()
        except SystemExit as exc:
            return exc.code if isinstance(exc.code, int) else 1
    return 0  # pragma: no cover - execute_from_commandline always exits


def _say(line: str) -> None:
    print(line, flush=True)
