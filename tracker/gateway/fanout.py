"""The live fan-out of one feed: its followers walked a slice at a time, and bursts merged instead of queued.

How this works
--------------

A :class:`Feed` is one tournament's full updates, or its deltas, and the
connections that follow it live (:class:`Follower`: the connection, the seq
it was last written, how its messages are compressed).  Publishing makes an
update the feed's newest and owes every follower one visit: the feed walks
its followers as a ring, from where it stands, ``slice`` of them per turn of
the event loop (the first slice at once), and writes each follower what
brings it to the newest:

- one update behind: the newest update, as the feed's stream frame when the
  client's window is at the stream's position
  (:class:`~tracker.gateway.frames.Stream`), else compressed alone;
- further behind (a newer update came before its visit, or it was still
  being written): the **snapshot** of the standings just before the newest,
  then the newest update, in one write; when the hub has no standings for
  that seq (it saw a gap itself), the snapshot of the newest alone;
- still being written (its socket holds unsent bytes, or a message of its
  own is half sent): nothing now; it is looked at again every
  :data:`RETRY` seconds and at the next update, and once its socket has
  drained it gets what brings it to the newest, as above.  Once its
  unsent bytes and the updates it was not written meanwhile pass
  ``max_buffer``, it is dropped as a slow client (close 1008), as one that
  was written everything would be.

Each frame is built once per update for all the followers that share it
(one set of compression parameters: a :class:`Group`), so a visit is a few
checks and one ``transport.write`` of bytes built before, and allocates
nothing: the cost per follower does not grow with the audience.  An update
that comes mid-lap starts a new lap from where the walk is, so every
follower is visited within one lap of the newest update whatever came
before it: a burst costs at most a lap per update the walk keeps up with,
and never a queue per follower.

**The seq contract.**  What one follower is written is, in order, either
the update right after the seq it has, or a snapshot and then the update
right after the snapshot's seq (or a snapshot alone).  So every subscriber
sees a contiguous history, or a snapshot it can start from and a contiguous
history from there; its seqs only ever grow.  What a merge leaves out is
the skipped updates' event fields (``summary``, ``changed``, …), which
``/api/tournaments/{id}/recent`` still lists.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Final

from websockets.asyncio.server import ServerConnection
from websockets.asyncio.server import broadcast as websockets_broadcast
from websockets.protocol import OPEN

from tracker.gateway import frames
from tracker.gateway.frames import Parameters, Run, SharedDeflate, Stream, negotiated
from tracker.gateway.metrics import Metrics

SLICE: Final = 256
"""Followers visited per turn of the event loop: a lap of 20,000 yields 80 times (acks, pings, other feeds)."""
RETRY: Final = 0.05
"""Seconds between two looks at the followers still being written."""


class Group:
    """The followers of a feed written the very same frames: one set of compression parameters.

    ``compression`` is ``None`` for connections that may not share a pre-built frame (see
    :func:`~tracker.gateway.frames.window`): they go through websockets' own send path.  ``stream``:
    its followers may follow the feed's deflate stream (they allowed context takeover).  The rest is
    built once per update (``seq``), when its first follower is visited: ``run`` and ``prior`` from
    :meth:`Stream.advance`, ``alone`` (the update compressed alone) and ``merged`` (the snapshot, then
    the update) when a follower needs them; ``merged_position`` is where a merged follower's window
    ends (the stream's position when the stream started afresh at this update, else ``None``).

    ``on`` and ``off`` tally, as they are written or join, its followers brought to ``tallied`` (the newest seq)
    whose window then ends at the stream's position and those whose window does not: what the next update's
    rent-or-buy (:meth:`Stream.advance`) weighs, without a pass over the ring per update.  A window that moves
    afterwards (websockets' own send of a message to the connection) is not seen until the follower's next
    write; the tally only weighs when to start the stream afresh, never who may be written its frame.
    """

    __slots__ = (
        "alone",
        "compression",
        "merged",
        "merged_position",
        "off",
        "on",
        "prior",
        "run",
        "seq",
        "stream",
        "tallied",
    )

    def __init__(self, compression: Parameters | None, stream: bool) -> None:
        self.compression = compression
        self.stream = stream
        self.seq = -1
        self.run: Run | None = None
        self.prior: object | None = None
        self.alone: bytes | None = None
        self.merged: bytes | None = None
        self.merged_position: object | None = None
        self.on = self.off = 0
        self.tallied = -1


class Follower:
    """One connection following a feed: the seq it was last written, its group, whether it is settled.

    **Settled**: the feed's last write to it went out whole (nothing left in its transport) and nothing else
    was written to it since; then it is open, sends no message of its own, and its window ends where the feed
    left it, so the walk writes it the stream's next frame on its own fields and its transport
    (:meth:`Feed._walk`), never reading the connection or its protocol: two objects more per follower, which
    at 5,000 delta subscribers cost about 2.5 µs of the 12.6–13.4 µs of server CPU per follower per update
    (``bench.fanout``).  Whatever else writes to the connection unsettles its followers first
    (``BoundedConnection.send_data``, which every message, ping, pong and close of websockets' own goes
    through; :func:`~tracker.gateway.frames.write`; ``connection_lost``); an unsettled follower's next visit
    checks it all (:meth:`Feed._visit`), as every visit did before.  A connection that keeps no
    ``followers`` list (a stand-in) is never settled.
    """

    __slots__ = (
        "alive",
        "conn",
        "deflate",
        "group",
        "seq",
        "settled",
        "skipped",
        "skipped_seq",
        "transport",
        "waiting",
    )

    def __init__(self, conn: ServerConnection, seq: int) -> None:
        self.conn = conn
        self.transport = getattr(conn, "transport", None)  # a stand-in that only sends has none (never settled)
        self.settled = False
        self.seq = seq
        self.group: Group | None = None
        self.deflate: SharedDeflate | None = None  # its extension, when it may follow the stream
        self.alive = True
        self.waiting = False
        self.skipped = 0  # bytes of the updates it was not written while it was still being written
        self.skipped_seq = seq


class Feed:
    """One feed's followers and its newest update (see the module docstring).

    Reads like a set of connections (``in``, ``len``, iteration).  ``base`` gives the snapshot
    message of the standings just before the newest update (``None``: not known), ``drop`` drops a
    slow client, ``merged`` counts the followers written a merge.
    """

    def __init__(
        self,
        metrics: Metrics,
        *,
        seq: int,
        base: Callable[[], tuple[bytes, bool]],
        drop: Callable[[ServerConnection], None],
        max_buffer: int,
        slice: int = SLICE,
    ) -> None:
        self.metrics = metrics
        self.seq = seq
        self.message = b""
        self.base = base
        self.drop = drop
        self.max_buffer = max_buffer
        self.slice = slice
        self.stream = Stream()
        self.ring: list[Follower] = []
        self.index: dict[ServerConnection, Follower] = {}
        self.groups: dict[tuple[Parameters | None, bool], Group] = {}
        self.cursor = 0
        self.owed = 0  # visits still owed in this lap
        self.dead = 0  # entries of the ring no longer following
        self.published = 0.0  # when the newest update was published (perf_counter)
        self.merges = 0  # followers written a merge, not yet counted in the metrics
        self.waiting: list[Follower] = []
        self._walking: asyncio.Handle | None = None
        self._retry: asyncio.TimerHandle | None = None

    # -- a set of connections -----------------------------------------------------------------

    def __contains__(self, conn: object) -> bool:
        return conn in self.index

    def __len__(self) -> int:
        return len(self.index)

    def __bool__(self) -> bool:
        return bool(self.index)

    def __iter__(self) -> Iterator[ServerConnection]:
        return iter(list(self.index))

    def add(self, conn: ServerConnection, seq: int | None = None) -> None:
        """Follow from ``seq`` (default: the newest, what a subscriber has once its resume is out)."""
        follower = Follower(conn, self.seq if seq is None else seq)
        old = self.index.pop(conn, None)
        if old is not None:
            self._leave(old)
        self.index[conn] = follower
        self.ring.append(follower)
        followers = getattr(conn, "followers", None)
        if followers is not None:  # a BoundedConnection: grouped once, here, by what its handshake settled
            followers.append(follower)
            group = self._group(follower)
            if group.stream:
                self._tally(follower, group, 1)
        if follower.seq < self.seq:
            self._visit(follower)

    def discard(self, conn: object) -> None:
        follower = self.index.pop(conn, None)  # type: ignore[call-overload]  # any object may be asked for
        if follower is not None:
            self._leave(follower)

    def _leave(self, follower: Follower) -> None:
        group = follower.group
        if group is not None and group.stream and follower.alive:
            self._tally(follower, group, -1)
        follower.alive = follower.settled = False
        self.dead += 1
        followers = getattr(follower.conn, "followers", None)
        if followers is not None and follower in followers:
            followers.remove(follower)

    def close(self) -> None:
        """Stop walking (the hub is closing, or nobody follows any more)."""
        for handle in (self._walking, self._retry):
            if handle is not None:
                handle.cancel()
        self._walking = self._retry = None

    # -- publishing -----------------------------------------------------------------------------

    def publish(self, seq: int, message: bytes) -> None:
        """Make ``message`` (update ``seq``) the newest, write the first slice of followers, walk the rest."""
        self.seq = seq
        self.message = message
        self.published = time.perf_counter()
        if self.dead > 64 and self.dead * 2 > len(self.ring):
            self._compact()
        self.owed = len(self.ring)
        if self._walking is None:
            self._walk()

    def bring_up(self, conn: ServerConnection) -> None:
        """Write ``conn`` what brings it to the newest now, if it is behind (a message of its own follows)."""
        follower = self.index.get(conn)
        if follower is not None and follower.seq < self.seq:
            self._visit(follower, force=True)

    def _walk(self) -> None:
        """Visit the next slice of the ring; again at the next turn of the loop while visits are owed.

        Most visits are of a settled follower (see :class:`Follower`) one update behind, at the stream's position:
        it is written the stream's frame right here, and stays settled if the write went out whole; any other
        follower is visited by :meth:`_visit`.
        """
        self._walking = None
        ring = self.ring
        newest = self.seq
        before = newest - 1
        cursor, owed = self.cursor, self.owed
        budget = min(self.slice, owed)
        owed -= budget
        found = self._stream_group()
        stream, data, prior, position = (
            (found[0], found[1].frame, found[0].prior, found[1].position) if found else (None, b"", None, None)
        )
        while budget > 0:
            budget -= 1
            if cursor >= len(ring):
                cursor = 0
            follower = ring[cursor]
            cursor += 1
            if follower.seq >= newest or not follower.alive:
                continue
            if follower.settled and follower.seq == before and follower.group is stream:
                deflate = follower.deflate
                if prior is None or deflate.position is prior:  # type: ignore[union-attr]  # on the stream: it has one
                    follower.seq = newest
                    deflate.position = position  # type: ignore[union-attr]  # as above
                    stream.on += 1  # type: ignore[union-attr]  # its group, tallying the newest since its build
                    transport = follower.transport
                    transport.write(data)  # type: ignore[union-attr]  # settled: a BoundedConnection's
                    if transport.get_write_buffer_size():  # type: ignore[union-attr]  # as above
                        frames.unsettle(follower.conn)  # the rest waits in the transport: each feed's next visit checks
                    continue
            self._visit(follower)
        self.cursor, self.owed = cursor, owed
        if self.owed > 0:
            self._walking = asyncio.get_running_loop().call_soon(self._walk)
            return
        self.metrics.fanout_latency.observe(time.perf_counter() - self.published)
        if self.merges:
            self.metrics.inc("tracker_updates_merged_total", self.merges)
            self.merges = 0

    def _stream_group(self) -> tuple[Group, Run] | None:
        """The one group on the feed's stream and its run, its frame built for the newest update (built now if it
        is not yet: what its first follower's visit would do); ``None`` when the feed has none, or more than one."""
        found: Group | None = None
        for group in self.groups.values():
            if group.stream and group.compression is not None:
                if found is not None:
                    return None
                found = group
        if found is None:
            return None
        if found.seq != self.seq:
            self._build(found)
        return (found, found.run) if found.run is not None else None

    def _compact(self) -> None:
        """Drop the ring's dead entries, the walk's place kept."""
        before = self.ring[: self.cursor]
        self.cursor = sum(1 for f in before if f.alive)
        self.ring = [f for f in self.ring if f.alive]
        self.dead = 0

    def _visit(self, follower: Follower, *, force: bool = False) -> None:
        """Write ``follower`` what brings it to the newest (see the module docstring), or leave it waiting."""
        conn = follower.conn
        transport = conn.transport
        newest = self.seq
        if transport is None or transport.is_closing():
            follower.seq = newest  # it is going: the connection's handler unsubscribes it
            return
        buffered = transport.get_write_buffer_size()
        if buffered > self.max_buffer:
            self.drop(conn)
            return
        protocol = conn.protocol
        if protocol.state is not OPEN:
            follower.seq = newest
            return
        if (buffered and not force) or protocol.expect_continuation_frame or conn.send_in_progress is not None:
            if follower.skipped_seq < newest:  # what it is not written now counts as owed, once per update
                follower.skipped_seq = newest
                follower.skipped += len(self.message)
                if buffered + follower.skipped > self.max_buffer:
                    self.drop(conn)  # stalled: as far behind as a slow client that was written everything
                    return
            self._wait(follower)  # still being written: merged once it has drained
            return
        group = follower.group
        if group is None:
            group = self._group(follower)
        if group.seq != newest:
            self._build(group)
        deflate = follower.deflate
        behind = newest - follower.seq
        follower.seq = newest
        follower.skipped = 0
        if group.compression is None:
            self.merges += behind > 1
            self._websockets_send(conn, behind > 1)
            return
        if behind == 1:
            run = group.run
            if run is not None and deflate is not None and (group.prior is None or deflate.position is group.prior):
                data = run.frame
                deflate.position = run.position
            else:
                data = group.alone or self._alone(group)
                if deflate is not None:
                    deflate.position = None
        else:
            data = group.merged or self._merged(group)
            if deflate is not None:
                deflate.position = group.merged_position
            self.merges += 1
        if group.stream:
            self._tally(follower, group, 1)
        if protocol.writes:  # behind a pong still queued: through the connection's own send path
            protocol.writes.append(data)
            conn.send_data()
        else:
            transport.write(data)
            if transport.get_write_buffer_size():
                frames.unsettle(conn)
            elif hasattr(conn, "followers"):
                follower.settled = True  # checked above, written whole: the walk may write it on its own fields

    def _wait(self, follower: Follower) -> None:
        if not follower.waiting:
            follower.waiting = True
            self.waiting.append(follower)
        if self._retry is None:
            self._retry = asyncio.get_running_loop().call_later(RETRY, self._look_again)

    def _look_again(self) -> None:
        self._retry = None
        waiting, self.waiting = self.waiting, []
        for follower in waiting:
            follower.waiting = False
            if follower.alive and follower.seq < self.seq:
                self._visit(follower)

    # -- frames, once per update and group ----------------------------------------------------------

    def _group(self, follower: Follower) -> Group:
        conn = follower.conn
        compression = negotiated(conn)
        deflate: SharedDeflate | None = None
        if compression is not None and compression[0]:
            extension = conn.protocol.extensions[0]
            if isinstance(extension, SharedDeflate) and extension.takeover:
                deflate = extension
        key = (compression, deflate is not None)
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = Group(compression, deflate is not None)
        follower.group = group
        follower.deflate = deflate
        return group

    def _build(self, group: Group) -> None:
        group.seq = newest = self.seq
        group.alone = group.merged = None
        group.merged_position = None
        group.run = group.prior = None
        if not group.stream or group.compression is None:
            return
        # who would take the stream's next frame: the followers one behind whose window ends at its position, as
        # tallied while they were written (the stream's position is where the last frame left them)
        on, off = (group.on, group.off) if group.tallied == newest - 1 else (0, 0)
        if group.tallied < newest:
            group.tallied, group.on, group.off = newest, 0, 0
        group.run, group.prior = self.stream.advance(self.message, group.compression, on, off)

    def _tally(self, follower: Follower, group: Group, count: int) -> None:
        """Count ``follower``, of a stream ``group``, at its seq (``count`` -1: no longer); only the newest counts."""
        if follower.seq != group.tallied:
            if follower.seq < group.tallied or count < 0:
                return
            group.tallied, group.on, group.off = follower.seq, 0, 0  # joined before the group's build for it
        at = self.stream.position(group.compression) if group.compression is not None else None
        deflate = follower.deflate
        if at is not None and deflate is not None and deflate.position is at:
            group.on = max(0, group.on + count)
        else:
            group.off = max(0, group.off + count)

    def _alone(self, group: Group) -> bytes:
        assert group.compression is not None
        group.alone = frames.frame(self.message, group.compression)
        return group.alone

    def _merged(self, group: Group) -> bytes:
        """The snapshot before the newest and the newest (or the newest's snapshot alone), as one write."""
        snapshot, before = self.base()
        assert group.compression is not None
        head = frames.frame(snapshot, group.compression)
        if not before:  # no standings kept for the seq before: the snapshot of the newest is all
            group.merged = head
        elif group.run is not None and group.prior is None:  # the stream started afresh: its frame fits anyone
            group.merged = head + group.run.frame
            group.merged_position = group.run.position
        else:
            group.merged = head + (group.alone or self._alone(group))
        return group.merged

    def _websockets_send(self, conn: ServerConnection, merged: bool) -> None:
        """A connection that may not share a frame: websockets frames (and compresses) each message itself."""
        if merged:
            snapshot, before = self.base()
            websockets_broadcast([conn], snapshot, text=True)
            if not before:
                return
        websockets_broadcast([conn], self.message, text=True)
