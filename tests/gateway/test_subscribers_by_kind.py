"""Who the derived feeds write: the arbiters, stakes and boards subscribers of a tournament are those subscribed now.

The gateway keeps them in an index per tournament and kind (the feeds ask at every update); these tests hold it
to what each connection asked last: a re-subscribe, an unsubscribe and a closed connection all change it.
Real pieces: an in-process gateway on a free port (:func:`tests.gateway.test_frames.serving`), real clients.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from websockets.asyncio.client import connect

from tests.builders import TID, opened
from tests.gateway.test_frames import TOKEN, serving, subscriber, until
from tests.wsclient import reply_to, send, submit


async def test_arbiters_stakes_and_boards_subscribers_follow_what_each_connection_asked_last(tmp_path: Path) -> None:
    async with serving(tmp_path) as (gateway, url):
        ws = gateway.ws
        async with connect(url, ping_interval=None) as desk:
            event = opened(6)
            await submit(desk, TOKEN, event)
            assert (await reply_to(desk, event.id))["type"] == "ack"
        arbiter = await connect(url, ping_interval=None)
        viewer = await connect(url, ping_interval=None)
        plain = await subscriber(url)
        try:
            await send(arbiter, {"type": "subscribe", "tournament": TID, "token": TOKEN, "stakes": True})
            await send(viewer, {"type": "subscribe", "tournament": TID, "boards": True})
            await until(lambda: len(ws.arbiters(TID)) == 1 and len(ws.boards_subscribers(TID)) == 1)
            await until(lambda: len(ws.stakes_subscribers(TID)) == 1)
            (arbiter_conn,) = ws.arbiters(TID)
            assert ws.stakes_subscribers(TID) == [arbiter_conn]
            assert ws.boards_subscribers(TID) != [arbiter_conn]
            assert ws.arbiters("another") == ws.stakes_subscribers("another") == ws.boards_subscribers("another") == []

            # subscribing again asks afresh: still an arbiter (the token), no longer for the stakes
            await send(arbiter, {"type": "subscribe", "tournament": TID, "token": TOKEN})
            await until(lambda: not ws.stakes_subscribers(TID))
            assert ws.arbiters(TID) == [arbiter_conn]

            await send(arbiter, {"type": "unsubscribe", "tournament": TID})
            await until(lambda: not ws.arbiters(TID))

            await viewer.close()
            await until(lambda: not ws.boards_subscribers(TID))
            assert not ws._kinds  # nothing left behind for the connections gone or unsubscribed
        finally:
            await asyncio.gather(arbiter.close(), viewer.close(), plain.close())
