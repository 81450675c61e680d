"""A worker applies every results record once, in order, whatever Faust does with offsets; it publishes after flushing.

Faust 0.15.3 drops records it fetched around a rebalance and can commit
past them.  The worker does not trust the committed offset: its
``progress`` table says, per results partition, which record comes next
(see :class:`tracker.kafka.progress.Progress`).  The unit tests drive that
bookkeeping with a fake consumer; the broker tests make a real worker start
from a committed offset that lies beyond records it never applied (what
Faust can leave behind) and check that every record is applied all the same.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from faust.types import TP

from tests.conftest import data_file
from tests.kafka_fixtures import Broker, kafka_broker, partition_of, read_topic  # noqa: F401  (a fixture)
from tests.reliability_log import record
from tracker.core.standings import standings
from tracker.formats import state_from
from tracker.formats.files import read_file
from tracker.kafka import publisher as publishing
from tracker.kafka.batches import Delivery, Record
from tracker.kafka.processing import Outcome
from tracker.kafka.producer import produce_events
from tracker.kafka.progress import Admit, Progress
from tracker.kafka.publisher import Publisher
from tracker.kafka.topics import APP_ID, DEAD_LETTERS, RESULTS, STANDINGS
from tracker.protocol import standings_json

RESULTS_3 = TP(RESULTS, 3)
RESULTS_5 = TP(RESULTS, 5)


class FakeConsumer:
    """What :class:`Progress` asks of Faust's consumer: seeks (recorded) and each partition's first offset."""

    def __init__(self, earliest: int = 0) -> None:
        self.earliest = earliest
        self.seeks: list[tuple[TP, int]] = []

    async def seek(self, tp: TP, offset: int) -> None:
        self.seeks.append((tp, offset))

    async def earliest_offsets(self, *tps: TP) -> dict[TP, int]:
        return dict.fromkeys(tps, self.earliest)


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


CONSUMERS: dict[int, FakeConsumer] = {}


def progress_with(
    table: dict[bytes, bytes] | None = None, earliest: int = 0, retry: float = 60.0, clock: Clock | None = None
) -> Progress:
    consumer = FakeConsumer(earliest)
    progress = Progress(lambda: consumer, {} if table is None else table, retry=retry, clock=clock or Clock())
    CONSUMERS[id(progress)] = consumer
    return progress


def seeks(progress: Progress) -> list[tuple[TP, int]]:
    return CONSUMERS[id(progress)].seeks


async def run(progress: Progress, tp: TP, offset: int) -> Admit:
    """Admit the record at ``offset``, finish it and publish what it led to, as the agent and publisher do."""
    admitted = await progress.admit(tp, offset)
    progress.done(tp, offset, admitted)
    if admitted is not Admit.SKIP:
        progress.published(tp, offset, progress.generation)
    return admitted


async def test_records_in_order_move_the_partition_on_and_are_stored_per_partition() -> None:
    table: dict[bytes, bytes] = {}
    progress = progress_with(table)
    assert [await run(progress, RESULTS_3, n) for n in range(3)] == [Admit.NEXT] * 3
    assert await run(progress, RESULTS_5, 0) is Admit.NEXT
    assert table == {b"3": b"3", b"5": b"1"}
    assert progress.committable(RESULTS_3) == 3
    assert progress.committable(RESULTS_5) == 1
    assert seeks(progress) == []


async def test_a_batch_stores_each_partitions_position_once_when_asked_and_only_if_it_moved() -> None:
    table: dict[bytes, bytes] = {b"5": b"4"}
    progress = progress_with(table)
    for tp, offset in ((RESULTS_3, 0), (RESULTS_3, 1), (RESULTS_5, 2)):  # RESULTS_5's record is a re-delivery
        progress.done(tp, offset, await progress.admit(tp, offset), store=False)
    assert table == {b"5": b"4"}  # nothing written per record
    progress.store(RESULTS_3)
    progress.store(RESULTS_5)
    assert table == {b"3": b"2", b"5": b"4"}
    table.clear()
    progress.store(RESULTS_3)  # stored already
    assert table == {}
    assert await progress.expected(RESULTS_3) == 2


async def test_a_partition_starts_where_its_stored_progress_says() -> None:
    progress = progress_with({b"3": b"7"})
    assert await progress.expected(RESULTS_3) == 7
    assert await run(progress, RESULTS_3, 5) is Admit.AGAIN  # re-delivered: applied before
    assert await run(progress, RESULTS_3, 6) is Admit.AGAIN
    assert await run(progress, RESULTS_3, 7) is Admit.NEXT
    assert await progress.expected(RESULTS_3) == 8
    assert seeks(progress) == []


async def test_a_re_delivery_does_not_move_the_stored_progress() -> None:
    table = {b"3": b"7"}
    progress = progress_with(table)
    await run(progress, RESULTS_3, 4)
    assert table == {b"3": b"7"}
    assert progress.committable(RESULTS_3) == 5  # what this worker processed, not beyond


async def test_a_record_beyond_missing_ones_is_skipped_and_the_partition_sought_back_once() -> None:
    progress = progress_with({b"3": b"4"})
    # Faust jumped to 9 (records 4 to 8 dropped): seek back to 4, skip what was fetched beyond
    assert [await run(progress, RESULTS_3, n) for n in (9, 10, 11)] == [Admit.SKIP] * 3
    assert seeks(progress) == [(RESULTS_3, 4)]
    assert progress.committable(RESULTS_3) is None  # nothing processed: nothing may be committed
    # the seek brings 4 to 11 again, in order
    assert [await run(progress, RESULTS_3, n) for n in range(4, 12)] == [Admit.NEXT] * 8
    assert progress.committable(RESULTS_3) == 12


async def test_a_seek_that_did_not_bring_the_record_is_asked_again_after_the_retry_interval() -> None:
    clock = Clock()
    progress = progress_with({b"3": b"4"}, retry=0.05, clock=clock)
    assert await run(progress, RESULTS_3, 9) is Admit.SKIP
    assert await run(progress, RESULTS_3, 10) is Admit.SKIP
    clock.now += 0.06
    assert await run(progress, RESULTS_3, 11) is Admit.SKIP
    assert seeks(progress) == [(RESULTS_3, 4), (RESULTS_3, 4)]


async def test_records_deleted_by_retention_are_passed_over_not_waited_for() -> None:
    progress = progress_with({b"3": b"4"}, earliest=20)
    assert await run(progress, RESULTS_3, 20) is Admit.NEXT
    assert seeks(progress) == []
    assert await progress.expected(RESULTS_3) == 21


async def test_a_partition_never_applied_starts_at_its_first_offset() -> None:
    progress = progress_with(earliest=3)
    assert await run(progress, RESULTS_5, 6) is Admit.SKIP  # 3 to 5 dropped before the agent saw them
    assert seeks(progress) == [(RESULTS_5, 3)]


async def test_a_record_is_committable_only_once_published_and_not_after_its_partition_was_revoked() -> None:
    progress = progress_with()
    assert await progress.admit(RESULTS_3, 0) is Admit.NEXT
    progress.done(RESULTS_3, 0, Admit.NEXT)
    assert progress.committable(RESULTS_3) is None  # applied, its update not produced yet
    generation = progress.generation
    progress.published(RESULTS_3, 0, generation)
    assert progress.committable(RESULTS_3) == 1
    assert await progress.admit(RESULTS_3, 1) is Admit.NEXT
    progress.done(RESULTS_3, 1, Admit.NEXT)
    progress.forget()  # revoked before its update went out
    progress.published(RESULTS_3, 1, generation)
    assert progress.committable(RESULTS_3) is None


async def test_forgetting_revoked_partitions_reads_the_table_again() -> None:
    table = {b"3": b"2"}
    progress = progress_with(table)
    await run(progress, RESULTS_3, 2)
    table[b"3"] = b"10"  # another worker applied more meanwhile (its changelog recovered here)
    progress.forget()
    assert progress.committable(RESULTS_3) is None
    assert await progress.expected(RESULTS_3) == 10


async def test_peeking_does_not_decide_what_the_agent_expects() -> None:
    table: dict[bytes, bytes] = {}
    progress = progress_with(table, earliest=0)
    assert await progress.peek(RESULTS_3) == 0
    table[b"3"] = b"6"  # recovered after the peek
    assert await progress.expected(RESULTS_3) == 6


# --- publishing: one flush, then the updates in order ---------------------------------------------


class Journal:
    """Records what the publisher does, in order: flushes and sends."""

    def __init__(self, sends: int, failing_flushes: int = 0) -> None:
        self.entries: list[Any] = []
        self.failing_flushes = failing_flushes
        self.sends = sends
        self.all_sent = asyncio.Event()

    async def flush(self) -> None:
        if self.failing_flushes:
            self.failing_flushes -= 1
            raise ConnectionError("broker unreachable")
        self.entries.append("flush")

    async def produce(self, records: list[Record]) -> Delivery:
        """What :class:`Publisher` asks of the producer: the records, in order, then their delivery."""
        for topic, _, key, value in records:
            self.entries.append((topic, key, value))
        return Delivered(self)


class Delivered:
    """A delivery that says the journal's records are all sent once awaited."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    async def delivered(self) -> None:
        if sum(1 for e in self.journal.entries if e != "flush") >= self.journal.sends:
            self.journal.all_sent.set()


def publisher_for(journal: Journal, progress: Progress) -> Publisher:
    return Publisher(journal.flush, journal.produce, progress, standings="standings", dead_letters="dead-letters")


async def publish_all(journal: Journal, outcomes: list[tuple[TP, int, Outcome | None]]) -> Progress:
    progress = progress_with()
    publisher = publisher_for(journal, progress)
    running = asyncio.ensure_future(publisher.run())
    try:
        for tp, offset, outcome in outcomes:
            await publisher.add(tp, offset, outcome)
        async with asyncio.timeout(5):
            await journal.all_sent.wait()
        await asyncio.sleep(0)  # the publisher marks the last record published right after its send
    finally:
        running.cancel()
    return progress


async def test_updates_and_dead_letters_go_out_after_one_flush_in_the_order_applied() -> None:
    journal = Journal(sends=3)
    outcomes: list[tuple[TP, int, Outcome | None]] = [
        (RESULTS_3, 0, Outcome("a", update=b"u-a-1")),
        (RESULTS_5, 0, Outcome("b", dead_letter=b"d-b")),
        (RESULTS_3, 1, None),  # a record that led to nothing to publish
        (RESULTS_3, 2, Outcome("a", update=b"u-a-2")),
    ]
    progress = await publish_all(journal, outcomes)
    assert journal.entries == [
        "flush",
        ("standings", b"a", b"u-a-1"),
        ("dead-letters", b"b", b"d-b"),
        ("standings", b"a", b"u-a-2"),
    ]
    assert progress.committable(RESULTS_3) == 3
    assert progress.committable(RESULTS_5) == 1


async def test_nothing_is_sent_before_a_flush_succeeded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(publishing, "PUBLISH_RETRY_SECONDS", 0.01)
    journal = Journal(sends=1, failing_flushes=2)
    await publish_all(journal, [(RESULTS_3, 0, Outcome("a", update=b"u"))])
    assert journal.entries == ["flush", ("standings", b"a", b"u")]


async def test_staged_outcomes_wait_for_their_release_even_across_a_flush() -> None:
    journal = Journal(sends=1)
    progress = progress_with()
    publisher = publisher_for(journal, progress)
    running = asyncio.ensure_future(publisher.run())
    try:
        await publisher.add(RESULTS_3, 0, Outcome("a", update=b"u-a-1"))
        await publisher.stage(RESULTS_3, 1, Outcome("a", update=b"u-a-2"))  # its snapshot is not sent yet
        async with asyncio.timeout(5):
            await journal.all_sent.wait()
        journal.sends, journal.all_sent = 2, asyncio.Event()
        for _ in range(10):  # the publisher had every chance to go on
            await asyncio.sleep(0)
        assert journal.entries == ["flush", ("standings", b"a", b"u-a-1")]
        assert progress.committable(RESULTS_3) == 1
        publisher.release()
        async with asyncio.timeout(5):
            await journal.all_sent.wait()
        assert journal.entries == ["flush", ("standings", b"a", b"u-a-1"), "flush", ("standings", b"a", b"u-a-2")]
    finally:
        running.cancel()


# --- against the broker --------------------------------------------------------------------------

FILE = data_file("fide-tec-exercise16-rr6.trf")


class FaustNamedAssignor(RoundRobinPartitionAssignor):
    """Round robin under the name of Faust's assignor, so the broker lets this consumer join the workers' group."""

    name = "faust"


async def commit_offset(broker: Broker, tp: TopicPartition, offset: int) -> None:
    """Commit ``offset`` for the workers' group while no worker runs (as Faust can, past unapplied records)."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=f"127.0.0.1:{broker.port}",
        group_id=APP_ID,
        enable_auto_commit=False,
        partition_assignment_strategy=(FaustNamedAssignor,),
    )
    consumer.subscribe([tp.topic])  # as a member: the broker takes commits from members only
    await consumer.start()
    try:
        while tp not in consumer.assignment():
            await consumer.getmany(timeout_ms=100)  # joins the group
        await consumer.commit({tp: offset})
        assert await consumer.committed(tp) == offset
    finally:
        await consumer.stop()


async def end_offset(broker: Broker, tp: TopicPartition) -> int:
    """One past the partition's last record (read, not asked: Tansu reports the last *batch*'s start + 1)."""
    records = [r for r in await read_topic(broker, tp.topic) if r.partition == tp.partition]
    return max((r.offset + 1 for r in records), default=0)


async def updates_of(broker: Broker, tid: str, final: int, timeout: float = 60) -> list[dict[str, Any]]:
    """The tournament's updates on the standings topic, once its final seq is there (or the timeout passed)."""
    deadline = time.monotonic() + timeout
    while True:
        updates = [json.loads(r.value) for r in await read_topic(broker, STANDINGS)]
        mine = [u for u in updates if u["tournament"] == tid]
        if any(u["seq"] == final for u in mine) or time.monotonic() > deadline:
            return mine
        await asyncio.sleep(0.5)


@pytest.mark.kafka
@pytest.mark.parametrize(
    ("skipped", "found_by"),
    [
        (2, "never reached the agent"),  # later records arrive: the agent sees the jump
        (None, "did not reach the agent"),  # nothing arrives after: the watch sees the partition stop short
    ],
    ids=["records-after-the-commit", "commit-at-the-end"],
)
async def test_a_worker_applies_records_its_group_committed_past(
    kafka_broker: Broker,  # noqa: F811
    skipped: int | None,
    found_by: str,
) -> None:
    broker = kafka_broker
    tid = "progress-fide"
    tf = read_file(str(FILE), tid)
    events = [tf.opened, *tf.events]
    first, rest = events[:6], events[6:]
    tp = TopicPartition(RESULTS, partition_of(tid))

    worker = broker.worker()
    assert await produce_events(first, broker.url) == len(first)
    assert max(u["seq"] for u in await updates_of(broker, tid, len(first))) == len(first), broker.report()
    assert worker.stop() == 0  # commits what it applied and leaves the group

    start = await end_offset(broker, tp)
    assert await produce_events(rest, broker.url) == len(rest)
    end = await end_offset(broker, tp)
    assert end == start + len(rest)
    await commit_offset(broker, tp, end if skipped is None else start + skipped)

    restarted = broker.worker()
    updates = await updates_of(broker, tid, len(events))
    assert sorted({u["seq"] for u in updates}) == list(range(1, len(events) + 1)), broker.report()
    # sought back to exactly the first record it never applied: what it recovered from the progress table
    assert any(f"records {start} to " in line and found_by in line for line in restarted.output), broker.report()
    by_seq = {u["seq"]: u for u in updates}
    assert [by_seq[n]["event"]["id"] for n in range(1, len(events) + 1)] == [e.id for e in events]  # in order
    rows = json.loads(json.dumps(standings_json(standings(state_from(tf)))["standings"]))
    assert by_seq[len(events)]["standings"] == rows
    assert await read_topic(broker, DEAD_LETTERS) == []
    record(
        "distributed",
        "worker restarted after its group's committed offset was moved past results it never applied "
        f"({'all of them' if skipped is None else f'{skipped} of them, more after'}): what Faust 0.15.3 can leave",
        tried=len(rest),
        unit="events",
        outcome="all applied once, in order; the worker sought back to the first one from its progress table",
    )
