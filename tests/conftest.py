"""Shared fixtures: a real ``tracker up`` process on a free port.

Shell tests use real pieces (STYLE §12): the server is the installed CLI in
its own process, talking websockets and HTTP on 127.0.0.1.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import pytest

TOKEN = "test-arbiter-token"
REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"
PACKAGE_DATA = REPO / "tracker" / "data"


def data_file(name: str) -> Path:
    """A reference crosstable: from ../shared/data when present, else the bundled copy."""
    shared = SHARED_DATA / name
    return shared if shared.exists() else PACKAGE_DATA / name


@dataclass
class RunningTracker:
    """A ``tracker up`` subprocess and how to reach it."""

    proc: subprocess.Popen[str]
    port: int
    data_dir: Path
    token: str = TOKEN
    output: list[str] = field(default_factory=list)

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(timeout=5)


def start_tracker(data_dir: Path, *extra: str, env: dict[str, str] | None = None) -> RunningTracker:
    """Start ``tracker up --port 0`` and wait for its "listening" line (30 s at most)."""
    cmd = [
        sys.executable,
        "-m",
        "tracker.cli",
        "up",
        "--port",
        "0",
        "--data-dir",
        str(data_dir),
        "--token",
        TOKEN,
        *extra,
    ]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"},
        start_new_session=True,
    )
    assert proc.stdout is not None
    output: list[str] = []
    lines: queue.Queue[str | None] = queue.Queue()

    def pump(stream: IO[str]) -> None:  # keeps reading so the server never blocks on a full pipe
        for line in stream:
            output.append(line)
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, args=(proc.stdout,), daemon=True).start()
    deadline = time.monotonic() + 30
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            break
        if line is None:
            break
        if "listening on http://" in line:
            port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
            return RunningTracker(proc, port, data_dir, output=output)
    proc.kill()
    raise RuntimeError("tracker up did not start:\n" + "".join(output))


@pytest.fixture
def tracker_factory(tmp_path: Path) -> Iterator[Callable[..., RunningTracker]]:
    """Start trackers (stopped at the end of the test); each call may reuse a data dir."""
    started: list[RunningTracker] = []

    def factory(*extra: str, data_dir: Path | None = None, env: dict[str, str] | None = None) -> RunningTracker:
        running = start_tracker(data_dir or tmp_path / "data", *extra, env=env)
        started.append(running)
        return running

    yield factory
    for running in started:
        running.stop()


@pytest.fixture
def tracker_server(tracker_factory: Callable[..., RunningTracker]) -> RunningTracker:
    """One running embedded tracker with an empty journal."""
    return tracker_factory()
