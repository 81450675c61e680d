"""Shared fixtures: a real ``tracker up`` process on a free port.

Shell tests use real pieces (STYLE §12): the server is the installed CLI in
its own process, talking websockets and HTTP on 127.0.0.1.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.processes import spawn, stop_process

TOKEN = "test-arbiter-token"
REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"
PACKAGE_DATA = REPO / "tracker" / "data"
TEST_DATA = REPO / "tests" / "data"


def data_file(name: str) -> Path:
    """A reference crosstable: from ../shared/data when present, else the copy in tests/data, else the one bundled
    with the package (a clone with no ../shared beside it, as CI may make, has the last two)."""
    for base in (SHARED_DATA, TEST_DATA):
        if (base / name).exists():
            return base / name
    return PACKAGE_DATA / name


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
        return stop_process(self.proc, sig, timeout)


def start_tracker(data_dir: Path, *extra: str, env: dict[str, str] | None = None) -> RunningTracker:
    """Start ``tracker up --port 0`` and wait for its "listening" line (30 s at most)."""
    cmd = [sys.executable, "-m", "tracker.cli", "up", "--port", "0", "--data-dir", str(data_dir), "--token", TOKEN]
    process = spawn("tracker up", [*cmd, *extra], env)
    try:
        port = int(process.expect(r"listening on http://127\.0\.0\.1:(\d+)/", timeout=30).group(1))
    except AssertionError:
        process.proc.kill()
        raise RuntimeError("tracker up did not start:\n" + "".join(process.output)) from None
    return RunningTracker(process.proc, port, data_dir, output=process.output)


# -- running in parallel (pytest-xdist: ``make test`` runs ``-n`` workers with ``--dist loadgroup``) ----------


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Keep a module's tests on one worker when they share a module-scoped fixture (a Chromium, a broker and
    its worker, a server): the fixture then starts once, not once per worker that gets one of them.  Every
    other test goes to whichever worker is free.  Without xdist the mark is inert.

    The grouped modules run first (the browser ones first of all): a group is one worker's long stretch, and
    started last it would leave the other workers idle at the end while it runs.  Each module keeps its order.
    """
    grouped: set[str] = set()
    for item in items:
        fixtures = getattr(item, "_fixtureinfo", None)
        if fixtures is None:
            continue
        scopes = [defs[-1].scope for defs in fixtures.name2fixturedefs.values() if defs]
        if any(scope in ("module", "class", "package") for scope in scopes):
            module = item.nodeid.split("::", 1)[0]
            item.add_marker(pytest.mark.xdist_group(module))
            grouped.add(module)

    def first(item: pytest.Item) -> int:
        module = item.nodeid.split("::", 1)[0]
        return 0 if module in grouped and module.startswith("tests/web/") else 1 if module in grouped else 2

    items.sort(key=first)  # stable: the order within each module, and of the modules within each kind, stays


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
