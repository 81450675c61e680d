"""Spoiler delays: a subscriber that asked for ``delay`` seconds sees everything that many seconds late,
and what is held back is held once for all of them, not once per subscriber.

How this works
--------------

A delayed subscriber is a :class:`Cursor`: the seq of the last update it
was sent, its delay, and when it is next due.  Nothing is copied for it.
The updates come from the channel (each delta, and the full update when a
full subscriber is delayed, with the time it was published), kept once in
the channel's :class:`Delays` from the oldest seq a cursor still needs
(:class:`Kept`; what came before the first delayed subscriber is read once
from the channel's :class:`~tracker.gateway.history.History`).  An update is
due for a cursor once ``published + delay`` has passed.

Each cursor is looked at only when its own next message comes due: the
cursors that have something pending sit in a heap keyed by that time; the
ones that have been sent everything wait in a set and are put in the heap,
each at its own time, when the next update (or kept message for them) is
published.  So a new delayed subscriber costs one look, an update one heap
entry per delayed subscriber, and nothing walks every cursor per event.  A
wake-up looks at most :data:`BATCH` cursors before letting the event loop
run again.  The other messages a subscriber may get (stakes, cues, boards,
live) are kept once, in publish order, with the delayed subscribers they are
for, until every cursor has passed them; all channels' kept messages
together stay within a budget in bytes (the oldest go first).

A new delayed subscriber starts from the standings as they were ``delay``
seconds ago: the updates it missed since its ``since`` when they are still
kept and due, else one snapshot of those standings rebuilt from the history
(once for every subscriber starting at the same seq); when even the
history's oldest standings are newer than that, it waits until they are
due.  So a delayed page never shows a result early, and a thousand delayed
resumes cost the server their cursors.  One task per channel with delayed
subscribers writes what is due, without waiting for any subscriber (a slow
one is dropped, as for live updates).
"""

from __future__ import annotations

import asyncio
import heapq
import time
from bisect import bisect_right
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from itertools import count
from typing import Any, Final, Protocol, cast

from websockets.asyncio.server import ServerConnection

from tracker.gateway.history import History
from tracker.protocol import StandingsPayload, snapshot_message


class Channel(Protocol):
    """What the delays read of their hub channel (:class:`tracker.gateway.hub.Channel`)."""

    @property
    def tournament(self) -> str: ...
    @property
    def history(self) -> History: ...
    @property
    def seq(self) -> int: ...
    @property
    def published_at(self) -> float: ...
    def snapshot(self) -> bytes: ...


#: Bytes of kept messages (stakes, cues, boards) all channels' delayed subscribers may share.
SIDE_BUDGET: Final = 32 << 20
#: Seconds between two looks when nothing is known to be due sooner (a new subscriber or update wakes it).
IDLE: Final = 5.0
#: Cursors looked at in one turn of the event loop before the others get theirs.
BATCH: Final = 64


@dataclass(slots=True)
class Cursor:
    """One delayed subscriber: its delay, whether it follows deltas, the last update it was sent.

    ``seq`` is ``None`` until it has its starting point (then ``since`` is what it said it had);
    ``side_at`` is the publish time of the last kept message it has passed; ``next``, when it is next
    looked at (``None``: not in the heap — it waits for something to be published).
    """

    seconds: float
    delta: bool
    since: int | None
    seq: int | None = None
    side_at: float = 0.0
    next: float | None = None


@dataclass(slots=True)
class Kept:
    """The updates from seq ``low`` on, each published at ``ats[i]``: its delta, and its full update from
    ``full_low`` on (only while a full subscriber is delayed).  Contiguous: a gap starts them over."""

    low: int = 1
    full_low: int = 1
    deltas: list[bytes] = field(default_factory=list)
    fulls: list[bytes | None] = field(default_factory=list)
    ats: list[float] = field(default_factory=list)

    @property
    def high(self) -> int:
        """The newest seq kept (``low - 1``: none is)."""
        return self.low + len(self.ats) - 1

    def clear(self, low: int) -> None:
        self.low = self.full_low = low
        self.deltas, self.fulls, self.ats = [], [], []

    def add(self, seq: int, delta: bytes, full: bytes | None, at: float) -> None:
        if seq != self.high + 1:
            self.clear(seq)
        self.deltas.append(delta)
        self.fulls.append(full)
        self.ats.append(at)
        if full is None:
            self.full_low = seq + 1

    def ensure(self, channel: Channel, since: int, full: bool) -> bool:
        """Have every update after ``since`` up to the channel's seq (full ones too with ``full``), reading
        from the channel's history what is not kept yet; ``False`` when the history no longer has them."""
        if since >= channel.seq:
            return True
        history = channel.history
        if since + 1 < self.low or self.high < channel.seq:
            entries = history.after(since)
            if not entries or entries[0][0] != since + 1 or entries[-1][0] != channel.seq:
                return False
            fulls = dict(zip(range(self.low, self.high + 1), self.fulls, strict=True))
            self.low = since + 1
            self.deltas = [data for _, data, _ in entries]
            self.ats = [at for _, _, at in entries]
            self.fulls = [fulls.get(seq) for seq, _, _ in entries]
            self.full_low = self.high + 1
            while self.full_low > self.low and self.fulls[self.full_low - 1 - self.low] is not None:
                self.full_low -= 1
        if full and since + 1 < self.full_low:
            rebuilt = history.fulls_after(since, channel.seq)
            if rebuilt is None or not rebuilt or rebuilt[0][0] != since + 1:
                return False
            for seq, data, _ in rebuilt:
                if self.low <= seq <= self.high:
                    self.fulls[seq - self.low] = data
            self.full_low = since + 1
        return True

    def at(self, seq: int) -> float | None:
        """When update ``seq`` was published (``None``: not kept)."""
        return self.ats[seq - self.low] if self.low <= seq <= self.high else None

    def message(self, seq: int, delta: bool) -> bytes | None:
        """Update ``seq`` as a delta subscriber (or a full one) is sent it; ``None``: not kept."""
        if not self.low <= seq <= self.high:
            return None
        return self.deltas[seq - self.low] if delta else self.fulls[seq - self.low]

    def due(self, before: float) -> int | None:
        """The newest seq kept published at or before ``before`` (``None``: none is)."""
        i = bisect_right(self.ats, before)
        return self.low + i - 1 if i else None

    def prune(self, below: int) -> None:
        """Forget the updates up to ``below`` (no cursor needs them)."""
        drop = min(max(0, below - self.low + 1), len(self.ats))
        if drop:
            del self.deltas[:drop], self.fulls[:drop], self.ats[:drop]
            self.low += drop
            self.full_low = max(self.full_low, self.low)


@dataclass(slots=True)
class Delays:
    """The delayed subscribers of one channel and the messages they share (see the module docstring)."""

    channel: Channel
    send: Callable[[ServerConnection, bytes], None]
    cap: int  # bytes a subscriber may be sent at once to catch up; beyond, a snapshot instead
    cursors: dict[ServerConnection, Cursor] = field(default_factory=dict)
    side: list[tuple[float, bytes, frozenset[ServerConnection]]] = field(default_factory=list)
    side_first: int = 0  # side[:side_first] is gone (passed by every cursor, or over the budget)
    weight: int = 0
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    due: list[tuple[float, int, ServerConnection]] = field(default_factory=list)  # heap: (when, serial, conn)
    waiting: set[ServerConnection] = field(default_factory=set)  # sent everything: looked at on the next publish
    kept: Kept = field(default_factory=Kept)
    fulls: int = 0  # cursors that follow full updates (while none does, no full update is kept)
    _serial: count[int] = field(default_factory=count)
    _snapshot: tuple[int, bytes] | None = None  # the last snapshot of past standings sent, by seq
    _swept: float = 0.0

    def join(self, conn: ServerConnection, cursor: Cursor) -> None:
        self.leave(conn, stop=False)
        self.cursors[conn] = cursor
        self.fulls += not cursor.delta
        cursor.side_at = time.time()  # only what is published from now on: earlier messages are not kept for it
        self._schedule(conn, cursor, 0.0)
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._run(), name=f"delayed-{self.channel.tournament}")

    def leave(self, conn: ServerConnection, *, stop: bool = True) -> None:
        cursor = self.cursors.pop(conn, None)
        if cursor is not None:
            self.fulls -= not cursor.delta
            cursor.next = None
        self.waiting.discard(conn)
        if len(self.due) > 2 * len(self.cursors) + 64:  # mostly left: the heap is rebuilt from who is still in it
            self.due = [
                entry for entry in self.due if (c := self.cursors.get(entry[2])) is not None and c.next == entry[0]
            ]
            heapq.heapify(self.due)
        if not self.cursors and stop:
            self.side.clear()
            self.side_first = self.weight = 0
            self.due.clear()
            self.kept.clear(self.channel.seq + 1)
            self._snapshot = None
            if self.task is not None:
                self.task.cancel()

    def keep(self, message: bytes, conns: list[ServerConnection], budget: Callable[[int], bool]) -> None:
        """Hold ``message`` (stakes, a cue, boards) for those of ``conns`` that are delayed, once for all."""
        for_them = frozenset(c for c in conns if c in self.cursors)
        if not for_them:
            return
        while self.side_first < len(self.side) and not budget(len(message)):
            self._drop_side()
        at = time.time()
        self.side.append((at, message, for_them))
        self.weight += len(message)
        for conn in for_them & self.waiting:
            cursor = self.cursors[conn]
            self._schedule(conn, cursor, at + cursor.seconds)

    def published(self, seq: int, delta: bytes, full: bytes, at: float) -> None:
        """The channel got update ``seq`` (its delta and full update, published at ``at``): it becomes due for
        each cursor in its time.  A seq that does not follow the last one starts what is kept over."""
        gap = seq != self.kept.high + 1 and self.kept.ats
        self.kept.add(seq, delta, full if self.fulls else None, at)
        if gap:
            self._snapshot = None
        waiting, self.waiting = self.waiting, set()
        for conn in waiting:
            cursor = self.cursors[conn]
            self._schedule(conn, cursor, at + cursor.seconds)

    def reset(self) -> None:
        """The channel's history started over (a journal replay): every cursor looks again at once."""
        self.kept.clear(self.channel.seq + 1)
        self._snapshot = None
        for conn, cursor in self.cursors.items():
            self._schedule(conn, cursor, 0.0)

    def _schedule(self, conn: ServerConnection, cursor: Cursor, when: float) -> None:
        """Look at ``cursor`` at ``when`` (Unix s) unless it is to be looked at sooner already."""
        self.waiting.discard(conn)
        if cursor.next is not None and cursor.next <= when:
            return
        cursor.next = when
        heapq.heappush(self.due, (when, next(self._serial), conn))
        if self.due[0][2] is conn:
            self.wake.set()

    async def _run(self) -> None:
        while self.cursors:
            self.wake.clear()
            more = self.tick(time.time())
            if more:
                await asyncio.sleep(0)  # the rest of what is due, after the others had their turn
                continue
            wait = IDLE if not self.due else min(IDLE, max(0.005, self.due[0][0] - time.time()))
            with suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self.wake.wait()

    def tick(self, now: float) -> bool:
        """Look at the cursors due by ``now`` (Unix s), at most :data:`BATCH` of them; whether more are due."""
        looked = skipped = 0
        while self.due and self.due[0][0] <= now:
            if looked >= BATCH or skipped >= 16 * BATCH:
                return True
            when, _, conn = heapq.heappop(self.due)
            cursor = self.cursors.get(conn)
            if cursor is None or cursor.next != when:
                skipped += 1  # left, or due sooner meanwhile (already looked at)
                continue
            cursor.next = None
            self._look(conn, cursor, now)
            looked += 1
        if now - self._swept >= IDLE:
            self._sweep(now)
        return False

    def _sweep(self, now: float) -> None:
        """Forget the updates and kept messages every cursor has passed (once per :data:`IDLE`)."""
        self._swept = now
        lowest = min((c.seq if c.seq is not None else -1 for c in self.cursors.values()), default=-1)
        first = self.channel.history.first
        if lowest >= 0:
            self.kept.prune(lowest if first is None else max(lowest, min(first - 1, self.channel.seq - 1)))
        oldest = min((c.side_at for c in self.cursors.values()), default=now)
        while self.side_first < len(self.side) and self.side[self.side_first][0] <= oldest:
            self._drop_side()

    def _drop_side(self) -> None:
        self.weight -= len(self.side[self.side_first][1])
        self.side_first += 1
        if self.side_first > 256 and self.side_first * 2 > len(self.side):
            del self.side[: self.side_first]
            self.side_first = 0

    def _look(self, conn: ServerConnection, cursor: Cursor, now: float) -> None:
        """Send ``cursor`` what is due at ``now``, then put it where it waits for what is next."""
        for _ in range(3):  # a start, then its catch-up (a restart after a gap at most once more)
            if cursor.seq is None:
                when = self._start(conn, cursor, now)
                if when is None or when > now:
                    self._wait(conn, cursor, when)
                    return
            if self._catch_up(conn, cursor, now):
                return
        self._schedule(conn, cursor, now)  # restarted again: the next turn

    def _wait(self, conn: ServerConnection, cursor: Cursor, when: float | None) -> None:
        if when is None:
            self.waiting.add(conn)
        else:
            self._schedule(conn, cursor, when)

    def _start(self, conn: ServerConnection, cursor: Cursor, now: float) -> float | None:
        """Give ``cursor`` its starting point as of ``now − delay``; when not possible yet, when it will be."""
        channel, history = self.channel, self.channel.history
        seen = now - cursor.seconds
        since = cursor.since
        if channel.published_at <= seen:  # nothing was published within the delay: the standings now are due
            if since is not None and since <= channel.seq and history.covers(since):
                cursor.seq = since
            else:
                self.send(conn, channel.snapshot())
                cursor.seq = channel.seq
            return now
        due = self.kept.due(seen)
        if due is None:
            due = history.due(seen)
        if due is None:
            return history.base_at + cursor.seconds  # even the oldest standings kept are not due yet
        if since is not None and (since >= due or history.covers(since)):
            cursor.seq = since
            return now
        if self._snapshot is None or self._snapshot[0] != due:
            payload = history.standings_at(due)
            if payload is None:  # no longer rebuilt (a compacted history): the standings now, once they are due
                return channel.published_at + cursor.seconds
            self._snapshot = (due, snapshot_message(_as_payload(payload)))
        self.send(conn, self._snapshot[1])
        cursor.seq = due
        return now

    def _catch_up(self, conn: ServerConnection, cursor: Cursor, now: float) -> bool:
        """Send ``cursor`` the updates and kept messages that are due, in publish order, and schedule its next
        look; ``False`` when it must start again (what it missed is gone, or too much is due at once)."""
        assert cursor.seq is not None
        seen = now - cursor.seconds
        kept = self.kept
        if not kept.ensure(self.channel, cursor.seq, not cursor.delta):
            cursor.seq, cursor.since = None, None
            return False
        owed: list[tuple[float, bytes]] = []
        total = 0
        seq = cursor.seq
        while (at := kept.at(seq + 1)) is not None and at <= seen:
            data = kept.message(seq + 1, cursor.delta)
            assert data is not None  # ensure() has them all
            owed.append((at, data))
            total += len(data)
            seq += 1
        side_at = cursor.side_at
        k = bisect_right(self.side, cursor.side_at, lo=self.side_first, key=lambda s: s[0])
        while k < len(self.side) and self.side[k][0] <= seen:
            at, data, for_them = self.side[k]
            if conn in for_them:
                owed.append((at, data))
                total += len(data)
            side_at = at
            k += 1
        if total > self.cap:  # too much at once: one snapshot of when it is at
            cursor.seq, cursor.since = None, None
            return False
        owed.sort(key=lambda item: item[0])
        for _, data in owed:
            self.send(conn, data)
        cursor.seq, cursor.side_at = seq, side_at
        later = [at for at in (kept.at(seq + 1), self.side[k][0] if k < len(self.side) else None) if at is not None]
        self._wait(conn, cursor, min(later) + cursor.seconds if later else None)
        return True


def _as_payload(payload: dict[str, Any]) -> StandingsPayload:
    """A payload rebuilt from encoded standings payloads (the same keys, checked when it was first built)."""
    return cast(StandingsPayload, payload)
