"""Topic names, broker URLs and topic creation for the distributed deployment.

Every record on every topic is keyed by the tournament id (UTF-8), and every
producer uses Kafka's default partitioner (murmur2 of the key), so a
tournament's results, state, standings and snapshots each sit on one
partition: one worker owns the tournament, and its records stay in order.

==========================  ========  ===========  ====================================
topic                       cleanup   value        written by
==========================  ========  ===========  ====================================
``tracker-results``         delete    event JSON   replay, follow, gateways (submit)
``tracker-standings``       delete    ``update``   workers, one per accepted event
``tracker-snapshots``       compact   ``snapshot`` workers, after every event
``tracker-dead-letters``    delete    dead letter  workers, one per rejected event
``tracker-tournaments-      compact   event log    workers (the Faust table's changelog)
changelog``
``tracker-progress-         compact   offset       workers (the Faust table's changelog)
changelog``
==========================  ========  ===========  ====================================

The last two are the workers' state: per tournament its event log, and per
results partition the offset of the next record to apply (keyed by the
partition number, not a tournament id).

All topics have the partition count of ``tracker-results``: the Faust table
must be co-partitioned with the topic its agent consumes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaConnectionError, KafkaError

from tracker.core.errors import TrackerError

APP_ID: Final = "tracker"
"""The Faust app id: the workers' consumer group and the changelog's prefix."""
TABLE: Final = "tournaments"
PROGRESS_TABLE: Final = "progress"
RESULTS: Final = "tracker-results"
STANDINGS: Final = "tracker-standings"
SNAPSHOTS: Final = "tracker-snapshots"
DEAD_LETTERS: Final = "tracker-dead-letters"
CHANGELOG: Final = f"{APP_ID}-{TABLE}-changelog"
"""The table's changelog, named as Faust names it (``{app id}-{table}-changelog``)."""
PROGRESS_CHANGELOG: Final = f"{APP_ID}-{PROGRESS_TABLE}-changelog"
"""Where the workers keep, per results partition, the offset of the next record to apply."""

DEFAULT_PARTITIONS: Final = 8
COMPACTED: Final = frozenset({SNAPSHOTS, CHANGELOG, PROGRESS_CHANGELOG})
ALL_TOPICS: Final = (RESULTS, STANDINGS, SNAPSHOTS, DEAD_LETTERS, CHANGELOG, PROGRESS_CHANGELOG)


class BrokerError(TrackerError):
    """The Kafka broker cannot be reached, or a broker URL is not valid."""


def bootstrap_servers(broker: str) -> list[str]:
    """``host:port`` addresses from a broker URL.

    Accepts ``kafka://HOST:PORT``, several of them separated by ``;`` or
    ``,`` (Faust's spelling), and bare ``HOST:PORT``.  Raises
    :class:`BrokerError` for anything else.
    """
    servers = []
    for part in broker.replace(",", ";").split(";"):
        part = part.strip()
        if not part:
            continue
        scheme, sep, rest = part.partition("://")
        address = rest if sep else scheme
        if sep and scheme != "kafka":
            raise BrokerError(f"broker URL {part!r}: only kafka:// is supported")
        host, colon, port = address.rstrip("/").rpartition(":")
        if not colon or not host or not port.isdigit():
            raise BrokerError(f"broker URL {part!r}: expected kafka://HOST:PORT")
        servers.append(f"{host}:{port}")
    if not servers:
        raise BrokerError("no broker given: expected kafka://HOST:PORT")
    return servers


def faust_broker(broker: str) -> list[str]:
    """The broker URL list Faust expects (``kafka://HOST:PORT`` each)."""
    return [f"kafka://{server}" for server in bootstrap_servers(broker)]


def topic_config(name: str) -> dict[str, str]:
    """The topic-level configuration tracker creates ``name`` with."""
    return {"cleanup.policy": "compact" if name in COMPACTED else "delete"}


async def ensure_topics(
    broker: str, partitions: int = DEFAULT_PARTITIONS, *, replication: int = 1, wait: float = 30.0
) -> int:
    """Create whichever of tracker's topics are missing; return the partition count in use.

    The count is that of ``tracker-results`` when it exists already (the
    table must be co-partitioned with it), ``partitions`` otherwise.  Existing
    topics are left as they are, so an operator's topic-creation job (with
    its own replication factor and retention) always wins.  Waits up to
    ``wait`` seconds for the broker to accept connections; raises
    :class:`BrokerError` when it does not.
    """
    admin = await _connect_admin(broker, wait)
    try:
        existing = set(await admin.list_topics())
        if RESULTS in existing:
            described = await admin.describe_topics([RESULTS])
            partitions = len(described[0]["partitions"])
        missing = [
            NewTopic(name, partitions, replication, topic_configs=topic_config(name))
            for name in ALL_TOPICS
            if name not in existing
        ]
        if missing:
            response = await admin.create_topics(missing)
            for topic, code, message in response.topic_errors:
                if code not in (0, 36):  # 36: created meanwhile by another worker or gateway
                    raise BrokerError(f"cannot create topic {topic}: {message or f'error code {code}'}")
    except KafkaError as exc:
        raise BrokerError(f"Kafka broker {broker}: {exc}") from None
    finally:
        await admin.close()
    return partitions


@asynccontextmanager
async def started(client: Any, broker: str) -> AsyncIterator[Any]:
    """``client`` (an aiokafka producer or consumer) started, and stopped on exit.

    Raises :class:`BrokerError` when the broker cannot be reached.
    """
    try:
        await client.start()
    except KafkaConnectionError as exc:
        await client.stop()
        raise BrokerError(f"cannot reach the Kafka broker at {broker}: {exc}") from None
    try:
        yield client
    finally:
        await client.stop()


async def _connect_admin(broker: str, wait: float) -> AIOKafkaAdminClient:
    deadline = time.monotonic() + wait
    servers = bootstrap_servers(broker)
    while True:
        admin = AIOKafkaAdminClient(bootstrap_servers=servers, request_timeout_ms=10_000)
        try:
            await admin.start()
        except KafkaConnectionError as exc:
            await admin.close()
            if time.monotonic() >= deadline:
                raise BrokerError(f"cannot reach the Kafka broker at {broker}: {exc}") from None
            await asyncio.sleep(0.5)  # the broker is still starting (compose, Kubernetes)
        else:
            return admin
