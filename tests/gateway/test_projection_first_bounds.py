"""What is known goes first, and a projection stopped for its time still says something (issue 28, item 7).

Reproduction: a projection over ``--projection-seconds`` was stopped and never sent, and the arbiter page
said nothing.  Now the bounds go first (flagged ``preliminary``), and a search stopped for its time or
memory sends the bounds with ``cut_short``.  The slow case is a 26-player round robin with its last three
rounds open (39 games): its search runs for seconds; the bounds take milliseconds.  No timing is
asserted: the order of the messages and what they say.
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

from tests.builders import berger, fold_all, game, opened, schedule_of
from tracker.config import Limits
from tracker.core.crosstable import Tournament
from tracker.gateway.analyses import AnalysisWork, analysis_job
from tracker.gateway.projections import Projections, search_seconds


def slow_state(tournament: str = "slow") -> Tournament:
    rng = random.Random(5)
    table = berger(26)
    events: list[Any] = [opened(26, schedule=schedule_of(table))]
    for r in table[:-3]:
        events += [game(r.number, w, b, rng.choice(["1-0", "1/2-1/2", "0-1"])) for w, b in r.pairs]
    t = fold_all(events)
    t.id = tournament
    return t


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


def test_a_search_past_its_own_time_sends_the_bounds_and_says_it_was_cut_short() -> None:
    found = analysis_job(AnalysisWork(slow_state(), None, projection=True, stakes=True, seconds=0.01))
    assert found.projection is not None and found.stakes is None  # cut short: no stakes from this search
    message = json.loads(found.projection)
    assert message["type"] == "projection" and message["exact"] is False
    assert message["cut_short"]["reason"] == "time" and message["cut_short"]["seconds"] >= 0
    assert "preliminary" not in message
    assert len(message["players"]) == 26 and message["remaining"] == 39


def test_the_bounds_go_first_and_a_projection_over_its_limit_is_cut_short_not_lost() -> None:
    async def run() -> list[dict[str, Any]]:
        arbiter = Arbiter()
        state = slow_state()
        limits = Limits(projection_seconds=2.0, projection_memory=0)  # the search gets 1 s, the bounds the rest
        gateway = Projections({"slow": state}.get, arbiter.of, arbiter.send, delay=0.0, limits=limits)  # type: ignore[arg-type]
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
    assert second["cut_short"]["seconds"] >= search_seconds(2.0) - 0.05
    assert "preliminary" not in second and second["seq"] == first["seq"]


def test_a_quick_projection_is_sent_once_without_bounds_before_it() -> None:
    async def run() -> list[dict[str, Any]]:
        arbiter = Arbiter()
        gateway = Projections({"small": small_state()}.get, arbiter.of, arbiter.send, delay=0.0)  # type: ignore[arg-type]
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
