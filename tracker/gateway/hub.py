"""Fan-out: one channel per tournament, updates encoded once and sent to all.

How this works
--------------

A channel keeps the latest standings (for snapshots and the HTTP pages) and
the recent updates (for resume with ``since``) as field deltas, bounded both
in count and in bytes (:class:`History`).  Publishing derives the update's
delta once, from the previous standings and the new ones (protocol v1.1:
only the fields that changed, and the digest of the full standings), then
writes the full message to every full subscriber and the delta to every
delta subscriber, without waiting for any of them, each message compressed
once per set of deflate parameters, not once per subscriber, on its feed's
own deflate stream with context takeover (:mod:`tracker.gateway.frames`).
Each feed (full updates, deltas) walks its subscribers a slice per turn of
the event loop, and a subscriber still waiting for one update when the next
comes, or still being written, gets a snapshot and the newest instead of
both (:mod:`tracker.gateway.fanout`: the seq contract is there);
a finished tournament is compacted after ``compact_after`` seconds; a subscriber
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
to that one subscriber, without copying anything for it: it is a cursor on
the channel's history, and the stakes, cues and boards it will be sent are
kept once for all the channel's delayed subscribers
(:mod:`tracker.gateway.delay`).  Nobody else waits for it.

Each tournament's record is a :class:`~tracker.gateway.channel.Channel`.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from tracker.gateway.channel import Backlog, Channel, OpenChannels, empty_payload
from tracker.gateway.delay import SIDE_BUDGET, Cursor, Delays
from tracker.gateway.fanout import SLICE, Feed
from tracker.gateway.frames import SharedDeflate, broadcast, parameters, write
from tracker.gateway.history import History
from tracker.gateway.metrics import Metrics
from tracker.protocol import (
    Digester,
    StandingsPayload,
    delta_message,
    diff_standings,
    v1_update,
)

SLOW_CLIENT_CODE = 1008
SLOW_CLIENT_REASON = "too slow: unsent data over the limit; resubscribe with since"


@dataclass(frozen=True, slots=True)
class HubStats:
    """A reading of the hub: open and compacted tournaments, live and delayed subscribers, deltas kept (bytes)."""

    tournaments: int
    compacted: int
    subscribers: int
    delayed: int
    history_bytes: int


class Hub:
    """Subscriptions and fan-out for every tournament a gateway serves.

    ``history`` and ``history_bytes`` bound each tournament's deltas kept for
    resumes (beyond, a resume gets a snapshot).  A finished tournament (no
    longer provisional: its last game is in) is compacted ``compact_after``
    seconds later: only its snapshot bytes and its newest deltas within
    ``finished_bytes`` (for ``/recent`` and short delta resumes) are kept.
    """

    def __init__(
        self,
        metrics: Metrics,
        *,
        history: int = 2000,
        history_bytes: int = 256 << 10,
        max_buffer: int = 1 << 20,
        max_resume: int = 1 << 20,
        compact_after: float = 600.0,
        finished_bytes: int = 2048,
        fanout_slice: int = SLICE,
    ) -> None:
        self.metrics = metrics
        self.history = history
        self.history_bytes = history_bytes
        self.max_buffer = max_buffer
        self.max_resume = max_resume
        self.compact_after = compact_after
        self.finished_bytes = finished_bytes
        self.fanout_slice = fanout_slice
        self.channels: dict[str, Channel] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self._finished: deque[tuple[float, str, int]] = deque()  # (due, tournament, seq), due increasing
        self._compactor: asyncio.TimerHandle | None = None
        metrics.gauges["tracker_subscribers"] = lambda: self.stats().subscribers
        metrics.gauges["tracker_tournaments"] = lambda: self.stats().tournaments
        metrics.gauges["tracker_history_bytes"] = lambda: self.stats().history_bytes

    def stats(self) -> HubStats:
        """What the hub holds now (metrics and benchmarks read it; O(tournaments))."""
        channels = list(self.channels.values())
        return HubStats(
            tournaments=sum(1 for c in channels if c.opened),
            compacted=sum(1 for c in channels if c.compacted),
            subscribers=sum(len(c.subscribers) + len(c.delta_subscribers) for c in channels),
            delayed=sum(len(c.delays.cursors) for c in channels if c.delays is not None),
            history_bytes=sum(c.history.weight for c in channels),
        )

    def latest(self, tournament: str) -> tuple[int, bytes] | None:
        """The newest update of ``tournament`` as its delta subscribers were sent it: (seq, message); ``None``
        when none is kept."""
        channel = self.channels.get(tournament)
        if channel is None:
            return None
        newest = channel.history.recent(1)
        return (newest[0][0], newest[0][1]) if newest else None

    def clear(self) -> None:
        """Forget every tournament and subscriber (what a benchmark does to measure the hub's own share)."""
        self.channels.clear()
        self._finished.clear()

    def _channel(self, tournament: str) -> Channel:
        channel = self.channels.get(tournament)
        if channel is None:
            channel = Channel(tournament, None, History(self.history, self.history_bytes))
            channel.history.reset(empty_payload(tournament), 0)
            self.channels[tournament] = channel
        return channel

    def publish(self, payload: StandingsPayload, message: bytes) -> bool:
        """Record an update (``message``, the full ``update`` already encoded) and send it to every subscriber.

        Full subscribers get ``message`` itself; delta subscribers the delta,
        worked out here once from the previous standings.  Updates must arrive
        in increasing ``seq``; an update whose seq is not newer than the
        channel's (a re-delivery) is ignored: returns ``False``.
        """
        tournament = payload["tournament"]
        channel = self._channel(tournament)
        if channel.opened and payload["seq"] <= channel.seq:
            return False
        full = v1_update(message)  # the deltas carry the summary as phrases; full subscribers get v1's bytes
        previous = channel.payload or empty_payload(tournament)
        contiguous = payload["seq"] == previous["seq"] + 1
        top, rows, order = diff_standings(previous, payload)
        if channel.digester is None or not contiguous:
            channel.digester = Digester()
            digest = channel.digester.digest(payload, None)
        else:
            digest = channel.digester.digest(payload, {row["start_no"]: row for row in rows})
        delta = delta_message(payload, message, top, rows, order, digest)
        feeds = channel.feeds()
        channel.set_payload(payload, previous if contiguous and channel.opened and feeds else None)
        if contiguous:
            channel.history.append(payload["seq"], delta)
        else:  # a gap in what this hub was given: the deltas kept no longer chain; resumes from before get a snapshot
            channel.history.reset(payload, payload["seq"])
        if not payload["provisional"]:
            self._finish(channel)
        for conn, queued in list(channel.resuming.items()):
            queued.append(delta if queued.delta else full)
            if sum(len(m) for m in queued) > self.max_buffer:
                del channel.resuming[conn]
                self._drop(conn)
        if channel.delays is not None:
            at = channel.history.kept[-1][2] if contiguous else channel.history.base_at
            channel.delays.published(payload["seq"], delta, full, at)
        for feed in feeds:
            feed.publish(payload["seq"], delta if feed is channel._deltas else full)
        return True

    def seq(self, tournament: str) -> int:
        """The tournament's latest seq (0: not open)."""
        channel = self.channels.get(tournament)
        return 0 if channel is None else channel.seq

    def install(self, payload: StandingsPayload) -> None:
        """Set a channel's standings without an update (after a journal replay); the deltas kept start over."""
        channel = self._channel(payload["tournament"])
        channel.set_payload(payload)
        channel.digester = None
        channel.history.reset(payload, payload["seq"])
        if channel.delays is not None:
            channel.delays.reset()
        if not payload["provisional"]:
            self._finish(channel)

    # -- compaction of finished tournaments ---------------------------------------------------

    def _finish(self, channel: Channel) -> None:
        """Compact ``channel`` ``compact_after`` seconds from now unless it changes meanwhile."""
        self._finished.append((time.monotonic() + self.compact_after, channel.tournament, channel.seq))
        if self._compactor is None:
            self._arm()

    def _arm(self) -> None:
        if not self._finished:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (a synchronous caller): compact() runs when called
        delay = max(0.0, self._finished[0][0] - time.monotonic())
        self._compactor = loop.call_later(delay, self._compact_due)

    def _compact_due(self) -> None:
        self._compactor = None
        self.compact(time.monotonic())
        self._arm()

    def compact(self, now: float | None = None) -> int:
        """Compact the finished tournaments due by ``now`` (monotonic seconds; ``None``: all of them).

        A compacted channel keeps its standings as the encoded snapshot and
        its newest deltas within ``finished_bytes``; a tournament that changed
        since it finished waits for its new due time.  Returns how many were
        compacted.  Runs by itself on the event loop; tests and benchmarks call it.
        """
        done = 0
        while self._finished and (now is None or self._finished[0][0] <= now):
            _, tournament, seq = self._finished.popleft()
            channel = self.channels.get(tournament)
            if channel is None or channel.compacted or channel.seq != seq or channel._payload is None:
                continue
            if channel._payload["provisional"]:
                continue
            channel.compact(self.finished_bytes)
            done += 1
        return done

    # -- subscribing ----------------------------------------------------------------------------

    async def subscribe(
        self, conn: ServerConnection, tournament: str, since: int | None, delay: float = 0.0, *, delta: bool = False
    ) -> None:
        """Send ``conn`` what it missed, then make it a live subscriber of ``tournament``.

        What it missed is the updates after ``since`` when all of them are
        still kept and weigh at most ``max_resume`` bytes, otherwise one
        snapshot (empty, seq 0, for a tournament not open yet); nothing when
        it is up to date.  With ``delta`` (protocol v1.1) those are the deltas
        kept, and every update after is a delta; without, the full updates
        rebuilt from them (a compacted tournament has none: a snapshot).
        Raises :class:`ConnectionClosed` when the client goes away meanwhile
        (it is then subscribed to nothing here).  With a ``delay`` (seconds),
        all of it, and everything after, reaches this subscriber that much
        later (see the module docstring).
        """
        channel = self._channel(tournament)
        if channel.live(conn) or conn in channel.resuming or self._delayed(channel, conn):
            channel.leave(conn)  # a re-subscribe starts over from its own since
            channel.resuming.pop(conn, None)
            self._stop_line(channel, conn)
        if delay > 0:
            if channel.delays is None:
                channel.delays = Delays(channel, self._send_one, self.max_resume)
            channel.delays.join(conn, Cursor(delay, delta, since))
            return
        first: list[bytes] | None = None
        if since is not None and since <= channel.seq:
            if since == channel.seq:
                first = []
            elif delta:
                first = channel.history.deltas_after(since, self.max_resume)
            else:
                first = channel.history.full_after(since, self.max_resume)
        if first is None:
            if self._write_snapshot(channel, conn):
                self._feed(channel, delta).add(conn)  # in the same step as the snapshot: nothing falls in between
                return
            first = [channel.snapshot()]
        if not first:
            self._feed(channel, delta).add(conn)
            return
        queued = channel.resuming[conn] = Backlog(delta)
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
        self._feed(channel, delta).add(conn)  # in the same step as the queue ran dry: nothing falls in between

    @staticmethod
    def _write_snapshot(channel: Channel, conn: ServerConnection) -> bool:
        """Write ``conn`` the channel's snapshot as the frame built once for every subscriber that shares its
        compression (:meth:`Channel.snapshot_frame`); ``False`` when it cannot share one, and websockets' own send
        path must frame it.

        Not when ``conn`` may not be written a pre-built frame (:func:`~tracker.gateway.frames.parameters`), nor
        when it is on a feed's stream already (a second tournament, a re-subscribe): websockets' path may then send
        a small snapshot uncompressed, keeping it there (``SharedDeflate.plain``).  The frame is compressed alone,
        so the connection is off any stream after it, as after websockets' own send.
        """
        if not isinstance(conn, ServerConnection):
            return False  # a stand-in that only sends (the hub's own tests): through its send
        transport = conn.transport
        if transport is None or transport.is_closing():
            return False
        compression = parameters(conn)
        if compression is None:
            return False
        deflate = conn.protocol.extensions[0] if compression[0] else None
        if isinstance(deflate, SharedDeflate) and deflate.position is not None:
            return False
        write(conn, channel.snapshot_frame(compression))
        return True

    def unsubscribe(self, conn: ServerConnection, tournament: str | None = None) -> None:
        channels = list(self.channels.values()) if tournament is None else [self.channels.get(tournament)]
        for channel in channels:
            if channel is not None:
                channel.leave(conn)
                channel.resuming.pop(conn, None)
                channel.release_feeds()
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
        if channel.delays is not None:
            channel.delays.keep(message, conns, self._side_budget)
        for conn in conns:
            queued = channel.resuming.get(conn)
            if self._delayed(channel, conn):
                continue
            if queued is not None:
                queued.append(message)
            elif channel.live(conn):
                for feed in channel.feeds():
                    feed.bring_up(conn)  # its update first, then what is about it
                ready.append(conn)
        if ready:
            self._send(ready, message)

    @staticmethod
    def _delayed(channel: Channel, conn: ServerConnection) -> bool:
        return channel.delays is not None and conn in channel.delays.cursors

    @staticmethod
    def _stop_line(channel: Channel, conn: ServerConnection) -> None:
        if channel.delays is not None:
            channel.delays.leave(conn)
            if not channel.delays.cursors:
                channel.delays = None

    def _side_budget(self, size: int) -> bool:
        """Whether ``size`` more bytes of kept messages fit in every channel's delays together."""
        held = sum(c.delays.weight for c in self.channels.values() if c.delays is not None)
        return held + size <= SIDE_BUDGET

    def _send_one(self, conn: ServerConnection, message: bytes) -> None:
        self._send([conn], message)

    def _forget_if_unopened(self, channel: Channel) -> None:
        if (
            not channel.opened
            and not channel.subscribers
            and not channel.delta_subscribers
            and not channel.resuming
            and channel.delays is None
        ):
            self.channels.pop(channel.tournament, None)  # nobody waits for it any more

    def recent(self, tournament: str, n: int) -> list[tuple[int, bytes, float]]:
        """The tournament's last ``n`` updates still kept, oldest first (none for an unknown tournament).

        Each is the update's delta (protocol v1.1): it carries the event fields (``summary`` …) as a full one.
        """
        channel = self.channels.get(tournament)
        return [] if channel is None else channel.history.recent(n)

    def listing(self) -> list[dict[str, Any]]:
        """Every open tournament's id, name, rounds, games played and seq, by id: no standings decoded, so a
        listing of ten thousand compacted tournaments costs what the list itself does."""
        return [channel.listed() for _, channel in sorted(self.channels.items()) if channel.opened]

    def open_channels(self) -> OpenChannels:
        """The tournaments that are open, with their latest standings (a compacted one's decoded when read)."""
        return OpenChannels(self.channels)

    def _feed(self, channel: Channel, delta: bool) -> Feed:
        """The channel's feed of deltas (or of full updates), made when its first follower joins."""
        feed = channel._deltas if delta else channel._full
        if feed is None:
            feed = Feed(
                self.metrics,
                seq=channel.seq,
                base=channel.base,
                drop=self._drop,
                max_buffer=self.max_buffer,
                slice=self.fanout_slice,
            )
            if delta:
                channel._deltas = feed
            else:
                channel._full = feed
        return feed

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
        broadcast(ready, message)

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
        """Stop the delayed subscribers' lines and the compaction timer, wait for slow clients being dropped."""
        if self._compactor is not None:
            self._compactor.cancel()
            self._compactor = None
        for channel in self.channels.values():
            for feed in channel.feeds():
                feed.close()
        pumps = [c.delays.task for c in self.channels.values() if c.delays is not None and c.delays.task is not None]
        for task in pumps:
            task.cancel()
        await asyncio.gather(*pumps, return_exceptions=True)
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)
