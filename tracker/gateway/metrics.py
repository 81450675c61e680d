"""A few Prometheus metrics, rendered in the text exposition format.

Small on purpose: counters, gauges read at scrape time, and fixed-bucket
histograms.  No global registry: the gateway owns one :class:`Metrics`.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field

_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


@dataclass(slots=True)
class Histogram:
    name: str
    help: str
    buckets: tuple[float, ...] = _LATENCY_BUCKETS
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    n: int = 0

    def __post_init__(self) -> None:
        self.counts = [0] * (len(self.buckets) + 1)

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.buckets, value)] += 1
        self.total += value
        self.n += 1

    def render(self) -> list[str]:
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} histogram"]
        running = 0
        for bound, count in zip(self.buckets, self.counts, strict=False):
            running += count
            lines.append(f'{self.name}_bucket{{le="{bound}"}} {running}')
        lines.append(f'{self.name}_bucket{{le="+Inf"}} {self.n}')
        lines.append(f"{self.name}_sum {self.total:.6f}")
        lines.append(f"{self.name}_count {self.n}")
        return lines


class Metrics:
    """The gateway's metrics; gauges are callables read at scrape time."""

    def __init__(self) -> None:
        self.counters: dict[str, int] = {
            "tracker_events_accepted_total": 0,
            "tracker_events_rejected_total": 0,
            "tracker_messages_invalid_total": 0,
            "tracker_clients_dropped_total": 0,
            "tracker_subscribes_throttled_total": 0,
        }
        self.gauges: dict[str, Callable[[], float]] = {}
        self.ack_latency = Histogram("tracker_ack_latency_seconds", "submit received to ack sent")
        self.fanout_latency = Histogram(
            "tracker_fanout_latency_seconds", "update published to written to every subscriber"
        )

    def inc(self, name: str, by: int = 1) -> None:
        self.counters[name] = self.counters.get(name, 0) + by

    def render(self) -> str:
        lines: list[str] = []
        for name, value in sorted(self.counters.items()):
            lines += [f"# TYPE {name} counter", f"{name} {value}"]
        for name, read in sorted(self.gauges.items()):
            lines += [f"# TYPE {name} gauge", f"{name} {read()}"]
        lines += self.ack_latency.render()
        lines += self.fanout_latency.render()
        return "\n".join(lines) + "\n"
