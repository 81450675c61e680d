"""The wall-clock figures the normal suite no longer asserts, for a quiet machine: ``make chaos`` runs these.

``make test`` must pass on a busy machine (issue 28, item 10), so its tests check correctness and ratios
to baselines measured in the same test.  The absolute figures the README states are checked here, behind
``-m chaos`` (deselected by default): a bystander's ping under a ping flood stays under 100 ms, a
projection past its 1 s limit is stopped within 3 s, every command gives up on an unreachable broker
within 20 s when four run side by side, and a server that answered odd HTTP requests stops within 3 s.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import TOKEN, RunningTracker, data_file, start_tracker
from tests.gateway.test_abuse import FLOOD_SECONDS, flood_pings, http_raw, ping_bystander, request
from tests.gateway.test_worker_process import big_state, children, kill_all
from tracker.config import Limits
from tracker.derived.workers import WorkerProcess

pytestmark = pytest.mark.chaos

CLI = [sys.executable, "-m", "tracker.cli"]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RunningTracker]:
    running = start_tracker(tmp_path / "data")
    yield running
    running.stop()


def test_a_bystanders_ping_under_a_ping_flood_stays_under_100_ms(server: RunningTracker) -> None:
    until = time.monotonic() + FLOOD_SECONDS
    flooder = threading.Thread(target=flood_pings, args=(server.port, until))
    flooder.start()
    try:
        rtts, _ = asyncio.run(ping_bystander(server.ws_url, server.proc.pid, until))
    finally:
        flooder.join(timeout=30)
    assert max(rtts) < 0.1, f"a bystander's ping took {max(rtts) * 1000:.0f} ms under a ping flood"


async def test_a_projection_past_its_one_second_limit_is_stopped_within_three() -> None:
    projector = WorkerProcess(Limits(projection_seconds=1.0, projection_memory=0))
    own = os.getpid()
    try:
        running = asyncio.ensure_future(projector.project(big_state()))
        async with asyncio.timeout(60):
            while not children(own):  # noqa: ASYNC110 (a process has no event to wait on)
                await asyncio.sleep(0.02)
        started = time.monotonic()
        assert await running is None
        assert time.monotonic() - started < 3
    finally:
        projector.close(wait=True)
        kill_all(children(own))


def test_four_commands_give_up_on_an_unreachable_broker_within_20_s(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        nowhere = f"kafka://127.0.0.1:{probe.getsockname()[1]}"
    rr6 = data_file("fide-tec-exercise16-rr6.trf")
    commands = [
        ["replay", str(rr6), "--broker", nowhere],
        ["follow", str(rr6), "--tournament", "nowhere", "--once", "--broker", nowhere],
        ["gateway", "--broker", nowhere, "--port", "0", "--token", TOKEN],
        ["worker", "--broker", nowhere, "--data-dir", str(tmp_path)],
    ]
    started = time.monotonic()
    running = [
        subprocess.Popen([*CLI, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for argv in commands
    ]
    for proc in running:
        assert proc.wait(timeout=60) == 1
    assert time.monotonic() - started < 20


def test_a_server_that_answered_odd_requests_stops_within_3_s(server: RunningTracker) -> None:
    for data in (request("BREW"), request("GET") * 2, b"GET /healthz HTTP/1.1\r\n"):
        http_raw(server.port, data, half_close=True)
    started = time.monotonic()
    assert server.stop() == 0
    assert time.monotonic() - started < 3
