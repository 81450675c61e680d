"""``tracker gateway``: the Kafka deployment's gateway, from start to SIGTERM (the twin of :mod:`tracker.embedded.run`).

The gateway is the shared :func:`tracker.gateway.serve.serve` with the Kafka
backend (:mod:`tracker.kafka.feed`); what this module adds is the order of
its start: the port opens first (``/healthz`` answers, ``/readyz`` says what
it waits for), then the topics (created, or waited for), the producer and
the consumers, the snapshots; only then does it serve, and follow the
standings while it asks the broker every few seconds whether it answers.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from contextlib import AsyncExitStack, suppress
from typing import Any, Final

from tracker.config import ServerConfig
from tracker.gateway.metrics import Metrics
from tracker.gateway.processes import Child, per_process, run_processes
from tracker.gateway.serve import serve
from tracker.kafka.feed import OUTCOME_TIMEOUT, Feed, KafkaBackend, standings_consumer
from tracker.kafka.producer import results_producer
from tracker.kafka.topics import (
    BROKER_WAIT,
    PLAINTEXT,
    SNAPSHOTS,
    STANDINGS,
    KafkaSecurity,
    await_topics,
    ensure_topics,
)

BROKER_CHECK: Final = 5.0
"""Seconds between two asks whether the broker answers (for ``/readyz``)."""


class Status:
    """What ``/readyz`` says of a Kafka gateway: where its start is, and whether the broker answers."""

    def __init__(self) -> None:
        self.phase: str | None = "connecting to the broker"
        self.broker_problem: str | None = None

    def reason(self) -> str | None:
        """Why the gateway is not ready (``None``: it is)."""
        return self.phase or self.broker_problem

    async def watch(self, consumer: Any, *, every: float = BROKER_CHECK) -> None:
        """Ask the broker for its metadata every ``every`` seconds until cancelled; note when it does not answer."""
        while True:
            try:
                async with asyncio.timeout(2 * every):
                    await consumer.topics()  # a metadata request
                self.broker_problem = None
            except Exception as exc:  # not an error of the gateway's: it keeps serving what it has
                self.broker_problem = f"the Kafka broker does not answer ({exc!r})"
            await asyncio.sleep(every)


async def serve_gateway(
    broker: str,
    config: ServerConfig,
    *,
    say: Callable[[str], None] = print,
    outcome_timeout: float = OUTCOME_TIMEOUT,
    security: KafkaSecurity = PLAINTEXT,
    wait: float = BROKER_WAIT,
    wait_for_topics: float | None = None,
    reuse_port: bool = False,
) -> None:
    """Serve until SIGTERM/SIGINT: bootstrap from the snapshots, then follow the standings.

    The port opens first (``/healthz`` answers, ``/readyz`` says what the
    gateway waits for); then it creates the missing topics, or with
    ``wait_for_topics`` (seconds) waits that long for an operator's job to
    create them, and reads the snapshots; only then does it serve.  Raises
    :class:`BrokerError` when the broker cannot be reached within ``wait``
    seconds, refuses the credentials, or the topics do not come.
    """
    metrics = Metrics("gateway")
    status = Status()
    backend = KafkaBackend(None, outcome_timeout=outcome_timeout)
    metrics.gauges["tracker_kafka_submits_waiting"] = lambda: backend.waiting
    feed = Feed(backend, metrics)
    async with AsyncExitStack() as clients:
        live: Any = None

        async def start(port: int) -> None:
            nonlocal live
            if wait_for_topics is None:
                await ensure_topics(broker, security=security, wait=wait)
            else:
                status.phase = "waiting for the topics"
                say(
                    f"tracker gateway: waiting up to {wait_for_topics:g} s for the topics at {broker}"
                    f" (/healthz and /readyz on http://{config.host}:{port}/)"
                )
                await await_topics(broker, wait_for_topics, security=security, wait=wait)
            backend.producer = await clients.enter_async_context(results_producer(broker, security=security, wait=wait))
            live = await clients.enter_async_context(standings_consumer(broker, security, wait))
            status.phase = f"reading {SNAPSHOTS}"
            async with standings_consumer(broker, security, wait) as boot:
                installed = await feed.start(live, boot)
            status.phase = None
            say(f"tracker gateway: {installed} tournaments from {SNAPSHOTS}; following {STANDINGS} at {broker}")

        async def follow(port: int) -> None:
            watcher = asyncio.create_task(status.watch(live), name="gateway-broker-watch")
            try:
                await feed.run(live)  # what it raises stops the gateway, as itself (not in a group)
            finally:
                watcher.cancel()
                with suppress(asyncio.CancelledError):
                    await watcher

        await serve(
            config,
            backend,
            name="tracker gateway",
            say=say,
            metrics=metrics,
            background=follow,
            starting=start,
            readiness=status.reason,
            reuse_port=reuse_port,
        )


def run_gateway(
    broker: str,
    config: ServerConfig,
    *,
    security: KafkaSecurity = PLAINTEXT,
    wait: float = BROKER_WAIT,
    wait_for_topics: float | None = None,
    processes: int = 1,
) -> int:
    """``tracker gateway``: serve until SIGTERM/SIGINT; return the exit code.

    With ``processes`` > 1, that many gateway processes serve the one port, each a consumer of the
    topics of its own (:mod:`tracker.gateway.processes`), each with its share of the caps and throttles
    (:func:`~tracker.gateway.processes.per_process`), and one that dies is restarted.  Raises :class:`BrokerError` as
    :func:`serve_gateway` does (with several processes, each says its own and the set exits 1).
    """

    def say(line: str) -> None:
        print(line, flush=True)

    if processes <= 1:
        asyncio.run(
            serve_gateway(broker, config, say=say, security=security, wait=wait, wait_for_topics=wait_for_topics)
        )
        return 0

    def one(port: int, child: Child) -> int:
        asyncio.run(
            serve_gateway(
                broker,
                dataclasses.replace(config, port=port, limits=per_process(config.limits, processes)),
                say=child.say,
                security=security,
                wait=wait,
                wait_for_topics=wait_for_topics,
                reuse_port=True,
            )
        )
        return 0

    return run_processes("tracker gateway", config.host, config.port, processes, one, say=say)
