"""Fan-out: one channel per tournament, updates encoded once and sent to all.

A channel keeps the latest standings (for snapshots and the HTTP pages) and
the last ``history`` updates (for resume with ``since``).  Publishing writes
the same bytes to every subscriber without waiting for any of them
(``websockets.broadcast``); a subscriber whose unsent data exceeds
``max_buffer`` bytes is dropped with close code 1008 instead, so a stalled
client never delays the others and never grows memory without bound.  A
dropped client resumes with ``since`` and misses nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass, field

from websockets.asyncio.server import ServerConnection, broadcast

from tracker.gateway.metrics import Metrics
from tracker.protocol import StandingsPayload, snapshot_message

SLOW_CLIENT_CODE = 1008
SLOW_CLIENT_REASON = "too slow: unsent data over the limit; resubscribe with since"


@dataclass(slots=True)
class Channel:
    """One tournament's live state as the gateway sees it.

    ``payload`` is ``None`` while the tournament is not open yet: early
    subscribers (an overlay set up before the event) get an empty snapshot
    with seq 0 and then every update from seq 1 on.
    """

    tournament: str
    payload: StandingsPayload | None
    history: deque[tuple[int, bytes]]
    subscribers: set[ServerConnection] = field(default_factory=set)
    _snapshot: bytes | None = None

    @property
    def seq(self) -> int:
        return 0 if self.payload is None else self.payload["seq"]

    def snapshot(self) -> bytes:
        if self._snapshot is None:
            self._snapshot = snapshot_message(self.payload or empty_payload(self.tournament))
        return self._snapshot


def empty_payload(tournament: str) -> StandingsPayload:
    """The standings of a tournament that is not open yet."""
    return {
        "tournament": tournament,
        "name": "",
        "seq": 0,
        "rounds": 0,
        "games_played": 0,
        "provisional": True,
        "basis": "",
        "max_basis": "",
        "codes": [],
        "scoring": {},
        "standings": [],
    }


class Hub:
    """Subscriptions and fan-out for every tournament a gateway serves."""

    def __init__(self, metrics: Metrics, *, history: int = 2000, max_buffer: int = 1 << 20) -> None:
        self.metrics = metrics
        self.history = history
        self.max_buffer = max_buffer
        self.channels: dict[str, Channel] = {}
        self._closing: set[asyncio.Task[None]] = set()
        metrics.gauges["tracker_subscribers"] = lambda: sum(len(c.subscribers) for c in self.channels.values())
        metrics.gauges["tracker_tournaments"] = lambda: len(self.open_channels())

    def publish(self, payload: StandingsPayload, message: bytes) -> bool:
        """Record an update (``message``, already encoded) and send it to every subscriber.

        Updates must arrive in increasing ``seq``; an update whose seq is not
        newer than the channel's (a re-delivery) is ignored: returns ``False``.
        """
        tournament = payload["tournament"]
        channel = self.channels.get(tournament)
        if channel is None:
            channel = self.channels[tournament] = Channel(tournament, payload, deque(maxlen=self.history))
        elif payload["seq"] <= channel.seq:
            return False
        channel.payload = payload
        channel._snapshot = None
        channel.history.append((payload["seq"], message))
        if channel.subscribers:
            started = time.perf_counter()
            self._send(channel, message)
            self.metrics.fanout_latency.observe(time.perf_counter() - started)
        return True

    def seq(self, tournament: str) -> int:
        """The tournament's latest seq (0: not open)."""
        channel = self.channels.get(tournament)
        return 0 if channel is None else channel.seq

    def install(self, payload: StandingsPayload) -> None:
        """Set a channel's standings without an update (after a journal replay)."""
        channel = self.channels.get(payload["tournament"])
        if channel is None:
            self.channels[payload["tournament"]] = Channel(payload["tournament"], payload, deque(maxlen=self.history))
        else:
            channel.payload = payload
            channel._snapshot = None

    def subscribe(self, conn: ServerConnection, tournament: str, since: int | None) -> list[bytes]:
        """Add ``conn`` to a tournament; return what it must be sent first.

        That is the updates after ``since`` when all of them are still kept,
        otherwise one snapshot (empty, seq 0, for a tournament not open yet).
        """
        channel = self.channels.get(tournament)
        if channel is None:
            channel = self.channels[tournament] = Channel(tournament, None, deque(maxlen=self.history))
        channel.subscribers.add(conn)
        if since is not None and since <= channel.seq:
            if since == channel.seq:
                return []
            if channel.history and channel.history[0][0] <= since + 1:
                return [message for seq, message in channel.history if seq > since]
        return [channel.snapshot()]

    def unsubscribe(self, conn: ServerConnection, tournament: str | None = None) -> None:
        channels = list(self.channels.values()) if tournament is None else [self.channels.get(tournament)]
        for channel in channels:
            if channel is not None:
                channel.subscribers.discard(conn)
                if channel.payload is None and not channel.subscribers:
                    del self.channels[channel.tournament]  # nobody waits for it any more

    def open_channels(self) -> dict[str, StandingsPayload]:
        """The tournaments that are open, with their latest standings."""
        return {tid: ch.payload for tid, ch in self.channels.items() if ch.payload is not None}

    def _send(self, channel: Channel, message: bytes) -> None:
        ready = []
        for conn in list(channel.subscribers):  # _drop removes from the set
            transport = conn.transport
            if transport is None or transport.is_closing():
                continue
            if transport.get_write_buffer_size() > self.max_buffer:
                self._drop(conn)
            else:
                ready.append(conn)
        broadcast(ready, message.decode())

    def _drop(self, conn: ServerConnection) -> None:
        self.unsubscribe(conn)
        self.metrics.inc("tracker_clients_dropped_total")
        task = asyncio.create_task(self._close(conn), name="drop-slow-client")
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    @staticmethod
    async def _close(conn: ServerConnection) -> None:
        try:
            async with asyncio.timeout(5):
                await conn.close(SLOW_CLIENT_CODE, SLOW_CLIENT_REASON)
        except TimeoutError:
            if conn.transport is not None:
                conn.transport.abort()

    async def aclose(self) -> None:
        """Wait for slow clients being dropped."""
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)
