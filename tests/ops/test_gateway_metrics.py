"""``/metrics`` and ``/readyz`` of ``tracker up``: prometheus_client parses it, HELP everywhere, rejection codes."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Callable

from tests.conftest import RunningTracker
from tests.ops.metrics import scrape, value
from tests.wsclient import recv_until, send
from tracker import DISTRIBUTION, __version__


async def test_tracker_up_metrics_follow_the_naming_guide_and_count_rejections_by_code(
    tracker_factory: Callable[..., RunningTracker],
) -> None:
    from websockets.asyncio.client import connect

    server = tracker_factory()
    async with connect(server.ws_url) as ws:
        event = {"type": "result_recorded", "id": "r1", "tournament": "nowhere", "round": 1, "white": 1,
                 "black": 2, "result": "1-0"}  # fmt: skip
        await send(ws, {"type": "submit", "token": server.token, "event": event})
        await recv_until(ws, lambda m: m["type"] == "rejected", timeout=10)
        await send(ws, {"type": "submit", "token": "wrong-token-wrong-token", "event": {**event, "id": "r2"}})
        await recv_until(ws, lambda m: m["type"] == "rejected", timeout=10)
        content_type, families = await asyncio.to_thread(scrape, f"{server.http_url}/metrics")
    assert content_type == "text/plain; version=0.0.4; charset=utf-8"
    rejected = families["tracker_events_rejected"]
    assert value(rejected, "tracker_events_rejected_total", code="unknown-tournament") == 1
    assert value(rejected, "tracker_events_rejected_total", code="unauthorized") == 1
    build = families["tracker_build_info"]
    assert build[0].labels["version"] == __version__ and build[0].labels["distribution"] == DISTRIBUTION
    assert build[0].labels["role"] == "up"
    assert value(families["process_open_fds"], "process_open_fds") > 0
    assert "process_max_fds" in families and "process_resident_memory_bytes" in families
    assert value(families["tracker_connections"], "tracker_connections") >= 0
    assert {s.labels["state"] for s in families.get("tracker_tournaments", [])} <= {"live", "compacted"}
    for name in ("tracker_journal_lag_events", "tracker_ack_latency_seconds", "tracker_fanout_latency_seconds"):
        assert name in families, name
    assert "tracker_kafka_updates" not in families, "the Kafka feed's counters are a Kafka gateway's"


def test_tracker_up_is_ready_once_it_listens(tracker_factory: Callable[..., RunningTracker]) -> None:
    server = tracker_factory()
    with urllib.request.urlopen(f"{server.http_url}/readyz", timeout=10) as response:
        assert (response.status, json.loads(response.read())["status"]) == (200, "ready")
