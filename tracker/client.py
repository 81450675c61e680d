"""The one websocket client of tracker: submit events, read standings.

``tracker replay``, ``tracker follow`` and the demo all talk to a tracker (or
a gateway) through :class:`TrackerClient`; nothing else in the package opens
a websocket connection.

How this works
--------------

The connection is opened on first use and again after it was lost.  One
reader task owns it: ``ack`` and ``rejected`` resolve the oldest submit
waiting for that event id; an ``error`` answers the oldest submit still
waiting (the server refused the message before it became an event) or, when
none waits, goes to the subscription; ``snapshot`` and ``update`` go to the
subscription when one is being read, and are dropped otherwise.

A subscription from the start (no ``since``) asks for field deltas (protocol
v1.1): the client keeps the full standings, applies each delta and checks the
digest; on a mismatch or a seq gap it resubscribes without ``since`` and
starts again from the snapshot.  Readers still see full ``update`` messages.  So submits
can be pipelined (:meth:`TrackerClient.submit_many`, a window in flight) or
sent one by one (:meth:`TrackerClient.submit`), and a reader of
:meth:`TrackerClient.updates` sees every message in order.

Every failure to reach the tracker, a lost connection and a reply that does
not come in time raise :class:`TrackerUnavailable`, carrying the replies
received before it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing, suppress
from dataclasses import dataclass
from typing import Any, Final

import msgspec
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from tracker.core.errors import TrackerError
from tracker.core.events import Event, Submitted
from tracker.formats import TournamentFile
from tracker.protocol import (
    EVENT_FIELDS,
    AckMessage,
    ErrorMessage,
    RejectedMessage,
    SnapshotMessage,
    Submit,
    Subscribe,
    Unsubscribe,
    UpdateMessage,
    apply_delta,
    encode,
    standings_digest,
)

REPLY_TIMEOUT: Final = 30.0
MAX_MESSAGE: Final = 2**24


@dataclass(frozen=True, slots=True)
class Acked:
    """The tracker has the event durably (or already had it); ``seq`` when the tracker says it."""

    seq: int | None


@dataclass(frozen=True, slots=True)
class Rejected:
    """The tracker refused the event and changed nothing."""

    code: str
    reason: str


Reply = Acked | Rejected


class TrackerUnavailable(TrackerError):
    """The tracker could not be reached, closed the connection or did not answer in time.

    ``replies`` are the answers received before that, aligned with the
    first events submitted.
    """

    def __init__(self, message: str, replies: Sequence[Reply] = ()) -> None:
        super().__init__(message)
        self.replies = tuple(replies)


class Refused(TrackerError):
    """The tracker answered a subscription with an ``error``; ``code`` says why (e.g. ``unknown-tournament``)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class _Envelope(msgspec.Struct):
    type: str
    id: str | None = None
    delta: bool = False


_envelope: Final = msgspec.json.Decoder(_Envelope)
_ack: Final = msgspec.json.Decoder(AckMessage)
_rejected: Final = msgspec.json.Decoder(RejectedMessage)
_error: Final = msgspec.json.Decoder(ErrorMessage)
_snapshot: Final = msgspec.json.Decoder(SnapshotMessage)
_update: Final = msgspec.json.Decoder(UpdateMessage)
_plain: Final = msgspec.json.Decoder()

StandingsMessage = SnapshotMessage | UpdateMessage


class TrackerClient:
    """A connection to ``ws://…/ws`` of a tracker or gateway; use ``async with``."""

    def __init__(self, url: str, token: str = "", *, timeout: float = REPLY_TIMEOUT) -> None:
        self.url = url
        self.token = token
        self.timeout = timeout
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._waiting: dict[str, deque[asyncio.Future[Reply]]] = {}
        self._order: deque[asyncio.Future[Reply]] = deque()  # every waiting submit, oldest first
        self._messages: asyncio.Queue[bytes | None] | None = None  # the subscription being read
        self.resyncs = 0  # deltas that did not apply (seq gap, digest mismatch): resubscribed for a snapshot

    async def __aenter__(self) -> TrackerClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- submitting -----------------------------------------------------------------------------

    async def submit(self, event: Submitted, *, propose: str | None = None) -> Reply:
        """Submit one event and wait for its reply.  Raises :class:`TrackerUnavailable`.

        With ``propose`` (a reason), the event is put on the arbiters' desk
        as a notice instead of applied: the reply is ``rejected`` with code
        ``proposed``.
        """
        return await self._wait(await self._send_submit(event, propose))

    async def submit_many(
        self,
        events: Sequence[Submitted],
        *,
        window: int = 64,
        rate: float | None = None,
        stop_on_reject: bool = False,
        progress: Callable[[Reply], None] | None = None,
    ) -> list[Reply]:
        """Submit ``events`` in order with up to ``window`` unanswered (one at a time at ``rate`` per second).

        Returns one reply per event submitted; with ``stop_on_reject``, no
        event is sent after the first rejection is received.  Raises
        :class:`TrackerUnavailable` with the replies received before it.
        """
        slots = asyncio.Semaphore(1 if rate else window)
        futures: list[asyncio.Future[Reply]] = []
        rejected = False

        def answered(future: asyncio.Future[Reply]) -> None:
            nonlocal rejected
            slots.release()
            if not future.cancelled() and future.exception() is None:
                reply = future.result()
                rejected = rejected or isinstance(reply, Rejected)
                if progress is not None:
                    progress(reply)

        try:
            for event in events:
                await slots.acquire()
                if stop_on_reject and rejected:
                    break
                future = await self._send_submit(event)
                future.add_done_callback(answered)
                futures.append(future)
                if rate:
                    await self._wait(future)
                    await asyncio.sleep(1.0 / rate)
            for future in futures:
                await self._wait(future)
        except TrackerUnavailable as exc:
            done = [f.result() for f in futures if f.done() and not f.cancelled() and f.exception() is None]
            raise TrackerUnavailable(str(exc), done) from None
        return [f.result() for f in futures]

    async def _send_submit(self, event: Submitted, propose: str | None = None) -> asyncio.Future[Reply]:
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(event.id, deque()).append(future)
        self._order.append(future)
        try:
            await self._send(Submit(token=self.token, event=event, propose=propose))
        except TrackerUnavailable:
            self._forget(event.id, future)
            raise
        return future

    async def _wait(self, future: asyncio.Future[Reply]) -> Reply:
        try:
            async with asyncio.timeout(self.timeout):
                return await asyncio.shield(future)
        except TimeoutError:
            await self._drop(f"{self.url} did not answer within {self.timeout:g} s")
            raise TrackerUnavailable(f"{self.url} did not answer within {self.timeout:g} s") from None

    # -- reading standings ------------------------------------------------------------------------

    async def snapshot(self, tournament: str) -> SnapshotMessage | None:
        """The tournament's current standings; ``None`` when the tracker does not have it open.

        Raises as :meth:`updates` does.
        """
        async with aclosing(self.updates(tournament)) as stream:
            async for message in stream:
                if message["type"] == "snapshot":
                    await self._send(Unsubscribe(tournament=tournament))
                    if message["seq"] == 0 or not message["standings"]:
                        return None  # the gateway's empty snapshot of a tournament not open yet
                    return message
        return None  # pragma: no cover - updates() ends only by raising

    async def updates(self, tournament: str, since: int | None = None) -> AsyncGenerator[StandingsMessage, None]:
        """Subscribe to ``tournament``: the snapshot (or the updates after ``since``), then every update.

        Without ``since`` the tracker is asked for deltas, applied here (see
        the module docstring); what is yielded is the same either way.
        Raises :class:`TrackerUnavailable` when the connection is lost,
        :class:`Refused` when the tracker refuses the subscription
        (``unknown-tournament`` for a tournament it cannot serve), and
        :class:`TrackerError` for a message that does not follow the protocol.
        """
        if self._messages is not None:
            raise RuntimeError("one subscription at a time per client")
        self._messages = messages = asyncio.Queue[bytes | None]()
        deltas = since is None
        standings: dict[str, Any] | None = None  # the full standings the deltas apply to
        try:
            await self._send(Subscribe(tournament=tournament, since=since, updates="delta" if deltas else "full"))
            while True:
                raw = await messages.get()
                if raw is None:
                    raise TrackerUnavailable(f"{self.url} closed the connection")
                head = _envelope.decode(raw)
                kind = head.type
                try:
                    if kind == "snapshot":
                        snapshot = _snapshot.decode(raw)
                        standings = dict(snapshot)
                        yield snapshot
                    elif kind == "update" and head.delta:
                        if standings is None:
                            continue  # sent before our resubscribe: the snapshot it asked for follows
                        update = self._applied(standings, _plain.decode(raw))
                        if update is None:
                            standings = None
                            self.resyncs += 1
                            await self._send(Subscribe(tournament=tournament, updates="delta"))
                            continue
                        standings = dict(update)
                        yield update
                    elif kind == "update":
                        yield _update.decode(raw)
                    elif kind == "error":
                        error = _error.decode(raw)
                        raise Refused(
                            f"the tracker refused to subscribe to {tournament!r}: {error['reason']}", error["code"]
                        )
                except msgspec.ValidationError as exc:
                    raise TrackerError(f"unexpected {kind} from {self.url}: {exc}") from None
        finally:
            self._messages = None

    @staticmethod
    def _applied(standings: dict[str, Any], delta: dict[str, Any]) -> UpdateMessage | None:
        """The full update ``delta`` makes of ``standings``; ``None`` for a seq gap or a digest mismatch.

        Raises ``msgspec.ValidationError`` for a delta that is not one.
        """
        if delta.get("seq") != standings["seq"] + 1:
            return None
        try:
            after = apply_delta(standings, delta)
            if standings_digest(after) != delta.get("digest"):
                return None
        except (KeyError, TypeError) as exc:
            raise msgspec.ValidationError(f"a delta that does not apply: {exc!r}") from None
        full = {**after, "type": "update", **{key: delta.get(key) for key in EVENT_FIELDS}}
        return msgspec.convert(full, UpdateMessage)

    # -- the connection -----------------------------------------------------------------------------

    async def _connection(self) -> ClientConnection:
        if self._ws is None:
            try:
                self._ws = await connect(self.url, max_size=MAX_MESSAGE, open_timeout=self.timeout)
            except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as exc:
                raise TrackerUnavailable(f"cannot connect to {self.url}: {exc}") from None
            self._reader = asyncio.create_task(self._read(self._ws), name="tracker-client-reader")
        return self._ws

    async def _send(self, message: Submit | Subscribe | Unsubscribe) -> None:
        ws = await self._connection()
        try:
            await ws.send(encode(message).decode())
        except ConnectionClosed as exc:
            await self._drop(f"{self.url} closed the connection ({exc})")
            raise TrackerUnavailable(f"{self.url} closed the connection ({exc})") from None

    async def _read(self, ws: ClientConnection) -> None:
        reason = f"{self.url} closed the connection"
        try:
            async for raw in ws:
                data = raw.encode() if isinstance(raw, str) else raw
                try:
                    head = _envelope.decode(data)
                except msgspec.DecodeError:
                    continue  # not ours to judge
                if head.type == "ack":
                    ack = _ack.decode(data)
                    self._answer(ack["id"], Acked(ack["seq"]))
                elif head.type == "rejected":
                    rejected = _rejected.decode(data)
                    self._answer(rejected["id"], Rejected(rejected["code"], rejected["reason"]))
                elif head.type == "error" and any(not f.done() for f in self._order):
                    error = _error.decode(data)  # the submit was refused before it became an event
                    self._answer(None, Rejected(error["code"], error["reason"]))
                elif self._messages is not None:
                    self._messages.put_nowait(data)
        except ConnectionClosed as exc:
            reason = f"{self.url} closed the connection ({exc})"
        finally:
            self._fail_all(reason)

    def _answer(self, event_id: str | None, reply: Reply) -> None:
        """Resolve the oldest submit waiting for ``event_id`` (any id: ``None``)."""
        if event_id is None:
            future = next((f for f in self._order if not f.done()), None)
            if future is None:
                return
            event_id = next(i for i, fs in self._waiting.items() if future in fs)
        else:
            queue = self._waiting.get(event_id)
            if not queue:
                return
            future = queue[0]
        self._forget(event_id, future)
        if not future.done():
            future.set_result(reply)

    def _forget(self, event_id: str, future: asyncio.Future[Reply]) -> None:
        queue = self._waiting.get(event_id)
        if queue is not None and future in queue:
            queue.remove(future)
            if not queue:
                del self._waiting[event_id]
        with suppress(ValueError):
            self._order.remove(future)

    def _fail_all(self, reason: str) -> None:
        for future in self._order:
            if not future.done():
                future.set_exception(TrackerUnavailable(reason))
        self._order.clear()
        self._waiting.clear()
        if self._messages is not None:
            self._messages.put_nowait(None)
        self._ws = None

    async def _drop(self, reason: str) -> None:
        ws, self._ws = self._ws, None
        reader, self._reader = self._reader, None
        if ws is not None:
            with suppress(Exception):  # closing a broken connection: nothing to report
                await ws.close()
        if reader is not None:
            reader.cancel()
            with suppress(asyncio.CancelledError):
                await reader
        self._fail_all(reason)

    async def aclose(self) -> None:
        """Close the connection; idempotent."""
        await self._drop("the client was closed")


@dataclass(frozen=True, slots=True)
class ReplayResult:
    acked: int
    rejected: tuple[tuple[str, str, str], ...]  # (event id, code, reason)
    last_seq: int


async def replay_ws(
    tf: TournamentFile,
    url: str,
    token: str,
    *,
    rate: float | None = None,
    window: int = 64,
    progress: Callable[[int], None] | None = None,
    stop_on_reject: bool = True,
) -> ReplayResult:
    """Submit ``tf``'s opening event and then its results, in round order.

    Events are pipelined (``window`` in flight) or paced (``rate`` per
    second), after the opening has been answered: with ``stop_on_reject`` a
    refused opening (a wrong token) stops the replay at once.  Re-running a
    replay is safe: events already applied are acknowledged again and change
    nothing.  Raises :class:`TrackerUnavailable`.
    """
    events: list[Event] = [tf.opened, *tf.events]

    def counted(reply: Reply) -> None:
        if progress is not None and isinstance(reply, Acked):
            progress(1)

    async with TrackerClient(url, token, timeout=60) as client:
        # the opening alone first: a wrong token or a refused opening is one rejection, not one per event
        replies = await client.submit_many(events[:1], rate=rate, progress=counted)
        if not (stop_on_reject and any(isinstance(r, Rejected) for r in replies)):
            replies += await client.submit_many(
                events[1:], window=window, rate=rate, stop_on_reject=stop_on_reject, progress=counted
            )
    acked = [r for r in replies if isinstance(r, Acked)]
    rejected = tuple(
        (event.id, reply.code, reply.reason)
        for event, reply in zip(events, replies, strict=False)
        if isinstance(reply, Rejected)
    )
    return ReplayResult(len(acked), rejected, max((r.seq or 0 for r in acked), default=0))
