"""Where events go: a tracker over websockets (:class:`tracker.client.TrackerClient`) or the Kafka results topic."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from tracker.client import Acked, Refused, Reply, TrackerClient, TrackerUnavailable
from tracker.core.errors import TrackerError
from tracker.core.events import (
    BoardUpdated,
    Event,
)
from tracker.follow.errors import FollowError
from tracker.follow.ledger import View, view_of_rows

if TYPE_CHECKING:
    from tracker.kafka.topics import KafkaSecurity

REPLY_TIMEOUT: Final = 30.0


@dataclass(frozen=True, slots=True)
class Baseline:
    """A tournament as the tracker has it: its seq, its start list and its results."""

    seq: int
    players: tuple[tuple[int, str], ...]
    view: View


class Tracker(Protocol):
    """Where events go.  Two implementations: :class:`WebsocketTracker`, :class:`KafkaTracker`."""

    @property
    def can_read(self) -> bool:
        """Whether :meth:`baseline` can tell what the tracker holds."""
        ...

    async def baseline(self, tournament: str) -> Baseline | None:
        """The tournament as the tracker holds it; ``None`` when it is not open (or cannot be known).

        Raises :class:`TrackerUnavailable`.
        """
        ...

    async def submit(self, events: Sequence[Event]) -> list[Reply]:
        """Submit ``events`` in order; return one reply per event.

        Raises :class:`TrackerUnavailable` carrying the replies received
        before the failure.
        """
        ...

    async def submit_boards(self, boards: Sequence[BoardUpdated]) -> list[Reply]:
        """Submit boards of games in progress (pipelined: a board needs no order); one reply per board.

        Raises :class:`TrackerUnavailable`.
        """
        ...

    async def propose(self, event: Event, reason: str) -> bool:
        """Put ``event`` on the arbiters' desk as a notice with ``reason``, not applied.

        Returns whether a desk got it (a broker follower without ``--url``
        has none).  Raises :class:`TrackerUnavailable`.
        """
        ...

    async def aclose(self) -> None:
        """Close connections; idempotent."""
        ...


class WebsocketTracker:
    """A tracker (or gateway) reached at ``ws://…/ws``: submit, wait for the ack, next.

    One request at a time, through :class:`~tracker.client.TrackerClient`
    (which opens the connection on first use and again after it is lost).
    """

    def __init__(self, url: str, token: str, *, timeout: float = REPLY_TIMEOUT) -> None:
        self.url = url
        self.client = TrackerClient(url, token, timeout=timeout)

    @property
    def can_read(self) -> bool:
        return True

    async def baseline(self, tournament: str) -> Baseline | None:
        try:
            snapshot = await self.client.snapshot(tournament)
        except Refused as exc:
            if exc.code == "unknown-tournament":
                return None
            raise FollowError(str(exc)) from None
        except TrackerError as exc:
            if isinstance(exc, TrackerUnavailable):
                raise
            raise FollowError(str(exc)) from None
        if snapshot is None:
            return None
        rows = snapshot["standings"]
        return Baseline(
            seq=snapshot["seq"],
            players=tuple((row["start_no"], row["name"]) for row in rows),
            view=view_of_rows((row["start_no"], row["results"]) for row in rows),
        )

    async def submit(self, events: Sequence[Event]) -> list[Reply]:
        replies: list[Reply] = []
        for event in events:
            try:
                replies.append(await self.client.submit(event))
            except TrackerUnavailable as exc:
                raise TrackerUnavailable(str(exc), replies) from None
        return replies

    async def submit_boards(self, boards: Sequence[BoardUpdated]) -> list[Reply]:
        return await self.client.submit_many(boards)

    async def propose(self, event: Event, reason: str) -> bool:
        reply = await self.client.submit(event, propose=reason[:300])
        return not isinstance(reply, Acked)  # ``proposed`` (an older tracker would have applied it: acked)

    async def aclose(self) -> None:
        await self.client.aclose()


class KafkaTracker:
    """The results topic of a distributed deployment, via :func:`tracker.kafka.producer.produce_events`.

    Produced means acknowledged (the worker validates later and dead-letters
    what it rejects).  ``reader``, when given (``--url`` next to
    ``--broker``), tells what the tracker holds.  ``security`` (TLS, SASL;
    plaintext when ``None``) and ``wait`` (seconds for the broker to answer)
    are how each poll's producer reaches the broker.
    """

    def __init__(
        self,
        broker: str,
        reader: WebsocketTracker | None = None,
        *,
        security: KafkaSecurity | None = None,
        wait: float | None = None,
    ) -> None:
        self.broker = broker
        self.reader = reader
        self.security = security
        self.wait = wait

    @property
    def can_read(self) -> bool:
        return self.reader is not None

    async def baseline(self, tournament: str) -> Baseline | None:
        return None if self.reader is None else await self.reader.baseline(tournament)

    async def submit(self, events: Sequence[Event]) -> list[Reply]:
        # imported here: aiokafka is only needed with --broker
        from tracker.kafka.producer import produce_events
        from tracker.kafka.topics import BROKER_WAIT, PLAINTEXT, BrokerError

        security = self.security or PLAINTEXT
        try:
            await produce_events(events, self.broker, security=security, wait=self.wait or BROKER_WAIT)
        except (BrokerError, OSError, TimeoutError) as exc:
            # nothing counts as produced: the same ids are produced again at the next poll, harmlessly
            raise TrackerUnavailable(f"cannot produce to {self.broker}: {exc}") from None
        return [Acked(None) for _ in events]

    async def submit_boards(self, boards: Sequence[BoardUpdated]) -> list[Reply]:
        from tracker.kafka.producer import produce_boards
        from tracker.kafka.topics import BROKER_WAIT, PLAINTEXT, BrokerError

        try:
            await produce_boards(
                boards, self.broker, security=self.security or PLAINTEXT, wait=self.wait or BROKER_WAIT
            )
        except (BrokerError, OSError, TimeoutError) as exc:
            raise TrackerUnavailable(f"cannot produce boards to {self.broker}: {exc}") from None
        return [Acked(None) for _ in boards]

    async def propose(self, event: Event, reason: str) -> bool:
        return False if self.reader is None else await self.reader.propose(event, reason)

    async def aclose(self) -> None:
        if self.reader is not None:
            await self.reader.aclose()
