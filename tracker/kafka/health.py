"""A worker's health and metrics: ``/healthz``, ``/readyz`` and ``/metrics`` on ``--health-port``.

How this works
--------------

Faust 0.15.3 can leave a partition stuck after a rebalance (its consumer
fetches nothing more of it while the group thinks all is well), and a
stuck agent looks the same from outside: the process is alive, the group
is stable, and one partition's results wait for ever.  So the worker
watches its own results partitions: every ``interval`` seconds
:func:`watch` asks the broker for their end offsets, **with a client of its
own** (a connection apart from the consumer's fetches, so a wedged fetch
cannot hide its own lag), and compares them with
:meth:`Progress.position <tracker.kafka.progress.Progress.position>`, the
offset of the next record the agent must apply.  :class:`Health` keeps, per
assigned partition, when that position last moved; a partition with records
to apply (*lag*) whose position has not moved for ``stall_after`` seconds
is **stalled**, and ``/healthz`` answers 503 naming it: Kubernetes restarts
the worker and the partition moves to a healthy one.  A partition without
lag is never stalled, however long it has been idle, and while the worker
rebalances or recovers its tables (Faust reads the changelogs first) the
clocks start again: waiting for a recovery is not a stall.  A broker that
does not answer is not the worker's fault either: ``/healthz`` stays 200 and
``/readyz`` says 503 with the reason.

``/healthz`` reports, per assigned partition, its position, the broker's end
offset, the lag, the age of the last record the agent processed and whether
it is stalled; ``/metrics`` has the same as gauges, and the records, batches
and rebalances as counters (:class:`WorkerMetrics`).  The server answers
from the worker's own event loop: a loop that is blocked does not answer,
and fails the probe too.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Final

from aiokafka import AIOKafkaConsumer, TopicPartition
from prometheus_client import Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from websockets.asyncio.server import Server, ServerConnection
from websockets.asyncio.server import serve as websockets_serve
from websockets.http11 import Request, Response

from tracker.config import KafkaSecurity
from tracker.gateway.http import as_json, text
from tracker.gateway.metrics import CONTENT_TYPE, exposition, registry
from tracker.kafka.progress import Admit
from tracker.kafka.topics import RESULTS, client_options, started

log = logging.getLogger(__name__)

INTERVAL: Final = 5.0
"""Seconds between two looks at the end offsets."""
ANSWER_WITHIN: Final = 10.0
"""Seconds the broker has to give the end offsets; beyond, it counts as not answering."""


@dataclass(slots=True)
class PartitionHealth:
    """One assigned results partition as :class:`Health` last saw it."""

    partition: int
    position: int | None = None
    """The offset of the next record to apply (``None``: not known yet)."""
    end: int | None = None
    """The broker's end offset (``None``: not asked yet)."""
    since: float = 0.0
    """When the position last moved, or the clock started again (assignment, rebalance, recovery)."""
    processed: float | None = None
    """When the agent last processed one of its records (``None``: none since the worker started)."""

    @property
    def lag(self) -> int | None:
        """Records on the broker the agent has not applied yet (``None``: not known)."""
        if self.end is None or self.position is None:
            return None
        return max(0, self.end - self.position)


class Health:
    """What ``/healthz`` and ``/readyz`` say: per partition, whether it moves; the worker's phase; the broker.

    :meth:`observe` is fed by :func:`watch`; ``clock`` is monotonic seconds.
    """

    def __init__(self, stall_after: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.stall_after = stall_after
        self._clock = clock
        self.phase = "starting"
        """``starting``, ``waiting for the topics``, ``joining the group``, ``recovering`` or ``running``."""
        self.broker_problem: str | None = None
        self.partitions: dict[int, PartitionHealth] = {}

    def observe(
        self,
        positions: dict[int, int | None],
        ends: dict[int, int] | None,
        processed: dict[int, float],
        *,
        busy: bool,
    ) -> None:
        """A look at the assigned partitions: their positions, end offsets (``None``: the broker did not answer).

        ``busy``: the worker is rebalancing or recovering its tables, so
        nothing is expected to move: every partition's clock starts again,
        as it does while the broker does not answer (no worker could move then).
        """
        now = self._clock()
        seen = {}
        for partition, position in positions.items():
            known = self.partitions.get(partition) or PartitionHealth(partition, since=now)
            if busy or ends is None or position != known.position:
                known.since = now
            known.position = position
            if ends is not None:
                known.end = ends.get(partition, known.end)
            known.processed = processed.get(partition, known.processed)
            seen[partition] = known
        self.partitions = seen

    def stalled(self) -> list[int]:
        """The partitions with lag whose position has not moved for ``stall_after`` seconds."""
        now = self._clock()
        return sorted(p.partition for p in self.partitions.values() if p.lag and now - p.since >= self.stall_after)

    def alive(self) -> tuple[bool, dict[str, Any]]:
        """``/healthz``: healthy unless a partition is stalled, and the report."""
        stalled = self.stalled()
        now = self._clock()
        report: dict[str, Any] = {
            "status": "stalled" if stalled else "ok",
            "phase": self.phase,
            "stall_after": self.stall_after,
            "partitions": [
                {
                    "partition": p.partition,
                    "position": p.position,
                    "end": p.end,
                    "lag": p.lag,
                    "last_record_age": None if p.processed is None else round(now - p.processed, 3),
                    "unmoved_for": round(now - p.since, 3),
                    "stalled": p.partition in stalled,
                }
                for p in sorted(self.partitions.values(), key=lambda p: p.partition)
            ],
        }
        if stalled:
            report["reason"] = (
                f"partition(s) {', '.join(map(str, stalled))} of {RESULTS} have records to apply"
                f" and have not moved for {self.stall_after:g} s"
            )
        return not stalled, report

    def ready(self) -> tuple[bool, dict[str, Any]]:
        """``/readyz``: ready once running with its partitions recovered, while the broker answers."""
        reason = None
        if self.phase != "running":
            reason = self.phase
        elif self.broker_problem is not None:
            reason = self.broker_problem
        if reason is None:
            return True, {"status": "ready"}
        return False, {"status": "not ready", "reason": reason}


class WorkerMetrics:
    """The worker's ``/metrics``: build info, the process, its records, batches and rebalances, its partitions."""

    def __init__(self, health: Health) -> None:
        self.health = health
        self.registry = registry("worker")
        self._records = Counter(
            "tracker_worker_records",
            "Results records the agent took, by what it did with them: next (applied), again (a re-delivery,"
            " applied again, which changes nothing) or skip (beyond records it has not had yet; they come again).",
            labelnames=("admit",),
            registry=self.registry,
        )
        for admit in Admit:
            self._records.labels(admit=admit.value)
        self._batches = Histogram(
            "tracker_worker_batch_seconds",
            "Seconds the agent took for one batch of results records, from the first record to the release.",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
            registry=self.registry,
        )
        self.rebalances = Counter(
            "tracker_worker_rebalances",
            "Rebalances of the workers' group this worker took part in.",
            registry=self.registry,
        )
        self.registry.register(_PartitionCollector(health))

    def admitted(self, admit: Admit) -> None:
        """One record the agent took."""
        self._records.labels(admit=admit.value).inc()

    def batch(self, seconds: float, records: int) -> None:
        """One batch done (``records`` records in ``seconds``)."""
        self._batches.observe(seconds)

    def render(self) -> bytes:
        """``/metrics``: the text exposition."""
        return exposition(self.registry)


class _PartitionCollector(Collector):
    """The partitions' gauges, read from :class:`Health` at scrape time."""

    def __init__(self, health: Health) -> None:
        self.health = health

    def collect(self) -> Iterable[GaugeMetricFamily]:
        health = self.health
        stalled = set(health.stalled())
        now = time.monotonic()
        partitions = sorted(health.partitions.values(), key=lambda p: p.partition)
        yield GaugeMetricFamily(
            "tracker_worker_assigned_partitions", f"Partitions of {RESULTS} assigned to this worker.", len(partitions)
        )
        lag = GaugeMetricFamily(
            "tracker_worker_consumer_lag_records",
            f"Records of an assigned partition of {RESULTS} on the broker that the agent has not applied yet.",
            labels=("partition",),
        )
        age = GaugeMetricFamily(
            "tracker_worker_last_record_age_seconds",
            "Seconds since the agent last processed a record of an assigned partition (absent: none yet).",
            labels=("partition",),
        )
        stuck = GaugeMetricFamily(
            "tracker_worker_partition_stalled",
            "1 when an assigned partition has records to apply and has not moved for --stall-seconds, else 0.",
            labels=("partition",),
        )
        for p in partitions:
            label = [str(p.partition)]
            if p.lag is not None:
                lag.add_metric(label, p.lag)
            if p.processed is not None:
                age.add_metric(label, now - p.processed)
            stuck.add_metric(label, 1.0 if p.partition in stalled else 0.0)
        yield from (lag, age, stuck)
        yield GaugeMetricFamily(
            "tracker_worker_recovering",
            "1 while the worker joins its group or recovers its tables from their changelogs, else 0.",
            1.0 if health.phase in ("joining the group", "recovering") else 0.0,
        )
        yield GaugeMetricFamily(
            "tracker_worker_broker_up",
            "1 when the broker gave the end offsets at the last look, else 0.",
            0.0 if health.broker_problem else 1.0,
        )

    def describe(self) -> Iterable[GaugeMetricFamily]:
        return ()


def respond(health: Health, metrics: WorkerMetrics, request: Request) -> Response:
    """The answer to one request of the health server."""
    path = request.path.split("?", 1)[0]
    if path == "/healthz":
        ok, report = health.alive()
        return as_json(report, HTTPStatus.OK if ok else HTTPStatus.SERVICE_UNAVAILABLE)
    if path == "/readyz":
        ok, report = health.ready()
        return as_json(report, HTTPStatus.OK if ok else HTTPStatus.SERVICE_UNAVAILABLE)
    if path == "/metrics":
        return text(HTTPStatus.OK, metrics.render().decode(), CONTENT_TYPE)
    return text(HTTPStatus.NOT_FOUND, "not found: /healthz, /readyz, /metrics\n")


async def health_server(health: Health, metrics: WorkerMetrics, host: str, port: int) -> Server:
    """Start serving ``/healthz``, ``/readyz`` and ``/metrics`` on ``host:port`` (HTTP GET); ``close()`` it to stop."""

    def process_request(conn: ServerConnection, request: Request) -> Response:
        return respond(health, metrics, request)

    async def refuse(conn: ServerConnection) -> None:  # pragma: no cover - process_request answers every request
        await conn.close()

    return await websockets_serve(refuse, host, port, process_request=process_request, server_header=None)


async def watch(
    health: Health,
    assignment: Callable[[], Iterable[Any]],
    position: Callable[[Any], int | None],
    processed: Callable[[], dict[Any, float]],
    busy: Callable[[], bool],
    broker: str,
    security: KafkaSecurity,
    *,
    interval: float = INTERVAL,
    wait: float = ANSWER_WITHIN,
) -> None:
    """Look at the assigned results partitions every ``interval`` seconds until cancelled (see the module).

    ``assignment`` gives the consumer's assigned partitions, ``position`` the
    next offset to apply of one, ``processed`` when the agent last processed
    a record of each, ``busy`` whether the worker is rebalancing or
    recovering.  The end offsets come from a consumer of its own (no group).
    """

    def make() -> AIOKafkaConsumer:
        return AIOKafkaConsumer(group_id=None, enable_auto_commit=False, **client_options(broker, security))

    async with started(make, broker, wait=wait, tls=security.tls) as client:
        while True:
            tps = sorted((tp for tp in assignment() if tp.topic == RESULTS), key=lambda tp: tp.partition)
            positions = {tp.partition: position(tp) for tp in tps}
            ends: dict[int, int] | None = None
            if tps:
                try:
                    async with asyncio.timeout(wait):
                        found = await client.end_offsets([TopicPartition(RESULTS, tp.partition) for tp in tps])
                        unknown = [TopicPartition(RESULTS, p) for p, at in positions.items() if at is None]
                        # nothing applied yet: the agent starts at the partition's first record
                        first = await client.beginning_offsets(unknown) if unknown else {}
                    ends = {tp.partition: int(offset) for tp, offset in found.items()}
                    positions.update({tp.partition: int(offset) for tp, offset in first.items()})
                    health.broker_problem = None
                except Exception as exc:  # the broker's trouble, not the worker's: /readyz says it
                    health.broker_problem = f"the broker did not give the end offsets within {wait:g} s ({exc!r})"
                    log.info("health: %s", health.broker_problem)
            times = {tp.partition: at for tp, at in processed().items()}
            health.observe(positions, ends, times, busy=busy())
            await asyncio.sleep(interval)
