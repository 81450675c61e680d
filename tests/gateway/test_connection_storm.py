"""Connections that arrive while the server is busy wait in the kernel for it, not dropped (issue 40).

A storm of arrivals (thousands of subscribers opening at once) finds the event loop busy with the handshakes
before them.  The kernel holds established connections for the server up to its listen backlog; beyond it,
it drops the clients' SYNs, and each retries after 1 s, then 3 s, then 7 s: past a websocket client's opening
timeout.  Here ``tracker up`` is stopped (SIGSTOP: the busiest a loop can be) while 600 clients connect; every
TCP connection must be established by the kernel while it is stopped, and once it runs again every client
must complete its handshake and get its snapshot.  With asyncio's default backlog (100) about a hundred are
established and the rest wait on SYN retries.

Real pieces: ``tracker up``, plain sockets, websockets' client on them.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from tests.builders import TID, opened
from tests.conftest import RunningTracker
from tests.wsclient import reply_to, submit

SOMAXCONN = (
    int(Path("/proc/sys/net/core/somaxconn").read_text()) if Path("/proc/sys/net/core/somaxconn").exists() else 0
)
ARRIVALS = min(600, SOMAXCONN)  # the kernel caps a listen backlog at net.core.somaxconn

pytestmark = pytest.mark.skipif(ARRIVALS <= 200, reason="net.core.somaxconn too small to tell the backlogs apart")


def _connect_all(port: int, count: int, within: float) -> tuple[list[socket.socket], int]:
    """Start ``count`` non-blocking connects; return the sockets and how many the kernel established within
    ``within`` seconds."""
    socks = []
    for _ in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        err = sock.connect_ex(("127.0.0.1", port))
        assert err in (0, 115), os.strerror(err)  # 115: EINPROGRESS
        socks.append(sock)
    deadline = time.monotonic() + within
    pending = set(range(count))
    while pending and time.monotonic() < deadline:
        for k in list(pending):
            if socks[k].getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0 and _established(socks[k]):
                pending.discard(k)
        time.sleep(0.05)
    return socks, count - len(pending)


def _established(sock: socket.socket) -> bool:
    try:
        sock.getpeername()
    except OSError:
        return False
    return True


def test_arrivals_while_the_server_is_stopped_are_all_held_and_all_served(
    tracker_factory: Callable[..., RunningTracker],
) -> None:
    tracker = tracker_factory("--max-connections-per-address", "5000", "--max-connections", "5000")

    async def opening() -> None:
        async with connect(tracker.ws_url) as arbiter:
            event = opened(4)
            await submit(arbiter, tracker.token, event)
            assert (await reply_to(arbiter, event.id, timeout=30))["type"] == "ack"

    asyncio.run(opening())
    os.kill(tracker.proc.pid, signal.SIGSTOP)
    try:
        socks, established = _connect_all(tracker.port, ARRIVALS, within=3.0)
    finally:
        os.kill(tracker.proc.pid, signal.SIGCONT)
    try:
        assert established == ARRIVALS  # all held by the kernel while the server could not accept one

        async def subscribe(sock: socket.socket) -> str:
            sock.setblocking(True)
            async with connect(tracker.ws_url, sock=sock, open_timeout=60, ping_interval=None) as ws:
                await ws.send(json.dumps({"type": "subscribe", "tournament": TID}))
                async with asyncio.timeout(60):
                    return str(json.loads(await ws.recv())["type"])

        async def everyone() -> list[str]:
            return await asyncio.gather(*(subscribe(sock) for sock in socks))

        assert asyncio.run(everyone()) == ["snapshot"] * ARRIVALS
    finally:
        for sock in socks:
            sock.close()
