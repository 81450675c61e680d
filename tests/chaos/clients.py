"""The chaos round's clients: arbiters on raw sockets, subscribers on the websocket client.

*Arbiters* speak websocket frames on a plain socket (:class:`RawSocket`), so that they can do what a
polite library never does: put several submits, copies of one event among them, in one TCP write,
and reset the connection (``SO_LINGER`` 0: the server sees a TCP RST, no close frame) while their
submits are in flight.  An arbiter resubmits every event it has no ``ack`` for, on a new connection
when the last one broke: the same event id again, as a real arbiter's retry would.

*Subscribers* use the ``websockets`` client; fast ones read at once, slow ones sleep between messages
(the server may drop them as too slow).  At random, and whenever their connection breaks (a killed
server or gateway, a drop), they subscribe again with ``since`` = the last seq they saw.  Every
message of every connection is kept for :mod:`tests.chaos.invariants`.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import random
import socket
import struct
import time
from collections import Counter
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from tests.chaos.invariants import Connection, Seen, payload_of
from tracker.core.events import BoardUpdated, Event, ResultRecorded, encode_board, encode_event

PortOf = Callable[[], int | None]
"""Where to connect now (None: nothing is listening at the moment)."""


class RawSocket:
    """A websocket client on a plain asyncio stream: masked text frames, a reset on demand."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, port: int, timeout: float = 3) -> RawSocket:
        """Connect and finish the handshake; raises OSError (or TimeoutError) when that fails."""
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            key = base64.b64encode(os.urandom(16)).decode()
            writer.write(
                (
                    f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
                ).encode()
            )
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                # the end of the stream before any answer: the server's process died during the handshake
                # (the embedded half's SIGKILL; a live server answers 503, or 101): a refused connect
                writer.close()
                raise OSError("the handshake ended without an answer") from None
        status = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status:
            writer.close()
            raise OSError(f"handshake refused: {status!r}")
        return cls(reader, writer)

    @staticmethod
    def frame(text: str, opcode: int = 0x1) -> bytes:
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        head = bytes([0x80 | opcode])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 1 << 16:
            head += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack("!Q", n)
        return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data))

    def send_texts(self, texts: list[str]) -> None:
        """All of ``texts``, one frame each, in one write."""
        self.writer.write(b"".join(self.frame(t) for t in texts))

    async def recv_text(self) -> str | None:
        """The next text message; None when the server closed (a close frame or the end of the stream)."""
        while True:
            try:
                b0, b1 = await self.reader.readexactly(2)
                n = b1 & 0x7F
                if n == 126:
                    (n,) = struct.unpack("!H", await self.reader.readexactly(2))
                elif n == 127:
                    (n,) = struct.unpack("!Q", await self.reader.readexactly(8))
                payload = await self.reader.readexactly(n)
            except (asyncio.IncompleteReadError, ConnectionError):
                return None
            opcode = b0 & 0x0F
            if opcode == 0x8:
                return None
            if opcode == 0x9:  # a ping: answer it
                self.writer.write(self.frame(payload.decode("latin-1"), 0xA))
                continue
            if opcode in (0x1, 0x0):
                return payload.decode()

    def reset(self) -> None:
        """Drop the connection with a TCP RST: no close frame, unread data discarded."""
        sock = self.writer.get_extra_info("socket")
        if sock is not None:
            with suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.writer.transport.abort()

    async def close(self) -> None:
        with suppress(OSError, ConnectionError):
            self.writer.write(self.frame("\x03\xe8", 0x8))  # close 1000
            self.writer.close()
            async with asyncio.timeout(1):
                await self.writer.wait_closed()


class Arbiter:
    """Submits ``events`` until each is acknowledged (or ``deadline``), breaking its connection at random."""

    def __init__(
        self,
        name: str,
        port_of: PortOf,
        token: str,
        events: list[Event],
        rng: random.Random,
        *,
        p_duplicate: float,
        p_reset: float,
        reply_timeout: float = 5.0,
        pace: float = 0.0,
    ) -> None:
        self.name = name
        self.port_of = port_of
        self.token = token
        self.events = events
        self.rng = rng
        self.p_duplicate = p_duplicate
        self.p_reset = p_reset
        self.reply_timeout = reply_timeout
        self.pace = pace  # at most this many seconds between two windows of submits, as a person types
        self.acked: dict[str, int] = {}
        self.sent_at: dict[str, float] = {}  # event id → when it was first sent (monotonic s)
        self.rejected: Counter[str] = Counter()
        self.faults: Counter[str] = Counter()  # duplicates in one write, resets, resubmits

    def _submit(self, event: Event) -> str:
        body = json.loads(encode_event(event))
        return json.dumps({"type": "submit", "token": self.token, "event": body})

    async def run(self, deadline: float) -> None:
        sent: set[str] = set()
        sock: RawSocket | None = None
        try:
            while time.monotonic() < deadline:
                pending = [e for e in self.events if e.id not in self.acked]
                if not pending:
                    return
                if sock is None:
                    port = self.port_of()
                    try:
                        if port is None:
                            raise OSError("nothing listening")
                        sock = await RawSocket.open(port)
                    except (OSError, TimeoutError):
                        await asyncio.sleep(0.05)
                        continue
                window = pending[: self.rng.randint(1, 12)]
                texts: list[str] = []
                copies: Counter[str] = Counter()
                for event in window:
                    n = 1 + (self.rng.randint(1, 2) if self.rng.random() < self.p_duplicate else 0)
                    if n > 1:
                        self.faults["duplicate-in-one-write"] += 1
                    if event.id in sent:
                        self.faults["resubmit"] += 1
                    sent.add(event.id)
                    self.sent_at.setdefault(event.id, time.monotonic())  # it cannot be published before this
                    texts += [self._submit(event)] * n
                    copies[event.id] += n
                sock.send_texts(texts)
                if self.rng.random() < self.p_reset:
                    await asyncio.sleep(self.rng.choice((0.0, 0.001, 0.003, 0.01, 0.03)))
                    sock.reset()
                    sock = None
                    self.faults["abrupt-disconnect"] += 1
                    continue
                if not await self._replies(sock, copies):
                    with suppress(Exception):
                        sock.reset()
                    sock = None
                    await asyncio.sleep(0.05)
                await asyncio.sleep(self.rng.uniform(0, self.pace))
        finally:
            if sock is not None:
                await sock.close()

    async def _replies(self, sock: RawSocket, copies: Counter[str]) -> bool:
        """Read a reply for every copy sent; False when the connection broke or went silent."""
        waiting = sum(copies.values())
        rejected = False
        try:
            async with asyncio.timeout(self.reply_timeout):
                while waiting:
                    text = await sock.recv_text()
                    if text is None:
                        return False
                    message = json.loads(text)
                    if message.get("type") == "ack":
                        self.acked.setdefault(message["id"], message["seq"])
                        waiting -= 1
                    elif message.get("type") == "rejected":
                        self.rejected[message.get("code", "?")] += 1
                        waiting -= 1
                        rejected = True
        except TimeoutError:
            return False
        if rejected:
            await asyncio.sleep(0.05)  # a full disk, a rebalance: give it a moment before the retry
        return True


class Subscriber:
    """Follows one tournament across reconnects; records every connection's messages."""

    def __init__(
        self,
        name: str,
        port_of: PortOf,
        tournament: str,
        rng: random.Random,
        *,
        slow: bool,
        p_resubscribe: float,
        delay: float = 0.0,
    ) -> None:
        self.name = name
        self.delay = delay  # a spoiler delay (seconds): every update that much later
        self.arrived: dict[int, float] = {}  # seq → when this subscriber first got it (monotonic s)
        self.port_of = port_of
        self.tournament = tournament
        self.rng = rng
        self.slow = slow
        self.p_resubscribe = p_resubscribe
        self.connections: list[Connection] = []
        self.last: int | None = None
        self.last_message: dict[str, Any] | None = None
        self.faults: Counter[str] = Counter()  # resubscribes (chosen), reconnects (forced), drops (1008)
        self.errors: list[str] = []
        self.first = asyncio.Event()  # set by the first snapshot or update

    async def run(self) -> None:
        """Until cancelled."""
        while True:
            port = self.port_of()
            if port is None:
                await asyncio.sleep(0.05)
                continue
            try:
                ws = await connect(f"ws://127.0.0.1:{port}/ws", max_size=2**24, open_timeout=3, close_timeout=1)
            except (OSError, TimeoutError, InvalidHandshake, InvalidStatus):
                await asyncio.sleep(0.05)
                continue
            conn = Connection(since=self.last)
            self.connections.append(conn)
            lifetime = self.rng.uniform(0.1, 2.0) if self.rng.random() < self.p_resubscribe else None
            try:
                since: dict[str, object] = {} if self.last is None else {"since": self.last}
                if self.delay:
                    since["delay"] = self.delay
                await ws.send(json.dumps({"type": "subscribe", "tournament": self.tournament, **since}))
                async with asyncio.timeout(lifetime):
                    async for raw in ws:
                        self._see(conn, json.loads(raw))
                        if self.slow:
                            await asyncio.sleep(self.rng.uniform(0.005, 0.05))
                self.faults["reconnect"] += 1  # the server ended the connection
                if ws.close_code == 1008:
                    self.faults["dropped-as-slow"] += 1
            except TimeoutError:
                self.faults["resubscribe"] += 1
                if self.rng.random() < 0.5:
                    ws.transport.abort()
                else:
                    with suppress(Exception):
                        await ws.close()
            except (ConnectionClosed, OSError):
                self.faults["reconnect"] += 1
            finally:
                ws.transport.abort()

    def _see(self, conn: Connection, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind not in ("snapshot", "update"):
            if len(self.errors) < 10:
                self.errors.append(json.dumps(message)[:200])
            return
        event = message.get("event") or {}
        conn.seen.append(Seen(kind, int(message["seq"]), event.get("id"), payload_of(message)))
        self.arrived.setdefault(int(message["seq"]), time.monotonic())
        self.last = int(message["seq"])
        self.last_message = message
        self.first.set()

    async def wait_for(self, seq: int, timeout: float) -> bool:
        """Wait until this subscriber has seen ``seq`` (True) or ``timeout`` passed (False)."""
        end = time.monotonic() + timeout
        while (self.last or 0) < seq:
            if time.monotonic() > end:
                return False
            await asyncio.sleep(0.02)
        return True


async def fresh_snapshot(port: int, tournament: str, timeout: float = 5) -> dict[str, Any] | None:
    """A new subscriber's first message (the snapshot), or None when none came."""
    try:
        async with asyncio.timeout(timeout):
            async with connect(f"ws://127.0.0.1:{port}/ws", max_size=2**24) as ws:
                await ws.send(json.dumps({"type": "subscribe", "tournament": tournament}))
                message: dict[str, Any] = json.loads(await ws.recv())
                return message
    except (OSError, TimeoutError, ConnectionClosed, InvalidHandshake):
        return None


class Guesser:
    """Submits the tournament's own events with wrong tokens as fast as the replies come, on raw sockets:
    none may be acknowledged (and the arbiters' right token must still get through)."""

    def __init__(self, name: str, port_of: PortOf, events: list[Event], rng: random.Random) -> None:
        self.name = name
        self.port_of = port_of
        self.events = events
        self.rng = rng
        self.acked = 0
        self.sent = 0
        self.faults: Counter[str] = Counter()

    async def run(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            port = self.port_of()
            if port is None:
                await asyncio.sleep(0.05)
                continue
            try:
                sock = await RawSocket.open(port)
            except (OSError, TimeoutError):
                await asyncio.sleep(0.05)
                continue
            try:
                for _ in range(self.rng.randint(1, 10)):
                    if time.monotonic() >= deadline:
                        break
                    batch = [self.rng.choice(self.events) for _ in range(10)]
                    sock.send_texts([self._guess(e) for e in batch])
                    self.sent += len(batch)
                    for _ in batch:
                        async with asyncio.timeout(5):
                            text = await sock.recv_text()
                        if text is None:
                            raise ConnectionError("closed")
                        self.acked += json.loads(text).get("type") == "ack"
                    self.faults["guesses"] += len(batch)
            except (OSError, TimeoutError, ConnectionError):
                pass
            finally:
                sock.reset()

    def _guess(self, event: Event) -> str:
        token = "".join(self.rng.choice("abcdef0123456789") for _ in range(24))
        return json.dumps({"type": "submit", "token": token, "event": json.loads(encode_event(event))})


class BoardFeeder:
    """Sends boards of the tournament's games on the arbiter token while the results come in: each board is
    answered ack or with a board's rejection (its game decided, …), and none enters the durable log."""

    def __init__(self, name: str, port_of: PortOf, token: str, games: list[Event], rng: random.Random) -> None:
        self.name = name
        self.port_of = port_of
        self.token = token
        self.games = [g for g in games if isinstance(g, ResultRecorded)]
        self.rng = rng
        self.codes: list[str] = []
        self.ids: set[str] = set()
        self.faults: Counter[str] = Counter()

    async def run(self, deadline: float) -> None:
        n = 0
        while time.monotonic() < deadline and self.games:
            port = self.port_of()
            if port is None:
                await asyncio.sleep(0.05)
                continue
            try:
                sock = await RawSocket.open(port)
            except (OSError, TimeoutError):
                await asyncio.sleep(0.05)
                continue
            try:
                while time.monotonic() < deadline:
                    game = self.rng.choice(self.games)
                    board = BoardUpdated(
                        f"{self.name}/b{n}", game.tournament, game.round, game.white, game.black, ply=n % 200
                    )
                    n += 1
                    self.ids.add(board.id)
                    body = json.loads(encode_board(board))
                    sock.send_texts([json.dumps({"type": "submit", "token": self.token, "event": body})])
                    async with asyncio.timeout(5):
                        text = await sock.recv_text()
                    if text is None:
                        raise ConnectionError("closed")
                    reply = json.loads(text)
                    self.codes.append("ack" if reply.get("type") == "ack" else str(reply.get("code")))
                    self.faults["boards"] += 1
                    await asyncio.sleep(self.rng.uniform(0.0, 0.05))
            except (OSError, TimeoutError, ConnectionError):
                pass
            finally:
                sock.reset()
