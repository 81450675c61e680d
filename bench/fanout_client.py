"""One subscriber process of the fan-out benchmark: many websocket connections to one server.

``python -m bench.fanout_client URL TOURNAMENT COUNT UPDATES [deflate|none [SUBSCRIBE [kernel|decode]]]``

Opens ``COUNT`` connections (offering permessage-deflate as browsers do,
``permessage-deflate; client_max_window_bits``, unless ``none``) (a few at a
time, so the server's listen backlog never overflows), subscribes each to
``TOURNAMENT`` (with the extra fields of the JSON object ``SUBSCRIBE``, e.g.
``{"updates": "delta"}``) and waits for its first message (the snapshot).
Then prints ``ready``.  For every later message it reads the ``seq`` from the
message's head; when all connections have a seq (or a later one: a merge, a
snapshot and the newest update, covers the updates it skipped) it prints
``done SEQ LENGTH TIMES`` (TIMES: the arrival times in ns, JSON; LENGTH: the
text's length of an update of that seq, 0 when every connection had it in a
merge).  After ``UPDATES`` updates,
or on ``quit`` on stdin, or after the time limit, it exits without closing
handshakes.

**What an arrival time is.**  The time (CLOCK_MONOTONIC, one clock for every
process on the machine) at which the bytes that complete the message were
read from the socket.  Each connection is websockets' sans-I/O
``ClientProtocol`` for the opening handshake under a plain asyncio protocol;
then the bytes are stamped as they are read and only the frames' heads are
looked at, until every connection of the process has a complete text frame
and nothing more came for ``QUIET`` seconds (a burst of updates is stamped as
it arrives and decoded after it): then all of them are decoded (cut into
frames, inflated with the negotiated parameters, UTF-8 checked) and counted.  So one connection's decoding never
delays the next one's stamp, and there is no task per connection to wake:
a subscriber process measures when the server's bytes reach it, with as
little CPU of its own as it can, on a machine whose two cores it shares
with the server it measures (browsers decode on their own machines).
Before every connection has its snapshot, what a turn of the event loop
read is decoded right after that turn.

**With** ``kernel``, once every connection has its snapshot, the arrival
time is the kernel's: each socket stamps what it receives (``SO_TIMESTAMPNS``:
when the server's bytes reached the socket, which on loopback is when the
server wrote them), and the process reads every connection only at each
multiple of ``SWEEP`` seconds on the machine's clock, the same instants for
every subscriber process.  So the subscribers take no CPU while a server
writes an update (sent just after a sweep, it has until the next one), and a
measurement of gateway processes on this machine's two cores is not one of
the subscribers competing with them.

**With** ``decode``, a decoding client (a browser's page, websockets' own
client): every message is decoded (inflated, UTF-8 checked, its seq read)
right after the turn of the event loop that read it, whatever comes next,
and its arrival time is when it was decoded.  So a client that falls behind
pays for every message it is written, as a page does, and reads the next
ones late: it is the server's to write it fewer (a merge) once it is behind.

Talks only to the URL given (127.0.0.1 in the benchmark).
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import signal
import socket
import struct
import sys
import time

from websockets.client import ClientProtocol
from websockets.extensions.permessage_deflate import PerMessageDeflate, enable_client_permessage_deflate
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.protocol import OPEN
from websockets.uri import parse_uri

CONNECT_AT_ONCE = 20
SO_TIMESTAMPNS = 35  # Linux: SO_TIMESTAMPNS, and SCM_TIMESTAMPNS for its ancillary data (not in Python's socket)
SWEEP = 1.0  # with kernel stamps: every connection is read at each multiple of this many seconds
QUIET = 0.03  # seconds without a read after which what was read is decoded
TIME_LIMIT = 900.0
CLOCK = time.CLOCK_MONOTONIC


def _seq(text: str) -> int:
    at = text.find('"seq":', 0, 400)
    if at < 0:
        return -1
    end = at + 6
    while end < len(text) and text[end].isdigit():
        end += 1
    return int(text[at + 6 : end])


class Subscriber(asyncio.Protocol):
    """One websocket connection: stamps what it reads, leaves the parsing to :class:`Fleet`.

    websockets' ``ClientProtocol`` makes the opening handshake (and the
    permessage-deflate negotiation) and sends the subscribe; after that the
    frames are cut here, and each message is inflated by the extension
    websockets negotiated (``PerMessageDeflate.decode``, with or without
    context takeover as the server chose) and decoded as UTF-8.  Pings are
    answered; nothing else is expected from a server.
    """

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        extensions = enable_client_permessage_deflate(None) if fleet.compression else None
        self.protocol = ClientProtocol(fleet.uri, extensions=extensions, max_size=2**24)
        self.inbox: list[tuple[int, bytes]] = []
        self.buffer = bytearray()  # frames after the handshake, not complete yet
        self.head = bytearray()  # the scanned frame's head so far
        self.left = 0  # bytes of the scanned frame's payload still to come
        self.opcode = 0
        self.deflate: PerMessageDeflate | None = None
        self.snapshot: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.transport: asyncio.Transport | None = None
        self.seq = 0  # the newest seq this connection has
        self.raw: socket.socket | None = None  # with kernel stamps: the socket, read by Fleet.sweep

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.protocol.send_request(self.protocol.connect())
        self.flush()

    def data_received(self, data: bytes) -> None:
        self.received(time.clock_gettime_ns(CLOCK), data)

    def received(self, stamp: int, data: bytes) -> None:
        self.inbox.append((stamp, data))
        self.fleet.arrived(self, self.scan(data) if self.fleet.live else 0)

    def read_lazily(self) -> None:
        """From now on the kernel stamps what arrives (``SO_TIMESTAMPNS``) and :meth:`sweep` reads it."""
        assert self.transport is not None
        self.transport.pause_reading()
        fd = self.transport.get_extra_info("socket").fileno()
        self.raw = socket.socket(fileno=os.dup(fd))  # the same socket: what it reads, the transport does not
        self.raw.setblocking(False)
        self.raw.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)

    def sweep(self, offset: int) -> None:
        """Read what the socket holds; each read is stamped with the kernel's time of its last segment."""
        assert self.raw is not None
        while True:
            try:
                data, ancillary, _, _ = self.raw.recvmsg(1 << 16, 64)
            except (BlockingIOError, InterruptedError):
                return
            if not data:
                return
            stamp = time.clock_gettime_ns(CLOCK)
            for level, kind, value in ancillary:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(value) >= 16:
                    seconds, nanoseconds = struct.unpack("qq", value[:16])
                    stamp = seconds * 1_000_000_000 + nanoseconds - offset
            self.received(stamp, data)

    def scan(self, data: bytes) -> int:
        """How many text frames ``data`` completes: frame heads only, nothing decoded (see :class:`Fleet`)."""
        done, at, end = 0, 0, len(data)
        while at < end:
            if self.left:
                took = min(self.left, end - at)
                self.left -= took
                at += took
                done += self.left == 0 and self.opcode == Opcode.TEXT
                continue
            head = self.head
            head.append(data[at])
            at += 1
            if len(head) >= 2:
                short = head[1] & 0x7F
                size = 2 if short < 126 else 4 if short == 126 else 10
                if len(head) == size:
                    self.opcode = head[0] & 0x0F
                    self.left = short if size == 2 else int.from_bytes(head[2:size])
                    done += self.left == 0 and self.opcode == Opcode.TEXT
                    head.clear()
        return done

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.snapshot.done():
            self.snapshot.set_exception(ConnectionError(f"connection lost before the snapshot: {exc}"))

    def flush(self) -> None:
        assert self.transport is not None
        for data in self.protocol.data_to_send():
            if data:
                self.transport.write(data)

    def handshake(self, data: bytes) -> None:
        """Feed the opening handshake; once it is done, send the subscribe and cut frames from here on."""
        protocol = self.protocol
        protocol.receive_data(data)
        for event in protocol.events_received():
            if not isinstance(event, Response):
                raise RuntimeError(f"unexpected before the subscribe: {event}")
            if protocol.state is not OPEN:
                raise RuntimeError(f"handshake: {protocol.handshake_exc}")
            extensions = protocol.extensions
            self.deflate = extensions[0] if extensions and isinstance(extensions[0], PerMessageDeflate) else None
            protocol.send_text(self.fleet.subscribe.encode())
            self.flush()
            self.buffer += protocol.reader.buffer  # whatever followed the response (nothing: we had not asked yet)
            protocol.reader.buffer.clear()

    def messages(self, data: bytes) -> list[str]:
        """The text messages that ``data`` completes (pings answered on the way)."""
        buffer = self.buffer
        buffer += data
        texts = []
        while len(buffer) >= 2:
            head, length = buffer[0], buffer[1]
            assert not length & 0x80, "a server's frames are not masked"
            at = 2
            if length == 126:
                length, at = int.from_bytes(buffer[2:4]), 4
            elif length == 127:
                length, at = int.from_bytes(buffer[2:10]), 10
            if len(buffer) < at + length:
                break
            payload = bytes(buffer[at : at + length])
            del buffer[: at + length]
            opcode = head & 0x0F
            if opcode == Opcode.PING:
                assert self.transport is not None
                self.transport.write(Frame(Opcode.PONG, payload).serialize(mask=True))
            elif opcode == Opcode.TEXT:
                assert head & 0x80, "the servers send every message in one frame"
                if head & 0x40:
                    assert self.deflate is not None, "RSV1 without permessage-deflate"
                    payload = bytes(self.deflate.decode(Frame(Opcode.TEXT, payload, True, True)).data)
                texts.append(payload.decode())
            elif opcode == Opcode.CLOSE:
                raise RuntimeError(f"the server closed the connection: {payload!r}")
        return texts


class Fleet:
    """All the connections of this process, and what they received."""

    def __init__(
        self, url: str, subscribe: str, count: int, updates: int, compression: bool, decoding: bool = False
    ) -> None:
        self.uri = parse_uri(url)
        self.subscribe = subscribe
        self.count = count
        self.updates = updates
        self.compression = compression
        self.decoding = decoding  # every message decoded right after its read, stamped when decoded
        self.inboxes: list[Subscriber] = []
        self.subscribers: list[Subscriber] = []
        self.arrivals: dict[int, list[int]] = {}
        self.lengths: dict[int, int] = {}
        self.reported = 0
        self.finished = asyncio.Event()
        self.loop = asyncio.get_running_loop()
        self.live = False  # every connection has its snapshot: decode once an update reached them all
        self.complete = 0  # text frames read (not decoded yet) since the last decoding
        self.later: asyncio.TimerHandle | None = None
        self.last_read = 0.0

    def arrived(self, subscriber: Subscriber, texts: int) -> None:
        self.last_read = self.loop.time()
        if not self.inboxes:
            if self.live and not self.decoding:
                self.later = self.loop.call_later(QUIET, self.when_quiet)
            else:
                self.loop.call_soon(self.parse)  # after every socket read in this turn of the loop is stamped
        if len(subscriber.inbox) == 1:
            self.inboxes.append(subscriber)
        self.complete += texts

    def when_quiet(self) -> None:
        """Decode what was read once every connection has a message and nothing came for ``QUIET`` s: a burst
        of updates is only stamped while it arrives, and decoded after it."""
        idle = self.loop.time() - self.last_read
        if (self.complete >= self.count and idle >= QUIET) or idle >= 1.0:  # 1 s: a message not what we counted
            self.parse()
        else:
            self.later = self.loop.call_later(max(QUIET - idle, 0.005), self.when_quiet)

    def parse(self) -> None:
        if self.later is not None:
            self.later.cancel()
            self.later = None
        self.complete = 0
        inboxes, self.inboxes = self.inboxes, []
        for subscriber in inboxes:
            inbox, subscriber.inbox = subscriber.inbox, []
            for stamp, data in inbox:
                try:
                    if subscriber.protocol.state is not OPEN:
                        subscriber.handshake(data)
                        continue
                    texts = subscriber.messages(data)
                except Exception as exc:
                    if subscriber.snapshot.done():
                        raise
                    subscriber.snapshot.set_exception(exc)
                    continue
                if self.decoding and subscriber.snapshot.done():
                    stamp = time.clock_gettime_ns(CLOCK)  # a decoding client has a message once it is decoded
                for text in texts:
                    self.message(subscriber, stamp, text)

    def sweep(self) -> None:
        """Read every connection at once (kernel stamps), then decode; again at the next multiple of ``SWEEP`` s."""
        offset = time.clock_gettime_ns(time.CLOCK_REALTIME) - time.clock_gettime_ns(CLOCK)
        for subscriber in self.subscribers:
            subscriber.sweep(offset)
        if self.inboxes:
            self.parse()
        self.loop.call_at((self.loop.time() // SWEEP + 1) * SWEEP, self.sweep)

    def state(self) -> str:
        """How many connections are at each seq, and what is read but not decoded (a run that hangs says it)."""
        seqs = collections.Counter(subscriber.seq for subscriber in self.subscribers)
        unread = sum(len(subscriber.inbox) for subscriber in self.subscribers)
        return json.dumps({"seqs": sorted(seqs.items()), "undecoded": unread, "complete": self.complete})

    def message(self, subscriber: Subscriber, stamp: int, text: str) -> None:
        seq = _seq(text)
        if not subscriber.snapshot.done():
            subscriber.snapshot.set_result(None)  # the snapshot (or the bare server's hello)
            subscriber.seq = seq
            return
        # a message with seq s brings the connection to s: a merge (a snapshot, then the newest update) covers the
        # updates it skipped, which count as arrived when it did
        for covered in range(subscriber.seq + 1, seq + 1):
            times = self.arrivals.setdefault(covered, [])
            times.append(stamp)
            if covered == seq and seq not in self.lengths and not text.startswith('{"type":"snapshot"'):
                self.lengths[seq] = len(text)
            if len(times) == self.count:
                emit(f"done {covered} {self.lengths.get(covered, 0)} {json.dumps(times)}")
                del self.arrivals[covered]
                self.reported += 1
                if self.reported >= self.updates:
                    self.finished.set()
        subscriber.seq = max(subscriber.seq, seq)


def emit(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def main(
    url: str,
    tournament: str,
    count: int,
    updates: int,
    compression: bool,
    extra: dict[str, object],
    kernel: bool = False,
    decoding: bool = False,
) -> None:
    subscribe = json.dumps({"type": "subscribe", "tournament": tournament, **extra})
    fleet = Fleet(url, subscribe, count, updates, compression, decoding)
    loop = asyncio.get_running_loop()
    gate = asyncio.Semaphore(CONNECT_AT_ONCE)

    async def open_one() -> None:
        async with gate:
            _, subscriber = await loop.create_connection(lambda: Subscriber(fleet), fleet.uri.host, fleet.uri.port)
            fleet.subscribers.append(subscriber)
            async with asyncio.timeout(120):
                await subscriber.snapshot

    loop.add_signal_handler(signal.SIGUSR1, lambda: emit(f"state {fleet.state()}"))  # for a run that hangs
    async with asyncio.timeout(TIME_LIMIT):
        await asyncio.gather(*(open_one() for _ in range(count)))
        fleet.live = True
        if kernel:  # every connection has its snapshot: from now on the kernel stamps the arrivals
            for subscriber in fleet.subscribers:
                subscriber.read_lazily()
            loop.call_at((loop.time() // SWEEP + 1) * SWEEP, fleet.sweep)
        emit("ready")
        stdin_closed = loop.run_in_executor(None, sys.stdin.readline)
        await asyncio.wait(
            [asyncio.ensure_future(fleet.finished.wait()), stdin_closed], return_when=asyncio.FIRST_COMPLETED
        )
        emit("finished")
    os._exit(0)  # no closing handshakes: the server is stopped next anyway


if __name__ == "__main__":
    deflate = sys.argv[5] if len(sys.argv) > 5 else "deflate"
    extra = json.loads(sys.argv[6]) if len(sys.argv) > 6 else {}
    mode = sys.argv[7] if len(sys.argv) > 7 else ""
    if mode not in ("", "kernel", "decode"):
        sys.exit(f"unknown mode {mode!r}: kernel or decode")
    url, tid, count, updates = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    asyncio.run(main(url, tid, count, updates, deflate != "none", extra, mode == "kernel", mode == "decode"))
