"""What is known goes first, and a projection stopped for its time still says something (issue 28, item 7).

Reproduction: a projection over ``--projection-seconds`` was stopped and never sent, and the arbiter page
said nothing.  Now the bounds go first (flagged ``preliminary``), and a search stopped for its time or
memory sends the bounds with ``cut_short``.  The slow case is a 26-player round robin with its last three
rounds open (39 games): its search runs for seconds; the bounds take milliseconds.  No timing is
asserted: the order of the messages and what they say.  A cut is never a bet on the machine's speed
(issue 40: an idle machine finished the search inside its limit): the search's own time is a tenth or
a quarter of the whole search measured in the same test (:func:`full_search`; the tenth at most :data:`SLIVER`), or none
at all.  Nor is the order: the search's job waits for the bounds' job, so a search over before the bounds' worker
answers (an idle CI run) cannot overtake them.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import Any

import pytest

from tests.builders import berger, fold_all, game, opened, schedule_of
from tracker.config import Limits
from tracker.core.crosstable import Tournament
from tracker.derived.arbiters import ArbiterProjections, search_seconds, search_time
from tracker.derived.search import AnalysisWork, analysis_job
from tracker.derived.workers import bounds_job

#: The search's own time when it must not be cut (the measured baseline): longer than any search here.
UNCUT = 24 * 3600.0
#: The most the tenth-of-the-search case is given, whatever the measured baseline: the whole search takes about 1 s
#: (2.4 s with the stakes) on this machine idle, so 50 ms is a twentieth of it at most.  A baseline measured while
#: the machine was busy (a tenth of it let a search with the stakes finish in time on a CI run) cannot stretch it.
#: The bounds-first case keeps its quarter: it needs the search to outlast the bounds' job.
SLIVER = 0.05


def slow_state(tournament: str = "slow") -> Tournament:
    rng = random.Random(5)
    table = berger(26)
    events: list[Any] = [opened(26, schedule=schedule_of(table))]
    for r in table[:-3]:
        events += [game(r.number, w, b, rng.choice(["1-0", "1/2-1/2", "0-1"])) for w, b in r.pairs]
    t = fold_all(events)
    t.id = tournament
    return t


@pytest.fixture(scope="module")
def full_search() -> float:
    """Seconds the slow state's whole projection search takes here, now (no stakes: the least work of a cut test)."""
    started = time.monotonic()
    found = analysis_job(AnalysisWork(slow_state(), None, projection=True, stakes=False, seconds=UNCUT))
    assert found.projection is not None and "cut_short" not in json.loads(found.projection)
    return time.monotonic() - started


def small_state() -> Tournament:
    return fold_all([opened(6), game(1, 1, 6, "1-0")])


class Arbiter:
    """Stands in for the websocket layer: one arbiter of every tournament, what it was sent (decoded)."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.arrived = asyncio.Event()

    def of(self, tournament: str) -> list[object]:
        return [self]

    async def send(self, conn: object, data: bytes) -> None:
        self.received.append(json.loads(data))
        self.arrived.set()

    async def until(self, count: int, what: str, timeout: float = 120) -> None:
        """Wait (generously: the machine may be busy) until ``count`` messages arrived."""
        try:
            async with asyncio.timeout(timeout):
                while len(self.received) < count:
                    self.arrived.clear()
                    await self.arrived.wait()
        except TimeoutError:
            raise AssertionError(f"not within {timeout} s: {what} (got {self.received})") from None


@pytest.mark.parametrize("share", [0.1, 0.0], ids=["a-tenth-of-the-search", "no-time"])
def test_a_search_past_its_own_time_sends_the_bounds_and_says_it_was_cut_short(
    full_search: float, share: float
) -> None:
    # a tenth of the search alone (this one answers the stakes too: more work), and never more than SLIVER, or none
    # (the search never starts)
    seconds = min(share * full_search, SLIVER)
    found = analysis_job(AnalysisWork(slow_state(), None, projection=True, stakes=True, seconds=seconds))
    assert found.projection is not None and found.stakes is None  # cut short: no stakes from this search
    message = json.loads(found.projection)
    assert message["type"] == "projection" and message["exact"] is False
    assert message["cut_short"]["reason"] == "time" and message["cut_short"]["seconds"] >= 0
    assert "preliminary" not in message
    assert len(message["players"]) == 26 and message["remaining"] == 39


def test_the_search_gets_its_time_less_a_reserve_for_the_bounds_unless_told() -> None:
    assert search_seconds(2.0) == 1.0 and search_seconds(10.0) == 7.5 and search_seconds(60.0) == 45.0
    assert search_time(Limits(projection_seconds=2.0)) == search_seconds(2.0)
    assert search_time(Limits(projection_seconds=60.0, projection_search_seconds=0.3)) == 0.3
    assert search_time(Limits(projection_seconds=2.0, projection_search_seconds=5.0)) == 2.0  # never past the whole


def test_the_bounds_go_first_and_a_projection_over_its_limit_is_cut_short_not_lost(full_search: float) -> None:
    # the search gets a quarter of what it needs (measured here, now), the bounds the rest of a generous minute
    limits = Limits(projection_seconds=60.0, projection_memory=0, projection_search_seconds=full_search / 4)

    async def run() -> list[dict[str, Any]]:
        arbiter = Arbiter()
        state = slow_state()
        gateway = ArbiterProjections({"slow": state}.get, arbiter.of, arbiter.send, delay=0.0, limits=limits)  # type: ignore[arg-type]
        try:
            gateway.joined(arbiter, "slow")  # type: ignore[arg-type]
            await arbiter.until(2, "the bounds, then the projection cut short")
            await asyncio.sleep(0)
        finally:
            await gateway.aclose()
        return arbiter.received

    first, second = asyncio.run(run())[:2]
    assert first["preliminary"] is True and first["exact"] is False and "cut_short" not in first
    assert second["cut_short"] == {"seconds": second["cut_short"]["seconds"], "reason": "time"}
    assert second["cut_short"]["seconds"] >= search_time(limits) - 0.05
    assert "preliminary" not in second and second["seq"] == first["seq"]


def late_bounds_job(state: Tournament) -> bytes:
    """The bounds' job, answering a second late (as when its worker is slow to start, or busy)."""
    time.sleep(1.0)
    return bounds_job(state)


def test_the_bounds_go_first_even_when_their_job_answers_after_the_search_is_over() -> None:
    # the cut-short projection used to overtake the bounds when the bounds' worker answered after it (an idle CI run:
    # only the cut-short message came, and the bounds were dropped as older); now the search waits for the bounds'
    # job.  Here the search has no time at all and the bounds' job answers a second late
    limits = Limits(projection_seconds=60.0, projection_memory=0, projection_search_seconds=0.0)

    async def run() -> list[dict[str, Any]]:
        arbiter = Arbiter()
        gateway = ArbiterProjections({"slow": slow_state()}.get, arbiter.of, arbiter.send, delay=0.0, limits=limits)  # type: ignore[arg-type]
        gateway.bounds.compute = late_bounds_job
        try:
            gateway.joined(arbiter, "slow")  # type: ignore[arg-type]
            await arbiter.until(2, "the bounds, then the projection cut short", timeout=60)
        finally:
            await gateway.aclose()
        return arbiter.received

    first, second = asyncio.run(run())[:2]
    assert first["preliminary"] is True and "cut_short" not in first
    assert second["cut_short"]["reason"] == "time" and "preliminary" not in second
    assert second["seq"] == first["seq"]


def test_a_quick_projection_is_sent_once_without_bounds_before_it() -> None:
    async def run() -> list[dict[str, Any]]:
        arbiter = Arbiter()
        gateway = ArbiterProjections({"small": small_state()}.get, arbiter.of, arbiter.send, delay=0.0)  # type: ignore[arg-type]
        try:
            gateway.joined(arbiter, "small")  # type: ignore[arg-type]
            await arbiter.until(1, "the projection")
            while not (gateway.runner.idle() and gateway.bounds.idle()):  # noqa: ASYNC110 (no event to wait on)
                await asyncio.sleep(0.05)
        finally:
            await gateway.aclose()
        return arbiter.received

    (only,) = asyncio.run(run())
    assert only["exact"] is True and "preliminary" not in only and "cut_short" not in only
