"""Arbiters' projections: who gets which projection, when (computed on the shared worker pool).

What is known goes first.  A projection whose exact search may take a
while (more than :data:`QUICK_GAMES` open games, or a search measured at
:data:`QUICK` seconds or more last time) is preceded by the interval bounds
(``project(t, exact_limit=-1)``: milliseconds, flagged not exact and
``preliminary``); the exact projection follows when its search is done.  Its
job waits for the bounds' job of its tournament (the pool's ``after``), so the
bounds are out before the search starts, whatever either's worker takes to
start: a search cut short never overtakes them.  The
search has ``--projection-seconds`` less a reserve for the bounds
(:func:`search_seconds`; ``--projection-search-seconds`` sets it) of its own time in the worker: stopped there (or by
the worker's memory limit), the message is the bounds with ``cut_short``
(after how many seconds, and why), which the arbiter page says in words,
instead of nothing at all.  Past
:data:`~tracker.core.projection.SEARCH_DEPTH` open games every value is a
bound anyway: no preliminary then.  The search answers the spectators'
stakes too when somebody asks them, and starts from the last seq's
(:mod:`tracker.derived.search`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, Final

from websockets.asyncio.server import ServerConnection

from tracker.config import Limits
from tracker.core.crosstable import Tournament
from tracker.core.projection import SEARCH_DEPTH
from tracker.derived.pool import ARBITERS, Pool, Runner
from tracker.derived.search import Analysed, AnalysisWork, Computed, Memories, analysis_job
from tracker.derived.workers import bounds_job

#: Open games up to which an exact projection is expected within a moment (16: the last two rounds of 16 players, 1 s).
QUICK_GAMES: Final = 16
#: Seconds of a measured exact projection under which no preliminary bounds are sent before the next one.
QUICK: Final = 0.5


def search_seconds(limit: float) -> float:
    """The exact search's own time within a projection's time ``limit``: the rest (a quarter, at least a second,
    at most half) is kept for the bounds that replace a search cut short."""
    return limit - min(limit / 2, max(1.0, limit / 4))


def search_time(limits: Limits) -> float:
    """The exact search's own time: ``limits.projection_search_seconds`` when set (at most the projection's whole
    time), else :func:`search_seconds` of ``limits.projection_seconds``."""
    if limits.projection_search_seconds is None:
        return search_seconds(limits.projection_seconds)
    return max(0.0, min(limits.projection_search_seconds, limits.projection_seconds))


class ArbiterProjections:
    """Arbiters' projections, debounced, one job per tournament and kind, off the hot path.

    :meth:`updated` is called after every published update; when an arbiter
    watches the tournament, a projection is computed ``delay`` seconds later
    (results arriving meanwhile share it) and sent to every arbiter of it,
    preceded by the bounds when the search may take a while (see the module
    docstring).  The jobs run on the shared :class:`~tracker.derived.pool.Pool`
    (one worker of which is kept for them); a projection is cancelled once no
    arbiter of its tournament is connected.  ``spectators`` says whether
    anybody asks the stakes of a tournament (then the search answers them too
    and hands them to ``stakes_found``); ``memories`` keeps each tournament's
    last search (shared with the stakes feed).
    """

    def __init__(
        self,
        state: Callable[[str], Tournament | None],
        arbiters: Callable[[str], list[ServerConnection]],
        send: Callable[[ServerConnection, bytes], Coroutine[Any, Any, None]],
        *,
        delay: float,
        limits: Limits | None = None,
        pool: Pool | None = None,
        memories: Memories | None = None,
        spectators: Callable[[str], bool] = lambda tournament: False,
        stakes_found: Callable[[str, int, Computed], None] = lambda tournament, seq, found: None,
    ) -> None:
        self._state = state
        self._arbiters = arbiters
        self._send = send
        self._own = pool is None
        self.pool = pool if pool is not None else Pool(limits if limits is not None else Limits())
        seconds = search_time(self.pool.limits)
        self._sending: set[asyncio.Task[None]] = set()
        self._latest: dict[str, tuple[int, bytes]] = {}  # per tournament: the newest projection sent, and its seq
        self.memories = memories if memories is not None else Memories()
        self._stakes_found = stakes_found

        def work(tournament: str) -> AnalysisWork | None:
            found = state(tournament)
            if found is None:
                return None
            return AnalysisWork(found, self.memories.get(tournament), True, spectators(tournament), seconds)

        self.bounds: Runner[Tournament, bytes] = Runner(
            self.pool,
            "projection-bounds",
            bounds_job,
            state=state,
            publish=self._publish_bounds,
            wanted=lambda tournament: bool(arbiters(tournament)),
            delay=delay,
            priority=ARBITERS,
        )
        self.runner: Runner[AnalysisWork, Analysed] = Runner(
            self.pool,
            "projection",
            analysis_job,
            state=work,
            publish=self._analysed,
            wanted=lambda tournament: bool(arbiters(tournament)),
            delay=delay,
            priority=ARBITERS,
            after=self.bounds,  # the bounds of a seq go out before its search starts (see the module docstring)
        )

    def updated(self, tournament: str) -> None:
        """A new update of ``tournament`` was published."""
        if not self._arbiters(tournament):
            self._latest.pop(tournament, None)  # nobody to send it to: what is kept goes
        if self._slow(tournament):
            self.bounds.updated(tournament)
        self.runner.updated(tournament)

    def joined(self, conn: ServerConnection, tournament: str) -> None:
        """An arbiter subscribed: the newest projection at once, and one for the current seq unless it exists."""
        latest = self._latest.get(tournament)
        if latest is not None:
            self._deliver(conn, tournament, latest[1])
        state = self._state(tournament)
        if state is not None and (latest is None or latest[0] < state.seq) and self._slow(tournament):
            self.bounds.join(tournament)
        self.runner.join(tournament)

    def running(self) -> list[int]:
        """The pids of the worker processes alive now."""
        return self.pool.running()

    def _slow(self, tournament: str) -> bool:
        """Whether the exact projection of ``tournament`` may take a while (then the bounds go first)."""
        state = self._state(tournament)
        if state is None:
            return False
        open_games = state.n * (state.n - 1) // 2 * state.cycles - state.game_count
        if open_games > SEARCH_DEPTH or state.complete:
            return False  # every value is a bound (or final) already: the projection itself is as quick
        slot = self.runner.slots.get(tournament)
        if slot is not None and slot.measured:
            return slot.price >= QUICK
        return open_games > QUICK_GAMES

    def _analysed(self, tournament: str, seq: int, found: Analysed) -> None:
        self.memories.keep(tournament, found.memory)
        if found.stakes is not None:
            self._stakes_found(tournament, seq, found.stakes)
        if found.projection is not None:
            self._publish(tournament, seq, found.projection)

    def _publish(self, tournament: str, seq: int, data: bytes) -> None:
        latest = self._latest.get(tournament)
        if latest is not None and latest[0] > seq:
            return  # a newer one (the bounds that precede its projection) is out already
        self._latest[tournament] = (seq, data)
        for conn in self._arbiters(tournament):
            self._deliver(conn, tournament, data)

    def _publish_bounds(self, tournament: str, seq: int, data: bytes) -> None:
        latest = self._latest.get(tournament)
        if latest is not None and latest[0] >= seq:
            return  # the projection of this seq (or a later one) came first
        self._publish(tournament, seq, data)

    def _deliver(self, conn: ServerConnection, tournament: str, data: bytes) -> None:
        task = asyncio.create_task(self._send(conn, data), name=f"projection-to-{tournament}")
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def aclose(self) -> None:
        """Cancel every projection (and, when the pool is this object's own, stop its worker processes)."""
        for task in list(self._sending):
            task.cancel()
        await asyncio.gather(*self._sending, return_exceptions=True)
        if self._own:
            await self.pool.aclose()
