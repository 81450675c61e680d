"""What an open connection keeps is only what it needs, and it is still served the same (issue 40).

An idle subscriber's connection keeps no inflater between the client's
messages (only the window they may refer back to), nor the opening
handshake's request and response: the client's messages compressed against
its earlier ones are still understood, pings answered, and updates written,
compressed or not.  Real pieces: an in-process gateway on a free port and
websockets clients.
"""

from __future__ import annotations

import asyncio
import json
import random
import string
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory
from websockets.frames import CloseCode
from websockets.protocol import State

from tests.builders import TID, game, opened
from tests.gateway.test_frames import TOKEN, server_side, serving, subscriber
from tests.wsclient import recv_until, reply_to, submit
from tracker.core.events import encode_event
from tracker.gateway.connection import HANDSHAKE_DONE, bounded_connection
from tracker.gateway.frames import SharedDeflate
from tracker.gateway.serve import bound_port


@pytest.mark.parametrize(
    ("offer", "bits"),
    [({}, 12), ({"extensions": [ClientPerMessageDeflateFactory(client_max_window_bits=9)]}, 9)],
    ids=["browser-offer", "client-window-9-bits"],
)
async def test_a_client_compressing_against_its_earlier_messages_is_understood_without_an_inflater_kept(
    tmp_path: Path, offer: dict[str, object], bits: int
) -> None:
    noise = "".join(random.Random(40).choices(string.ascii_letters, k=6000))  # pushes the rest out of a 4 KiB window
    # websockets' client compresses with context takeover: a message it sent before is referred back to
    async with (
        serving(tmp_path) as (gateway, url),
        connect(url, max_size=2**24, ping_interval=None, **offer) as arbiter,  # type: ignore[arg-type]  # its keywords
    ):
        (conn,) = gateway.ws.clients
        deflate = conn.protocol.extensions[0]
        assert isinstance(deflate, SharedDeflate) and not deflate.remote_no_context_takeover
        assert deflate.remote_max_window_bits == bits
        events = [opened(6), game(1, 1, 6, "1-0"), game(1, 2, 5, "1/2-1/2")]
        for event in events:
            for _ in range(2):  # the same bytes again: back references into the window, re-sending is safe
                await submit(arbiter, TOKEN, event)
                assert (await reply_to(arbiter, event.id))["type"] == "ack"
                assert not hasattr(deflate, "decoder")  # no inflater between messages
            bad = json.dumps({"type": "subscribe", "tournament": noise})
            for _ in range(2):  # longer than the window: what the next ones refer to is its end
                await arbiter.send(bad)
                error, _ = await recv_until(arbiter, lambda m: m.get("type") == "error")
                assert error["code"] == "bad-message"
        last = game(1, 3, 4, "0-1")
        text = json.dumps({"type": "submit", "token": TOKEN, "event": json.loads(encode_event(last))})
        await arbiter.send(iter([text[:40], text[40:]]))  # one message in two frames, compressed as one
        assert (await reply_to(arbiter, last.id))["type"] == "ack"
        assert not hasattr(deflate, "decoder")


async def test_an_idle_subscriber_keeps_no_handshake_and_is_still_served_compressed_or_not(tmp_path: Path) -> None:
    async with serving(tmp_path) as (gateway, url):
        compressed = await subscriber(url)
        plain = await subscriber(url, compression=None)
        conns = server_side(gateway)
        assert len(conns) == 2
        for conn in conns:
            assert conn.request is HANDSHAKE_DONE and not conn.request.headers and conn.response is None
        assert {bool(conn.protocol.extensions) for conn in conns} == {True, False}
        for ws in (compressed, plain):  # the frames' parser made anew after the handshake reads the client's frames
            async with asyncio.timeout(10):
                await (await ws.ping())
        async with connect(url) as arbiter:
            for event in [opened(4), game(1, 1, 4, "1-0"), game(1, 2, 3, "0-1")]:
                await submit(arbiter, TOKEN, event)
                assert (await reply_to(arbiter, event.id))["type"] == "ack"
        for ws in (compressed, plain):
            async with asyncio.timeout(10):
                seqs = [json.loads(await ws.recv())["seq"] for _ in range(3)]
            assert seqs == [1, 2, 3]
            await ws.send(json.dumps({"type": "unsubscribe", "tournament": TID}))
            await ws.send(json.dumps({"type": "subscribe", "tournament": TID, "since": 2}))
            message, _ = await recv_until(ws, lambda m: m.get("type") == "update")
            assert message["seq"] == 3
            await ws.close()


@asynccontextmanager
async def pinging(ping_interval: float, ping_timeout: float) -> AsyncIterator[tuple[list[ServerConnection], str]]:
    """A websockets server with tracker's connections and a short keepalive: (its open connections, its URL)."""
    conns: list[ServerConnection] = []

    async def handler(conn: ServerConnection) -> None:
        conns.append(conn)
        await conn.wait_closed()

    async with serve(
        handler,
        "127.0.0.1",
        0,
        ping_interval=ping_interval,
        ping_timeout=ping_timeout,
        close_timeout=1,
        create_connection=bounded_connection(1 << 20),
    ) as server:
        yield conns, f"ws://127.0.0.1:{bound_port(server)}/ws"


async def test_keepalive_pings_go_on_with_a_timer_between_them_and_a_silent_client_is_closed_1011() -> None:
    async with pinging(0.05, 5) as (conns, url), connect(url) as answering:
        async with asyncio.timeout(10):
            while not conns:  # noqa: ASYNC110 (the handler runs once the handshake is done)
                await asyncio.sleep(0.01)
        (conn,) = conns
        pings = 0
        ping = conn.ping

        async def counted(data: bytes | None = None) -> asyncio.Future[float]:
            nonlocal pings
            pings += 1
            return await ping(data)

        conn.ping = counted  # type: ignore[method-assign]  # counts the keepalive's pings
        async with asyncio.timeout(10):
            while pings < 4 or not isinstance(conn.keepalive_task, asyncio.TimerHandle):  # noqa: ASYNC110
                await asyncio.sleep(0.01)
        assert conn.latency > 0  # pongs came back and were matched to their pings
        assert conn.state is State.OPEN
        async with asyncio.timeout(10):
            await (await answering.ping())  # the client's own pings are answered too
    async with pinging(0.05, 0.2) as (conns, url), connect(url, close_timeout=0.5) as silent:
        silent.transport.pause_reading()  # reads nothing more: no pong for the next ping
        async with asyncio.timeout(10):
            while not conns or conns[0].protocol.close_sent is None:  # noqa: ASYNC110
                await asyncio.sleep(0.01)
        close = conns[0].protocol.close_sent
        assert (close.code, close.reason) == (CloseCode.INTERNAL_ERROR, "keepalive ping timeout")
