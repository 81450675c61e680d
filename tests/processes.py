"""Subprocesses for the tests: started in their own session, output read line by line in the background.

``tracker up``, ``tracker worker``, ``tracker gateway`` and the Tansu broker
all run as real processes; :func:`spawn` starts one and :class:`Process`
keeps its output (a reader thread drains the pipe, so a chatty child never
blocks on it) and waits for the line a test expects.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import IO


def stop_process(proc: subprocess.Popen[str], sig: int = signal.SIGTERM, timeout: float = 15) -> int:
    """Send ``sig`` (if still running) and wait; SIGKILL after ``timeout`` seconds.  Returns the exit code."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait(timeout=5)


@dataclass
class Process:
    """A subprocess whose output is read line by line in the background."""

    name: str
    proc: subprocess.Popen[str]
    output: list[str] = field(default_factory=list)
    _lines: queue.Queue[str | None] = field(default_factory=queue.Queue)

    def __post_init__(self) -> None:
        assert self.proc.stdout is not None
        threading.Thread(target=self._pump, args=(self.proc.stdout,), daemon=True).start()

    def _pump(self, stream: IO[str]) -> None:  # never lets the child block on a full pipe
        for line in stream:
            self.output.append(line)
            self._lines.put(line)
        self._lines.put(None)

    def expect(self, pattern: str, timeout: float = 30) -> re.Match[str]:
        """Wait for the next output line matching ``pattern`` (a regex); return the match."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                break
            if match := re.search(pattern, line):
                return match
        raise AssertionError(f"{self.name}: no line matching {pattern!r}; output:\n" + "".join(self.output))

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15) -> int:
        return stop_process(self.proc, sig, timeout)


def spawn(name: str, cmd: list[str], env: dict[str, str] | None = None) -> Process:
    """Start ``cmd`` in a session of its own, stdout and stderr merged into :attr:`Process.output`."""
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"},
        start_new_session=True,
    )
    return Process(name, proc)
