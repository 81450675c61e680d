"""Producing events straight to ``tracker-results`` (``tracker replay --broker``), and boards to ``tracker-boards``.

Each event is one record keyed by its tournament id, its value the event's
canonical JSON.  Records of one tournament go to one partition, in the
order given; a record counts as sent when all in-sync replicas have it
(``acks=all``).  Re-producing an event (a replay run twice) is harmless: a
worker applies an event id once.

A replay then waits for the workers' verdicts, as a submit on the
websocket does (:func:`replay_kafka`): every record a worker reads leads to
one ``update`` on ``tracker-standings`` (applied, or applied before) or one
dead letter (rejected, with the worker's code and reason), which it reads
from where those topics ended before the first record was produced.  A board (a game in progress, ``tracker
follow`` of a live PGN) goes to ``tracker-boards`` the same way; no worker
reads it, every gateway does (:mod:`tracker.kafka.feed`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import KafkaError

from tracker.core.errors import DecodeError
from tracker.core.events import BoardUpdated, Event, encode_board, encode_event
from tracker.formats import TournamentFile
from tracker.kafka.processing import decode_dead_letter
from tracker.kafka.topics import (
    APP_ID,
    BOARDS,
    BROKER_WAIT,
    DEAD_LETTERS,
    PLAINTEXT,
    RESULTS,
    STANDINGS,
    BrokerError,
    KafkaSecurity,
    admin_client,
    client_options,
    ensure_topics,
    started,
)
from tracker.protocol import decode_head

#: Seconds ``tracker replay --broker`` waits for the workers' verdicts by default.
VERDICT_WAIT = 30.0
#: Seconds a replay waits at most for a worker to join the group before its verdict clock starts (a fresh worker
#: joins in seconds, a busy machine's in tens of seconds).
JOIN_WAIT = 60.0


@asynccontextmanager
async def results_producer(
    broker: str, *, security: KafkaSecurity = PLAINTEXT, wait: float = BROKER_WAIT
) -> AsyncIterator[Any]:
    """A started ``AIOKafkaProducer`` with ``acks=all``, stopped on exit.

    Raises :class:`~tracker.kafka.topics.BrokerError` when the broker
    cannot be reached within ``wait`` seconds or refuses the credentials.
    """
    options = client_options(broker, security)
    make = lambda: AIOKafkaProducer(acks="all", linger_ms=2, **options)  # noqa: E731
    async with started(make, broker, wait=wait, tls=security.tls) as producer:
        yield producer


async def send_event(producer: Any, event: Event) -> asyncio.Future[Any]:
    """Queue one event on ``tracker-results``; the returned future resolves once the broker has it."""
    delivered: asyncio.Future[Any] = await producer.send(RESULTS, encode_event(event), key=event.tournament.encode())
    return delivered


async def send_board(producer: Any, board: BoardUpdated) -> asyncio.Future[Any]:
    """Queue one board on ``tracker-boards``; the returned future resolves once the broker has it."""
    delivered: asyncio.Future[Any] = await producer.send(BOARDS, encode_board(board), key=board.tournament.encode())
    return delivered


async def produce_boards(
    boards: Iterable[BoardUpdated], broker: str, *, security: KafkaSecurity = PLAINTEXT, wait: float = BROKER_WAIT
) -> int:
    """Produce ``boards`` in order to ``tracker-boards``; return how many the broker acknowledged.

    Creates the topics if they are missing.  Raises
    :class:`~tracker.kafka.topics.BrokerError` as :func:`produce_events` does.
    """
    await ensure_topics(broker, security=security, wait=wait)
    try:
        async with results_producer(broker, security=security, wait=wait) as producer:
            pending = [await send_board(producer, board) for board in boards]
            for delivered in pending:
                await delivered
    except KafkaError as exc:
        raise BrokerError(f"Kafka broker {broker}: {exc}") from None
    return len(pending)


async def produce_events(
    events: Iterable[Event],
    broker: str,
    *,
    security: KafkaSecurity = PLAINTEXT,
    wait: float = BROKER_WAIT,
    rate: float | None = None,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Produce ``events`` in order; return how many the broker acknowledged.

    With ``rate`` (events per second) each event is awaited and followed by
    a pause; without, they are pipelined and all awaited at the end.
    Creates the topics if they are missing.  Raises
    :class:`~tracker.kafka.topics.BrokerError` when the broker cannot be
    reached within ``wait`` seconds, refuses the credentials or refuses a
    record.
    """
    await ensure_topics(broker, security=security, wait=wait)
    count = 0
    try:
        async with results_producer(broker, security=security, wait=wait) as producer:
            pending: list[asyncio.Future[Any]] = []
            for event in events:
                delivered = await send_event(producer, event)
                if rate:
                    await delivered
                    count += 1
                    if progress is not None:
                        progress(1)
                    await asyncio.sleep(1.0 / rate)
                else:
                    pending.append(delivered)
            for delivered in pending:
                await delivered
                count += 1
                if progress is not None:
                    progress(1)
    except KafkaError as exc:
        raise BrokerError(f"Kafka broker {broker}: {exc}") from None
    return count


@dataclass(slots=True)
class Verdicts:
    """What the workers said of a replay's events: applied (and the last seq), rejected, not decided in time."""

    produced: int = 0
    applied: int = 0
    last_seq: int = 0
    rejected: list[tuple[str, str, str]] = field(default_factory=list)  # (event id, code, reason)
    undecided: list[str] = field(default_factory=list)  # event ids no worker decided within the wait


async def replay_kafka(
    tf: TournamentFile,
    broker: str,
    *,
    security: KafkaSecurity = PLAINTEXT,
    wait: float = BROKER_WAIT,
    rate: float | None = None,
    verdicts: float = VERDICT_WAIT,
    joining: float = JOIN_WAIT,
) -> Verdicts:
    """Produce a tournament file's opening event, then its results in round order; then wait for the verdicts.

    Waits up to ``verdicts`` seconds after the last record for a worker to
    apply or reject each event (0: produce only, :attr:`Verdicts.undecided`
    then lists every event).  The ``verdicts`` seconds start once a worker
    holds the results' partitions (the workers' group is stable with a member):
    a worker just started takes seconds to join, and its verdicts would come
    after a clock that started without it; that wait is ``joining`` seconds at
    most.  Raises
    :class:`~tracker.kafka.topics.BrokerError` as :func:`produce_events` does.
    """
    events = [tf.opened, *tf.events]
    if verdicts <= 0:
        count = await produce_events(events, broker, security=security, wait=wait, rate=rate)
        return Verdicts(produced=count, undecided=[e.id for e in events])
    await ensure_topics(broker, security=security, wait=wait)
    options = client_options(broker, security)

    def make() -> AIOKafkaConsumer:
        return AIOKafkaConsumer(group_id=None, enable_auto_commit=False, fetch_max_wait_ms=100, **options)

    try:
        async with started(make, broker, wait=wait, tls=security.tls) as consumer:
            await consumer.topics()  # refreshes the metadata
            tps = [
                TopicPartition(topic, p)
                for topic in (STANDINGS, DEAD_LETTERS)
                for p in sorted(consumer.partitions_for_topic(topic) or ())
            ]
            consumer.assign(tps)
            ends = await consumer.end_offsets(tps)  # before the first record: every verdict comes after
            for tp in tps:
                consumer.seek(tp, ends[tp])
            count = await produce_events(events, broker, security=security, wait=wait, rate=rate)
            found = Verdicts(produced=count)
            await _worker_joined(broker, security, wait, joining)
            await _read_verdicts(consumer, tf.opened.tournament, [e.id for e in events], verdicts, found)
    except KafkaError as exc:
        raise BrokerError(f"Kafka broker {broker}: {exc}") from None
    return found


async def _worker_joined(broker: str, security: KafkaSecurity, wait: float, seconds: float) -> bool:
    """Whether a worker holds the results' partitions (group :data:`APP_ID` stable with a member), waiting up to
    ``seconds`` for one; ``False`` (at once) when the broker cannot describe the group."""
    deadline = asyncio.get_running_loop().time() + seconds
    try:
        async with admin_client(broker, security, wait) as admin:
            while True:
                (group,) = (await admin.describe_consumer_groups([APP_ID]))[0].to_object()["groups"]
                if group["state"] == "Stable" and group["members"]:
                    return True
                if asyncio.get_running_loop().time() >= deadline:
                    return False
                await asyncio.sleep(0.5)
    except (KafkaError, BrokerError, KeyError, ValueError):  # not a question this broker answers: no wait
        return False


async def _read_verdicts(consumer: Any, tournament: str, ids: list[str], seconds: float, found: Verdicts) -> None:
    """Read updates and dead letters until every one of ``ids`` has its verdict or ``seconds`` pass."""
    waiting = set(ids)
    try:
        async with asyncio.timeout(seconds):
            while waiting:
                batches = await consumer.getmany(timeout_ms=500, max_records=2000)
                for tp, records in batches.items():
                    for record in records:
                        _verdict(tp.topic, record.value or b"", tournament, waiting, found)
    except TimeoutError:
        pass
    found.undecided = [i for i in ids if i in waiting]


def _verdict(topic: str, value: bytes, tournament: str, waiting: set[str], found: Verdicts) -> None:
    try:
        if topic == STANDINGS:
            head = decode_head(value)
            if head.tournament == tournament and head.event_id in waiting:
                waiting.discard(head.event_id)
                found.applied += 1
                found.last_seq = max(found.last_seq, head.seq)
            return
        letter = decode_dead_letter(value)
    except DecodeError:
        return  # not one of ours, or not a verdict
    if letter["tournament"] == tournament and letter["id"] in waiting:
        waiting.discard(letter["id"])
        found.rejected.append((letter["id"], letter["code"], letter["reason"]))
