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

Wire it with ``serve(..., create_connection=bounded_connection(max_buffer))``.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from websockets.asyncio.server import Server, ServerConnection
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.protocol import CONNECTING, OPEN
from websockets.server import ServerProtocol


class GatewayProtocol(ServerProtocol):
    """A server protocol that keeps at most one unsent pong and reads one request before it is answered."""

    pending_pong: bytes | None = None  # the serialized pong in ``writes`` not yet handed to the transport
    held: bytearray | None = None  # bytes after the request head, before the answer (None: head not read yet)
    held_eof: bool = False  # the client half-closed before the answer
    answered: bool = False  # the handshake's answer (101 or an HTTP response) was sent
    _head: bytes = b""  # the request head read so far, not yet complete

    def receive_data(self, data: bytes | bytearray) -> None:
        if self.state is not CONNECTING:
            super().receive_data(data)
        elif self.held is not None:
            self.held += data  # a second request, or frames sent before the 101 (RFC 6455 §4.1 says wait)
        else:
            self._head += bytes(data)
            found = self._head.find(b"\r\n\r\n")
            if found < 0:
                if len(self._head) > HEAD_LIMIT:  # websockets refuses it (414 or 431) on what it has
                    head, self._head = self._head, b""
                    super().receive_data(head)
                return
            head, rest = self._head[: found + 4], self._head[found + 4 :]
            self._head = b""
            self.held = bytearray(rest)
            super().receive_data(_without_body(head))

    def send_response(self, response: Response) -> None:
        super().send_response(response)
        self.answered = True

    def release(self) -> tuple[bytes, bool]:
        """Stop holding: the bytes and the end of stream held back while the request was being answered."""
        held, eof = bytes(self.held or b""), self.held_eof
        self.held, self.held_eof = bytearray(), False
        return held, eof

    def recv_frame(self, frame: Frame) -> None:
        if frame.opcode is Opcode.PING and self.pending_pong is not None:
            # identity, not equality: only the very frame we queued, never a data frame with the same bytes
            for i in range(len(self.writes) - 1, -1, -1):
                if self.writes[i] is self.pending_pong:
                    del self.writes[i]
                    break
        queued = len(self.writes)
        super().recv_frame(frame)
        if frame.opcode is Opcode.PING and len(self.writes) == queued + 1:
            self.pending_pong = self.writes[-1]

    def data_to_send(self) -> list[bytes]:
        self.pending_pong = None  # what leaves here is in the transport's hands
        return super().data_to_send()


HOLD_LIMIT = 1 << 16  # bytes held after a request before its answer; past it, the server stops reading
HEAD_LIMIT = 1 << 16  # bytes of a request head read before it is handed to websockets whole


def _without_body(head: bytes) -> bytes:
    """The request head without the headers that announce a body (``Content-Length``, ``Transfer-Encoding``).

    websockets refuses a request with a body by closing the connection without an answer; tracker
    serves GET and HEAD only, so such a request (``POST /healthz`` with a body) gets its 405 like any
    other, and its body is held with what follows the head and dropped with the connection.
    """
    lines = head.split(b"\r\n")
    kept = [lines[0], *(x for x in lines[1:] if not x.lower().startswith((b"content-length:", b"transfer-encoding:")))]
    return b"\r\n".join(kept)


class BoundedConnection(ServerConnection):
    """A server connection that stops reading a client that does not read, and aborts it past ``max_buffer``."""

    max_buffer: ClassVar[int] = 1 << 20
    protocol: GatewayProtocol

    def __init__(self, protocol: ServerProtocol, server: Server, **kwargs: object) -> None:
        # websockets' serve() builds a plain ServerProtocol before it calls us; GatewayProtocol adds no
        # state but class attribute defaults, so re-classing the instance is safe
        protocol.__class__ = GatewayProtocol
        super().__init__(protocol, server, **kwargs)  # type: ignore[arg-type]  # serve()'s own keywords

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        # the Assembler resumes reading when its queue drains; not while our client's unsent bytes are high
        self.recv_messages.resume = self._resume_for_assembler

    def _resume_for_assembler(self) -> None:
        if not self.paused and not self._holding():
            self.transport.resume_reading()

    def _holding(self) -> bool:
        held = self.protocol.held
        return self.protocol.state is CONNECTING and held is not None and len(held) > HOLD_LIMIT

    async def handshake(self, *args: Any, **kwargs: Any) -> None:
        await super().handshake(*args, **kwargs)
        # what the client sent after its request was held back (GatewayProtocol) until the answer was sent
        held, eof = self.protocol.release()
        if self.protocol.state is OPEN:  # an HTTP answer ends the connection: serve() aborts it now
            if held:
                self.data_received(held)
            if eof:
                super().eof_received()
                self.transport.close()  # what asyncio does when eof_received() does not keep the transport open
            else:
                self._resume_reading()

    def eof_received(self) -> bool | None:  # type: ignore[override]  # asyncio.Protocol: True keeps it open
        protocol = self.protocol
        if protocol.state is CONNECTING and protocol.held is not None and not protocol.answered:
            protocol.held_eof = True  # answer the request first: keep the transport open until then
            return True
        return super().eof_received()

    def send_data(self) -> None:
        super().send_data()
        protocol = self.protocol
        if protocol.held_eof and protocol.answered and protocol.state is not OPEN:
            # an HTTP answer to a client that already half-closed: nothing more will come, close once it is sent
            self.transport.close()

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
