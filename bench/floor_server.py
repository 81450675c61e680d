"""The fan-out floor: one prebuilt frame, one ``transport.write`` per socket.

``python -m bench.floor_server`` prints ``listening PORT`` (127.0.0.1, a free
port).  Each connection is an asyncio protocol with websockets' sans-I/O
``ServerProtocol`` for the opening handshake and for reading what the client
sends (permessage-deflate negotiated with tracker's own settings:
:func:`tracker.gateway.serve.deflate`'s windows and memory level, the
server's context takeover allowed).  A connection whose first message is
``{"type": "control"}`` is the benchmark's controller: every later message
it sends is an update, framed **once** and written as the very same bytes to
every subscriber's transport, then answered with ``{"type": "ack",
"broadcast_s": …}``.  Any other connection is a subscriber: its first
message (the subscribe) is answered with one hello (as the bare server's,
uncompressed: it leaves the client's window as it was) and it is written
every update after.

**Why it is the floor.**  Every subscriber was written every frame of the
stream from its start, so one deflate stream with context takeover (as
tracker's :class:`~tracker.gateway.frames.Stream`, which starts afresh for
anyone it must) is valid for all of them: a message is compressed once, and
the work per subscriber per update is one ``transport.write`` of bytes built
before, nothing else: no ping, no check of the socket's buffer, no per
subscriber state read.  What tracker spends per subscriber above this is its
own.  It pings nobody, so its idle CPU is nil.

Talks only to 127.0.0.1; it stops when its parent stops it.
"""

from __future__ import annotations

import asyncio
import json
import time

from websockets.extensions.permessage_deflate import PerMessageDeflate, ServerPerMessageDeflateFactory
from websockets.frames import Frame, Opcode
from websockets.http11 import Request
from websockets.server import ServerProtocol

HELLO = b'{"type":"snapshot","seq":1}'  # as tracker's snapshot after the opening: the first update is seq 2


def _factory() -> ServerPerMessageDeflateFactory:
    """tracker's negotiation (``tracker.gateway.serve.deflate``) with websockets' own extension class."""
    return ServerPerMessageDeflateFactory(
        server_max_window_bits=12, client_max_window_bits=12, compress_settings={"memLevel": 5}
    )


class Floor:
    """The subscribers' transports, the control connection, and the stream the updates are framed on."""

    def __init__(self) -> None:
        self.transports: dict[asyncio.Transport, None] = {}  # a dict: a subscriber leaving is not a list's scan
        self.encoder: PerMessageDeflate | None = None
        self.parameters: tuple[int, tuple[tuple[str, object], ...]] | None = None

    def join(self, transport: asyncio.Transport, deflate: PerMessageDeflate | None) -> None:
        """A subscriber, once it subscribed: every subscriber must share one set of compression parameters."""
        parameters = (
            (0, ())
            if deflate is None
            else (deflate.local_max_window_bits, tuple(sorted(deflate.compress_settings.items())))
        )
        if deflate is not None and deflate.local_no_context_takeover:
            raise RuntimeError("the floor needs the server's context takeover (one stream for every subscriber)")
        if self.parameters is None:
            self.parameters = parameters
            if deflate is not None:
                bits, settings = parameters
                # remote_no_context_takeover: no decoder; local context takeover: one compressor for every frame
                self.encoder = PerMessageDeflate(True, False, 15, bits, dict(settings))
        elif parameters != self.parameters:
            raise RuntimeError(f"subscribers with other compression parameters: {parameters} != {self.parameters}")
        self.transports[transport] = None

    def publish(self, message: bytes) -> float:
        """Frame ``message`` once and write it to every subscriber; the seconds it took."""
        started = time.perf_counter()
        extensions = [self.encoder] if self.encoder is not None else []
        data = Frame(Opcode.TEXT, message).serialize(mask=False, extensions=extensions)
        for transport in self.transports:
            transport.write(data)
        return time.perf_counter() - started


class Connection(asyncio.Protocol):
    """One websocket connection: the handshake and what the client sends through ``ServerProtocol``."""

    def __init__(self, floor: Floor) -> None:
        self.floor = floor
        self.protocol = ServerProtocol(extensions=[_factory()], max_size=64 * 1024)
        self.transport: asyncio.Transport | None = None
        self.role: str | None = None  # "control" or "subscriber", from its first message

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        protocol = self.protocol
        protocol.receive_data(data)
        for event in protocol.events_received():
            if isinstance(event, Request):
                protocol.send_response(protocol.accept(event))
            elif isinstance(event, Frame) and event.opcode is Opcode.TEXT:
                self.message(event.data)
        self.flush()

    def message(self, data: bytes) -> None:
        assert self.transport is not None
        if self.role is None:
            if json.loads(data).get("type") == "control":
                self.role = "control"
                return
            self.role = "subscriber"
            extensions = self.protocol.extensions
            deflate = extensions[0] if extensions and isinstance(extensions[0], PerMessageDeflate) else None
            self.floor.join(self.transport, deflate)
            self.protocol.extensions = []  # nothing more is compressed by this connection: the floor frames for it
            self.protocol.send_text(HELLO)  # uncompressed, so the client's window is as the stream expects
        elif self.role == "control":
            spent = self.floor.publish(data)
            self.protocol.send_text(json.dumps({"type": "ack", "broadcast_s": spent}).encode())

    def flush(self) -> None:
        assert self.transport is not None
        for data in self.protocol.data_to_send():
            if data:
                self.transport.write(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.role == "subscriber" and self.transport is not None:
            self.floor.transports.pop(self.transport, None)


async def main() -> None:
    floor = Floor()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Connection(floor), "127.0.0.1", 0, backlog=4096)
    async with server:
        port = server.sockets[0].getsockname()[1]
        print(f"listening {port}", flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    asyncio.run(main())
