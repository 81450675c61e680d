"""Bursts merge instead of queueing, and every subscriber still sees a contiguous history or a snapshot to start from.

The hub's feeds walk their subscribers a few at a time here (``fanout_slice``),
so a burst published faster than the walk leaves most subscribers behind;
some subscribers are held "still being written" (unsent bytes in their
transport) for part of it.  What each one was written is read back frame by
frame and checked against the seq contract (tracker/gateway/fanout.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import msgspec
from websockets.protocol import OPEN

from bench.scenario import tournament
from tests.protocol.feeds import feed
from tracker.gateway.hub import Hub
from tracker.gateway.metrics import Metrics
from tracker.protocol import StandingsPayload, apply_delta, standings_digest


class Transport:
    """A transport that keeps what it is written; ``held`` bytes pretend to be still unsent."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.held = 0

    def write(self, data: bytes) -> None:
        self.data += data

    def get_write_buffer_size(self) -> int:
        return self.held

    def is_closing(self) -> bool:
        return False


class Protocol:
    state = OPEN
    expect_continuation_frame = False

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.extensions: list[Any] = []  # no permessage-deflate: the frames are read back as they are


class Connection:
    """What the hub's feeds look at of a websockets server connection, and what they were sent."""

    def __init__(self) -> None:
        self.transport = Transport()
        self.protocol = Protocol()
        self.send_in_progress = None
        self.logger = logging.getLogger("test")
        self.sent: list[str] = []  # what a subscribe sent through websockets' own path (its snapshot)

    async def send(self, data: str) -> None:
        self.sent.append(data)

    def messages(self) -> list[dict[str, Any]]:
        """Every text frame written to the transport, decoded."""
        out, data, at = [], bytes(self.transport.data), 0
        while at < len(data):
            assert data[at] == 0x81, "one unmasked text frame per message"
            size, at = data[at + 1] & 0x7F, at + 2
            if size == 126:
                size, at = int.from_bytes(data[at : at + 2]), at + 2
            elif size == 127:
                size, at = int.from_bytes(data[at : at + 8]), at + 8
            out.append(json.loads(data[at : at + size]))
            at += size
        return out


def updates() -> list[tuple[StandingsPayload, bytes]]:
    opened, results = tournament("burst", 10, seed=3)
    return feed([opened, *results[:20]])


async def settled(hub: Hub) -> None:
    """Until every feed has written every subscriber the newest (the walk and the looks at held ones)."""
    async with asyncio.timeout(5):
        while any(  # noqa: ASYNC110 (the walk is callbacks on the loop: no event to wait on)
            feed.owed or feed.waiting or any(f.alive and f.seq < feed.seq for f in feed.ring)
            for channel in hub.channels.values()
            for feed in channel.feeds()
        ):
            await asyncio.sleep(0.01)


def check_contract(first: dict[str, Any], written: list[dict[str, Any]], final: StandingsPayload) -> int:
    """The seq contract on what one subscriber got after its snapshot ``first``; returns how many merges."""
    plain = msgspec.json.Decoder()
    standings: dict[str, Any] = plain.decode(msgspec.json.encode(first))
    seq, merges, after_snapshot = first["seq"], 0, False
    for message in written:
        if message["type"] == "snapshot":
            assert message["seq"] > seq, "a snapshot only ever moves a subscriber forward"
            standings, seq, after_snapshot = message, message["seq"], True
            merges += 1
            continue
        assert message["type"] == "update" and message["seq"] == seq + 1, (seq, message["seq"], after_snapshot)
        standings = apply_delta(standings, message) if message.get("delta") else message
        if message.get("delta"):
            assert standings_digest(standings) == message["digest"]
        seq, after_snapshot = message["seq"], False
    assert seq == final["seq"]
    assert [row["points"] for row in standings["standings"]] == [row["points"] for row in final["standings"]]
    return merges


async def test_a_burst_faster_than_the_walk_is_merged_and_every_subscriber_keeps_the_seq_contract() -> None:
    feed_updates = updates()
    hub = Hub(Metrics(), fanout_slice=4)
    hub.publish(*feed_updates[0])
    conns = [Connection() for _ in range(30)]
    for k, conn in enumerate(conns):
        await hub.subscribe(conn, "burst", None, delta=k % 3 != 0)  # type: ignore[arg-type]  # a stand-in
    held = conns[5:10]
    for conn in held:
        conn.transport.held = 100  # still being written: nothing more until it drains
    for k, (payload, message) in enumerate(feed_updates[1:], start=1):
        assert hub.publish(payload, message)  # each publish writes one slice at once; the walk goes on later
        if k % 4 == 0:
            await asyncio.sleep(0)  # the walk gets a few turns between some of them, not between all
        if k == 12:
            for conn in held:
                conn.transport.held = 0  # drained: merged up to the newest at the next look
    await settled(hub)
    final = feed_updates[-1][0]
    merges = []
    for conn in conns:
        (first,) = (json.loads(text) for text in conn.sent)
        assert first["type"] == "snapshot" and first["seq"] == 1
        written = conn.messages()
        assert len(written) < 2 * (len(feed_updates) - 1), "a burst is merged, not queued"
        merges.append(check_contract(first, written, final))
    assert all(m > 0 for m in merges[5:10]), "the ones still being written were merged"
    assert sum(merges) > 10
    assert hub.metrics.counters["tracker_updates_merged_total"] == sum(merges)


async def test_a_subscriber_behind_gets_its_update_before_a_message_about_it() -> None:
    feed_updates = updates()
    hub = Hub(Metrics(), fanout_slice=1)
    hub.publish(*feed_updates[0])
    conns = [Connection() for _ in range(3)]
    for conn in conns:
        await hub.subscribe(conn, "burst", None, delta=True)  # type: ignore[arg-type]
    hub.publish(*feed_updates[1])  # one slice at once: only the first subscriber has it yet
    stakes = b'{"type":"stakes","tournament":"burst","seq":2}'
    hub.deliver("burst", conns, stakes)  # type: ignore[arg-type]
    for conn in conns:
        assert [(m["type"], m["seq"]) for m in conn.messages()] == [("update", 2), ("stakes", 2)]
    await settled(hub)
