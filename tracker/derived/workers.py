"""Arbiter projections in worker processes, so they never hold the server's GIL.

An exact projection of ten open games takes a second or more of pure
Python, a bounds projection of a fresh 500-player round robin about ten.
Run in a thread it would share the interpreter lock with the event loop, and
every ack and update would wait its turn; in a process of its own it costs
the server only the pickling of the tournament.

How this works
--------------

:class:`WorkerProcess` owns one spawned worker process, started on first use.
The tournament is pickled at once, in the caller's thread, so the live state
may change the moment :meth:`WorkerProcess.project` returns control; the worker
sends back the encoded message, so a large projection costs the server its
bytes, not its objects nor the time to encode them.  A
projection is bounded three ways, and each way ends in "no projection this
time" (``None``; arbiters keep the one they have):

- in time: past ``Limits.projection_seconds`` the worker is killed;
- in memory: the worker's address space is capped (``RLIMIT_AS``) at
  ``Limits.projection_memory``, so a runaway projection raises
  :class:`MemoryError` in the worker instead of growing the machine; the
  worker is then replaced, to start the next projection with a clean heap;
- by its caller: cancelling :meth:`WorkerProcess.project` kills the worker.

A worker dies with the server even on SIGKILL: on Linux the kernel sends it
SIGKILL when its parent dies (``PR_SET_PDEATHSIG``); elsewhere, and as a
fallback, a thread in the worker exits it once its parent pid changes.

:class:`~tracker.derived.pool.Pool` decides which job runs on which worker
when (:mod:`tracker.derived.pool`); :mod:`tracker.derived.arbiters` and
:mod:`tracker.derived.stakes` say what to compute and who receives it.
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import suppress
from types import FrameType
from typing import Any, Final, Protocol, TypeVar

from tracker.config import Limits
from tracker.core.crosstable import Tournament
from tracker.core.errors import ProjectionUnavailable
from tracker.core.projection import Projection, project
from tracker.protocol import projection_message

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Seconds a new worker process may take to start (import and answer) before it is given up.
START_TIMEOUT: Final = 60.0
#: How often a worker checks that its parent is alive, and :class:`ArbiterProjections` that an arbiter still waits.
POLL: Final = 0.2
_PR_SET_PDEATHSIG: Final = 1


# -- the worker process -----------------------------------------------------------------


#: How much lower a worker process's CPU priority is than the server's (``nice``): on a machine with as many
#: cores as busy processes, derived work yields to acks and fan-out instead of taking turns with them.
NICENESS: Final = 10


def _start_worker(memory_limit: int, parent: int) -> None:
    """Runs first in every worker process: lower its CPU priority, bound its memory, tie its life to ``parent``'s.

    It ignores SIGINT: Ctrl-C in a terminal reaches the whole process group, and the parent stops its workers
    itself (a worker's ``KeyboardInterrupt`` would print ``Process SpawnProcess-N:`` and a traceback).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with suppress(OSError):
        os.nice(NICENESS)
    if memory_limit > 0:
        import resource

        if sys.platform == "linux":  # glibc loads it when a thread exits: not possible once memory is short
            with suppress(OSError):
                ctypes.CDLL("libgcc_s.so.1")
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the kernel was told to tell us
        os._exit(1)
    threading.Thread(target=_exit_with, args=(parent,), name="parent-watch", daemon=True).start()


def _exit_with(parent: int) -> None:
    """Exit the process once ``parent`` is gone (orphans are re-parented, so the parent pid changes)."""
    while os.getppid() == parent:
        time.sleep(POLL)
    os._exit(1)


class Work(Protocol):
    """What a worker computes from: a tournament's state, or a value built around one (picklable)."""

    @property
    def id(self) -> str: ...

    @property
    def seq(self) -> int: ...


W = TypeVar("W", bound=Work)


def _in_worker(job: Callable[[W], T], state: bytes) -> tuple[T | None, float]:
    """Runs ``job`` on the pickled tournament in the worker process: its result (``None`` when it ran out of
    memory) and the CPU seconds it took."""
    started = time.process_time()
    try:
        return job(pickle.loads(state)), time.process_time() - started
    except MemoryError:
        pass
    # outside the handler the traceback, and with it the projection's memory, is released: the
    # answer can be sent (formatting that traceback for the parent would itself run out of memory)
    return None, time.process_time() - started


def projection_job(state: Tournament) -> bytes:
    """The encoded ``projection`` message: the worker encodes it, the server only forwards the bytes."""
    return projection_message(project(state))


def bounds_job(state: Tournament) -> bytes:
    """The interval bounds alone (``project(t, exact_limit=-1)``: fast, flagged not exact), marked preliminary."""
    return projection_message(project(state, exact_limit=-1), preliminary=True)


#: Seconds between the deadline's rings once it has passed (until one is raised where the search runs).
RING_AGAIN = 0.01


class OutOfTime(Exception):
    """The exact search's own time is over (raised by the worker's interval timer)."""


class deadline:  # noqa: N801 (used as a function: ``with deadline(seconds):``)
    """Raise :class:`OutOfTime` in this (the worker's main) thread once ``seconds`` of wall time have passed
    (at once, before the block runs, when ``seconds`` is 0 or less: no time at all).

    The ring repeats every :data:`RING_AGAIN` until the block is left: Python runs the handler at its next
    bytecode, and where that is a ``__del__`` or a weakref callback (the garbage collector runs them in the
    middle of the search) the exception is printed as ignored and lost; one lost ring, and the search would run
    to its end.  A ring is never raised in :meth:`__exit__` (nor in what it runs): landing there (at its first
    instruction, before it disarms the timer) it was raised out of the cleanup, which then never ran while the
    exception lived, and the rings went on after the block (a loaded CI run).  The block is over by then: nothing
    is cut.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.left = False
        self.previous: Any = None

    def __enter__(self) -> None:
        if self.seconds <= 0:
            raise OutOfTime
        self.previous = signal.signal(signal.SIGALRM, self._ring)
        signal.setitimer(signal.ITIMER_REAL, max(self.seconds, 0.001), RING_AGAIN)

    def _ring(self, signum: int, frame: FrameType | None) -> None:
        if self.left:
            return
        while frame is not None:
            if frame.f_code is _EXIT:
                return  # the block is being left (see the class docstring)
            frame = frame.f_back
        raise OutOfTime

    def __exit__(self, *exc: object) -> None:
        self.left = True
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self.previous)


_EXIT: Final = deadline.__exit__.__code__


# -- one worker ------------------------------------------------------------------------------


class WorkerProcess:
    """Work (projections, searches) computed one at a time in a spawned worker process, bounded in time and memory."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits if limits is not None else Limits()
        self._pool: ProcessPoolExecutor | None = None
        self._pid: int | None = None
        self._starting: asyncio.Future[int] | None = None  # the process's start, its pid once it answers
        self.cpu_seconds = 0.0  # what the last job took of the worker's CPU (its cost, whatever the machine's load)

    @property
    def pid(self) -> int | None:
        """The worker process's id while one runs."""
        return self._pid

    @property
    def started(self) -> bool:
        """Whether a worker process runs or is starting (since the last :meth:`close`)."""
        return self._pool is not None

    async def project(self, state: Tournament) -> Projection | None:
        """The projection of ``state``, or ``None`` when it could not be had.

        ``None`` when the projection took longer than the time limit, ran out
        of its memory, or the worker died; the worker is replaced for the
        next projection and a warning logged.  Cancelling this call kills the
        worker (a projection under way stops at once).
        """
        return await self.run(project, state)

    async def message(self, state: Tournament) -> bytes | None:
        """The ``projection`` message of ``state``, encoded in the worker; ``None`` as for :meth:`project`."""
        return await self.run(projection_job, state)

    async def run(self, job: Callable[[W], T], state: W, *, kind: str = "projection") -> T | None:
        """``job(state)`` in the worker process (``job`` a module-level function), bounded as :meth:`project`.

        The time limit counts the job's own running time: the worker's start (the first job, or after a
        kill) is not part of it.  One job at a time: the caller (:class:`~tracker.derived.pool.Pool`)
        hands this worker one job at a time, so a timeout kills only the job that overran.
        """
        payload = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)  # now: the live state may change after
        try:
            pool = await self._started()
            async with asyncio.timeout(self.limits.projection_seconds):
                result, self.cpu_seconds = await asyncio.get_running_loop().run_in_executor(
                    pool, _in_worker, job, payload
                )
            if result is not None:
                return result
            why = f"needed more than its {self.limits.projection_memory >> 20} MiB"
        except TimeoutError:
            why = f"took more than {self.limits.projection_seconds:g} s"
        except (BrokenProcessPool, MemoryError):  # killed, or out of memory before projecting
            why = "lost its process"
        except ProjectionUnavailable as exc:  # the tournament's order has a code the projection does not rank by
            log.info("no %s for %s: %s", kind, state.id, exc)
            return None
        except BaseException:  # cancelled (nobody waits any more, or shutdown): stop the work under way
            self.close()
            raise
        log.warning("the %s of %s after seq %d %s: stopped; not sent", kind, state.id, state.seq, why)
        self.close()
        return None

    async def start(self) -> bool:
        """Start the worker process unless it runs (while it starts, wait for that start); ``False`` when it did
        not answer within :data:`START_TIMEOUT` or could not be spawned (a warning logged; the next job tries again).

        :class:`~tracker.derived.pool.Pool` starts a worker before it times a job (a start is not the job's
        price) and starts a killed one again at once, so that the next job finds it running.
        """
        try:
            await self._started()
        except (TimeoutError, BrokenProcessPool, OSError) as exc:
            log.warning("a worker process did not start: %s", exc or type(exc).__name__)
            self.close()
            return False
        return True

    async def _started(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_worker,
                initargs=(self.limits.projection_memory, os.getpid()),
            )
            # the pool is spawned by this (the event loop's) thread: PR_SET_PDEATHSIG follows the thread; the
            # worker starts with SIGINT blocked (the mask is inherited), so a Ctrl-C while it starts is not its
            # KeyboardInterrupt either (see _start_worker)
            blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            try:
                self._starting = asyncio.get_running_loop().run_in_executor(self._pool, os.getpid)  # spawns it, now
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        pool, starting = self._pool, self._starting
        if self._pid is None and starting is not None:
            # shielded: every caller waits for the same start, and one that gives up does not stop it for the others
            async with asyncio.timeout(START_TIMEOUT):
                pid = await asyncio.shield(starting)
            if self._starting is not starting:
                raise BrokenProcessPool("the worker process was stopped while it started")
            self._pid = pid
        return pool

    def close(self, *, wait: bool = False) -> None:
        """Kill the worker process (a projection under way is abandoned); the next projection starts another.

        With ``wait``, return once the process is reaped (blocks: call it in a thread).
        """
        pool, pid = self._pool, self._pid
        self._pool = self._pid = self._starting = None
        if pid is not None:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if pool is not None:
            pool.shutdown(wait=wait, cancel_futures=True)
