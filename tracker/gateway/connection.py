"""A websocket connection whose unsent bytes are bounded, whatever its client sends, and one request per connection.

How this works
--------------

websockets answers every ping with a pong and writes it to the socket at
once, without looking at how much is already waiting there; a client that
sends pings and never reads makes the server queue every pong (RSS grew by
100 MB in 4 s, issue 14).  :class:`BoundedConnection` closes that in three
places:

- **Only the latest ping is answered** when earlier pongs are still unsent
  (RFC 6455 §5.5.3: "an endpoint MAY elect to send a Pong frame for only
  the most recently processed Ping frame"): :class:`GatewayProtocol`
  drops a pong still waiting in the protocol's outgoing writes when the
  next ping is read, so one read from the socket yields at most one pong.
- **A client that does not read is not read**: when the transport's write
  buffer goes over its high-water mark (websockets' ``write_limit``,
  32 KiB), the server stops reading that connection until the buffer
  drains below the low-water mark.  TCP then pushes back on that client
  alone.  websockets' own receive flow control (its ``Assembler``, which
  pauses reading while too many incoming frames wait for the handler) uses
  the same switch, so reading resumes only when neither wants it paused.
- **Unsent bytes stay where the server sees them**: the kernel takes at
  most :data:`KERNEL_UNSENT` bytes a client's window does not allow yet
  (``TCP_NOTSENT_LOWAT``, Linux); the rest waits in the transport's buffer,
  which the hub reads to tell a subscriber still being written from one
  that is not (:mod:`tracker.gateway.fanout`: it then merges the updates it
  missed into one snapshot).  Without it the kernel's send buffer grows to
  4 MiB (``net.ipv4.tcp_wmem``) and takes every update a stalled client is
  written, each to be read and decoded in turn (issue 40: measured on
  loopback, 3.9 MB taken for a client that reads nothing, against 135 KB
  with the bound, its own receive window included).  What is in flight is
  not bounded, so a distant client's throughput is what it was; 64 KiB
  rather than less, so that one big message (a large event's snapshot)
  mostly leaves the transport at once and its follower is not taken for one
  still being written at the next update.
- **A hard bound**: a connection whose unsent bytes still pass
  ``max_buffer`` after a read is aborted (the hub drops slow subscribers
  at the same bound with close 1008 when it broadcasts).

A request with a body (``POST /healthz`` with a form) is answered like any
other request tracker does not serve (405), not dropped unanswered as
websockets does: the headers announcing the body are taken out of the head
before websockets parses it.

One request at a time: websockets reads a request and goes straight on
to parse what follows as websocket frames, before the request is answered;
a second HTTP request in the same TCP write (pipelining) failed the
connection, so the first got no answer and the late handshake logged a
traceback.  :class:`GatewayProtocol` holds what follows the request head
(and a half-close) until the answer is sent: an HTTP answer ends the
connection (``Connection: close``), a ``101`` goes on with the held bytes as
its first frames.  Past ``HOLD_LIMIT`` held bytes the server stops reading.

**What an open connection keeps** (issue 40: most connections are idle
subscribers, tens of thousands per gateway): not the handshake's request and
response (:meth:`BoundedConnection._forget_handshake`), not a keepalive task
between pings (:meth:`BoundedConnection.start_keepalive`: a timer), lists
rather than two empty deques (760 B each) for websockets' drain waiters and
received frames, and :class:`GatewayProtocol`'s state in one slotted
:class:`Gate`.  With no inflater between messages (``SharedDeflate.decode``,
:mod:`tracker.gateway.frames`), an idle subscriber costs about 9 KB of RSS
where it cost 29 (``python -m bench.idle_memory``).

Wire it with ``serve(..., create_connection=bounded_connection(max_buffer))``.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterable
from typing import Any, ClassVar, Final

from websockets.asyncio.server import Server, ServerConnection
from websockets.datastructures import Headers
from websockets.frames import CloseCode, Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import CONNECTING, OPEN, Protocol
from websockets.server import ServerProtocol

from tracker.gateway import frames


class Gate:
    """What :class:`GatewayProtocol` adds to websockets' protocol, in one object of its own.

    One attribute, not five: CPython 3.11 shares the keys of the protocols' ``__dict__`` between
    instances with room for one more after websockets' own; a second one added afterwards gives every
    connection a ``__dict__`` of its own (1.5 KiB each).
    """

    __slots__ = ("answered", "head", "held", "held_eof", "pending_pong")

    def __init__(self) -> None:
        self.pending_pong: bytes | None = None  # the serialized pong in ``writes`` not yet handed to the transport
        self.held: bytearray | None = None  # bytes after the request head, before the answer (None: head not read)
        self.held_eof = False  # the client half-closed before the answer
        self.answered = False  # the handshake's answer (101 or an HTTP response) was sent
        self.head = b""  # the request head read so far, not yet complete


class GatewayProtocol(ServerProtocol):
    """A server protocol that keeps at most one unsent pong and reads one request before it is answered.

    ``gate`` (set by :class:`BoundedConnection` when it re-classes websockets' protocol) holds its state.
    """

    gate: Gate

    def receive_data(self, data: bytes | bytearray) -> None:
        gate = self.gate
        if self.state is not CONNECTING:
            super().receive_data(data)
        elif gate.held is not None:
            gate.held += data  # a second request, or frames sent before the 101 (RFC 6455 §4.1 says wait)
        else:
            gate.head += bytes(data)
            found = gate.head.find(b"\r\n\r\n")
            if found < 0:
                if len(gate.head) > HEAD_LIMIT:  # websockets refuses it (414 or 431) on what it has
                    head, gate.head = gate.head, b""
                    super().receive_data(head)
                return
            head, rest = gate.head[: found + 4], gate.head[found + 4 :]
            gate.head = b""
            gate.held = bytearray(rest)
            super().receive_data(_without_body(head))

    def send_response(self, response: Response) -> None:
        super().send_response(response)
        self.gate.answered = True

    def release(self) -> tuple[bytes, bool]:
        """Stop holding: the bytes and the end of stream held back while the request was being answered."""
        gate = self.gate
        held, eof = bytes(gate.held or b""), gate.held_eof
        gate.held, gate.held_eof = bytearray(), False
        return held, eof

    def recv_frame(self, frame: Frame) -> None:
        pending = self.gate.pending_pong
        if frame.opcode is Opcode.PING and pending is not None:
            # identity, not equality: only the very frame we queued, never a data frame with the same bytes
            for i in range(len(self.writes) - 1, -1, -1):
                if self.writes[i] is pending:
                    del self.writes[i]
                    break
        queued = len(self.writes)
        super().recv_frame(frame)
        if frame.opcode is Opcode.PING and len(self.writes) == queued + 1:
            self.gate.pending_pong = self.writes[-1]

    def data_to_send(self) -> list[bytes]:
        self.gate.pending_pong = None  # what leaves here is in the transport's hands
        return super().data_to_send()


HANDSHAKE_DONE: Final = Request("/ws", Headers())
"""An open connection's ``request`` once its own is let go (:meth:`BoundedConnection._forget_handshake`)."""
HOLD_LIMIT = 1 << 16  # bytes held after a request before its answer; past it, the server stops reading
KERNEL_UNSENT = 64 << 10
"""Bytes the kernel may hold for a client beyond what its receive window takes (``TCP_NOTSENT_LOWAT``)."""
HEAD_LIMIT = 1 << 16  # bytes of a request head read before it is handed to websockets whole


class Frames(list[Any]):
    """A connection's queue of received frames, as websockets' ``SimpleQueue`` uses its deque, as a list."""

    __slots__ = ()

    def popleft(self) -> Any:
        return self.pop(0)

    def extendleft(self, items: Iterable[Any]) -> None:
        for item in items:  # as a deque does: each at the front in turn, so the last ends first
            self.insert(0, item)


def _without_body(head: bytes) -> bytes:
    """The request head without the headers that announce a body (``Content-Length``, ``Transfer-Encoding``).

    websockets refuses a request with a body by closing the connection without an answer; tracker
    serves GET and HEAD only, so such a request (``POST /healthz`` with a body) gets its 405 like any
    other, and its body is held with what follows the head and dropped with the connection.
    """
    lowered = head.lower()
    if b"content-length:" not in lowered and b"transfer-encoding:" not in lowered:
        return head  # nearly every request: a websocket handshake or a GET
    lines = head.split(b"\r\n")
    kept = [lines[0], *(x for x in lines[1:] if not x.lower().startswith((b"content-length:", b"transfer-encoding:")))]
    return b"\r\n".join(kept)


class BoundedConnection(ServerConnection):
    """A server connection that stops reading a client that does not read, and aborts it past ``max_buffer``."""

    max_buffer: ClassVar[int] = 1 << 20
    protocol: GatewayProtocol

    def __init__(self, protocol: ServerProtocol, server: Server, **kwargs: object) -> None:
        # websockets' serve() builds a plain ServerProtocol before it calls us; GatewayProtocol adds no
        # state but its gate, set right here, so re-classing the instance is safe
        protocol.__class__ = GatewayProtocol
        protocol.gate = Gate()  # type: ignore[attr-defined]  # re-classed just above
        super().__init__(protocol, server, **kwargs)  # type: ignore[arg-type]  # serve()'s own keywords
        # the feeds' followers of this connection (tracker.gateway.fanout.Follower): whatever is written to it
        # besides their walks unsettles them (send_data, connection_lost), so that a walk may write a settled one
        # without reading the connection
        self.followers: list[Any] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        sock = transport.get_extra_info("socket")
        if (
            sock is not None
            and hasattr(socket, "TCP_NOTSENT_LOWAT")
            and sock.family in (socket.AF_INET, socket.AF_INET6)
        ):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NOTSENT_LOWAT, KERNEL_UNSENT)  # see the module docstring
        # an empty deque holds a block of 64 slots (760 B with its object); a list holds nothing until used.
        # websockets only appends to, iterates and removes from its drain waiters, and appends to, pops from
        # the left of and puts back at the left of its frames' queue (at most max_queue frames): both as lists
        self.drain_waiters = []  # type: ignore[assignment]  # a list: all that websockets does with it, above
        self.recv_messages.frames.queue = Frames()  # type: ignore[assignment]  # a list with a deque's two calls
        # the Assembler resumes reading when its queue drains; not while our client's unsent bytes are high
        self.recv_messages.resume = self._resume_for_assembler

    def _resume_for_assembler(self) -> None:
        if not self.paused and not self._holding():
            self.transport.resume_reading()

    def _holding(self) -> bool:
        held = self.protocol.gate.held
        return self.protocol.state is CONNECTING and held is not None and len(held) > HOLD_LIMIT

    async def handshake(self, *args: Any, **kwargs: Any) -> None:
        await super().handshake(*args, **kwargs)
        # what the client sent after its request was held back (GatewayProtocol) until the answer was sent
        held, eof = self.protocol.release()
        if self.protocol.state is OPEN:  # an HTTP answer ends the connection: serve() aborts it now
            self._forget_handshake()
            if held:
                self.data_received(held)
            if eof:
                super().eof_received()
                self.transport.close()  # what asyncio does when eof_received() does not keep the transport open
            else:
                self._resume_reading()

    def start_keepalive(self) -> None:
        """websockets' keepalive, with a timer while it waits for the next ping rather than a task.

        ``Connection.keepalive`` is a task for the connection's whole life, asleep between pings (a task,
        its coroutine, a future, a timer: 0.8 KiB per connection); here a timer waits and each ping is a
        task only until its pong comes (:meth:`_keepalive_ping`).  The same pings at the same times:
        ``ping_interval`` after the connection opened, then ``ping_interval`` after each ping (less the
        latency, as websockets sleeps), the connection failed with 1011 when a pong takes over
        ``ping_timeout``.  Both are kept in ``keepalive_task``, which ``connection_lost`` cancels.
        """
        if self.ping_interval is not None:
            self.keepalive_task = self.loop.call_later(self.ping_interval, self._keepalive_due)  # type: ignore[assignment]  # cancelled alike

    def _keepalive_due(self) -> None:
        self.keepalive_task = self.loop.create_task(self._keepalive_ping())

    async def _keepalive_ping(self) -> None:
        """One turn of websockets' ``Connection.keepalive`` loop (17.4), then the timer for the next one."""
        assert self.ping_interval is not None
        latency = 0.0
        try:
            pong_received = await self.ping()
            if self.ping_timeout is not None:
                try:
                    async with asyncio.timeout(self.ping_timeout):
                        latency = await pong_received  # connection_lost cancels this task: CancelledError
                except TimeoutError:
                    async with self.send_context():
                        self.protocol.fail(CloseCode.INTERNAL_ERROR, "keepalive ping timeout")
                    raise AssertionError(
                        "send_context() should wait for connection_lost(), which cancels keepalive"
                    ) from None
        except Exception:
            self.logger.error("keepalive ping failed", exc_info=True)
            return
        self.keepalive_task = self.loop.call_later(self.ping_interval - latency, self._keepalive_due)  # type: ignore[assignment]  # cancelled alike

    def _forget_handshake(self) -> None:
        """Let go of the opening handshake's request and response, read by nobody once the connection is open.

        Their headers are about 4 KiB per connection.  websockets keeps the request in ``request`` (only
        to tell the handshake from the frames after it: a placeholder does that) and in its parser's
        frame, which is made anew here: nothing is in the reader yet (what the client sent after its
        request is held, :class:`GatewayProtocol`), so the new parser starts where the old one waits.
        """
        protocol = self.protocol
        self.request, self.response = HANDSHAKE_DONE, None
        if not protocol.reader.buffer and not protocol.reader.eof:
            # the frames' parser itself, which the old one had gone on to (ServerProtocol.parse only wraps it
            # around the request's): one generator less per connection
            protocol.parser = Protocol.parse(protocol)
            next(protocol.parser)

    def eof_received(self) -> bool | None:  # type: ignore[override]  # asyncio.Protocol: True keeps it open
        protocol = self.protocol
        gate = protocol.gate
        if protocol.state is CONNECTING and gate.held is not None and not gate.answered:
            gate.held_eof = True  # answer the request first: keep the transport open until then
            return True
        return super().eof_received()

    def send_data(self) -> None:
        frames.unsettle(self)  # websockets' own writes: a message, a ping, a pong, a close
        super().send_data()
        protocol = self.protocol
        if protocol.gate.held_eof and protocol.gate.answered and protocol.state is not OPEN:
            # an HTTP answer to a client that already half-closed: nothing more will come, close once it is sent
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        frames.unsettle(self)
        super().connection_lost(exc)

    def _resume_reading(self) -> None:
        if not self.paused and not self.recv_messages.paused:
            self.transport.resume_reading()

    def pause_writing(self) -> None:
        super().pause_writing()
        self.transport.pause_reading()

    def resume_writing(self) -> None:
        super().resume_writing()
        if not self._holding():
            self._resume_reading()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.transport.get_write_buffer_size() > self.max_buffer and not self.transport.is_closing():
            self.logger.warning("aborting a connection with over %d unsent bytes", self.max_buffer)
            self.transport.abort()
        elif self._holding():
            self.transport.pause_reading()  # until the request is answered


def bounded_connection(max_buffer: int) -> type[BoundedConnection]:
    """The :class:`BoundedConnection` class to give ``serve(create_connection=...)`` for ``max_buffer`` bytes."""
    return type("BoundedConnection", (BoundedConnection,), {"max_buffer": max_buffer})
