"""Producing events straight to ``tracker-results`` (``tracker replay --broker``), and boards to ``tracker-boards``.

Each event is one record keyed by its tournament id, its value the event's
canonical JSON.  Records of one tournament go to one partition, in the
order given; a record counts as sent when all in-sync replicas have it
(``acks=all``).  Re-producing an event (a replay run twice) is harmless: a
worker applies an event id once.  A board (a game in progress, ``tracker
follow`` of a live PGN) goes to ``tracker-boards`` the same way; no worker
reads it, every gateway does (:mod:`tracker.kafka.feed`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError

from tracker.core.events import BoardUpdated, Event, encode_board, encode_event
from tracker.formats import TournamentFile
from tracker.kafka.topics import (
    BOARDS,
    BROKER_WAIT,
    PLAINTEXT,
    RESULTS,
    BrokerError,
    KafkaSecurity,
    client_options,
    ensure_topics,
    started,
)


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


async def replay_kafka(
    tf: TournamentFile,
    broker: str,
    *,
    security: KafkaSecurity = PLAINTEXT,
    wait: float = BROKER_WAIT,
    rate: float | None = None,
) -> int:
    """Produce a tournament file's opening event, then its results in round order; return the count."""
    return await produce_events([tf.opened, *tf.events], broker, security=security, wait=wait, rate=rate)
