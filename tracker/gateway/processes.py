"""N gateway processes on one port: every core of a gateway host, sharing nothing but what feeds them.

How this works
--------------

:func:`run_processes` is the parent: it reserves the port (a socket bound
with ``SO_REUSEPORT`` and never listening, so ``--port 0`` picks one port for
all), forks ``processes`` children and waits.  Each child is a whole
gateway (its own hub, websocket server, HTTP pages, Kafka consumers and
producer, projection workers) that listens on the same port with
``SO_REUSEPORT``: the kernel spreads new connections over the children
evenly, and a child that is busy fanning out never delays another's
clients.  The children share nothing; each follows the standings topic
itself, so every one serves every tournament, and a client that reconnects
to another child resumes with ``since`` as it would on another gateway.

The parent prints ``listening on …`` once every child serves (a child's own
line says which it is), and then only waits: SIGTERM or SIGINT is passed on
to every child, and each drains as a single gateway does (stop accepting,
close its clients with 1001, stop its background work); the parent exits
once all have.  A child that ends by itself (it crashed, it was killed) is
restarted in its place on the same port while the others serve; the parent
says once which (its number and pid) and why (its status or signal).  One
that ends more than ``RESTARTS`` times within ``RESTART_WINDOW`` seconds
stops the set, which exits with its status, so that whatever restarts
gateways sees a crash loop; so does a child that fails with a sentence
before any process in its place served (the broker cannot be reached), a
failure the children share, said once, not once per child.  A child dies
with the parent, even on SIGKILL (``PR_SET_PDEATHSIG``: it gets a SIGTERM
and drains).

Limits hold for the set: each child gets the total and per-address
connection caps and the per-address and per-token throttles divided by the
number of processes, rounded up (:func:`per_process`).  The kernel spreads
one address's connections over the children by a hash, so its total stays
near the cap; one connection (an arbiter's submits) gets 1/N of the token's
rate.  The wrong-token budgets (:mod:`tracker.gateway.auth`, per address and
over all addresses) are divided the same way, so a guesser spread over the
children by the kernel gets no more comparisons than one gateway allows.
Metrics are per process: ``/metrics`` on the shared port is one child's,
picked by the kernel like any connection.  The embedded ``tracker up`` stays one process:
its journal and its processor are one writer, which N processes would have
to share.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import dataclasses
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, Final

from tracker.config import Limits
from tracker.core.errors import TrackerError

PR_SET_PDEATHSIG: Final = 1
STOP_SIGNALS: Final = (signal.SIGTERM, signal.SIGINT)  # what stops the set, passed on to every child


def cores(quota: str = "/sys/fs/cgroup/cpu.max") -> int:
    """The CPUs this process may use, the default of ``--processes``: its affinity, or fewer when its cgroup
    (a container's CPU limit, cgroup v2 ``cpu.max``) allows less, rounded up."""
    try:
        count = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        count = os.cpu_count() or 1
    with contextlib.suppress(OSError, ValueError):
        limit, period = Path(quota).read_text(encoding="ascii").split()[:2]
        if limit != "max":
            count = min(count, -(-int(limit) // int(period)))
    return max(1, count)


def reserve(host: str, port: int) -> socket.socket:
    """A socket bound to ``(host, port)`` with ``SO_REUSEPORT`` that never listens: it holds the port (``0``: a
    free one) for the children, who bind it too and listen.  Raises :class:`OSError` when it cannot be bound."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(address)
    except OSError:
        sock.close()
        raise
    return sock


@dataclass(frozen=True, slots=True)
class Child:
    """What a child is told: its number (from 1), how many there are, and where to say it serves."""

    number: int
    count: int
    ready: int  # the write end of the pipe the parent waits on

    def say(self, line: str) -> None:
        """``say`` for a child's gateway: its ``listening on`` line goes to the parent, the rest is printed."""
        if ": listening on " in line:
            name, _, rest = line.partition(": listening on ")
            print(f"{name}: process {self.number} of {self.count} (pid {os.getpid()}) serving on {rest}", flush=True)
            os.write(self.ready, b"ready\n")
        else:
            print(line, flush=True)


RESTARTS: Final = 5  # restarts of one child within RESTART_WINDOW before the set stops
RESTART_WINDOW: Final = 60.0  # seconds


def per_process(limits: Limits, processes: int) -> Limits:
    """``limits`` for one of ``processes`` children, so that the caps and throttles hold for the set: each
    child gets the total cap and the per-address and per-token rates and bursts (the wrong-token budgets too)
    divided by ``processes``, rounded up (never 0).  Per-connection limits are as they were."""
    if processes <= 1:
        return limits

    def share(value: int) -> int:
        return max(1, -(-value // processes))

    return dataclasses.replace(
        limits,
        max_connections=share(limits.max_connections),
        max_connections_per_address=share(limits.max_connections_per_address),
        stakes_joins_per_second=limits.stakes_joins_per_second / processes,
        stakes_join_burst=share(limits.stakes_join_burst),
        submits_per_second=limits.submits_per_second / processes,
        submit_burst=share(limits.submit_burst),
        wrong_tokens_per_second=limits.wrong_tokens_per_second / processes,
        wrong_token_burst=share(limits.wrong_token_burst),
        wrong_tokens_total_per_second=limits.wrong_tokens_total_per_second / processes,
        wrong_token_total_burst=share(limits.wrong_token_total_burst),
    )


@dataclass(slots=True)
class _Slot:
    """One child's place in the set: the process now in it, its pipe, and when it was restarted."""

    number: int
    process: Any = None
    pipe: int = -1
    served: bool = False  # the process now in it said ``ready``
    ever_served: bool = False  # some process in it did
    failed: bool = False  # it wrote an ``error`` sentence
    ended: bool = False  # the process now in it ended while the set stopped, and that was seen
    restarts: deque[float] = field(default_factory=deque)


def run_processes(
    name: str,
    host: str,
    port: int,
    processes: int,
    serve: Callable[[int, Child], int],
    *,
    say: Callable[[str], None] = print,
    restarts: int = RESTARTS,
    window: float = RESTART_WINDOW,
) -> int:
    """Run ``serve(port, child)`` in ``processes`` forked children on one port until SIGTERM/SIGINT; return
    the exit status (see the module docstring).

    ``serve`` runs in the child and returns its exit status; it must listen with ``SO_REUSEPORT`` on
    ``port`` and hand its ``listening on`` line to ``child.say``.  What it raises is said in one sentence
    (a :class:`TrackerError` or an :class:`OSError`, as the CLI would) or as a traceback, and ends that
    child with status 1.  A child that ends by itself is restarted, at most ``restarts`` times within
    ``window`` seconds.  Raises :class:`OSError` when the port cannot be reserved.
    """
    holder = reserve(host, port)
    port = int(holder.getsockname()[1])
    context = multiprocessing.get_context("fork")
    stopping = False
    slots = [_Slot(number) for number in range(1, processes + 1)]
    parent = os.getpid()

    def kill(slot: _Slot) -> None:
        child = slot.process
        if child is not None and child.pid is not None and child.exitcode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGTERM)

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        for slot in slots:
            kill(slot)

    def start(slot: _Slot) -> None:
        read, write = os.pipe()
        child = context.Process(
            target=_child,
            args=(serve, port, Child(slot.number, processes, write), parent, name),
            name=f"{name} {slot.number}",
        )
        # SIGTERM/SIGINT held back over the fork: a child gets the parent's handlers with its memory, and one
        # signalled before it has put back the defaults would run the parent's stop in the child and go on
        # serving.  The child unblocks once its handlers are the defaults; what came meanwhile is then acted on.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            child.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        os.close(write)
        slot.process, slot.pipe, slot.served = child, read, False
        if stopping:  # a SIGTERM came while it was forked: it goes with the others
            kill(slot)

    previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    errors: list[str] = []
    try:
        for slot in slots:
            start(slot)
        status = _supervise(name, host, port, slots, start, say, lambda: stopping, errors, restarts, window)
        if not stopping:  # the set stops: a child failed to start, or died too often
            stop(signal.SIGTERM, None)
        for slot in slots:
            slot.process.join()
            _read(slot, errors)
        for sentence in errors:
            print(sentence, file=sys.stderr, flush=True)
        return status or max((max(slot.process.exitcode or 0, 0) for slot in slots), default=0)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for slot in slots:
            with contextlib.suppress(OSError):
                os.close(slot.pipe)
        holder.close()


def _read(slot: _Slot, errors: list[str]) -> bool:
    """Read what ``slot``'s child wrote (without waiting); return whether it said ``ready`` just now."""
    ready = False
    os.set_blocking(slot.pipe, False)
    with contextlib.suppress(OSError):
        while data := os.read(slot.pipe, 1 << 16):
            for line in data.decode("utf-8", "replace").splitlines():
                if line == "ready":
                    ready = not slot.served
                    slot.served = slot.ever_served = True
                elif line.startswith("error "):
                    slot.failed = True
                    if line[6:] not in errors:
                        errors.append(line[6:])
    return ready


def _why(exitcode: int | None) -> str:
    """How a child ended, in words: ``killed by SIGKILL``, ``exited with status 3``."""
    if exitcode is not None and exitcode < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-exitcode).name}"
        return f"was killed by signal {-exitcode}"
    return f"exited with status {exitcode}"


def _supervise(
    name: str,
    host: str,
    port: int,
    slots: list[_Slot],
    start: Callable[[_Slot], None],
    say: Callable[[str], None],
    stopping: Callable[[], bool],
    errors: list[str],
    restarts: int,
    window: float,
) -> int:
    """Say ``listening on`` once every child serves; restart a child that ends by itself; return the set's
    status once it is stopped (0), a child failed as it first started (its status), or a child ended more
    than ``restarts`` times within ``window`` seconds (its last status).

    A child writes ``ready`` on its pipe once it serves, and ``error`` and a sentence when it fails
    (added to ``errors``: the parent says each once, not once per child).  A child that fails with a
    sentence before any process in its place served is a failure of the set (the broker cannot be
    reached, the port is taken): it is not restarted, as a restart would fail alike.
    """
    count, said = len(slots), False
    while True:
        # every slot whose process's end has not been dealt with, ended or not: one that ended between two
        # turns (or before the first) has its sentinel ready, and is seen below like any other
        live = [slot for slot in slots if not slot.ended]
        ready = set(multiprocessing.connection.wait([slot.pipe for slot in live] + [s.process.sentinel for s in live]))
        for slot in live:
            if slot.pipe in ready:
                _read(slot, errors)
        if not said and all(slot.served for slot in slots) and not stopping():
            said = True
            say(f"{name}: listening on http://{host}:{port}/ (websocket ws://{host}:{port}/ws), {count} processes")
        for slot in live:
            if slot.process.sentinel not in ready:
                continue
            slot.process.join()
            _read(slot, errors)
            if stopping():
                slot.ended = True
                if all(s.process.exitcode is not None for s in slots):
                    return 0
                continue
            code = slot.process.exitcode
            status = code if code is not None and code > 0 else 1
            if slot.failed and not slot.ever_served:
                return status
            now = time.monotonic()
            while slot.restarts and now - slot.restarts[0] > window:
                slot.restarts.popleft()
            which = f"{name}: process {slot.number} of {count} (pid {slot.process.pid}) {_why(code)}"
            if len(slot.restarts) >= restarts:
                print(
                    f"{which}; {name}: process {slot.number} of {count} ended {len(slot.restarts) + 1} times "
                    f"within {window:g} s (at most {restarts} restarts in {window:g} s); stopping all",
                    file=sys.stderr,
                    flush=True,
                )
                return status
            slot.restarts.append(now)
            print(
                f"{which}; restarting it ({len(slot.restarts)} in the last {window:g} s)", file=sys.stderr, flush=True
            )
            os.close(slot.pipe)
            start(slot)


def _child(serve: Callable[[int, Child], int], port: int, child: Child, parent: int, name: str) -> None:
    """A child's life: default signals, die with the parent, serve; exit with its status."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)  # blocked by the parent over the fork
    _die_with(parent)
    try:
        status = serve(port, child)
    except (TrackerError, OSError) as exc:  # said once by the parent, however many children fail alike
        os.write(child.ready, f"error {name}: {exc}".replace("\n", " ").encode() + b"\n")
        status = 1
    except KeyboardInterrupt:
        status = 130
    sys.exit(status)


def _die_with(parent: int) -> None:
    """Ask the kernel for a SIGTERM when the parent dies (Linux); a child forked as it died exits at once."""
    path = ctypes.util.find_library("c")
    if path is None:
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(path, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        os._exit(1)
