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
once all have.  A child that exits by itself (its broker is gone, it
crashed) stops the others, and the parent exits with its status, so that
whatever restarts gateways restarts the whole set; a failure the children
share (the broker cannot be reached) is said once, not once per child.  A child dies with the
parent, even on SIGKILL (``PR_SET_PDEATHSIG``: it gets a SIGTERM and drains).

Limits (``--max-connections``, per address, per token) and metrics are per
process: ``/metrics`` on the shared port is one child's, picked by the
kernel like any connection.  The embedded ``tracker up`` stays one process:
its journal and its processor are one writer, which N processes would have
to share.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Final

from tracker.core.errors import TrackerError

PR_SET_PDEATHSIG: Final = 1


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


def run_processes(
    name: str,
    host: str,
    port: int,
    processes: int,
    serve: Callable[[int, Child], int],
    *,
    say: Callable[[str], None] = print,
) -> int:
    """Run ``serve(port, child)`` in ``processes`` forked children on one port until SIGTERM/SIGINT; return
    the exit status (see the module docstring).

    ``serve`` runs in the child and returns its exit status; it must listen with ``SO_REUSEPORT`` on
    ``port`` and hand its ``listening on`` line to ``child.say``.  What it raises is said in one sentence
    (a :class:`TrackerError` or an :class:`OSError`, as the CLI would) or as a traceback, and ends that
    child with status 1.  Raises :class:`OSError` when the port cannot be reserved.
    """
    holder = reserve(host, port)
    port = int(holder.getsockname()[1])
    context = multiprocessing.get_context("fork")
    stopping = False
    children: list[Any] = []
    pipes: list[int] = []

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        for child in children:
            if child.pid is not None and child.exitcode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child.pid, signal.SIGTERM)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    parent = os.getpid()
    try:
        for number in range(1, processes + 1):
            read, write = os.pipe()
            child = context.Process(
                target=_child,
                args=(serve, port, Child(number, processes, write), parent, name),
                name=f"{name} {number}",
            )
            child.start()
            os.close(write)
            children.append(child)
            pipes.append(read)
        errors: list[str] = []
        status = _wait(name, host, port, processes, children, pipes, say, lambda: stopping, errors)
        if not stopping:  # a child ended by itself: the set goes with it
            stop(signal.SIGTERM, None)
        for child in children:
            child.join()
        for read in pipes:
            with contextlib.suppress(OSError):
                for line in os.read(read, 1 << 16).decode("utf-8", "replace").splitlines():
                    if line.startswith("error ") and line[6:] not in errors:
                        errors.append(line[6:])
        for sentence in errors:
            print(sentence, file=sys.stderr, flush=True)
        return status or max((c.exitcode or 0 for c in children), default=0)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for read in pipes:
            os.close(read)
        holder.close()


def _wait(
    name: str,
    host: str,
    port: int,
    processes: int,
    children: list[Any],
    pipes: list[int],
    say: Callable[[str], None],
    stopping: Callable[[], bool],
    errors: list[str],
) -> int:
    """Say ``listening on`` once every child serves; return once a child ends (its status; 0 when stopped).

    A child writes ``ready`` on its pipe once it serves, and ``error`` and a sentence when it fails
    (added to ``errors``: the parent says each once, not once per child).
    """
    open_pipes, served = set(pipes), 0
    while True:
        ready = multiprocessing.connection.wait([*open_pipes, *(c.sentinel for c in children)])
        for read in open_pipes & set(ready):
            data = os.read(read, 1 << 16)
            if not data:
                open_pipes.discard(read)  # it ended: its sentinel says so
            for line in data.decode("utf-8", "replace").splitlines():
                if line == "ready":
                    served += 1
                    if served == processes and not stopping():
                        say(
                            f"{name}: listening on http://{host}:{port}/ (websocket ws://{host}:{port}/ws), "
                            f"{processes} processes"
                        )
                elif line.startswith("error ") and line[6:] not in errors:
                    errors.append(line[6:])
        ended = [c for c in children if c.sentinel in ready]
        if ended:
            for read in open_pipes:  # what the others wrote before they end is read below, as they end
                os.set_blocking(read, False)
            return 0 if stopping() else (ended[0].exitcode or 1)


def _child(serve: Callable[[int, Child], int], port: int, child: Child, parent: int, name: str) -> None:
    """A child's life: default signals, die with the parent, serve; exit with its status."""
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)
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
