"""The hub's resume, pinned down: a subscriber's missed updates, then the live ones, in seq order, bounded.

A real socket can only show an interleaving when every buffer on the way is
full; here the client's writes are held at will, so the order is checked on
every run.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tracker.gateway.hub import Hub
from tracker.gateway.metrics import Metrics
from tracker.protocol import StandingsPayload


def payload(seq: int, tournament: str = "t") -> StandingsPayload:
    return {
        "tournament": tournament,
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


def update(seq: int, size: int = 0) -> bytes:
    return json.dumps({"type": "update", "seq": seq, "pad": "x" * size}).encode()


class HeldClient:
    """A subscriber whose writes wait until the test lets them through; records what it was sent."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.closed: list[int] = []
        self.open = asyncio.Event()

    async def send(self, data: str) -> None:
        await self.open.wait()
        self.sent.append(json.loads(data))

    async def close(self, code: int, reason: str) -> None:
        self.closed.append(code)


def hub_with_updates(last: int, **limits: int) -> Hub:
    hub = Hub(Metrics(), **limits)
    hub.install(payload(1))
    for seq in range(2, last + 1):
        assert hub.publish(payload(seq), update(seq))
    return hub


async def test_updates_published_during_a_resume_follow_the_missed_ones() -> None:
    hub = hub_with_updates(10)
    client = HeldClient()
    resume = asyncio.create_task(hub.subscribe(client, "t", 3))  # type: ignore[arg-type]
    await asyncio.sleep(0)  # the resume is under way, held on its first write
    for seq in (11, 12, 13):
        hub.publish(payload(seq), update(seq))  # not written to the resuming client: queued behind its backlog
    assert client not in hub.channels["t"].subscribers
    client.open.set()
    await asyncio.wait_for(resume, 5)
    assert [m["seq"] for m in client.sent] == list(range(4, 14))
    assert client in hub.channels["t"].subscribers  # live from now on


async def test_a_resume_over_the_byte_cap_is_a_snapshot() -> None:
    hub = hub_with_updates(10, max_resume=3 * len(update(10, 500)))
    hub.channels["t"].history.updates.clear()
    hub.channels["t"].history.weight = 0
    for seq in range(11, 21):
        hub.publish(payload(seq), update(seq, 500))
    client = HeldClient()
    client.open.set()
    await hub.subscribe(client, "t", 16)  # type: ignore[arg-type]  # 4 missed updates: over the cap of 3
    assert [(m["type"], m["seq"]) for m in client.sent] == [("snapshot", 20)]
    again = HeldClient()
    again.open.set()
    await hub.subscribe(again, "t", 18)  # type: ignore[arg-type]  # 2 missed: under it
    assert [m["seq"] for m in again.sent] == [19, 20]


def test_the_history_is_bounded_in_bytes_as_well_as_in_count() -> None:
    size = len(update(39, 1000))  # two-digit seqs: every update below is this size
    hub = hub_with_updates(1, history=2000, history_bytes=10 * size)
    for seq in range(2, 40):
        hub.publish(payload(seq), update(seq, 1000))
    history = hub.channels["t"].history
    assert len(history.updates) == 10 and history.weight <= 10 * size
    assert [seq for seq, _ in history.updates] == list(range(30, 40))


async def test_a_resuming_client_that_falls_too_far_behind_is_dropped() -> None:
    hub = hub_with_updates(5, max_buffer=5000)
    client = HeldClient()
    resume = asyncio.create_task(hub.subscribe(client, "t", 1))  # type: ignore[arg-type]
    await asyncio.sleep(0)
    for seq in range(6, 20):
        hub.publish(payload(seq), update(seq, 1000))  # 14 KB queued behind the held resume: over 5,000 bytes
    client.open.set()
    await asyncio.wait_for(resume, 5)
    await hub.aclose()
    assert client.closed == [1008]
    assert client not in hub.channels["t"].subscribers and client not in hub.channels["t"].resuming
