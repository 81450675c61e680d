"""A websocket connection whose unsent bytes are bounded, whatever its client sends.

How this works
--------------

websockets answers every ping with a pong and writes it to the socket at
once, without looking at how much is already waiting there; a client that
sends pings and never reads makes the server queue every pong (RSS grew by
100 MB in 4 s, issue 14).  :class:`BoundedConnection` closes that in three
places:

- **Only the latest ping is answered** when earlier pongs are still unsent
  (RFC 6455 §5.5.3: "an endpoint MAY elect to send a Pong frame for only
  the most recently processed Ping frame"): :class:`LatestPongProtocol`
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

Wire it with ``serve(..., create_connection=bounded_connection(max_buffer))``.
"""

from __future__ import annotations

import asyncio
from typing import ClassVar

from websockets.asyncio.server import Server, ServerConnection
from websockets.frames import Frame, Opcode
from websockets.server import ServerProtocol


class LatestPongProtocol(ServerProtocol):
    """A server protocol that keeps at most one unsent pong: the answer to the latest ping."""

    pending_pong: bytes | None = None  # the serialized pong in ``writes`` not yet handed to the transport

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


class BoundedConnection(ServerConnection):
    """A server connection that stops reading a client that does not read, and aborts it past ``max_buffer``."""

    max_buffer: ClassVar[int] = 1 << 20

    def __init__(self, protocol: ServerProtocol, server: Server, **kwargs: object) -> None:
        # websockets' serve() builds a plain ServerProtocol before it calls us; LatestPongProtocol adds no
        # state of its own but a class attribute default, so re-classing the instance is safe
        protocol.__class__ = LatestPongProtocol
        super().__init__(protocol, server, **kwargs)  # type: ignore[arg-type]  # serve()'s own keywords

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        # the Assembler resumes reading when its queue drains; not while our client's unsent bytes are high
        self.recv_messages.resume = self._resume_for_assembler

    def _resume_for_assembler(self) -> None:
        if not self.paused:
            self.transport.resume_reading()

    def pause_writing(self) -> None:
        super().pause_writing()
        self.transport.pause_reading()

    def resume_writing(self) -> None:
        super().resume_writing()
        if not self.recv_messages.paused:
            self.transport.resume_reading()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.transport.get_write_buffer_size() > self.max_buffer and not self.transport.is_closing():
            self.logger.warning("aborting a connection with over %d unsent bytes", self.max_buffer)
            self.transport.abort()


def bounded_connection(max_buffer: int) -> type[BoundedConnection]:
    """The :class:`BoundedConnection` class to give ``serve(create_connection=...)`` for ``max_buffer`` bytes."""
    return type("BoundedConnection", (BoundedConnection,), {"max_buffer": max_buffer})
