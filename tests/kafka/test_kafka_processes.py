"""``tracker gateway --processes 2``: two gateway processes on one port, each following the topics, all drained on
SIGTERM, and gone with their parent even when it is killed.

Real pieces: Tansu, a worker, the gateway command; which process holds a
client's connection is read from ``/proc`` (the socket inodes each process
has open against the established connections on the gateway's port).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tests.builders import TID, game, opened
from tests.conftest import TOKEN
from tests.kafka_fixtures import Broker, kafka_broker  # noqa: F401  (a fixture)
from tests.processes import Process, spawn
from tests.wsclient import recv_until, reply_to, send, submit

pytestmark = pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads /proc (Linux)")


def start_gateway(broker: Broker, processes: int) -> tuple[Process, int]:
    process = spawn(
        f"gateway-{len(broker.started)}",
        [
            sys.executable,
            *("-m", "tracker.cli", "gateway", "--broker", broker.url, "--port", "0", "--token", TOKEN),
            *("--processes", str(processes)),
        ],
    )
    broker.started.append(process)
    port = int(process.expect(rf"listening on http://127\.0\.0\.1:(\d+)/ .*, {processes} processes").group(1))
    return process, port


def children(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def connections_by_process(pids: list[int], port: int) -> dict[int, int]:
    """How many established connections on ``port`` (the server's side) each process holds."""
    established: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                established.add(fields[9])
    held: dict[int, int] = {}
    for pid in pids:
        inodes = set()
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
        held[pid] = len(inodes & established)
    return held


async def subscribed(url: str) -> ClientConnection:
    ws = await connect(url)
    await send(ws, {"type": "subscribe", "tournament": TID})
    await recv_until(ws, lambda m: m.get("type") == "snapshot")
    return ws


def test_two_processes_share_the_port_each_follows_the_topics_and_sigterm_drains_both(
    kafka_broker: Broker,  # noqa: F811  (the fixture)
) -> None:
    kafka_broker.worker()
    gateway, port = start_gateway(kafka_broker, 2)
    pids = children(gateway.proc.pid)
    assert len(pids) == 2
    url = f"ws://127.0.0.1:{port}/ws"

    async def scenario() -> list[int | None]:
        clients = [await subscribed(url) for _ in range(12)]
        held = connections_by_process(pids, port)
        assert all(count > 0 for count in held.values()), held  # the kernel spread them over both processes
        async with connect(url) as arbiter:
            for event in (opened(4), game(1, 1, 4, "1-0")):
                await submit(arbiter, TOKEN, event)
                assert (await reply_to(arbiter, event.id, timeout=60))["type"] == "ack"
        for ws in clients:  # every process read the update from the standings topic
            await recv_until(ws, lambda m: m.get("type") == "update" and m.get("seq") == 2, timeout=30)
        gateway.proc.send_signal(signal.SIGTERM)
        codes: list[int | None] = []
        for ws in clients:
            try:
                async with asyncio.timeout(15):
                    while True:
                        await ws.recv()
            except ConnectionClosed as closed:
                codes.append(closed.rcvd.code if closed.rcvd is not None else None)
        return codes

    assert asyncio.run(scenario()) == [1001] * 12  # going away: every client of both processes
    assert gateway.proc.wait(timeout=30) == 0
    assert not any(Path(f"/proc/{pid}").exists() for pid in pids)


def test_the_processes_go_with_their_parent_even_when_it_is_killed(kafka_broker: Broker) -> None:  # noqa: F811
    gateway, _ = start_gateway(kafka_broker, 2)
    pids = children(gateway.proc.pid)
    gateway.proc.send_signal(signal.SIGKILL)
    gateway.proc.wait(timeout=10)
    deadline = time.monotonic() + 20
    while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_running(pid) for pid in pids)


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    if state == "Z":  # exited, not reaped yet (its parent is gone: init reaps it)
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
