"""Starting and stopping the processes a workload talks to (all on 127.0.0.1).

Every process is started in its own session, its output pumped by a
thread (so it never blocks on a full pipe), waited for with a deadline,
and stopped with SIGTERM then SIGKILL — by its own pid only.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO

from bench.common import child_env


@dataclass
class Proc:
    """A child process and the lines it printed."""

    proc: subprocess.Popen[str]
    name: str
    lines: queue.Queue[str | None] = field(default_factory=queue.Queue)
    output: list[str] = field(default_factory=list)

    def expect(self, pattern: str, timeout: float) -> re.Match[str]:
        """Wait for a line matching ``pattern``; raise RuntimeError with the output otherwise."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                break
            if match := regex.search(line):
                return match
        self.stop()
        tail = "".join(self.output[-30:])
        raise RuntimeError(f"{self.name}: no line matching {pattern!r} within {timeout:g} s; output:\n{tail}")

    def readline(self, timeout: float) -> str | None:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return None

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text)
        self.proc.stdin.flush()

    def stop(self, timeout: float = 15) -> int | None:
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                return self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            except ProcessLookupError:
                pass
        try:
            return self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None


def start(cmd: Sequence[str], name: str, *, stdin: bool = False, env: dict[str, str] | None = None) -> Proc:
    proc = subprocess.Popen(
        list(cmd),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        text=True,
        env={**child_env(), **(env or {})},
        start_new_session=True,
        bufsize=1,
    )
    running = Proc(proc, name)
    assert proc.stdout is not None

    def pump(stream: IO[str]) -> None:
        for line in stream:
            running.output.append(line)
            running.lines.put(line)
        running.lines.put(None)

    threading.Thread(target=pump, args=(proc.stdout,), daemon=True, name=f"pump-{name}").start()
    return running


def start_tracker(python: str, data_dir: str, token: str, *extra: str, stock: bool = False) -> tuple[Proc, int]:
    """``tracker up`` on a free port (``stock``: the CLI as shipped; else :mod:`bench._up`)."""
    module = "tracker.cli" if stock else "bench._up"
    args = ["up"] if stock else []
    cmd = [python, "-m", module, *args, "--port", "0", "--data-dir", data_dir, "--token", token, *extra]
    running = start(cmd, "tracker up")
    match = running.expect(r"listening on http://127\.0\.0\.1:(\d+)/", timeout=60)
    return running, int(match.group(1))


def kill_all(procs: Sequence[Proc]) -> None:
    for p in procs:
        if p.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.proc.pid, signal.SIGKILL)
