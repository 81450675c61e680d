"""A decoding subscriber that falls behind a burst gets one merged snapshot, not every update queued (issue 40).

Subscribers here are websockets' own client, which reads, inflates and decodes every message it is sent, as a
page does.  Three of them stop reading while a burst of results is published (the socket is left unread: what
a client busy decoding does), one reads along.  What a stalled client was not written while it was behind must
reach it as one snapshot and the newest update (the seq contract of tracker/gateway/fanout.py), so it is written
far fewer messages than there were updates; that takes the server seeing that the client has not read, which it
does only from the bytes still unsent in its own buffer: the kernel must not take them all (by default its send
buffer grows to 4 MiB, the whole burst; tracker.gateway.connection bounds it).  The one that read along gets
every update in order.  Every subscriber ends on the standings the API shows.

Real pieces: ``tracker up``, websockets' client, no compression (the bytes the burst weighs are the update's).
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from tests.builders import TID, berger, game, opened, schedule_of
from tests.conftest import RunningTracker
from tests.wsclient import reply_to, submit

PLAYERS = 40  # a full update of 40 rows weighs about 6 KB
ROUNDS = 4  # 80 results: about half a megabyte of updates, past what the kernel may take for a client
STALLED = 3


async def _subscriber(url: str) -> tuple[ClientConnection, Any]:
    ws = await connect(url, compression=None, max_size=2**24, open_timeout=30, ping_interval=None)
    await ws.send(json.dumps({"type": "subscribe", "tournament": TID}))
    async with asyncio.timeout(30):
        return ws, json.loads(await ws.recv())


async def _read_to(ws: ClientConnection, seq: int) -> list[Any]:
    """The messages ``ws`` reads until one carries ``seq``."""
    messages = []
    async with asyncio.timeout(60):
        while not messages or messages[-1]["seq"] < seq:
            messages.append(json.loads(await ws.recv()))
    return messages


def _contract(start: int, messages: list[Any]) -> None:
    """Each message is the update right after the seq the client has, or a snapshot ahead of it (a merge's head)."""
    seq = start
    for message in messages:
        if message["type"] == "update":
            assert message["seq"] == seq + 1
        else:
            assert message["type"] == "snapshot" and message["seq"] > seq
        seq = message["seq"]


def _standings(tracker: RunningTracker) -> Any:
    with urllib.request.urlopen(f"{tracker.http_url}/api/tournaments/{TID}/standings", timeout=30) as resp:
        return json.loads(resp.read())


def test_a_decoding_subscriber_behind_a_burst_is_written_one_merged_snapshot(
    tracker_factory: Callable[..., RunningTracker],
) -> None:
    tracker = tracker_factory()
    rounds = berger(PLAYERS)[:ROUNDS]

    async def burst() -> None:
        async with connect(tracker.ws_url, max_size=2**24) as arbiter:
            event = opened(PLAYERS, schedule=schedule_of(berger(PLAYERS)))
            await submit(arbiter, tracker.token, event)
            assert (await reply_to(arbiter, event.id, timeout=30))["type"] == "ack"
            stalled = [await _subscriber(tracker.ws_url) for _ in range(STALLED)]
            reading, first = await _subscriber(tracker.ws_url)  # last in the feed's walk: written after the others
            try:
                start = first["seq"]
                for ws, _ in stalled:
                    assert ws.transport is not None
                    ws.transport.pause_reading()  # busy elsewhere: nothing is read from this socket meanwhile
                results = [game(r.number, w, b, "1-0") for r in rounds for w, b in r.pairs]
                along = asyncio.create_task(_read_to(reading, start + len(results)))
                for result in results:
                    await submit(arbiter, tracker.token, result)
                    assert (await reply_to(arbiter, result.id, timeout=30))["type"] == "ack"
                last = start + len(results)
                read_along = await along
                assert [m["seq"] for m in read_along] == list(range(start + 1, last + 1))  # every one, in order
                assert {m["type"] for m in read_along} == {"update"}
                standings = await asyncio.to_thread(_standings, tracker)
                assert standings["seq"] == last and read_along[-1]["standings"] == standings["standings"]
                for ws, _ in stalled:
                    assert ws.transport is not None
                    ws.transport.resume_reading()
                for ws, _ in stalled:
                    messages = await _read_to(ws, last)
                    _contract(start, messages)
                    assert messages[-1]["seq"] == last and messages[-1]["standings"] == standings["standings"]
                    assert sum(m["type"] == "snapshot" for m in messages) == 1  # fell behind once: one merge
                    assert len(messages) < len(results) // 2  # the updates it could not take were not queued
            finally:
                for ws, _ in [*stalled, (reading, None)]:
                    await ws.close()

    asyncio.run(burst())
