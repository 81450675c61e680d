"""What an operator's probes and scrapers see of a Kafka gateway and a worker on the test broker.

A gateway started before the topic job answers ``/healthz`` at once and
``/readyz`` 503 with what it waits for, then becomes ready; gateway and
worker ``/metrics`` parse with prometheus_client's parser with HELP on every
family; a worker logging JSON lines names the rejected event by its id.
"""

from __future__ import annotations

import asyncio
import json
import sys
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.conftest import TOKEN, data_file
from tests.kafka_fixtures import PARTITIONS, WORKER_ENV, Broker, kafka_broker, spawn  # noqa: F401
from tests.ops.metrics import scrape, value
from tracker.formats.files import read_file
from tracker.kafka.topics import ensure_topics

CLI = [sys.executable, "-m", "tracker.cli"]
RR6 = data_file("fide-tec-exercise16-rr6.trf")


def http(url: str) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


async def until(check: Any, timeout: float = 60) -> Any:
    """Call ``check()`` (in a thread) until it returns something true; return it."""
    async with asyncio.timeout(timeout):
        while not (found := await asyncio.to_thread(check)):  # noqa: ASYNC110  (another process: no event to await)
            await asyncio.sleep(0.2)
    return found


@pytest.mark.kafka
async def test_a_gateway_is_alive_at_once_ready_once_it_has_its_snapshots_and_both_processes_export_metrics(
    kafka_broker: Broker,  # noqa: F811
) -> None:
    gateway = spawn(
        "gateway",
        [
            *CLI,
            "gateway",
            "--broker",
            kafka_broker.url,
            "--port",
            "0",
            "--token",
            TOKEN,
            "--wait-for-topics",
            "120",
            "--processes",
            "1",
        ],  # one process: /metrics of a set is the process the kernel picks
    )
    kafka_broker.started.append(gateway)
    waiting = gateway.expect(r"waiting up to 120 s for the topics .* on http://127\.0\.0\.1:(\d+)/", timeout=60)
    url = f"http://127.0.0.1:{waiting.group(1)}"
    assert http(f"{url}/healthz")[0] == 200  # alive while it waits: a startupProbe or livenessProbe passes
    status, ready = http(f"{url}/readyz")
    assert (status, ready["reason"]) == (503, "starting: waiting for the topics")
    assert http(f"{url}/api/tournaments")[0] == 503  # nothing is served before the snapshots are read
    worker = spawn(
        "worker",
        [*CLI, "worker", "--broker", kafka_broker.url, "--partitions", str(PARTITIONS), "--wait-for-topics", "120",
         "--health-port", "0", "--log-level", "info", "--log-format", "json"],
        env=WORKER_ENV,
    )  # fmt: skip
    kafka_broker.started.append(worker)
    health = int(worker.expect(r"health on http://127\.0\.0\.1:(\d+)/healthz", timeout=60).group(1))
    worker_url = f"http://127.0.0.1:{health}"
    assert http(f"{worker_url}/healthz")[0] == 200  # alive while it waits
    status, ready = http(f"{worker_url}/readyz")
    assert (status, ready["reason"]) == (503, "waiting for the topics")
    await ensure_topics(kafka_broker.url, PARTITIONS)  # the topic job
    gateway.expect(r"listening on http://127\.0\.0\.1:(\d+)/", timeout=60)
    await until(lambda: http(f"{url}/readyz")[0] == 200)
    worker.expect(r"assigned partitions \[", timeout=60)
    await until(lambda: http(f"{worker_url}/readyz")[0] == 200)

    # an event the worker rejects: its JSON log line names it, and both /metrics count it
    tf = read_file(str(RR6), "ops")
    replay = await asyncio.create_subprocess_exec(*CLI, "replay", str(RR6), "--tournament", "ops",
                                                  "--broker", kafka_broker.url)  # fmt: skip
    assert await replay.wait() == 0
    await _submit_unknown_player(url)
    line = worker.expect(r'"event_id": "ops-bogus"', timeout=60).string
    record = json.loads(line)
    assert (record["event_id"], record["tournament"], record["level"]) == ("ops-bogus", "ops", "INFO")
    assert record["logger"] == "tracker.kafka.processing" and "rejected" in record["message"]

    content_type, families = await asyncio.to_thread(scrape, f"{url}/metrics")
    assert content_type == "text/plain; version=0.0.4; charset=utf-8"
    assert families["tracker_build_info"][0].labels["role"] == "gateway"
    assert value(families["tracker_events_rejected"], "tracker_events_rejected_total", code="unknown-player") == 1
    assert value(families["tracker_kafka_dead_letters"], "tracker_kafka_dead_letters_total") == 1
    assert value(families["tracker_tournaments"], "tracker_tournaments", state="live") == 1
    assert "process_open_fds" in families

    events = 1 + len(tf.events) + 1

    def applied() -> dict[str, Any] | None:
        _, found = scrape(f"{worker_url}/metrics")
        done = value(found["tracker_worker_records"], "tracker_worker_records_total", admit="next")
        return found if done >= events else None

    families = await until(applied)
    assert families["tracker_build_info"][0].labels["role"] == "worker"
    assert value(families["tracker_worker_assigned_partitions"], "tracker_worker_assigned_partitions") == PARTITIONS
    assert value(families["tracker_worker_rebalances"], "tracker_worker_rebalances_total") >= 1
    lags = {s.labels["partition"]: s.value for s in families["tracker_worker_consumer_lag_records"]}
    assert set(lags) == {str(p) for p in range(PARTITIONS)}
    assert value(families["tracker_worker_recovering"], "tracker_worker_recovering") == 0
    assert value(families["tracker_worker_broker_up"], "tracker_worker_broker_up") == 1
    assert "tracker_worker_batch_seconds" in families and "process_cpu_seconds" in families
    status, report = http(f"{worker_url}/healthz")
    assert status == 200 and report["status"] == "ok" and len(report["partitions"]) == PARTITIONS


async def _submit_unknown_player(url: str) -> None:
    from websockets.asyncio.client import connect

    event = {"type": "result_recorded", "id": "ops-bogus", "tournament": "ops", "round": 1, "white": 1,
             "black": 99, "result": "1-0"}  # fmt: skip
    async with connect(url.replace("http", "ws") + "/ws") as ws:
        await ws.send(json.dumps({"type": "submit", "token": TOKEN, "event": event}))
        async with asyncio.timeout(60):
            while (reply := json.loads(await ws.recv()))["type"] != "rejected":
                pass
    assert reply["code"] == "unknown-player", reply
