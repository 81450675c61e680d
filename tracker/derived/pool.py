"""Derived work (arbiters' projections, stakes, live chances) on a few worker processes, shared fairly.

How this works
--------------

A :class:`Runner` is one kind of derived work: what it computes from a
tournament's state (``compute``, run in a worker process), who gets the
result (``publish``), whether anybody still wants it (``wanted``).  Per
tournament it keeps one slot: ``updated`` (a new seq) waits ``delay``
seconds, so results arriving meanwhile share one computation, then queues
the tournament once; a job already queued reads the newest state when it
starts, and results that arrive while a job runs make one more job after
it.  What was computed, or failed, is remembered by seq: a subscriber who
joins gets the newest result at once (``join``), and asks for a job only
when none exists for the current seq — a job that failed (too slow, out of
memory) is not tried again for that seq, however many join.

The :class:`Pool` owns the worker processes (one
:class:`~tracker.derived.workers.WorkerProcess` each, so a job that is killed
for its time or its memory ends nobody else's) and the queue.  Its
dispatcher hands the next job to the next free worker: the lowest priority
class first (arbiters' projections before spectators' stakes and live
chances), then the cheapest: a job is priced by what its kind measured last
for that tournament (a moving average of the CPU seconds its jobs took in
the worker, which a busy machine does not stretch; before any measurement,
its kind's estimate from the tournament, e.g. from the games still open),
less the time it has waited, so a small tournament is not stuck behind
three big ones and a big one still gets its turn.  Workers are kept in
tiers: the last free worker runs only arbiters' projections (an arbiter's
projection never waits behind a spectator's stakes), the one before it
also cheap spectators' jobs (priced under :data:`CHEAP` seconds), and an
expensive spectators' job needs a third one free: a spectator's small
tournament always has a worker, whatever the big ones cost.  The time
limit counts only a job's own running time, not its wait nor its worker's
start.

Whether anybody wants a job flips with any client's subscribes, so it never
restarts one.  A job whose tournament nobody wants any more is dropped
before it starts; once started, an arbiters' job is cancelled when its last
arbiter leaves (its worker is killed), but a spectators' job runs to its
end, bounded by the time limit, and its result is kept for its seq.
Cancelling those too let one connection that re-subscribes, or subscribes
and unsubscribes, in a loop kill a big tournament's stakes job and its
worker at each flip and start both again at the next join: a stream of
process starts that held a small tournament's stakes up to 18 s (issue 37).
So joins start nothing while the current seq has a job queued, running, done
or failed, whatever they flip.  Processes are started ahead of need: a
killed worker (past its limits, or cancelled) at once, and one free worker
whenever a spectators' job takes another; a job goes to a free worker whose
process runs before one that must start.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TypeVar

from tracker.config import Limits
from tracker.derived.workers import POLL, Work, WorkerProcess

log = logging.getLogger(__name__)

T = TypeVar("T")
W = TypeVar("W", bound=Work)

#: The priority classes: lower runs first; class 0 has a worker of its own.
ARBITERS: Final = 0
SPECTATORS: Final = 1
#: Seconds a job of an unmeasured (kind, tournament) is priced at, without an estimate of its kind.
DEFAULT_PRICE: Final = 0.5
#: A spectators' job priced under this many seconds is cheap (see the module docstring's tiers).
CHEAP: Final = 2.0
#: Weight of the newest measurement in a price (a moving average).
_ALPHA: Final = 0.5


@dataclass(slots=True)
class _Slot:
    """One (runner, tournament): what was computed or failed, by seq, and whether a job is queued or running."""

    done_seq: int = -1  # the version (seq) of the newest result, or of the newest failure
    failed_seq: int = -1
    measured: bool = False  # price is a measurement (else the kind's estimate)
    started: float = -1e9  # when the last job started (loop time)
    price: float = DEFAULT_PRICE
    queued_at: float | None = None  # when it was queued (loop time), while it waits
    running: bool = False
    again: bool = False  # updated while running: one more job after it
    timer: asyncio.TimerHandle | None = None


class Runner(Generic[W, T]):
    """One kind of derived work, per tournament (see the module docstring).

    ``compute`` must be a module-level function (it is pickled to the worker process, with what
    ``state`` returns); ``publish`` gets ``(tournament, seq, result)`` on the event loop.  ``version``
    of an input says which results are the same (default: its seq; live boards count their changes
    too).  With ``spacing``, ``delay`` is the least time between two jobs' starts (a job due later
    runs at once) instead of a wait after every update.  With ``after``, a queued job of a tournament
    waits while ``after`` has one due, queued or running for it (at most the time limit): that job may
    answer for this runner too (:meth:`done`), or must be out first (the bounds before a projection's search).
    """

    def __init__(
        self,
        pool: Pool,
        kind: str,
        compute: Callable[[W], T],
        *,
        state: Callable[[str], W | None],
        publish: Callable[[str, int, T], None],
        wanted: Callable[[str], bool],
        delay: float,
        priority: int = SPECTATORS,
        version: Callable[[W], int] = lambda work: work.seq,
        spacing: bool = False,
        estimate: Callable[[str], float] | None = None,
        after: Runner[Any, Any] | None = None,
    ) -> None:
        self.pool = pool
        self.kind = kind
        self.compute = compute
        self.state = state
        self.publish = publish
        self.wanted = wanted
        self.delay = delay
        self.priority = priority
        self.version = version
        self.spacing = spacing
        self.estimate = estimate
        self.after = after
        self.slots: dict[str, _Slot] = {}
        pool.runners.append(self)

    def slot(self, tournament: str) -> _Slot:
        found = self.slots.get(tournament)
        if found is None:
            found = self.slots[tournament] = _Slot()
        return found

    def updated(self, tournament: str) -> None:
        """A new update of ``tournament`` was published: compute once ``delay`` seconds have passed."""
        if not self.wanted(tournament):
            return
        slot = self.slot(tournament)
        if slot.running:
            slot.again = True
        elif slot.queued_at is None and slot.timer is None:
            loop = asyncio.get_running_loop()
            wait = max(0.0, slot.started + self.delay - loop.time()) if self.spacing else self.delay
            slot.timer = loop.call_later(wait, self._due, tournament)

    def join(self, tournament: str) -> None:
        """Somebody asked for this tournament's result: queue a job now unless the current seq has one."""
        state = self.state(tournament)
        if state is None or not self.wanted(tournament):
            return
        slot = self.slot(tournament)
        if slot.done_seq >= self.version(state) or slot.running or slot.queued_at is not None:
            return
        if slot.timer is not None:
            slot.timer.cancel()
        self._due(tournament)

    def _due(self, tournament: str) -> None:
        slot = self.slot(tournament)
        slot.timer = None
        if slot.running:
            slot.again = True
            return
        if slot.queued_at is None:
            if not slot.measured and self.estimate is not None:
                slot.price = self.estimate(tournament)
            slot.queued_at = asyncio.get_running_loop().time()
            self.pool.wake()

    def done(self, tournament: str, version: int) -> None:
        """Another runner's job computed this runner's result for ``version``: no job of its own for it."""
        slot = self.slot(tournament)
        slot.done_seq = max(slot.done_seq, version)

    def busy(self, tournament: str) -> bool:
        """Whether a job of ``tournament`` is due, queued or running."""
        slot = self.slots.get(tournament)
        return slot is not None and (slot.running or slot.queued_at is not None or slot.timer is not None)

    def idle(self) -> bool:
        """Whether no job of this kind is due, queued or running."""
        return not any(s.running or s.queued_at is not None or s.timer is not None for s in self.slots.values())

    def forget(self, tournament: str) -> None:
        """Drop what is kept for ``tournament`` (a timer, a queued job); a running job finishes unused."""
        slot = self.slots.pop(tournament, None)
        if slot is not None and slot.timer is not None:
            slot.timer.cancel()


@dataclass(slots=True)
class Pool:
    """The worker processes and the dispatcher every :class:`Runner` shares (see the module docstring)."""

    limits: Limits
    runners: list[Runner[Any, Any]] = field(default_factory=list)
    workers: list[WorkerProcess] = field(default_factory=list)
    _free: list[WorkerProcess] = field(default_factory=list)
    _wake: asyncio.Event | None = None
    _dispatcher: asyncio.Task[None] | None = None
    _jobs: set[asyncio.Task[Any]] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.workers = [WorkerProcess(self.limits) for _ in range(max(2, self.limits.projection_workers))]
        self._free = list(self.workers)

    def running(self) -> list[int]:
        """The pids of the worker processes alive now."""
        return [w.pid for w in self.workers if w.pid is not None]

    def wake(self) -> None:
        """Something was queued: start the dispatcher if needed and let it look."""
        if self._wake is None:
            self._wake = asyncio.Event()
        self._wake.set()
        if self._dispatcher is None or self._dispatcher.done():
            self._dispatcher = asyncio.create_task(self._dispatch(), name="derived-work")

    def _pick(self, free: int) -> tuple[Runner[Any, Any], str] | None:
        """The next queued job ``free`` workers may take: lowest class, then lowest price less waiting time."""
        now = asyncio.get_running_loop().time()
        n = len(self.workers)
        best: tuple[tuple[int, float], Runner[Any, Any], str] | None = None
        for runner in self.runners:
            for tournament, slot in runner.slots.items():
                if slot.queued_at is None:
                    continue
                if runner.priority != ARBITERS and free < min(2 if slot.price < CHEAP else 3, n):
                    continue  # the last workers are kept (see the module docstring)
                if self._waits(runner, tournament, slot.queued_at):
                    continue  # that job may answer for this one too (Runner.done)
                key = (runner.priority, slot.price - (now - slot.queued_at))
                if best is None or key < best[0]:
                    best = (key, runner, tournament)
        return None if best is None else (best[1], best[2])

    def _waits(self, runner: Runner[Any, Any], tournament: str, since: float) -> bool:
        """Whether a job queued at ``since`` waits for ``runner.after``'s job of the tournament (at most the limit)."""
        after = runner.after
        return (
            after is not None
            and after.busy(tournament)
            and asyncio.get_running_loop().time() - since < self.limits.projection_seconds
        )

    async def _dispatch(self) -> None:
        assert self._wake is not None
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._free:
                picked = self._pick(len(self._free))
                if picked is None:
                    break
                runner, tournament = picked
                slot = runner.slot(tournament)
                since, slot.queued_at = slot.queued_at, None
                assert since is not None
                slot.running = True
                worker = self._take()
                if runner.priority != ARBITERS:
                    self._keep_one_ready()
                task = asyncio.create_task(
                    self._run(runner, tournament, worker, since), name=f"{runner.kind}-{tournament}"
                )
                self._jobs.add(task)
                task.add_done_callback(self._jobs.discard)

    def _take(self) -> WorkerProcess:
        """A free worker for the next job: one whose process runs, else one whose process starts, else any."""
        for ready in (lambda w: w.pid is not None, lambda w: w.started):
            for k in range(len(self._free) - 1, -1, -1):
                if ready(self._free[k]):
                    return self._free.pop(k)
        return self._free.pop()

    def _keep_one_ready(self) -> None:
        """A spectators' job took a worker: unless a free one has a process (running or starting), start one now,
        so that the next cheap job (a small tournament's stakes) does not wait for a process to start."""
        if self._free and not any(w.started for w in self._free):
            self._start(self._free[-1])

    def _start(self, worker: WorkerProcess) -> None:
        """Start ``worker``'s process in the background (a job that takes it meanwhile waits for the same start)."""
        task = asyncio.create_task(worker.start(), name="derived-worker-start")
        self._jobs.add(task)
        task.add_done_callback(self._jobs.discard)

    async def _run(self, runner: Runner[Any, Any], tournament: str, worker: WorkerProcess, since: float) -> None:
        slot = runner.slot(tournament)
        ran = False
        try:
            state = runner.state(tournament)
            if state is None or not runner.wanted(tournament) or slot.failed_seq == runner.version(state):
                return
            if self._waits(runner, tournament, since):
                slot.queued_at = since  # a newer seq came meanwhile, and ``after``'s job of it may answer for us
                return
            if slot.done_seq >= runner.version(state):
                return  # another runner's job answered for this version (Runner.done)
            seq, version = state.seq, runner.version(state)
            ran = await worker.start()  # before the clock starts: a worker's start is not the job's price
            if not ran:
                return  # logged; the next update or join queues the job again
            slot.started = asyncio.get_running_loop().time()
            started = time.perf_counter()
            result = await self._watched(runner, tournament, worker, state)
            if result is _UNWANTED:
                return
            # its CPU time when it ended (a busy machine stretches a small job's wall time past CHEAP), else the wall
            spent = worker.cpu_seconds if result is not None else time.perf_counter() - started
            slot.price = _ALPHA * spent + (1 - _ALPHA) * slot.price if slot.measured else spent
            slot.measured = True
            slot.done_seq = max(slot.done_seq, version)
            if result is None:
                slot.failed_seq = version
                slot.price = max(slot.price, self.limits.projection_seconds)
                return
            runner.publish(tournament, seq, result)
        finally:
            slot.running = False
            self._free.append(worker)
            if ran and worker.pid is None:  # killed (past its limits, or cancelled): started again at once
                self._start(worker)
            if slot.again:
                slot.again = False
                runner.updated(tournament)
            if self._wake is not None:
                self._wake.set()

    async def _watched(self, runner: Runner[Any, Any], tournament: str, worker: WorkerProcess, state: Any) -> Any:
        """``runner.compute(state)`` on ``worker``; an arbiters' job is cancelled (worker killed) once nobody wants it,
        a spectators' job runs to its end (see the module docstring)."""
        work = asyncio.create_task(worker.run(runner.compute, state, kind=runner.kind))
        try:
            while runner.priority != ARBITERS or runner.wanted(tournament):
                done, _ = await asyncio.wait({work}, timeout=POLL)
                if done:
                    return work.result()
            log.info("%s of %s cancelled: nobody waits for it", runner.kind, tournament)
            return _UNWANTED
        finally:
            work.cancel()
            with suppress(asyncio.CancelledError):
                await work

    async def aclose(self) -> None:
        """Cancel every job and the dispatcher, stop every worker process (waits until they are reaped)."""
        for runner in self.runners:
            for tournament in list(runner.slots):
                runner.forget(tournament)
        tasks = [t for t in (self._dispatcher, *self._jobs) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for worker in self.workers:
            await asyncio.to_thread(worker.close, wait=True)


_UNWANTED: Final = object()
