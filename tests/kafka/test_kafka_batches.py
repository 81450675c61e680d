"""The worker produces its records a batch per topic partition, in order, on the partitions Faust would pick.

See :mod:`tracker.kafka.batches`.  The broker test produces through a real
aiokafka producer with a small batch size (so a partition's records span
several batches) and reads the topic back; the retry test gives the batch
producer a producer whose broker refuses one batch once.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.producer.message_accumulator import BatchBuilder

from tests.kafka_fixtures import PARTITIONS, Broker, kafka_broker, partition_of, read_topic  # noqa: F401  (a fixture)
from tracker.kafka import batches as batching
from tracker.kafka.batches import BatchProducer, Record
from tracker.kafka.topics import CHANGELOG, SNAPSHOTS, STANDINGS, ensure_topics


async def test_records_land_per_partition_in_order_on_the_default_partitioners_partitions(
    kafka_broker: Broker,  # noqa: F811
) -> None:
    await ensure_topics(kafka_broker.url, PARTITIONS)
    producer = AIOKafkaProducer(bootstrap_servers=f"127.0.0.1:{kafka_broker.port}", acks="all", max_batch_size=1024)
    await producer.start()
    try:
        tournaments = [f"batch-{k}" for k in range(6)]
        keyed: list[Record] = [
            (STANDINGS, None, t.encode(), f"{t}/{seq}".encode() + b"." * 100) for seq in range(40) for t in tournaments
        ]
        named: list[Record] = [(CHANGELOG, 2, f"entry/{seq}".encode(), b"e" * 50) for seq in range(30)]
        sent = await BatchProducer(lambda: producer).send(keyed + named)
        async with asyncio.timeout(10):
            await sent.delivered()
    finally:
        await producer.stop()
    standings = await read_topic(kafka_broker, STANDINGS)
    assert len(standings) == len(keyed)
    for t in tournaments:
        mine = [r for r in standings if r.key == t.encode()]
        assert {r.partition for r in mine} == {partition_of(t)}
        assert [r.value for r in mine] == [value for _, _, key, value in keyed if key == t.encode()]
    changelog = await read_topic(kafka_broker, CHANGELOG)
    assert [(r.partition, r.key) for r in changelog] == [(2, f"entry/{seq}".encode()) for seq in range(30)]


class RefusingProducer:
    """An aiokafka producer's batch API whose broker refuses the ``refuse``-th batch once; records what it got."""

    def __init__(self, refuse: int) -> None:
        self.refuse = refuse
        self.calls = 0
        self.delivered: list[tuple[str, int, list[bytes]]] = []

    def create_batch(self) -> BatchBuilder:
        return BatchBuilder(300, 0)  # room for a few records each

    async def partitions_for(self, topic: str) -> set[int]:
        return set(range(PARTITIONS))

    async def send_batch(self, batch: BatchBuilder, topic: str, *, partition: int) -> asyncio.Future[Any]:
        self.calls += 1
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self.calls == self.refuse:
            done.set_exception(ConnectionError("broker unreachable"))
        else:
            keys = [record.key for record in _records(batch)]
            self.delivered.append((topic, partition, keys))
            done.set_result(None)
        return done


def _records(batch: BatchBuilder) -> list[Any]:
    from aiokafka.record.default_records import DefaultRecordBatch

    return list(DefaultRecordBatch(bytearray(batch._build())))


async def test_a_refused_batch_is_sent_again_with_the_later_batches_of_its_partition_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(batching, "RETRY_SECONDS", 0.01)
    producer = RefusingProducer(refuse=2)
    records: list[Record] = [(CHANGELOG, p, f"{p}/{seq}".encode(), b"x" * 40) for p in (0, 1) for seq in range(12)]
    sent = await BatchProducer(lambda: producer).send(records)
    async with asyncio.timeout(5):
        await sent.delivered()
    by_partition: dict[int, list[bytes]] = {0: [], 1: []}
    for _, partition, keys in producer.delivered:
        by_partition[partition] += keys
    everything = {p: [f"{p}/{seq}".encode() for seq in range(12)] for p in (0, 1)}
    assert by_partition[1] == everything[1]  # sent once: partition 0's trouble is not its own
    first = len(producer.delivered[0][2])  # partition 0's first batch went through; its second was refused
    assert 0 < first < 12
    assert by_partition[0][:first] == everything[0][:first]
    assert by_partition[0][-(12 - first) :] == everything[0][first:]  # the refused batch and the later ones, again
    assert len(by_partition[0]) > 12


async def test_a_snapshot_refused_after_a_newer_one_went_through_is_not_sent_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Snapshots: the newest per tournament wins on a compacted topic, so a stale one must not land last."""
    monkeypatch.setattr(batching, "RETRY_SECONDS", 0.01)
    producer = RefusingProducer(refuse=1)  # the older send's snapshot batch fails (aiokafka gave up on it)
    batches = BatchProducer(lambda: producer, latest_only={SNAPSHOTS})
    older = await batches.send([(SNAPSHOTS, 0, b"t", b"seq 7"), (CHANGELOG, 1, b"t/7", b"entry")])
    newer = await batches.send([(SNAPSHOTS, 0, b"t", b"seq 8")])
    async with asyncio.timeout(5):
        await newer.delivered()
        await older.delivered()
    snapshots = [keys for topic, _, keys in producer.delivered if topic == SNAPSHOTS]
    assert snapshots == [[b"t"]] and producer.calls == 3  # seq 8 once; seq 7 dropped, not sent after it
    assert [keys for topic, _, keys in producer.delivered if topic == CHANGELOG] == [[b"t/7"]]  # entries: never dropped
