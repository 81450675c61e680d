"""Spoiler delays: a subscriber that asked for ``delay`` seconds sees everything that many seconds late,
and what is held back is held once for all of them, not once per subscriber.

How this works
--------------

A delayed subscriber is a :class:`Cursor`: the seq of the last update it
was sent and its delay.  Nothing is copied for it.  The updates come from
the channel's history (:class:`~tracker.gateway.history.History`, which
keeps each delta with the time it was published): an update is due for a
cursor once ``published + delay`` has passed, and one pass over the history
per wake-up serves every cursor of the channel (full updates rebuilt once
for all of them).  The other messages a subscriber may get (stakes, cues,
boards, live) are kept once, in the channel's :class:`Delays`, with their
publish time and the delayed subscribers they are for, until every cursor
has passed them; all channels' kept messages together stay within a budget
in bytes (the oldest go first).

A new delayed subscriber starts from the standings as they were ``delay``
seconds ago: the updates it missed since its ``since`` when the history
still has them and they are due, else one snapshot of those standings
rebuilt from the history; when even the history's oldest standings are
newer than that, it waits until they are due.  So a delayed page never
shows a result early, and a thousand delayed resumes cost the server their
cursors.  One task per channel with delayed subscribers writes what is due,
without waiting for any subscriber (a slow one is dropped, as for live
updates).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
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


@dataclass(slots=True)
class Cursor:
    """One delayed subscriber: its delay, whether it follows deltas, the last update it was sent.

    ``seq`` is ``None`` until it has its starting point (then ``since`` is what it said it had);
    ``side_at`` is the publish time of the last kept message it has passed.
    """

    seconds: float
    delta: bool
    since: int | None
    seq: int | None = None
    side_at: float = 0.0


@dataclass(slots=True)
class Delays:
    """The delayed subscribers of one channel and the messages they share (see the module docstring)."""

    channel: Channel
    send: Callable[[ServerConnection, bytes], None]
    cap: int  # bytes a subscriber may be sent at once to catch up; beyond, a snapshot instead
    cursors: dict[ServerConnection, Cursor] = field(default_factory=dict)
    side: deque[tuple[float, bytes, frozenset[ServerConnection]]] = field(default_factory=deque)
    weight: int = 0
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None

    def join(self, conn: ServerConnection, cursor: Cursor) -> None:
        self.cursors[conn] = cursor
        cursor.side_at = time.time()  # only what is published from now on: earlier messages are not kept for it
        self.wake.set()
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._run(), name=f"delayed-{self.channel.tournament}")

    def leave(self, conn: ServerConnection) -> None:
        self.cursors.pop(conn, None)
        if not self.cursors:
            self.side.clear()
            self.weight = 0
            if self.task is not None:
                self.task.cancel()

    def keep(self, message: bytes, conns: list[ServerConnection], budget: Callable[[int], bool]) -> None:
        """Hold ``message`` (stakes, a cue, boards) for those of ``conns`` that are delayed, once for all."""
        for_them = frozenset(c for c in conns if c in self.cursors)
        if not for_them:
            return
        while self.side and not budget(len(message)):
            _, dropped, _ = self.side.popleft()
            self.weight -= len(dropped)
        self.side.append((time.time(), message, for_them))
        self.weight += len(message)
        self.wake.set()

    def published(self) -> None:
        """The channel got an update: it becomes due for each cursor in its time."""
        self.wake.set()

    async def _run(self) -> None:
        while self.cursors:
            self.wake.clear()
            due = self.tick(time.time())
            wait = IDLE if due is None else max(0.005, due - time.time())
            with suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self.wake.wait()

    def tick(self, now: float) -> float | None:
        """Send every cursor what is due at ``now`` (Unix s); return when the next thing is due (``None``: nothing)."""
        history = self.channel.history
        following = [c for c in self.cursors.values() if c.seq is not None]
        lowest = min((c.seq for c in following if c.seq is not None), default=None)
        deltas = history.after(lowest) if lowest is not None and any(c.delta for c in following) else []
        fulls = None
        if lowest is not None and any(not c.delta for c in following):
            fulls = history.fulls_after(lowest, self.channel.seq)
        soonest: float | None = None
        for conn, cursor in list(self.cursors.items()):
            if cursor.seq is None:
                due = self._start(conn, cursor, now)
            else:
                due = self._catch_up(conn, cursor, now, deltas if cursor.delta else fulls)
            if due is not None and (soonest is None or due < soonest):
                soonest = due
        oldest = min((c.side_at for c in self.cursors.values()), default=now)
        while self.side and self.side[0][0] <= oldest:  # every cursor has passed it
            _, dropped, _ = self.side.popleft()
            self.weight -= len(dropped)
        return soonest

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
            return self._catch_up(conn, cursor, now, None)
        due = history.due(seen)
        if due is None:
            return history.base_at + cursor.seconds  # even the oldest standings kept are not due yet
        if since is not None and (since >= due or history.covers(since)):
            cursor.seq = since
            return now
        payload = history.standings_at(due)
        if payload is None:
            return history.base_at + cursor.seconds
        self.send(conn, snapshot_message(_as_payload(payload)))
        cursor.seq = due
        return now

    def _catch_up(
        self,
        conn: ServerConnection,
        cursor: Cursor,
        now: float,
        updates: list[tuple[int, bytes, float]] | None,
    ) -> float | None:
        """Send ``cursor`` the updates and kept messages that are due, in publish order; when the next is due."""
        seen = now - cursor.seconds
        assert cursor.seq is not None
        if updates is None:  # not given (its start): read from the history itself
            history = self.channel.history
            updates = history.after(cursor.seq) if cursor.delta else history.fulls_after(cursor.seq, self.channel.seq)
        if updates is None:  # full updates that cannot be rebuilt (a compacted history): one snapshot instead
            if self.channel.seq > cursor.seq:
                cursor.seq, cursor.since = None, None
                return now
            updates = []
        pending = [u for u in updates if u[0] > cursor.seq]
        if pending and pending[0][0] != cursor.seq + 1:  # a gap: what it missed is gone; start again
            cursor.seq, cursor.since = None, None
            return now
        side = [s for s in self.side if s[0] > cursor.side_at and conn in s[2]]
        owed = [(at, data) for _, data, at in pending if at <= seen]
        owed += [(at, data) for at, data, _ in side if at <= seen]
        if sum(len(data) for _, data in owed) > self.cap:  # too much at once: one snapshot of when it is at
            cursor.seq, cursor.since = None, None
            return now
        owed.sort(key=lambda item: item[0])
        for _, data in owed:
            self.send(conn, data)
        sent = [u for u in pending if u[2] <= seen]
        if sent:
            cursor.seq = sent[-1][0]
        cursor.side_at = max([cursor.side_at, *(at for at, _, _ in side if at <= seen)])
        later = [u[2] for u in pending if u[2] > seen] + [s[0] for s in side if s[0] > seen]
        return min(later) + cursor.seconds if later else None


def _as_payload(payload: dict[str, Any]) -> StandingsPayload:
    """A payload rebuilt from encoded standings payloads (the same keys, checked when it was first built)."""
    return cast(StandingsPayload, payload)
