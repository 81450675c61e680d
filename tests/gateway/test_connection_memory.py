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
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory

from tests.builders import TID, game, opened
from tests.gateway.test_frames import TOKEN, server_side, serving, subscriber
from tests.wsclient import recv_until, reply_to, submit
from tracker.core.events import encode_event
from tracker.gateway.connection import HANDSHAKE_DONE
from tracker.gateway.frames import SharedDeflate


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
