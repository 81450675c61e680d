"""Distributed faults on the test broker: a worker killed, the broker frozen, a gateway killed.

Each test runs its own Tansu broker with real ``tracker worker`` and ``tracker gateway`` processes
(tests/kafka_fixtures.py), streams tournaments through it, breaks one piece mid-stream, and then
checks what a spectator and the topics saw:

- every subscriber got seqs 1…N of each tournament, in order, with no gap and no repeat;
- the last standings equal the offline standings of the file;
- on ``tracker-standings`` every event id has exactly one seq and every seq one event id (a result
  re-delivered after the fault is never counted twice), and nothing went to the dead letters.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tests.conftest import TEST_DATA, TOKEN, data_file
from tests.kafka_fixtures import (
    Broker,
    Gateway,
    interleaved,
    kafka_broker,  # noqa: F401  (a fixture)
    read_topic,
)
from tests.reliability_log import record
from tests.wsclient import Message, recv, reply_to, send, submit
from tracker.core.events import Event
from tracker.core.standings import standings
from tracker.formats import TournamentFile, state_from
from tracker.formats.files import read_file
from tracker.kafka.producer import produce_events
from tracker.kafka.topics import DEAD_LETTERS, STANDINGS
from tracker.protocol import standings_json

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(240)]

TIMEOUT = 90
FREEZE = 6.0  # seconds the broker is stopped
WORKER_KILLED = "worker SIGKILLed mid-stream, a new worker started (table rebuilt from the changelog)"
BROKER_FROZEN = f"broker frozen (SIGSTOP {FREEZE:g} s, SIGCONT) mid-stream, with submits at a gateway during the freeze"
GATEWAY_KILLED = "gateway SIGKILLed mid-stream; its 10 clients resubscribed on another gateway with since"


def load(name: Path, tid: str) -> TournamentFile:
    return read_file(str(name), tid)


def offline_rows(tf: TournamentFile) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(json.dumps(standings_json(standings(state_from(tf)))["standings"]))
    return rows


class Spectator:
    """A websocket client of one gateway that records every update per tournament and can move gateways."""

    def __init__(self, tournaments: dict[str, TournamentFile]) -> None:
        self.files = tournaments
        self.final = {tid: 1 + len(tf.events) for tid, tf in tournaments.items()}
        self.updates: dict[str, list[Message]] = defaultdict(list)
        self.snapshots_on_resume = 0
        self.ws: ClientConnection | None = None

    def last(self, tid: str) -> int:
        return self.updates[tid][-1]["seq"] if self.updates[tid] else 0

    def seen(self) -> int:
        return sum(len(u) for u in self.updates.values())

    def done(self) -> bool:
        return all(self.last(tid) >= last for tid, last in self.final.items())

    async def attach(self, gateway: Gateway, *, resume: bool) -> None:
        self.ws = await connect(gateway.ws_url, max_size=2**24)
        for tid in self.files:
            since = self.last(tid) if resume else None
            await send(
                self.ws, {"type": "subscribe", "tournament": tid, **({"since": since} if since is not None else {})}
            )
            if not resume:
                snapshot = await recv(self.ws, TIMEOUT)
                assert snapshot["type"] == "snapshot" and snapshot["seq"] == 0, snapshot

    async def next(self) -> Message:
        assert self.ws is not None
        message = await recv(self.ws, TIMEOUT)
        if message["type"] == "snapshot":
            self.snapshots_on_resume += 1
            return message
        assert message["type"] == "update", message
        self.updates[message["tournament"]].append(message)
        return message

    def check(self) -> None:
        """Seqs 1…N in order for every tournament, each event once, and the offline standings at the end."""
        for tid, tf in self.files.items():
            updates = self.updates[tid]
            assert [u["seq"] for u in updates] == list(range(1, self.final[tid] + 1)), (
                tid,
                [u["seq"] for u in updates],
            )
            assert [u["event"]["id"] for u in updates] == [e.id for e in (tf.opened, *tf.events)]
            assert updates[-1]["standings"] == offline_rows(tf), tid
        assert self.snapshots_on_resume == 0


def broker_report(broker: Broker) -> str:
    """What every process printed, the broker's own output and exit status first."""
    tansu = broker.process
    head = f"--- tansu (exit {tansu.proc.poll()}):\n" + "".join(tansu.output[-60:])
    return head + "\n" + broker.report()


async def topics_count_each_event_once(broker: Broker, expected: int) -> int:
    """On ``tracker-standings``: one seq per event id, one event id per seq; no dead letters."""
    by_event: dict[tuple[str, str], set[int]] = defaultdict(set)
    by_seq: dict[tuple[str, int], set[str]] = defaultdict(set)
    assert broker.process.proc.poll() is None, "the broker died:\n" + broker_report(broker)
    records = await read_topic(broker, STANDINGS)
    for rec in records:
        update = json.loads(rec.value)
        by_event[update["tournament"], update["event"]["id"]].add(update["seq"])
        by_seq[update["tournament"], update["seq"]].add(update["event"]["id"])
    assert all(len(seqs) == 1 for seqs in by_event.values()), "an event was given two seqs (counted twice)"
    assert all(len(ids) == 1 for ids in by_seq.values()), "one seq was given to two events"
    assert len(by_event) == expected
    assert await read_topic(broker, DEAD_LETTERS) == []
    return len(records)


async def stream(
    spectator: Spectator, broker: Broker, events: list[Event], rate: float, fault_at: int, fault: Any, what: str
) -> None:
    """Produce ``events`` at ``rate``; once the spectator has seen ``fault_at`` updates, run ``fault()``.

    A stream that stalls is written to the reliability log as a loss (results the broker acknowledged
    that never reached the standings) before the test fails: the report must show it, not a retry.
    """
    producing = asyncio.create_task(produce_events(events, broker.url, rate=rate))
    faulted = False
    try:
        async with asyncio.timeout(TIMEOUT * 2):
            while not spectator.done():
                try:
                    await spectator.next()
                except ConnectionClosed:
                    if not faulted:
                        raise
                    await fault.reconnect()
                    continue
                if not faulted and spectator.seen() >= fault_at:
                    faulted = True
                    await fault()
    except TimeoutError:
        progress = {tid: (spectator.last(tid), last) for tid, last in spectator.final.items()}
        missing = sum(last - seen for seen, last in progress.values())
        record(
            "distributed",
            f"{what} (a stalled run)",
            tried=len(events),
            unit="events",
            lost=missing,
            outcome=f"stalled: {missing} results the broker acknowledged never reached the standings in "
            f"{2 * TIMEOUT} s ({progress})",
        )
        raise AssertionError(f"standings stalled at {progress}\n{broker_report(broker)}") from None
    assert faulted
    assert await producing == len(events)


def test_a_killed_worker_restarted_recovers_its_table_from_the_changelog(kafka_broker: Broker) -> None:  # noqa: F811
    broker = kafka_broker
    worker = broker.worker()
    gateway = broker.gateway()
    files = {
        tid: load(path, tid)
        for tid, path in (
            ("wk-sinquefield", data_file("sinquefield-cup-2021.trf")),
            ("wk-double", TEST_DATA / "double.trf"),
        )
    }
    events = interleaved(files.values())
    spectator = Spectator(files)

    class KillAndRestart:
        async def __call__(self) -> None:
            worker.proc.send_signal(signal.SIGKILL)  # no goodbye: its uncommitted offsets are re-delivered
            assert await asyncio.to_thread(worker.proc.wait, 10) == -signal.SIGKILL
            broker.started.remove(worker)
            await asyncio.to_thread(
                broker.worker
            )  # a new worker, a new local store: the table comes from the changelog

        async def reconnect(self) -> None:
            raise AssertionError("the gateway closed the spectator")

    async def scenario() -> int:
        await spectator.attach(gateway, resume=False)
        await stream(
            spectator, broker, events, rate=30, fault_at=len(events) // 3, fault=KillAndRestart(), what=WORKER_KILLED
        )
        spectator.check()
        return await topics_count_each_event_once(broker, len(events))

    records = asyncio.run(scenario())
    record(
        "distributed",
        WORKER_KILLED,
        tried=len(events),
        unit="events",
        outcome=(
            "seqs 1…N without gap or repeat, offline standings, "
            f"each event once on the standings topic ({records} records)"
        ),
    )


def test_a_frozen_broker_loses_and_double_counts_nothing(kafka_broker: Broker) -> None:  # noqa: F811
    broker = kafka_broker
    broker.worker()
    gateway = broker.gateway()
    files = {
        tid: load(path, tid)
        for tid, path in (
            ("fz-sinquefield", data_file("sinquefield-cup-2021.trf")),
            ("fz-forfeits", TEST_DATA / "forfeits.trf"),
        )
    }
    events = interleaved(files.values())
    arbiter_file = load(data_file("fide-tec-exercise16-rr6.trf"), "fz-arbiter")
    arbiter_events = [arbiter_file.opened, *arbiter_file.events[:5]]
    spectator = Spectator(files)
    replies: dict[str, Message] = {}
    pause = FREEZE

    class Freeze:
        async def __call__(self) -> None:
            broker.process.proc.send_signal(signal.SIGSTOP)
            try:
                # while the broker is frozen an arbiter submits at the gateway: no ack may come before it is durable
                async with connect(gateway.ws_url) as arbiter:
                    for event in arbiter_events:
                        await submit(arbiter, TOKEN, event)
                    early: list[Message] = []
                    try:
                        async with asyncio.timeout(pause):  # the length of the freeze: a fault, not a wait
                            early.append(await recv(arbiter))
                    except TimeoutError:
                        pass
                    assert not early, f"a reply came while the broker was frozen: {early}"
                    broker.process.proc.send_signal(signal.SIGCONT)
                    for event in arbiter_events:
                        replies[event.id] = await reply_to(arbiter, event.id, timeout=TIMEOUT)
            finally:
                broker.process.proc.send_signal(signal.SIGCONT)

        async def reconnect(self) -> None:
            raise AssertionError("the gateway closed the spectator")

    async def scenario() -> int:
        await spectator.attach(gateway, resume=False)
        await stream(spectator, broker, events, rate=20, fault_at=len(events) // 3, fault=Freeze(), what=BROKER_FROZEN)
        spectator.check()
        return await topics_count_each_event_once(broker, len(events) + len(arbiter_events))

    asyncio.run(scenario())
    assert [r["type"] for r in replies.values()] == ["ack"] * len(arbiter_events), replies
    assert [r["seq"] for r in replies.values()] == list(range(1, len(arbiter_events) + 1))
    alive = [p.name for p in broker.started if p.proc.poll() is None]
    assert len(alive) == len(broker.started), f"a process died during the freeze: {broker.report()}"
    record(
        "distributed",
        BROKER_FROZEN,
        tried=len(events) + len(arbiter_events),
        unit="events",
        outcome=(
            "no reply before the broker was back; every submit then acknowledged with its seq; "
            "no gap, no repeat, each event once; workers and gateway carried on"
        ),
    )


def test_clients_of_a_killed_gateway_resume_on_another_without_a_gap(kafka_broker: Broker) -> None:  # noqa: F811
    broker = kafka_broker
    broker.worker()
    first = broker.gateway()
    second = broker.gateway()
    files = {
        tid: load(path, tid)
        for tid, path in (
            ("gw-sinquefield", data_file("sinquefield-cup-2021.trf")),
            ("gw-byes", TEST_DATA / "byes.trf"),
        )
    }
    events = interleaved(files.values())
    spectators = [Spectator(files) for _ in range(10)]
    leader = spectators[0]
    moved: list[int] = []

    class KillGateway:
        async def __call__(self) -> None:
            first.process.proc.send_signal(signal.SIGKILL)
            assert await asyncio.to_thread(first.process.proc.wait, 10) == -signal.SIGKILL

        async def reconnect(self) -> None:
            await leader.attach(second, resume=True)
            moved.append(0)

    async def follower(spectator: Spectator) -> None:
        """The other spectators: read until the gateway dies, then resume on the other one with since."""
        async with asyncio.timeout(TIMEOUT * 2):
            while not spectator.done():
                try:
                    await spectator.next()
                except ConnectionClosed:
                    await spectator.attach(second, resume=True)
                    moved.append(0)

    async def scenario() -> int:
        for spectator in spectators:
            await spectator.attach(first, resume=False)
        others = [asyncio.create_task(follower(s)) for s in spectators[1:]]
        await stream(
            leader, broker, events, rate=20, fault_at=len(events) // 3, fault=KillGateway(), what=GATEWAY_KILLED
        )
        await asyncio.gather(*others)
        for spectator in spectators:
            spectator.check()
        return await topics_count_each_event_once(broker, len(events))

    asyncio.run(scenario())
    assert len(moved) == len(spectators)
    record(
        "distributed",
        GATEWAY_KILLED,
        tried=len(spectators),
        unit="clients",
        outcome=f"every client got seqs 1…N of {len(files)} tournaments without a gap or a snapshot; offline standings",
    )
