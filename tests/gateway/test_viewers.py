"""No viewer can starve, leak or swell the broadcast (issue 27): each reproduction, without the token, against
a real ``tracker up`` (or the hub itself), then what holds instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import msgspec
from websockets.asyncio.client import ClientConnection, connect

from tests.builders import berger, opened
from tests.conftest import RunningTracker
from tests.gateway.test_limits import rss_mib
from tests.wsclient import reply_to, send, submit
from tracker.core.events import Event, ResultRecorded

Factory = Callable[..., RunningTracker]


def round_robin(tid: str, n: int, results: int) -> list[Event]:
    """An ``n``-player round robin opened and its first ``results`` games decided."""
    events: list[Event] = [msgspec.structs.replace(opened(n), tournament=tid, id=f"{tid}/open")]
    picks = ["1-0", "1/2-1/2", "0-1"]
    for rnd in berger(n):
        for w, b in rnd.pairs:
            if len(events) > results:
                return events
            events.append(ResultRecorded(f"{tid}/r{rnd.number}/{w}-{b}", tid, rnd.number, w, b, picks[(w + b) % 3]))
    return events


async def fill(server: RunningTracker, events: list[Event]) -> int:
    async with connect(server.ws_url, max_size=None) as ws:
        for event in events:
            await submit(ws, server.token, event)
        seq = 0
        for event in events:
            reply = await reply_to(ws, event.id, timeout=60)
            assert reply["type"] == "ack", reply
            seq = reply["seq"]
    return seq


async def many(server: RunningTracker, count: int, message: dict[str, object]) -> list[ClientConnection]:
    """``count`` connections (spread over loopback addresses) that each send ``message`` once."""
    conns = []
    for k in range(count):
        ws = await connect(server.ws_url, local_addr=(f"127.0.0.{2 + k % 8}", 0), max_size=None)
        await send(ws, message)
        conns.append(ws)
    return conns


async def test_a_thousand_delayed_resumes_do_not_swell_the_server(tracker_server: RunningTracker) -> None:
    """Reproduction (issue 27, item 3): 1,000 ``since: 1, delay: 600`` subscribers took the server from 39 MB to
    855 MB, and it stayed there after they closed.  Now what is delayed is read from the history when due."""
    tid = "delayed-cup"
    await fill(tracker_server, round_robin(tid, 24, 120))
    pid = tracker_server.proc.pid
    before = rss_mib(pid)
    conns = await many(tracker_server, 1000, {"type": "subscribe", "tournament": tid, "since": 1, "delay": 600})
    await asyncio.sleep(2)  # what the server does with them, it does now
    during = rss_mib(pid)
    for ws in conns:
        await ws.close()
    assert during - before < 64, f"1,000 delayed resumes grew the server by {during - before:.0f} MiB"
    await asyncio.sleep(1)
    after = rss_mib(pid)
    assert after - before < 64, f"and {after - before:.0f} MiB stayed after they closed"
