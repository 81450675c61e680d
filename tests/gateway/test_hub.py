"""The hub's resume, pinned down: a subscriber's missed updates, then the live ones, in seq order, bounded.

A real socket can only show an interleaving when every buffer on the way is
full; here the client's writes are held at will, so the order is checked on
every run.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import msgspec
import pytest

from bench.scenario import tournament
from tests.protocol.feeds import feed
from tracker.gateway.history import BLOCK
from tracker.gateway.hub import Hub
from tracker.gateway.metrics import Metrics
from tracker.protocol import StandingsPayload, v1_update


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


def real_hub(players: int = 10, **limits: Any) -> tuple[Hub, list[tuple[StandingsPayload, bytes]]]:
    """A hub fed every update of a whole ``players``-player round robin, and those updates."""
    opened, results = tournament("rr", players, seed=5)
    updates = feed([opened, *results])
    hub = Hub(Metrics(), **limits)
    for p, message in updates:
        assert hub.publish(p, message)
    return hub, updates


async def resume(hub: Hub, since: int | None, *, delta: bool = False, tournament: str = "rr") -> list[bytes]:
    client = HeldClient()
    client.open.set()
    raw: list[bytes] = []
    client.sent = raw  # type: ignore[assignment]
    client.send = lambda data: _keep(raw, data)  # type: ignore[method-assign]
    await hub.subscribe(client, tournament, since, delta=delta)  # type: ignore[arg-type]
    hub.unsubscribe(client)  # type: ignore[arg-type]  # a held client cannot take live broadcasts
    return raw


async def _keep(raw: list[bytes], data: str) -> None:
    raw.append(data.encode())


async def test_a_resume_over_the_byte_cap_is_a_snapshot() -> None:
    _, updates = real_hub()
    cap = 3 * max(len(m) for _, m in updates)
    hub, _ = real_hub(max_resume=cap)
    last = updates[-1][0]["seq"]
    (first,) = await resume(hub, last - 4)  # 4 missed full updates: over the cap of 3
    assert json.loads(first)["type"] == "snapshot" and json.loads(first)["seq"] == last
    assert await resume(hub, last - 2) == [v1_update(m) for _, m in updates[-2:]]  # under it: v1's bytes, rebuilt
    deltas = await resume(hub, last - 4, delta=True)  # the same 4 as deltas weigh less: under the cap
    assert [json.loads(d)["seq"] for d in deltas] == list(range(last - 3, last + 1))
    assert all(json.loads(d)["delta"] is True for d in deltas)


async def test_the_history_is_bounded_in_bytes_and_full_resumes_rebuild_exactly_the_old_bytes() -> None:
    hub, updates = real_hub(16, history_bytes=20_000)
    history = hub.channels["rr"].history
    weights = [len(d) for _, d in history]
    assert history.weight == sum(weights) <= 20_000
    kept = [seq for seq, _ in history]
    assert kept == list(range(kept[0], updates[-1][0]["seq"] + 1)) and kept[0] > 2  # the newest, oldest dropped
    assert history.base_seq == kept[0] - 1
    since = kept[0] - 1
    assert await resume(hub, since) == [v1_update(m) for _, m in updates[since:]]  # rebuilt from the trimmed base
    (snapshot,) = await resume(hub, since - 1)  # no longer kept
    assert json.loads(snapshot)["type"] == "snapshot"
    (snapshot,) = await resume(hub, since - 1, delta=True)
    assert json.loads(snapshot)["type"] == "snapshot"


async def test_older_deltas_are_kept_compressed_and_read_back_byte_for_byte() -> None:
    opened, results = tournament("rr", 10, seed=5)
    hub = Hub(Metrics())
    published: list[tuple[int, bytes]] = []
    for p, message in feed([opened, *results]):
        assert hub.publish(p, message)
        seq, delta, _ = hub.channels["rr"].history.kept[-1]  # the newest delta is kept as it was sent
        published.append((seq, delta))
    history = hub.channels["rr"].history
    assert list(history) == published and history.held == len(published) == 46
    assert history.weight == sum(len(d) for _, d in published)
    stored = sum(len(block.data) for block in history.sealed) + sum(len(d) for _, d, _ in history.kept)
    assert len(history.kept) <= BLOCK and stored < history.weight / 3  # the sealed blocks: a fifth of their bytes
    assert [(seq, d) for seq, d, _ in hub.recent("rr", 30)] == published[-30:]
    assert await resume(hub, 3, delta=True) == [d for _, d in published[3:]]


def test_listing_compacted_tournaments_decodes_none_of_their_snapshots(monkeypatch: pytest.MonkeyPatch) -> None:
    hub, _ = real_hub(10)
    opened, results = tournament("live", 10, seed=6)
    for p, message in feed([opened, *results[:7]]):
        assert hub.publish(p, message)
    before = hub.listing()
    assert [(t["id"], t["seq"], t["games_played"]) for t in before] == [("live", 8, 7), ("rr", 46, 45)]
    assert hub.compact() == 1 and hub.channels["rr"].compacted

    def no_decompress(data: bytes) -> bytes:
        raise AssertionError("a listing decompressed a snapshot")

    monkeypatch.setattr("tracker.gateway.channel.zlib.decompress", no_decompress)
    assert hub.listing() == before  # /api/tournaments with ten thousand finished tournaments decodes nothing


async def test_a_finished_tournament_is_compacted_to_its_snapshot_and_newest_deltas() -> None:
    hub, updates = real_hub(10, finished_bytes=1500)
    channel = hub.channels["rr"]
    snapshot = channel.snapshot()
    recent = hub.recent("rr", 30)
    assert hub.compact(time.monotonic()) == 0  # not due yet: a resume right after the last game still replays
    assert hub.compact() == 1
    assert channel.compacted and channel.history.base is None and channel.history.weight <= 1500
    assert channel.snapshot() == snapshot
    assert msgspec.json.encode(channel.payload) == msgspec.json.encode(updates[-1][0])
    assert len(hub.open_channels()) == 1 and list(hub.open_channels()) == ["rr"]  # nothing decoded to count
    assert msgspec.json.encode(hub.open_channels()["rr"]) == msgspec.json.encode(updates[-1][0])
    kept = hub.recent("rr", 30)
    assert kept == recent[-len(kept) :] and kept and all(json.loads(m)["summary"] for _, m, _ in kept)
    last = updates[-1][0]["seq"]
    assert [json.loads(m)["type"] for m in await resume(hub, last - 1)] == ["snapshot"]  # no full updates kept
    assert await resume(hub, last - 1, delta=True) == [kept[-1][1]]
    corrected = dict(updates[-1][0], seq=last + 1)
    assert hub.publish(corrected, updates[-1][1].replace(f'"seq":{last}'.encode(), f'"seq":{last + 1}'.encode()))
    assert not channel.compacted and channel.payload == corrected  # changed after it finished: live again


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


async def test_resuming_subscribers_each_get_the_flavour_they_asked_for() -> None:
    hub, updates = real_hub(10)
    last = updates[-1][0]["seq"]
    full, delta = HeldClient(), HeldClient()
    resumes = [
        asyncio.create_task(hub.subscribe(full, "rr", last - 2)),  # type: ignore[arg-type]
        asyncio.create_task(hub.subscribe(delta, "rr", last - 2, delta=True)),  # type: ignore[arg-type]
    ]
    await asyncio.sleep(0)  # both held on their first write
    extra = dict(updates[-1][0], seq=last + 1)
    message = updates[-1][1].replace(f'"seq":{last}'.encode(), f'"seq":{last + 1}'.encode())
    hub.publish(extra, message)  # queued behind each one's backlog, in its own flavour
    for client in (full, delta):
        client.open.set()
    await asyncio.wait_for(asyncio.gather(*resumes), 5)
    assert [(m["seq"], "delta" in m) for m in full.sent] == [(last - 1, False), (last, False), (last + 1, False)]
    assert [(m["seq"], m.get("delta")) for m in delta.sent] == [(last - 1, True), (last, True), (last + 1, True)]
    assert delta.sent[-1]["rows"] == [] and "standings" not in delta.sent[-1]  # nothing in the standings moved
    await hub.aclose()


async def test_a_gap_in_what_the_hub_is_given_starts_its_history_over() -> None:
    _, updates = real_hub(10)
    hub = Hub(Metrics())
    hub.install(updates[4][0])  # at seq 5, as after a journal replay
    assert hub.publish(*updates[5])
    assert hub.publish(*updates[7])  # seq 8: this hub never saw seq 7
    history = hub.channels["rr"].history
    assert history.base_seq == 8 and list(history) == []
    (snapshot,) = await resume(hub, 6, delta=True)  # the deltas kept no longer chain from 6
    assert json.loads(snapshot)["type"] == "snapshot" and json.loads(snapshot)["seq"] == 8
    assert hub.publish(*updates[8])
    assert await resume(hub, 8) == [v1_update(updates[8][1])]  # rebuilt from the new base
