"""Prometheus metrics of a tracker process, with ``prometheus-client``.

How this works
--------------

Each process (``tracker up``, ``tracker gateway``, ``tracker worker``) owns
one :class:`~prometheus_client.CollectorRegistry` (:func:`registry`): no
global registry, so tests run many servers in one interpreter.  Every
registry carries ``tracker_build_info`` (version, distribution, role,
Python) and the ``process_*`` collector (CPU, memory, open file descriptors
against their limit: what runs out first on a websocket gateway).

The gateway's code counts with :meth:`Metrics.inc` and registers gauges read
at scrape time in :attr:`Metrics.gauges`, by the names below; this module is
the one table that gives each of them its family, HELP text and labels
(:data:`COUNTERS`, :data:`GAUGES`).  A name not in the table is refused at
once (``KeyError``), so a metric never reaches ``/metrics`` without HELP.
Rejected submits carry the rejection's ``code`` as a label; the tournaments
are one family with a ``state`` label (``live``, ``compacted``) where they
used to be three gauges that overlapped.
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import Final

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    Info,
    ProcessCollector,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from tracker import DISTRIBUTION, __version__

CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"
"""The text exposition format every Prometheus reads (all of tracker's names are plain ASCII)."""
# No `_created` twin of every counter and histogram: one family each, with its HELP.
disable_created_metrics()  # type: ignore[no-untyped-call]  # prometheus-client leaves it unannotated
LATENCY_BUCKETS: Final = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


@dataclass(frozen=True, slots=True)
class Family:
    """One exposed family: its name (without ``_total`` for a counter), HELP, and label names."""

    name: str
    help: str
    labels: tuple[str, ...] = ()
    roles: tuple[str, ...] = ("up", "gateway")
    """The processes that show it from the start (at 0); any other, once counted."""


COUNTERS: Final[dict[str, Family]] = {
    "tracker_events_accepted_total": Family("tracker_events_accepted", "Submitted events acknowledged (durable)."),
    "tracker_events_rejected_total": Family(
        "tracker_events_rejected", "Submitted events rejected, by the rejection's code.", ("code",)
    ),
    "tracker_messages_invalid_total": Family(
        "tracker_messages_invalid", "Websocket messages that could not be decoded or were not allowed."
    ),
    "tracker_clients_dropped_total": Family(
        "tracker_clients_dropped", "Subscribers dropped for not reading their updates (close 1008)."
    ),
    "tracker_updates_merged_total": Family(
        "tracker_updates_merged",
        "Subscribers written a snapshot and the newest update instead of the updates they were behind (a burst).",
    ),
    "tracker_subscribes_throttled_total": Family(
        "tracker_subscribes_throttled", "Subscribes refused because a connection re-subscribed too fast."
    ),
    "tracker_token_checks_total": Family("tracker_token_checks", "Submitted tokens compared with the arbiter token."),
    "tracker_token_checks_refused_total": Family(
        "tracker_token_checks_refused", "Token checks refused unread: the address sent too many wrong tokens."
    ),
    "tracker_connections_refused_total": Family(
        "tracker_connections_refused",
        "Websockets closed at once because their address already had its most connections open.",
    ),
    "tracker_stakes_joins_throttled_total": Family(
        "tracker_stakes_joins_throttled",
        "Subscribes asking for stakes or boards refused that part: their address asked too often.",
    ),
    "tracker_kafka_updates_total": Family(
        "tracker_kafka_updates",
        "Updates read from the standings topic and published to subscribers.",
        roles=("gateway",),
    ),
    "tracker_kafka_dead_letters_total": Family(
        "tracker_kafka_dead_letters", "Rejected events read from the dead-letter topic.", roles=("gateway",)
    ),
}
"""What the gateway counts: the name its code uses → the family on ``/metrics``."""


@dataclass(frozen=True, slots=True)
class Gauge:
    """A gauge sample read at scrape time: its family and label values.

    A ``fallback`` sample is left out when another gauge gives the same
    family and labels (the hub counts every tournament; the embedded
    processor says which of them are live and which compacted).
    """

    family: Family
    labels: tuple[str, ...] = ()
    fallback: bool = False


_TOURNAMENTS: Final = Family(
    "tracker_tournaments",
    "Tournaments served, by state: live (in memory) or compacted (finished, folded back from the journal on demand).",
    ("state",),
)
GAUGES: Final[dict[str, Gauge]] = {
    "tracker_connections": Gauge(Family("tracker_connections", "Open websocket connections.")),
    "tracker_subscribers": Gauge(Family("tracker_subscribers", "Subscriptions to tournaments, over all connections.")),
    "tracker_history_bytes": Gauge(
        Family("tracker_history_bytes", "Bytes of field deltas kept for resumes, over all tournaments.")
    ),
    "tracker_tournaments": Gauge(_TOURNAMENTS, ("live",), fallback=True),
    "tracker_tournaments_live": Gauge(_TOURNAMENTS, ("live",)),
    "tracker_tournaments_compacted": Gauge(_TOURNAMENTS, ("compacted",)),
    "tracker_journal_lag": Gauge(
        Family("tracker_journal_lag_events", "Accepted events waiting to be committed to the journal.")
    ),
    "tracker_kafka_submits_waiting": Gauge(
        Family(
            "tracker_kafka_submits_waiting", "Submits produced to the results topic, waiting for a worker's verdict."
        )
    ),
}
"""What the gateway reads at scrape time: the name its code registers → the sample on ``/metrics``."""


def registry(role: str) -> CollectorRegistry:
    """A fresh registry with ``tracker_build_info`` (``role``: up, gateway or worker) and the process collector."""
    found = CollectorRegistry()
    info = Info("tracker_build", "The running tracker: its version, distribution, role and Python.", registry=found)
    info.info(
        {
            "version": __version__,
            "distribution": DISTRIBUTION,
            "role": role,
            "python": platform.python_version(),
        }
    )
    ProcessCollector(registry=found)
    return found


def exposition(found: CollectorRegistry) -> bytes:
    """The registry in the text exposition format (:data:`CONTENT_TYPE`)."""
    return generate_latest(found)


class _Gauges(MutableMapping[str, Callable[[], float]]):
    """Gauges read at scrape time, by the names of :data:`GAUGES`."""

    def __init__(self) -> None:
        self._read: dict[str, Callable[[], float]] = {}

    def __setitem__(self, name: str, read: Callable[[], float]) -> None:
        if name not in GAUGES:
            raise KeyError(f"{name} is not in tracker.gateway.metrics.GAUGES: give it a family and HELP there")
        self._read[name] = read

    def __getitem__(self, name: str) -> Callable[[], float]:
        return self._read[name]

    def __delitem__(self, name: str) -> None:
        del self._read[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read)

    def __len__(self) -> int:
        return len(self._read)


class _GaugeCollector(Collector):
    """Reads the gauges at scrape time."""

    def __init__(self, gauges: _Gauges) -> None:
        self.gauges = gauges

    def collect(self) -> Iterable[GaugeMetricFamily]:
        samples: dict[Family, dict[tuple[str, ...], float]] = {}
        for fallback in (False, True):
            for name, read in self.gauges._read.items():
                gauge = GAUGES[name]
                given = samples.setdefault(gauge.family, {})
                if gauge.fallback == fallback and gauge.labels not in given:
                    given[gauge.labels] = float(read())
        for family, values in samples.items():
            metric = GaugeMetricFamily(family.name, family.help, labels=family.labels)
            for labels, value in sorted(values.items()):
                metric.add_metric(labels, value)
            yield metric

    def describe(self) -> Iterable[GaugeMetricFamily]:
        return ()  # read at scrape time: the families are not known before the gauges are registered


class Metrics:
    """The metrics of one gateway on a registry of its own; ``role`` is ``up`` (embedded) or ``gateway`` (Kafka)."""

    def __init__(self, role: str = "up") -> None:
        self.registry = registry(role)
        self._counters: dict[str, Counter] = {}
        gauges = _Gauges()
        self.gauges: MutableMapping[str, Callable[[], float]] = gauges
        self.registry.register(_GaugeCollector(gauges))
        self.ack_latency = Histogram(
            "tracker_ack_latency_seconds",
            "Seconds from a submit received to its ack sent.",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.fanout_latency = Histogram(
            "tracker_fanout_latency_seconds",
            "Seconds from an update published to its bytes written to every subscriber.",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        for name, family in COUNTERS.items():
            if not family.labels and role in family.roles:  # from the start, at 0; a labelled one once counted
                self._counter(name)

    def inc(self, name: str, by: int = 1, **labels: str) -> None:
        """Add ``by`` to the counter ``name`` (a key of :data:`COUNTERS`) with ``labels``.

        Raises ``KeyError`` for a name not in :data:`COUNTERS`, ``ValueError``
        for labels other than the family's.
        """
        counter = self._counter(name)
        (counter.labels(**labels) if labels else counter).inc(by)

    @property
    def counters(self) -> dict[str, float]:
        """Every counter's value by the name its code uses (a labelled one summed over its labels)."""
        totals: dict[str, float] = {}
        for metric in self.registry.collect():
            for sample in metric.samples:
                if sample.name.endswith("_total") and sample.name in COUNTERS:
                    totals[sample.name] = totals.get(sample.name, 0.0) + sample.value
        return totals

    def render(self) -> str:
        """``/metrics``: the text exposition of the registry."""
        return exposition(self.registry).decode()

    def _counter(self, name: str) -> Counter:
        counter = self._counters.get(name)
        if counter is None:
            family = COUNTERS[name]
            counter = self._counters[name] = Counter(
                family.name, family.help, labelnames=family.labels, registry=self.registry
            )
        return counter
