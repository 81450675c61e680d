"""Two workers share the partitions; one is killed with SIGKILL mid-stream; nothing is lost or counted twice."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import time
from collections import defaultdict

import pytest
from websockets.asyncio.client import connect

from tests.conftest import TEST_DATA, data_file
from tests.kafka_fixtures import (
    PARTITIONS,
    Broker,
    Process,
    interleaved,
    kafka_broker,  # noqa: F401  (a fixture)
    partition_of,
    read_topic,
)
from tests.reliability_log import record
from tests.wsclient import Message, recv, send
from tracker.core.standings import standings
from tracker.formats import TournamentFile, state_from
from tracker.formats.files import read_file
from tracker.kafka.producer import produce_events
from tracker.kafka.topics import DEAD_LETTERS, STANDINGS
from tracker.protocol import standings_json

pytestmark = pytest.mark.kafka

FILES = [
    data_file("sinquefield-cup-2021.trf"),
    data_file("fide-tec-exercise16-rr6.trf"),
    TEST_DATA / "byes.trf",
    TEST_DATA / "double.trf",
    TEST_DATA / "forfeits.trf",
    TEST_DATA / "three-one-zero.trf",
]
TIMEOUT = 90
TAKEOVER = "two workers share 6 tournaments; one SIGKILLed mid-stream, the other takes its partitions over"


def tournaments() -> dict[str, TournamentFile]:
    """The files under ids chosen so that every partition holds at least one tournament."""
    chosen: dict[str, TournamentFile] = {}
    for n, path in enumerate(FILES):
        want = n % PARTITIONS
        tid = next(
            f"failover-{path.stem}-{k}" for k in range(1000) if partition_of(f"failover-{path.stem}-{k}") == want
        )
        chosen[tid] = read_file(str(path), tid)
    return chosen


def assignment(worker: Process) -> set[int]:
    """The partitions of ``tracker-results`` a worker said it holds last."""
    lines = [line for line in worker.output if "assigned partitions" in line]
    found = re.search(r"\[([\d, ]*)\]", lines[-1]) if lines else None
    return {int(p) for p in found.group(1).split(",") if p.strip()} if found else set()


async def test_a_killed_workers_partitions_move_to_the_survivor_and_every_result_counts_once(
    kafka_broker: Broker,  # noqa: F811
) -> None:
    broker = kafka_broker
    first = broker.worker()
    second = broker.worker(wait=False)
    second.expect(r"assigned partitions \[")
    first.expect(r"assigned partitions \[")  # the rebalance that shares the partitions
    assert assignment(first) and assignment(second), broker.report()
    gateway = broker.gateway()
    files = tournaments()
    events = interleaved(files.values())
    final = {tid: 1 + len(tf.events) for tid, tf in files.items()}
    seen: dict[str, list[Message]] = defaultdict(list)
    async with connect(gateway.ws_url) as ws:
        for tid in files:
            await send(ws, {"type": "subscribe", "tournament": tid})
            assert (await recv(ws))["seq"] == 0
        producing = asyncio.create_task(produce_events(events, broker.url, rate=40))
        try:
            async with asyncio.timeout(TIMEOUT):
                killed = False
                while any(not seen[tid] or seen[tid][-1]["seq"] < last for tid, last in final.items()):
                    message = await recv(ws, TIMEOUT)
                    assert message["type"] == "update", message
                    seen[message["tournament"]].append(message)
                    if not killed and sum(map(len, seen.values())) >= len(events) // 4:
                        victim = first.proc.pid
                        first.proc.send_signal(signal.SIGKILL)  # mid-stream, no goodbye to the group
                        killed = True
        except TimeoutError:
            progress = {tid: (u[-1]["seq"] if u else 0, final[tid]) for tid, u in seen.items()}
            missing = sum(last - (seen[tid][-1]["seq"] if seen[tid] else 0) for tid, last in final.items())
            record(
                "distributed", TAKEOVER, tried=len(events), unit="events", lost=missing, outcome=f"stalled: {progress}"
            )
            raise AssertionError(f"standings stalled at {progress}\n{broker.report()}") from None
        assert await producing == len(events)
    assert killed and first.proc.wait(30) == -signal.SIGKILL and victim
    # the survivor says so once its group has rebalanced, which may come after the last update (generous wait)
    deadline = time.monotonic() + 120
    while assignment(second) != set(range(PARTITIONS)) and time.monotonic() < deadline:  # noqa: ASYNC110 (output lines)
        await asyncio.sleep(0.2)
    assert assignment(second) == set(range(PARTITIONS)), broker.report()
    for tid, tf in files.items():
        updates = seen[tid]
        assert [u["seq"] for u in updates] == list(range(1, final[tid] + 1)), tid  # no gap, no repeat
        # each event applied once, in the order it was produced, takeover or not
        assert [u["event"]["id"] for u in updates] == [e.id for e in (tf.opened, *tf.events)]
        rows = json.loads(json.dumps(standings_json(standings(state_from(tf)))["standings"]))
        assert updates[-1]["standings"] == rows, tid
    # On the topic itself, a re-delivered event may be produced again, but always with its own seq.
    by_event: dict[tuple[str, str], set[int]] = defaultdict(set)
    by_seq: dict[tuple[str, int], set[str]] = defaultdict(set)
    for published in await read_topic(broker, STANDINGS):
        update = json.loads(published.value)
        by_event[update["tournament"], update["event"]["id"]].add(update["seq"])
        by_seq[update["tournament"], update["seq"]].add(update["event"]["id"])
    assert all(len(seqs) == 1 for seqs in by_event.values())
    assert all(len(ids) == 1 for ids in by_seq.values())
    assert len(by_event) == len(events)
    assert await read_topic(broker, DEAD_LETTERS) == []
    record(
        "distributed",
        TAKEOVER,
        tried=len(events),
        unit="events",
        outcome="every tournament's seqs 1…N in the order produced, offline standings, each event once on the topic",
    )
