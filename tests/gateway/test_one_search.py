"""One search per seq answers the arbiters' projection and the spectators' stakes, from the last seq's (issue 32).

Before, the projection and the stakes were two jobs that searched the same completions twice, each from
scratch.  Now, while an arbiter watches, the projection's job answers the stakes too and the stakes runner
runs no job of its own; the search's memory is kept per tournament and the next seq's job starts from it.
Real worker processes, no timing asserted.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.builders import berger, fold_all, game, opened, schedule_of
from tests.gateway.test_projection_first_bounds import Arbiter
from tracker.config import Limits
from tracker.core.crosstable import Tournament
from tracker.core.projection import project
from tracker.core.projection.stakes import stakes
from tracker.derived.arbiters import ArbiterProjections
from tracker.derived.pool import Pool
from tracker.derived.search import Memories
from tracker.derived.stakes import StakesFeed
from tracker.protocol import projection_message

RESULTS = ("1-0", "1/2-1/2", "0-1", "1/2-1/2", "1-0", "0-1")


def states() -> tuple[Tournament, Tournament]:
    """An 8-player round robin with its last two rounds open, and the same after one more result."""
    table = berger(8)
    events: list[Any] = [opened(8, schedule=schedule_of(table))]
    k = 0
    for r in table[:-2]:
        for w, b in r.pairs:
            events.append(game(r.number, w, b, RESULTS[k % len(RESULTS)]))
            k += 1
    (w, b), *_ = table[-2].pairs
    return fold_all(events), fold_all([*events, game(table[-2].number, w, b, "1-0")])


class Spectators:
    """Stands in for the hub: one spectator of every tournament, the stakes messages it was handed (decoded)."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.arrived = asyncio.Event()

    def of(self, tournament: str) -> list[object]:
        return [self]

    def deliver(self, tournament: str, conns: list[object], data: bytes) -> None:
        message = json.loads(data)
        if message["type"] == "stakes":
            self.received.append(message)
            self.arrived.set()

    async def until(self, count: int, timeout: float = 120) -> None:
        async with asyncio.timeout(timeout):
            while len(self.received) < count:
                self.arrived.clear()
                await self.arrived.wait()


def test_the_projections_search_answers_the_stakes_and_the_next_seq_starts_from_it() -> None:
    before, after = states()
    current = {"t": before}

    async def run() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[int | None], list[bool]]:
        arbiter, spectators = Arbiter(), Spectators()
        pool = Pool(Limits(projection_seconds=60.0, projection_memory=0))
        memories = Memories()
        feed: StakesFeed | None = None

        def found(tournament: str, seq: int, computed: Any) -> None:
            assert feed is not None
            feed.found(tournament, seq, computed)

        projections = ArbiterProjections(
            current.get,
            arbiter.of,  # type: ignore[arg-type]
            arbiter.send,  # type: ignore[arg-type]
            delay=0.0,
            pool=pool,
            memories=memories,
            spectators=lambda tournament: True,
            stakes_found=found,
        )
        feed = StakesFeed(
            pool,
            current.get,
            spectators.of,  # type: ignore[arg-type]
            spectators.deliver,  # type: ignore[arg-type]
            delay=0.0,
            memories=memories,
            after=projections.runner,
        )
        kept: list[int | None] = []
        own: list[bool] = []
        try:
            projections.joined(arbiter, "t")  # type: ignore[arg-type]
            feed.joined(spectators, "t")  # type: ignore[arg-type]
            await arbiter.until(1, "the first projection")
            await spectators.until(1)
            memory = memories.get("t")
            kept.append(None if memory is None else memory.seq)
            own.append(feed.runner.slot("t").measured)  # measured: the stakes runner ran a job of its own
            current["t"] = after
            projections.updated("t")
            feed.updated("t")
            while not any(m["seq"] == after.seq and not m.get("preliminary") for m in arbiter.received):
                await arbiter.until(len(arbiter.received) + 1, "the next seq's projection")
            await spectators.until(2)
            memory = memories.get("t")
            kept.append(None if memory is None else memory.seq)
            own.append(feed.runner.slot("t").measured)
            while not (projections.runner.idle() and feed.runner.idle()):  # noqa: ASYNC110 (no event to wait on)
                await asyncio.sleep(0.05)
            own.append(feed.runner.slot("t").measured)
        finally:
            await projections.aclose()
            await pool.aclose()
        return arbiter.received, spectators.received, kept, own

    received, staked, kept, own = asyncio.run(run())
    projected = [m for m in received if not m.get("preliminary")]  # bounds may go first when a search was slow
    assert [m["seq"] for m in projected] == [before.seq, after.seq]
    assert [m["seq"] for m in staked] == [before.seq, after.seq]
    assert own == [False, False, False], "the stakes runner searched on its own while the projection's search answered"
    assert kept == [before.seq, after.seq]
    # what one search answered is what the projection and the stakes give alone (reused memory included); the
    # witness scenarios may differ (another completion reaching the same extreme)
    assert _without_scenarios(projected[1]) == _without_scenarios(json.loads(projection_message(project(after))))
    alone = stakes(after)
    assert [(g["white"], g["black"]) for g in staked[1]["games"]] == [(g.white, g.black) for g in alone.games]
    assert staked[1]["exact"] == alone.exact


def _without_scenarios(message: dict[str, Any]) -> dict[str, Any]:
    return {**message, "players": [{k: v for k, v in p.items() if k != "scenarios"} for p in message["players"]]}
