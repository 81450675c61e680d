"""Stakes, chances and cues for every subscriber who asks, computed once per seq, off the hot path.

How this works
--------------

A subscriber with ``"stakes": true`` gets the latest ``stakes`` message at
once (when one exists) and a new one after each update; ``cue`` messages
come with it when something worth a lower third happened between two of
them.  :class:`StakesFeed` is one :class:`~tracker.derived.pool.Runner` of
the shared worker pool (:mod:`tracker.derived.pool`): ``delay`` seconds
after an update (updates arriving meanwhile share it) it computes, in a
worker process, the stakes, the chances (seeded by the event's seq: the
same state always gives the same estimate) and the insight the cues
compare, encoded in the worker; the server keeps the last result per
tournament, compares, and hands the bytes to the hub, which sends them
without waiting (and after each subscriber's spoiler delay).  A seq is
computed once: a subscriber who joins gets what exists, a computation
that failed for a seq is not tried again for it, and one that started
runs to its end even when its last subscriber leaves (its result is kept
for the next one: joins and unsubscribes in a loop never restart it).  Nothing is computed for a
tournament nobody asks stakes (or live boards) of.  While an arbiter
watches, the projection's search answers the stakes too (:meth:`StakesFeed.found`);
each search starts from the tournament's last one (:mod:`tracker.derived.search`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from websockets.asyncio.server import ServerConnection

from tracker.core.crosstable import Tournament
from tracker.core.projection.cues import cues
from tracker.core.projection.stakes import Stakes
from tracker.derived.pool import SPECTATORS, Pool, Runner
from tracker.derived.search import Analysed, AnalysisWork, Computed, Memories, analysis_job
from tracker.protocol import cue_message


def open_games(state: Tournament) -> int:
    """Games of the round robin still without a result (O(1): from the counts the crosstable keeps)."""
    n = state.n
    return max(0, n * (n - 1) // 2 * state.cycles - state.game_count)


def stakes_estimate(state: Tournament | None) -> float:
    """Seconds a stakes computation of ``state`` is priced at before it is measured: it grows with the open games
    (the search over their outcomes), about 0.6 s at 16 open games and over a minute at 56."""
    if state is None:
        return 0.1
    return 0.1 * 2 ** (open_games(state) / 6)


class StakesFeed:
    """Stakes and cues for the subscribers who asked, one job per tournament and seq (see the module docstring).

    ``wanted`` says whether anybody else needs the stakes of a tournament (the live boards' sentences);
    ``after`` is the arbiters' projection runner, whose search answers the stakes too (see the module docstring).
    """

    def __init__(
        self,
        pool: Pool,
        state: Callable[[str], Tournament | None],
        subscribers: Callable[[str], list[ServerConnection]],
        deliver: Callable[[str, list[ServerConnection], bytes], None],
        *,
        delay: float,
        wanted: Callable[[str], bool] = lambda tournament: False,
        computed: Callable[[str], None] = lambda tournament: None,
        memories: Memories | None = None,
        after: Runner[Any, Any] | None = None,
    ) -> None:
        self._subscribers = subscribers
        self._deliver = deliver
        self._computed = computed
        self._wanted = wanted
        self._latest: dict[str, Computed] = {}
        self.memories = memories if memories is not None else Memories()

        def work(tournament: str) -> AnalysisWork | None:
            found = state(tournament)
            return None if found is None else AnalysisWork(found, self.memories.get(tournament), False, True)

        self.runner: Runner[AnalysisWork, Analysed] = Runner(
            pool,
            "stakes",
            analysis_job,
            state=work,
            publish=self._analysed,
            wanted=self.wanted,
            delay=delay,
            priority=SPECTATORS,
            estimate=lambda tournament: stakes_estimate(state(tournament)),
            after=after,
        )

    def wanted(self, tournament: str) -> bool:
        """Whether anybody asks the stakes of ``tournament`` (a subscriber, or the live boards)."""
        return bool(self._subscribers(tournament)) or self._wanted(tournament)

    def found(self, tournament: str, seq: int, now: Computed) -> None:
        """Another search (the arbiters' projection's) computed the stakes of ``seq``: no search of our own."""
        self.runner.done(tournament, seq)
        self._publish(tournament, seq, now)

    def updated(self, tournament: str) -> None:
        """A new update of ``tournament`` was published."""
        self.runner.updated(tournament)

    def joined(self, conn: ServerConnection, tournament: str) -> None:
        """``conn`` asked for stakes: the latest now, and a computation if the current seq has none yet."""
        latest = self._latest.get(tournament)
        if latest is not None:
            self._deliver(tournament, [conn], latest.message)
        self.runner.join(tournament)

    def latest(self, tournament: str) -> Stakes | None:
        """The newest stakes computed for ``tournament`` (of whatever seq; ``Stakes.seq`` says which)."""
        found = self._latest.get(tournament)
        return None if found is None else found.stakes

    def _analysed(self, tournament: str, seq: int, found: Analysed) -> None:
        self.memories.keep(tournament, found.memory)
        if found.stakes is not None:
            self._publish(tournament, seq, found.stakes)

    def _publish(self, tournament: str, seq: int, now: Computed) -> None:
        previous = self._latest.get(tournament)
        if previous is not None and previous.insight.seq >= now.insight.seq:
            return  # an older seq finished after a newer one
        self._latest[tournament] = now
        conns = self._subscribers(tournament)
        if previous is not None:
            for cue in cues(previous.insight, now.insight):
                self._deliver(tournament, conns, cue_message(tournament, now.insight.seq, cue))
        self._deliver(tournament, conns, now.message)
        self._computed(tournament)
