"""Protocol v1.1 against a real ``tracker up``: v1 subscribers get v1's bytes, delta subscribers rebuild them.

A whole tournament is replayed while three clients follow it: one that asks
for nothing (protocol v1), one that asks for deltas over a raw websocket, and
:class:`TrackerClient` (deltas, applied and checked inside).  And a scripted
server shows the client resubscribing for a snapshot when a digest does not match.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import aclosing
from typing import Any

import msgspec
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve

from tests.conftest import RunningTracker, data_file
from tests.protocol.feeds import feed
from tracker.client import TrackerClient, replay_ws
from tracker.formats.files import read_file
from tracker.gateway.channel import empty_payload
from tracker.protocol import apply_delta, encode, snapshot_message, standings_digest, update_delta, v1_update

SINQUEFIELD = data_file("sinquefield-cup-2021.trf")


async def collect(url: str, subscribe: dict[str, Any], last: int) -> list[bytes]:
    """Every frame after the snapshot up to seq ``last``, as the bytes the server sent."""
    frames: list[bytes] = []
    async with connect(url, compression=None) as ws:
        await ws.send(json.dumps(subscribe))
        while True:
            raw = await asyncio.wait_for(ws.recv(), 30)
            data = raw.encode() if isinstance(raw, str) else raw
            body = json.loads(data)
            if body["type"] == "update":
                frames.append(data)
                if body["seq"] == last:
                    return frames


async def test_v1_subscribers_get_v1_bytes_and_delta_subscribers_rebuild_the_same_standings(
    tracker_server: RunningTracker,
) -> None:
    tf = read_file(str(SINQUEFIELD))
    tid = tf.opened.tournament
    expected = feed([tf.opened, *tf.events])
    last = expected[-1][0]["seq"]
    url = tracker_server.ws_url
    full = asyncio.create_task(collect(url, {"type": "subscribe", "tournament": tid}, last))
    deltas = asyncio.create_task(collect(url, {"type": "subscribe", "tournament": tid, "updates": "delta"}, last))

    async def follow() -> tuple[list[Any], int]:
        async with TrackerClient(url) as client, aclosing(client.updates(tid)) as stream:
            seen = []
            async for message in stream:
                seen.append(message)
                if message["seq"] == last:
                    return seen, client.resyncs
        raise AssertionError("the stream ended")

    followed = asyncio.create_task(follow())
    await asyncio.sleep(0.3)  # all three subscribed (to the empty channel) before the first event
    await replay_ws(tf, url, tracker_server.token)
    full_frames, delta_frames, (messages, resyncs) = await asyncio.wait_for(asyncio.gather(full, deltas, followed), 60)
    assert full_frames == [v1_update(message) for _, message in expected]  # byte for byte what protocol v1 sent
    standings: dict[str, Any] = dict(empty_payload(tid))
    for frame, (payload, message) in zip(delta_frames, expected, strict=True):
        delta = json.loads(frame)
        assert delta["delta"] is True and (delta["seq"] == 1 or len(frame) < len(message) / 2)
        assert delta["summary_said"] == json.loads(message)["summary_said"]  # the summary as phrases
        standings = apply_delta(standings, delta)
        assert standings_digest(standings) == delta["digest"]
        assert msgspec.json.encode(standings) == msgspec.json.encode(payload)
    assert resyncs == 0
    updates = [m for m in messages if m["type"] == "update"]
    assert [m["seq"] for m in updates] == list(range(1, last + 1))
    for got, (_, message) in zip(updates, expected, strict=True):
        assert json.loads(encode(got)) == json.loads(v1_update(message))


async def test_the_client_resubscribes_for_a_snapshot_when_a_digest_does_not_match() -> None:
    updates = feed([read_file(str(SINQUEFIELD)).opened, *read_file(str(SINQUEFIELD)).events[:3]])
    (p1, _), (p2, m2), (p3, m3), (p4, _) = updates
    good = update_delta(p1, p2, m2, standings_digest(p2))
    bad = update_delta(p2, p3, m3, standings_digest(p3) ^ 1)  # a digest the standings do not have
    subscribes: list[dict[str, Any]] = []

    async def script(ws: ServerConnection) -> None:
        async for raw in ws:
            subscribes.append(json.loads(raw))
            if len(subscribes) == 1:
                await ws.send(snapshot_message(p1).decode())
                await ws.send(good.decode())
                await ws.send(bad.decode())
            else:
                await ws.send(snapshot_message(p4).decode())

    async with serve(script, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        async with TrackerClient(f"ws://127.0.0.1:{port}") as client, aclosing(client.updates("t")) as stream:
            seen = []
            async for message in stream:
                seen.append((message["type"], message["seq"]))
                if len(seen) == 3:
                    break
            assert client.resyncs == 1
    assert seen == [("snapshot", 1), ("update", 2), ("snapshot", 4)]
    assert [s.get("updates") for s in subscribes] == ["delta", "delta"] and subscribes[1].get("since") is None
