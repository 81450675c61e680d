"""Fan-out: one channel per tournament, updates encoded once and sent to all.

How this works
--------------

A channel keeps the latest standings (for snapshots and the HTTP pages) and
the recent updates (for resume with ``since``), bounded both in count and
in bytes.  Publishing writes the same bytes to every live subscriber
without waiting for any of them (``websockets.broadcast``); a subscriber
whose unsent data exceeds ``max_buffer`` bytes is dropped with close code
1008 instead, so a stalled client never delays the others and never grows
memory without bound.  A dropped client resumes with ``since`` and misses
nothing.

**Subscribing is ordered.**  A new subscriber first gets what it missed (the
updates after ``since`` when all of them are kept and they add up to at
most ``max_resume`` bytes, else one snapshot), written with flow control
and yielding between messages, so a big resume never stalls the event loop.
Updates published meanwhile are queued for that subscriber, not written, and
follow once the missed ones are out; only then does it join the live
broadcast, in the same step as its queue runs dry.  So every subscriber sees
its seqs strictly increasing and without a gap.  A queue that grows past
``max_buffer`` bytes drops the subscriber as a slow one.

**A spoiler delay** (``subscribe`` with ``delay``) holds back everything sent
to that one subscriber: what it missed, every update, stakes and cues go
into its own :class:`DelayLine`, stamped with the time they are due, and a
task the hub owns writes each one when it is due.  Nobody else waits for
it; a line holding more than ``max_buffer`` bytes drops the subscriber as a
slow one.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass, field

from websockets.asyncio.server import ServerConnection, broadcast
from websockets.exceptions import ConnectionClosed

from tracker.gateway.metrics import Metrics
from tracker.protocol import StandingsPayload, snapshot_message

SLOW_CLIENT_CODE = 1008
SLOW_CLIENT_REASON = "too slow: unsent data over the limit; resubscribe with since"


@dataclass(slots=True)
class History:
    """The recent updates of one tournament, at most ``count`` of them and ``size`` bytes."""

    count: int
    size: int
    updates: deque[tuple[int, bytes]] = field(default_factory=deque)
    times: deque[float] = field(default_factory=deque)  # when each kept update was published (Unix seconds)
    weight: int = 0  # bytes of all the updates kept

    def append(self, seq: int, message: bytes) -> None:
        self.updates.append((seq, message))
        self.times.append(time.time())
        self.weight += len(message)
        while self.updates and (len(self.updates) > self.count or self.weight > self.size):
            _, dropped = self.updates.popleft()
            self.times.popleft()
            self.weight -= len(dropped)

    def recent(self, n: int) -> list[tuple[int, bytes, float]]:
        """The last ``n`` updates kept, oldest first: (seq, message, published at)."""
        kept = min(n, len(self.updates), len(self.times))
        return [(self.updates[-i][0], self.updates[-i][1], self.times[-i]) for i in range(kept, 0, -1)]

    def after(self, since: int, cap: int) -> list[bytes] | None:
        """The updates after ``since`` when all of them are kept and weigh at most ``cap`` bytes, else ``None``."""
        if not self.updates or self.updates[0][0] > since + 1:
            return None
        missed: list[bytes] = []
        total = 0
        for seq, message in reversed(self.updates):
            if seq <= since:
                break
            total += len(message)
            if total > cap:
                return None
            missed.append(message)
        missed.reverse()
        return missed


@dataclass(slots=True)
class DelayLine:
    """What one delayed subscriber will be sent, each message with the loop time it is due."""

    seconds: float
    queue: deque[tuple[float, bytes]] = field(default_factory=deque)
    weight: int = 0
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None

    def put(self, message: bytes, limit: int) -> bool:
        """Queue ``message`` for ``seconds`` from now; ``False`` when the line would pass ``limit`` bytes."""
        if self.weight + len(message) > limit:
            return False
        self.queue.append((asyncio.get_running_loop().time() + self.seconds, message))
        self.weight += len(message)
        self.wake.set()
        return True


@dataclass(slots=True)
class Channel:
    """One tournament's live state as the gateway sees it.

    ``payload`` is ``None`` while the tournament is not open yet: early
    subscribers (an overlay set up before the event) get an empty snapshot
    with seq 0 and then every update from seq 1 on.  ``resuming`` holds, per
    subscriber still being sent what it missed, the updates published since.
    """

    tournament: str
    payload: StandingsPayload | None
    history: History
    subscribers: set[ServerConnection] = field(default_factory=set)
    resuming: dict[ServerConnection, list[bytes]] = field(default_factory=dict)
    delayed: dict[ServerConnection, DelayLine] = field(default_factory=dict)
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
        "rules": "",
        "codes": [],
        "scoring": {},
        "standings": [],
    }


class Hub:
    """Subscriptions and fan-out for every tournament a gateway serves."""

    def __init__(
        self,
        metrics: Metrics,
        *,
        history: int = 2000,
        history_bytes: int = 16 << 20,
        max_buffer: int = 1 << 20,
        max_resume: int = 1 << 20,
    ) -> None:
        self.metrics = metrics
        self.history = history
        self.history_bytes = history_bytes
        self.max_buffer = max_buffer
        self.max_resume = max_resume
        self.channels: dict[str, Channel] = {}
        self._closing: set[asyncio.Task[None]] = set()
        metrics.gauges["tracker_subscribers"] = lambda: sum(len(c.subscribers) for c in self.channels.values())
        metrics.gauges["tracker_tournaments"] = lambda: len(self.open_channels())
        metrics.gauges["tracker_history_bytes"] = lambda: sum(c.history.weight for c in self.channels.values())

    def _channel(self, tournament: str, payload: StandingsPayload | None) -> Channel:
        channel = self.channels.get(tournament)
        if channel is None:
            channel = Channel(tournament, payload, History(self.history, self.history_bytes))
            self.channels[tournament] = channel
        return channel

    def publish(self, payload: StandingsPayload, message: bytes) -> bool:
        """Record an update (``message``, already encoded) and send it to every subscriber.

        Updates must arrive in increasing ``seq``; an update whose seq is not
        newer than the channel's (a re-delivery) is ignored: returns ``False``.
        """
        tournament = payload["tournament"]
        known = tournament in self.channels
        channel = self._channel(tournament, payload)
        if known and payload["seq"] <= channel.seq:
            return False
        channel.payload = payload
        channel._snapshot = None
        channel.history.append(payload["seq"], message)
        for conn, queued in list(channel.resuming.items()):
            queued.append(message)
            if sum(len(m) for m in queued) > self.max_buffer:
                del channel.resuming[conn]
                self._drop(conn)
        for conn, line in list(channel.delayed.items()):
            if not line.put(message, self.max_buffer):
                self._drop(conn)
        if channel.subscribers:
            started = time.perf_counter()
            self._send(channel.subscribers, message)
            self.metrics.fanout_latency.observe(time.perf_counter() - started)
        return True

    def seq(self, tournament: str) -> int:
        """The tournament's latest seq (0: not open)."""
        channel = self.channels.get(tournament)
        return 0 if channel is None else channel.seq

    def install(self, payload: StandingsPayload) -> None:
        """Set a channel's standings without an update (after a journal replay)."""
        channel = self._channel(payload["tournament"], payload)
        channel.payload = payload
        channel._snapshot = None

    async def subscribe(self, conn: ServerConnection, tournament: str, since: int | None, delay: float = 0.0) -> None:
        """Send ``conn`` what it missed, then make it a live subscriber of ``tournament``.

        What it missed is the updates after ``since`` when all of them are
        still kept and weigh at most ``max_resume`` bytes, otherwise one
        snapshot (empty, seq 0, for a tournament not open yet); nothing when
        it is up to date.  Raises :class:`ConnectionClosed` when the client
        goes away meanwhile (it is then subscribed to nothing here).  With a
        ``delay`` (seconds), all of it, and everything after, reaches this
        subscriber that much later (see the module docstring).
        """
        channel = self._channel(tournament, None)
        if conn in channel.subscribers or conn in channel.resuming or conn in channel.delayed:
            channel.subscribers.discard(conn)  # a re-subscribe starts over from its own since
            channel.resuming.pop(conn, None)
            self._stop_line(channel, conn)
        first: list[bytes] | None = None
        if since is not None and since <= channel.seq:
            first = [] if since == channel.seq else channel.history.after(since, self.max_resume)
        if first is None:
            first = [channel.snapshot()]
        if delay > 0:
            line = channel.delayed[conn] = DelayLine(delay)
            for data in first:
                line.put(data, self.max_buffer + self.max_resume)
            line.task = asyncio.create_task(self._pump(conn, line), name="delayed-subscriber")
            return
        if not first:
            channel.subscribers.add(conn)
            return
        queued = channel.resuming[conn] = []
        try:
            while first:
                for data in first:
                    await conn.send(data.decode())
                    await asyncio.sleep(0)  # compressing a long resume must not hold the loop
                if channel.resuming.get(conn) is not queued:
                    return  # dropped as too slow, or unsubscribed, meanwhile
                first, queued[:] = list(queued), []
        except BaseException:
            channel.resuming.pop(conn, None)
            self._forget_if_unopened(channel)
            raise
        del channel.resuming[conn]
        channel.subscribers.add(conn)  # in the same step as the queue ran dry: nothing falls in between

    def unsubscribe(self, conn: ServerConnection, tournament: str | None = None) -> None:
        channels = list(self.channels.values()) if tournament is None else [self.channels.get(tournament)]
        for channel in channels:
            if channel is not None:
                channel.subscribers.discard(conn)
                channel.resuming.pop(conn, None)
                self._stop_line(channel, conn)
                self._forget_if_unopened(channel)

    def deliver(self, tournament: str, conns: list[ServerConnection], message: bytes) -> None:
        """Send ``message`` (stakes, a cue) to those of ``conns`` subscribed to ``tournament``, without waiting.

        A delayed subscriber gets it when its delay is over, one still being
        sent what it missed gets it after that; the others at once, dropped
        as slow clients past ``max_buffer`` unsent bytes as for updates.
        """
        channel = self.channels.get(tournament)
        if channel is None:
            return
        ready = []
        for conn in conns:
            line = channel.delayed.get(conn)
            queued = channel.resuming.get(conn)
            if line is not None:
                if not line.put(message, self.max_buffer):
                    self._drop(conn)
            elif queued is not None:
                queued.append(message)
            elif conn in channel.subscribers:
                ready.append(conn)
        if ready:
            self._send(ready, message)

    async def _pump(self, conn: ServerConnection, line: DelayLine) -> None:
        """Write each message of ``line`` to ``conn`` once it is due; ends when the client goes away."""
        loop = asyncio.get_running_loop()
        with suppress(ConnectionClosed):
            while True:
                while not line.queue:
                    line.wake.clear()
                    await line.wake.wait()
                due, data = line.queue[0]
                if due > loop.time():
                    await asyncio.sleep(due - loop.time())  # the spoiler delay itself
                line.queue.popleft()
                line.weight -= len(data)
                await conn.send(data.decode())

    @staticmethod
    def _stop_line(channel: Channel, conn: ServerConnection) -> None:
        line = channel.delayed.pop(conn, None)
        if line is not None and line.task is not None:
            line.task.cancel()

    def _forget_if_unopened(self, channel: Channel) -> None:
        if channel.payload is None and not channel.subscribers and not channel.resuming and not channel.delayed:
            self.channels.pop(channel.tournament, None)  # nobody waits for it any more

    def recent(self, tournament: str, n: int) -> list[tuple[int, bytes, float]]:
        """The tournament's last ``n`` updates still kept, oldest first (none for an unknown tournament)."""
        channel = self.channels.get(tournament)
        return [] if channel is None else channel.history.recent(n)

    def open_channels(self) -> dict[str, StandingsPayload]:
        """The tournaments that are open, with their latest standings."""
        return {tid: ch.payload for tid, ch in self.channels.items() if ch.payload is not None}

    def _send(self, conns: Iterable[ServerConnection], message: bytes) -> None:
        ready = []
        for conn in list(conns):  # _drop removes from the set
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
        except ConnectionClosed:
            pass

    async def aclose(self) -> None:
        """Stop the delayed subscribers' lines, wait for slow clients being dropped."""
        pumps = [line.task for c in self.channels.values() for line in c.delayed.values() if line.task is not None]
        for task in pumps:
            task.cancel()
        await asyncio.gather(*pumps, return_exceptions=True)
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)
