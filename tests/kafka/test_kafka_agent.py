"""The worker's agent without Faust or a broker: :func:`tracker.kafka.agent.apply_batch` on plain records.

A batch's records are applied in partition order, each accepted event's
entry goes to the table and to the changelog records of its results
partition, one snapshot per tournament follows them, each partition's
position is written after its entries, and the updates are released to the
publisher only after all of that was handed to the producer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from faust.types import TP

from tests.builders import TID, game, opened
from tracker.core.events import encode_event
from tracker.kafka.agent import Pipeline, apply_batch
from tracker.kafka.batches import Record
from tracker.kafka.processing import Processor, entry_key
from tracker.kafka.progress import Progress
from tracker.kafka.publisher import Publisher
from tracker.kafka.topics import CHANGELOG, RESULTS, SNAPSHOTS

RESULTS_3 = TP(RESULTS, 3)


@dataclass
class Message:
    tp: TP
    offset: int


@dataclass
class Consumed:
    key: bytes
    value: bytes
    message: Message


class Earliest:
    """Faust's consumer as Progress asks it: the partition starts at offset 0."""

    async def earliest_offsets(self, tp: TP) -> dict[TP, int]:
        return {tp: 0}


class Delivered:
    async def delivered(self) -> None:
        return None


async def test_a_batch_is_applied_stored_and_released_in_order() -> None:
    table: dict[bytes, bytes] = {}
    positions: dict[bytes, bytes] = {}
    progress = Progress(lambda: Earliest(), positions, retry=1.0)
    produced: list[list[Record]] = []
    released: list[Any] = []

    async def produce(records: list[Record]) -> Delivered:
        produced.append(records)
        return Delivered()

    publisher = Publisher(lambda: _nothing(), produce, progress)
    publisher.release = lambda before=None: released.append((before, list(publisher._staged)))  # type: ignore[method-assign]
    named: list[Any] = []
    pipeline = Pipeline(Processor(), table, progress, publisher, produce, name_event=named.append)
    events = [opened(4), game(1, 1, 4, "1-0"), game(1, 2, 3, "1/2-1/2")]
    records = [Consumed(TID.encode(), encode_event(e), Message(RESULTS_3, k)) for k, e in enumerate(events)]

    await apply_batch(records, pipeline)

    assert [table[entry_key(TID, seq)] for seq in (1, 2, 3)] == [encode_event(e) for e in events]
    (sent,) = produced
    assert [(topic, partition) for topic, partition, _, _ in sent] == [(CHANGELOG, 3)] * 3 + [(SNAPSHOTS, None)]
    assert positions == {b"3": b"3"}  # the next record to apply, written once for the batch
    assert named == [records[-1]]  # the position is written as the partition's last record
    ((before, staged),) = released
    assert isinstance(before, Delivered)
    assert [(tp, offset) for tp, offset, _, _ in staged] == [(RESULTS_3, 0), (RESULTS_3, 1), (RESULTS_3, 2)]
    assert all(outcome.update is not None for _, _, _, outcome in staged)


async def test_a_record_beyond_a_gap_is_skipped_and_not_stored() -> None:
    table: dict[bytes, bytes] = {}
    consumer = Seeking()
    progress = Progress(lambda: consumer, {b"3": b"5"}, retry=1.0)

    async def produce(records: list[Record]) -> Delivered:
        return Delivered()

    publisher = Publisher(lambda: _nothing(), produce, progress)
    pipeline = Pipeline(Processor(), table, progress, publisher, produce)
    await apply_batch([Consumed(TID.encode(), encode_event(opened(4)), Message(RESULTS_3, 7))], pipeline)
    assert table == {} and consumer.sought == [(RESULTS_3, 5)]  # records 5 and 6 come first


class Seeking(Earliest):
    def __init__(self) -> None:
        self.sought: list[tuple[TP, int]] = []

    async def seek(self, tp: TP, offset: int) -> None:
        self.sought.append((tp, offset))


async def _nothing() -> None:
    return None


def test_the_worker_refuses_a_faust_release_it_was_not_verified_on() -> None:
    import faust
    import pytest

    from tracker.kafka._faust_patch import VERIFIED, UnverifiedFaust, check_version

    check_version()  # the installed release is a verified one (pyproject pins it)
    assert faust.__version__ in VERIFIED
    with pytest.raises(UnverifiedFaust, match=r"faust-streaming 0\.16\.0 is installed, .* verified on 0\.15\.3 only"):
        check_version("0.16.0")
