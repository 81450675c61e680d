"""One compression per update: subscribers that share compression parameters are written the very same frame.

Real pieces: an in-process gateway (embedded processor, journal in a temp
dir) on a free port, real websockets clients offering permessage-deflate
with different windows, or not at all, and a raw socket that never reads.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory
from websockets.frames import Frame, Opcode
from websockets.sync.client import connect as sync_connect

from tests.builders import TID, game, opened
from tests.conftest import RunningTracker
from tests.web.test_browser import CHROMIUM, CHROMIUM_ARGS, wait_seq
from tests.web.test_browser import _missing as missing_browser
from tests.wsclient import reply_to, send, submit
from tracker.config import Limits, ServerConfig
from tracker.core.events import encode_event
from tracker.embedded.journal import Journal
from tracker.embedded.processor import EmbeddedProcessor
from tracker.gateway import frames
from tracker.gateway.metrics import Metrics
from tracker.gateway.serve import Gateway, bound_port
from tracker.protocol import StandingsPayload

TOKEN = "frames-test-token"


@asynccontextmanager
async def serving(tmp_path: Path, limits: Limits | None = None) -> AsyncIterator[tuple[Gateway, str]]:
    """A gateway with the embedded backend on 127.0.0.1, a free port: (gateway, websocket URL)."""
    config = ServerConfig(port=0, token=TOKEN, data_dir=tmp_path, durable=False, limits=limits or Limits())
    journal = Journal(tmp_path / "journal.sqlite3", durable=False)
    journal.open()
    metrics = Metrics()
    processor = EmbeddedProcessor(journal, metrics)
    gateway = Gateway(config, processor, metrics)
    processor.attach(gateway)
    async with journal:
        async with gateway.server() as server:
            yield gateway, f"ws://127.0.0.1:{bound_port(server)}/ws"
            server.close(close_connections=True)
            await server.wait_closed()
        await gateway.aclose()


async def subscriber(url: str, **options: object) -> ClientConnection:
    """A client subscribed to :data:`TID` that has read its snapshot."""
    ws = await connect(url, max_size=2**24, ping_interval=None, **options)  # type: ignore[arg-type]  # connect's keywords
    await send(ws, {"type": "subscribe", "tournament": TID})
    async with asyncio.timeout(10):
        assert json.loads(await ws.recv())["type"] == "snapshot"
    return ws


async def until(condition: Callable[[], bool], timeout: float = 10) -> None:
    async with asyncio.timeout(timeout):
        while not condition():  # noqa: ASYNC110 (no event to wait on: a raw socket subscribing)
            await asyncio.sleep(0.005)


def server_side(gateway: Gateway) -> set[ServerConnection]:
    return gateway.hub.channels[TID].subscribers


# the client offers → the window the server compresses with (0: no compression)
OFFERS: list[tuple[dict[str, object], int]] = [
    ({"compression": None}, 0),
    ({}, 12),  # websockets' default offer, as browsers make it: the server picks its 4 KiB window
    ({"extensions": [ClientPerMessageDeflateFactory(client_max_window_bits=9)]}, 12),
    ({"extensions": [ClientPerMessageDeflateFactory(server_no_context_takeover=True)]}, 12),
    ({"extensions": [ClientPerMessageDeflateFactory(server_max_window_bits=10)]}, 10),
    ({"extensions": [ClientPerMessageDeflateFactory(server_max_window_bits=10, client_max_window_bits=11)]}, 10),
]


async def test_every_subscriber_decodes_the_same_text_and_each_update_is_compressed_once_per_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[tuple[bytes, int, bool]] = []  # (message, window bits, on the feed's stream)
    original_frame, original_advance = frames.frame, frames.Stream.advance

    def counted(message: bytes, compression: frames.Parameters) -> bytes:
        built.append((message, compression[0], False))
        return original_frame(message, compression)

    def counted_on_stream(
        stream: frames.Stream, message: bytes, compression: frames.Parameters, on: int, off: int
    ) -> tuple[frames.Run, object | None]:
        built.append((message, compression[0], True))
        return original_advance(stream, message, compression, on, off)

    monkeypatch.setattr(frames, "frame", counted)
    monkeypatch.setattr(frames.Stream, "advance", counted_on_stream)
    events = [opened(6), game(1, 1, 6, "1-0"), game(1, 2, 5, "1/2-1/2"), game(1, 3, 4, "0-1"), game(2, 6, 4, "1-0")]
    async with serving(tmp_path) as (gateway, url):
        clients = [await subscriber(url, **options) for options, _ in OFFERS]
        assert {frames.parameters(conn) for conn in server_side(gateway)} == {
            frames.UNCOMPRESSED,
            (12, (("memLevel", 5),)),
            (10, (("memLevel", 5),)),
        }
        async with connect(url) as arbiter:
            for event in events:
                await submit(arbiter, TOKEN, event)
                assert (await reply_to(arbiter, event.id))["type"] == "ack"
        received = []
        for ws in clients:
            async with asyncio.timeout(10):
                received.append([await ws.recv() for _ in events])
            await ws.close()
    assert all(texts == received[0] for texts in received)
    assert [json.loads(text)["seq"] for text in received[0]] == [1, 2, 3, 4, 5]
    assert all(isinstance(text, str) for text in received[0])
    # one frame per group per update, whatever the number of subscribers in it: no compression; the feed's stream at
    # 12 and at 10 bits; compressed alone at 12 bits, for the client that asked for server_no_context_takeover
    groups = {(0, False), (12, True), (10, True), (12, False)}
    sent = [text.encode() for text in received[0]]
    assert [m for m, _, _ in built] == [m for m in sent for _ in groups]
    assert {(bits, shared) for _, bits, shared in built} == groups


def update(seq: int) -> bytes:
    """An update-like message whose successive versions share most of their bytes, as standings do."""
    rows = [{"start_no": k, "name": f"Player {k}", "points": (k * seq) % 7 / 2, "line": "1=0" * k} for k in range(16)]
    return json.dumps({"type": "update", "seq": seq, "standings": rows}).encode()


def frame_bytes(conn: ServerConnection, written: list[bytes]) -> None:
    """Record what is written to ``conn``'s transport, as it goes."""
    transport_write = conn.transport.write

    def spy(data: bytes | bytearray | memoryview) -> None:
        written.append(bytes(data))
        transport_write(data)

    conn.transport.write = spy  # type: ignore[method-assign]  # a spy on this one transport


async def test_a_feed_is_one_deflate_stream_every_subscriber_decodes_whenever_it_joined(tmp_path: Path) -> None:
    async with serving(tmp_path) as (gateway, url):
        first = await subscriber(url)
        (conn,) = server_side(gateway)
        assert isinstance(conn.protocol.extensions[0], frames.SharedDeflate)
        assert conn.protocol.extensions[0].takeover  # the handshake allowed the server context takeover
        written: list[bytes] = []
        frame_bytes(conn, written)
        compression = frames.parameters(conn)
        assert compression == (12, (("memLevel", 5),))
        alone = [frames.frame(update(seq), compression) for seq in range(1, 9)]

        for seq in (1, 2, 3):
            assert gateway.hub.publish(payload(seq), update(seq))
        late = await subscriber(url)  # joins mid-stream: its window holds only its own snapshot
        for seq in (4, 5):
            assert gateway.hub.publish(payload(seq), update(seq))
        note = '{"type":"note"}'
        await conn.send(note)  # a small message of its own (an ack): uncompressed, the window stays as it was
        assert gateway.hub.publish(payload(6), update(6))
        stakes = b'{"type":"stakes","seq":6}'
        frames.broadcast([conn], stakes)  # a small message of no feed (stakes, a cue): uncompressed as well
        assert gateway.hub.publish(payload(7), update(7))
        big = json.dumps({"type": "note", "x": "y" * frames.PLAIN_LIMIT})
        await conn.send(big)  # a big one is compressed alone: the client's window no longer ends on the stream
        assert gateway.hub.publish(payload(8), update(8))

        texts = [update(s).decode() for s in (1, 2, 3, 4, 5)] + [note, update(6).decode(), stakes.decode()]
        texts += [update(7).decode(), big, update(8).decode()]
        async with asyncio.timeout(10):
            assert [await first.recv() for _ in texts] == texts
            assert [await late.recv() for _ in range(5)] == [update(s).decode() for s in (4, 5, 6, 7, 8)]
        assert len(written) == len(texts)
        assert written[5] == Frame(Opcode.TEXT, note.encode()).serialize(mask=False)  # RSV1 clear: not compressed
        assert written[7] == Frame(Opcode.TEXT, stakes).serialize(mask=False)
        assert written[9] == frames.frame(big.encode(), compression)
        updates_written = [written[k] for k in (0, 1, 2, 3, 4, 6, 8, 10)]
        # the stream starts afresh (the frame compressed alone) when a connection is not at its position: the
        # first update, the one after the late subscriber joined, the one after the big message of the first's own
        fresh = {1, 4, 8}
        for seq, (ours, single) in enumerate(zip(updates_written, alone, strict=True), start=1):
            if seq in fresh:
                assert ours == single
            else:
                assert len(ours) < len(single) / 2, (seq, len(ours), len(single))  # it refers back to the last update
        await first.close()
        await late.close()


async def half_sent(conn: ServerConnection, finish: asyncio.Event) -> asyncio.Task[None]:
    """``conn`` sending a fragmented message of its own, its first fragment written, the second once ``finish``."""
    halfway = asyncio.Event()

    async def fragments() -> AsyncIterator[str]:
        yield "first half, "
        halfway.set()
        await finish.wait()
        yield "second half"

    sending = asyncio.create_task(conn.send(fragments()))
    await halfway.wait()
    await asyncio.sleep(0)  # let send() write the first fragment
    return sending


def followers_of(gateway: Gateway, conn: ServerConnection) -> list[Any]:
    """The feeds' followers of ``conn`` (tracker.gateway.fanout.Follower)."""
    return list(conn.followers)  # type: ignore[attr-defined]  # a BoundedConnection's


async def test_a_follower_written_anything_else_is_checked_in_full_before_the_next_frame(tmp_path: Path) -> None:
    """The walk writes a settled follower the stream's frame without looking at the connection: every other
    write unsettles it first: a message of its own, a fragmented one half sent, a ping; a drained write settles it."""
    async with serving(tmp_path) as (gateway, url):
        busy, other = await subscriber(url), await subscriber(url)
        conn = connection_of(gateway, busy)
        (follower,) = followers_of(gateway, conn)
        assert not follower.settled  # its snapshot went through websockets' own send
        assert gateway.hub.publish(payload(1), update(1))
        assert follower.settled  # the feed wrote it whole

        await conn.send('{"type":"note"}')  # an ack, say
        assert not follower.settled
        assert gateway.hub.publish(payload(2), update(2))
        assert follower.settled

        finish = asyncio.Event()
        sending = await half_sent(conn, finish)
        assert not follower.settled
        assert gateway.hub.publish(payload(3), update(3))  # it must wait: nothing between two fragments
        assert not follower.settled
        finish.set()
        await sending
        await until(lambda: follower.seq == 3)  # looked at again once the message is out: then the update
        assert follower.settled

        pong_waiter = await conn.ping()
        assert not follower.settled
        async with asyncio.timeout(10):
            await pong_waiter
        assert gateway.hub.publish(payload(4), update(4))
        assert follower.settled

        async with asyncio.timeout(10):
            expected = [update(1).decode(), '{"type":"note"}', update(2).decode(), "first half, second half"]
            assert [await busy.recv() for _ in range(4)] == expected
            assert await busy.recv() == update(3).decode()
            assert await busy.recv() == update(4).decode()
            assert [await other.recv() for _ in range(4)] == [update(s).decode() for s in (1, 2, 3, 4)]
        await busy.close()
        await other.close()


def connection_of(gateway: Gateway, ws: ClientConnection) -> ServerConnection:
    return next(c for c in server_side(gateway) if c.remote_address[1] == ws.local_address[1])


async def test_a_late_follower_gets_frames_compressed_alone_until_the_stream_starts_afresh(tmp_path: Path) -> None:
    async with serving(tmp_path) as (gateway, url):
        clients = [await subscriber(url) for _ in range(4)]
        conns = [connection_of(gateway, ws) for ws in clients]
        compression = frames.parameters(conns[0])
        assert compression is not None
        stream = frames.Stream()
        for seq in (1, 2):
            frames.broadcast(conns, update(seq), stream)
        late = await subscriber(url)
        everyone = [*clients, late]
        on_stream: list[bytes] = []
        joined: list[bytes] = []
        frame_bytes(conns[0], on_stream)
        frame_bytes(connection_of(gateway, late), joined)
        for seq in range(3, 9):
            frames.broadcast([*conns, connection_of(gateway, late)], update(seq), stream)
        alone = {seq: frames.frame(update(seq), compression) for seq in range(3, 9)}
        # the late one costs one frame compressed alone per update; at the fourth (as many as there are followers
        # on the stream) the stream starts afresh for everyone: the frame compressed alone, written to all five
        assert joined[:4] == [alone[3], alone[4], alone[5], alone[6]]
        assert on_stream[3] == alone[6]
        for seq, ours in zip((3, 4, 5, 7, 8), [*on_stream[:3], *on_stream[4:]], strict=True):
            assert len(ours) < len(alone[seq]) / 2, seq  # on the stream: it refers back to the last update
        assert joined[4:] == on_stream[4:]  # the late one is on the stream too now
        async with asyncio.timeout(10):
            for ws in clients:
                assert [await ws.recv() for _ in range(8)] == [update(s).decode() for s in range(1, 9)]
            assert [await late.recv() for _ in range(6)] == [update(s).decode() for s in range(3, 9)]
        for ws in everyone:
            await ws.close()


async def test_a_subscriber_that_missed_a_stream_frame_gets_the_next_one_afresh(tmp_path: Path) -> None:
    async with serving(tmp_path) as (gateway, url):
        a, b = await subscriber(url), await subscriber(url)
        conn_a, conn_b = connection_of(gateway, a), connection_of(gateway, b)
        stream = frames.Stream()
        frames.broadcast([conn_a, conn_b], update(1), stream)
        frames.broadcast([conn_a], update(2), stream)  # b misses it (as when websockets skips a busy connection)
        frames.broadcast([conn_a, conn_b], update(3), stream)
        frames.broadcast([conn_a, conn_b], update(4), stream)
        async with asyncio.timeout(10):
            assert [await a.recv() for _ in range(4)] == [update(s).decode() for s in (1, 2, 3, 4)]
            assert [await b.recv() for _ in range(3)] == [update(s).decode() for s in (1, 3, 4)]
        await a.close()
        await b.close()


async def test_the_shared_frame_is_the_one_websockets_writes_on_that_connection(tmp_path: Path) -> None:
    message = json.dumps({"type": "update", "seq": 1, "rows": ["P" * 40 + str(k) for k in range(300)]}).encode()
    async with serving(tmp_path) as (gateway, url):
        clients = [await subscriber(url, **options) for options, _ in OFFERS]
        for conn in server_side(gateway):
            compression = frames.parameters(conn)
            assert compression is not None
            ours = frames.frame(message, compression)
            # the connection's own extension (its encoder is made afresh per message: encoding here changes nothing)
            theirs = Frame(Opcode.TEXT, message).serialize(mask=False, extensions=conn.protocol.extensions)
            assert ours == theirs
            assert bool(ours[0] & 0x40) == (compression != frames.UNCOMPRESSED)  # RSV1: compressed
            if compression != frames.UNCOMPRESSED:
                assert len(ours) < len(message) // 4
        for ws in clients:
            await ws.close()


async def test_a_connection_closing_meanwhile_is_skipped(tmp_path: Path) -> None:
    async with serving(tmp_path) as (gateway, url):
        leaving, staying = await subscriber(url), await subscriber(url)
        conns = sorted(server_side(gateway), key=lambda c: c.id.int)
        closing = connection_of(gateway, leaving)
        closing.protocol.send_close(1001, "going away")  # the close frame is queued, not yet written
        assert frames.parameters(closing) is None
        frames.broadcast(conns, b'{"type":"update","seq":1}')
        assert len(closing.protocol.writes) == 1  # only the close frame: nothing may follow it
        closing.send_data()
        async with asyncio.timeout(10):
            assert await staying.recv() == '{"type":"update","seq":1}'
            with pytest.raises(ConnectionClosed) as closed:
                await leaving.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001
        await staying.close()


async def test_a_frame_goes_after_a_pong_still_queued(tmp_path: Path) -> None:
    async with serving(tmp_path) as (gateway, url):
        ws = await subscriber(url)
        (conn,) = server_side(gateway)
        conn.protocol.send_pong(b"queued")  # as GatewayProtocol leaves the latest pong until the read is done
        pong = conn.protocol.writes[0]
        written: list[bytes] = []
        frame_bytes(conn, written)
        frames.broadcast([conn], b'{"seq":1}')
        assert written == [pong, frames.frame(b'{"seq":1}', (12, (("memLevel", 5),)))]
        assert conn.protocol.writes == []
        async with asyncio.timeout(10):
            assert await ws.recv() == '{"seq":1}'
        await ws.close()


async def test_a_fragmented_message_in_progress_is_not_interrupted(tmp_path: Path) -> None:
    async with serving(tmp_path) as (gateway, url):
        busy, other = await subscriber(url), await subscriber(url)
        conn = connection_of(gateway, busy)
        finish = asyncio.Event()
        sending = await half_sent(conn, finish)
        assert frames.parameters(conn) is None
        frames.broadcast(server_side(gateway), b'{"seq":1}')  # websockets skips the busy one, with a warning
        finish.set()
        await sending
        frames.broadcast(server_side(gateway), b'{"seq":2}')
        async with asyncio.timeout(10):
            assert [await busy.recv(), await busy.recv()] == ["first half, second half", '{"seq":2}']
            assert [await other.recv(), await other.recv()] == ['{"seq":1}', '{"seq":2}']
        await busy.close()
        await other.close()


def payload(seq: int) -> StandingsPayload:
    return {
        "tournament": TID,
        "name": "T",
        "seq": seq,
        "rounds": 3,
        "games_played": seq,
        "provisional": True,
        "basis": "percentage",
        "max_basis": "games",
        "codes": ["KS"],
        "scoring": {},
        "standings": [],
    }


async def test_a_compressing_subscriber_that_never_reads_is_dropped_and_the_others_get_every_update(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path, Limits(max_buffer=1 << 16)) as (gateway, url):
        live = await subscriber(url)
        stalled = await asyncio.to_thread(raw_deflate_websocket, url)  # blocking reads: not on the server's loop
        stalled.sendall(masked_text_frame(json.dumps({"type": "subscribe", "tournament": TID}).encode()))
        await until(lambda: len(server_side(gateway)) == 2)
        stalled_conn = next(c for c in server_side(gateway) if c.remote_address[1] == stalled.getsockname()[1])
        assert frames.parameters(stalled_conn) == (12, (("memLevel", 5),))
        seq = 0
        async with asyncio.timeout(20):
            while gateway.metrics.counters.get("tracker_clients_dropped_total", 0) == 0:
                seq += 1
                noise = base64.b64encode(os.urandom(12_000)).decode()  # compresses to about 3/4
                assert gateway.hub.publish(
                    payload(seq), json.dumps({"type": "update", "seq": seq, "x": noise}).encode()
                )
                assert json.loads(await live.recv())["seq"] == seq  # the live one keeps up, stall or not
                assert seq < 2000
        assert stalled_conn not in server_side(gateway)
        assert live.protocol.state.name == "OPEN"
        stalled.close()
        await live.close()


def raw_deflate_websocket(url: str) -> socket.socket:
    """A client socket past a handshake offering permessage-deflate, with a tiny receive window; it never reads."""
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n".encode()
    )
    head = b""
    sock.settimeout(10)
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    assert b"permessage-deflate" in head, head
    return sock


def masked_text_frame(data: bytes) -> bytes:
    return Frame(Opcode.TEXT, data).serialize(mask=True)


@pytest.mark.browser
def test_chromium_decodes_every_frame_of_a_feeds_deflate_stream(
    tracker_factory: Callable[..., RunningTracker],
) -> None:
    if not Path(CHROMIUM).exists():
        missing_browser(f"{CHROMIUM} is missing")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing_browser("the playwright package is not installed")
    tracker = tracker_factory()
    events = [opened(6), game(1, 1, 6, "1-0"), game(1, 2, 5, "1/2-1/2"), game(1, 3, 4, "0-1")]
    events += [game(2, 6, 4, "1-0"), game(2, 5, 3, "0-1"), game(2, 1, 2, "1/2-1/2")]
    handshakes: list[dict[str, str]] = []
    texts: list[str] = []
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = chromium.new_page()
            cdp = page.context.new_cdp_session(page)  # what the browser's network stack saw, decompressed
            cdp.on("Network.webSocketHandshakeResponseReceived", lambda e: handshakes.append(e["response"]["headers"]))
            cdp.on("Network.webSocketFrameReceived", lambda e: texts.append(e["response"]["payloadData"]))
            cdp.send("Network.enable")
            page.goto(f"{tracker.http_url}/overlay/{TID}")
            wait_seq(page, 0)
            # a second socket of the page's own, following the full updates, sent a small message of its own (an
            # error) between any two updates: uncompressed, so the next update on the stream still refers back
            page.evaluate(PROBE, {"url": tracker.ws_url, "tournament": TID})
            page.wait_for_function("() => window.probeGot.length >= 1")
            with sync_connect(tracker.ws_url, open_timeout=10) as ws:
                for event in events:
                    ws.send(
                        json.dumps({"type": "submit", "token": tracker.token, "event": json.loads(encode_event(event))})
                    )
                    while json.loads(ws.recv(timeout=10)).get("id") != event.id:
                        pass
                    page.evaluate('window.probe.send(\'{"type": "nonsense"}\')')
            wait_seq(page, len(events))
            page.wait_for_function("n => window.probeGot.length >= n", arg=1 + 2 * len(events))
            probe = [json.loads(text) for text in page.evaluate("window.probeGot")]
        finally:
            chromium.close()
    extensions = {k.lower(): v for k, v in handshakes[0].items()}["sec-websocket-extensions"]
    assert "permessage-deflate" in extensions and "server_no_context_takeover" not in extensions
    seqs = list(range(1, len(events) + 1))
    updates = [json.loads(t) for t in texts if json.loads(t)["type"] == "update"]
    assert sorted(u["seq"] for u in updates) == sorted(seqs * 2)  # the overlay's deltas and the probe's updates
    assert [m["seq"] for m in probe if m["type"] == "update"] == seqs
    assert [m["type"] for m in probe].count("error") == len(events)


PROBE = """({url, tournament}) => new Promise((opened) => {
    const ws = new WebSocket(url);
    window.probe = ws;
    window.probeGot = [];
    ws.onmessage = (e) => window.probeGot.push(e.data);
    ws.onopen = () => { ws.send(JSON.stringify({type: "subscribe", tournament})); opened(); };
})"""
