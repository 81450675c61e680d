"""The seam between the gateway and a deployment, in both directions.

A deployment (:mod:`tracker.embedded`, :mod:`tracker.kafka`) implements
:class:`Backend`: it takes submitted events and holds, or can fold, each
tournament's state.  The gateway implements :class:`Sink` and hands it to
the backend with :meth:`Backend.attach`: the backend pushes every accepted
update (and, on start, the standings it already holds) into the sink, and
says when a tournament's boards (games in progress, kept apart from the
results) changed.  Only
the gateway touches its hub, so what reaches subscribers, in which order, is
decided in one place for both deployments.
"""

from __future__ import annotations

from typing import Protocol

from tracker.core.boards import BoardSet, Change
from tracker.core.crosstable import Tournament
from tracker.core.events import BoardUpdated, Event
from tracker.protocol import StandingsPayload


class Sink(Protocol):
    """Where a backend sends standings; implemented by the gateway."""

    def publish(self, payload: StandingsPayload, message: bytes) -> bool:
        """Send one update (``message``, encoded once) to every subscriber.

        Returns ``False`` (and sends nothing) when its seq is not newer than
        the tournament's: a re-delivery.
        """
        ...

    def install(self, payload: StandingsPayload) -> None:
        """Set a tournament's standings without an update (on start), unless newer ones are installed."""
        ...

    def seq(self, tournament: str) -> int:
        """The tournament's current seq as subscribers know it (0: not open)."""
        ...

    def boards_changed(self, tournament: str, change: Change) -> None:
        """The tournament's boards changed (a board was kept, or ended by a result)."""
        ...


class Backend(Protocol):
    """Where the gateway sends submitted events: the embedded processor or Kafka."""

    def attach(self, sink: Sink) -> None:
        """Start publishing into ``sink``; install the standings already held."""
        ...

    async def submit(self, event: Event) -> int:
        """Make ``event`` durable and applied; return its seq.  Raises EventRejected."""
        ...

    def state(self, tournament: str) -> Tournament | None:
        """The live state, when this backend holds it (for projections and TRF)."""
        ...

    async def board(self, board: BoardUpdated) -> int:
        """Keep ``board`` (a game in progress) apart from the results; return the tournament's seq.

        Raises EventRejected (``game-finished`` for a game that already has a result, the pairing
        rules otherwise); a board never changes the standings or their seq.
        """
        ...

    def boards(self, tournament: str) -> BoardSet | None:
        """The tournament's boards, the newest per game in progress (``None``: not open here)."""
        ...
