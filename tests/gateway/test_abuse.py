"""Abuse that needs no token: a ping flood, token guessing, odd HTTP.  Each against a real ``tracker up``.

The server must stay small and quick for everybody else: a client that
floods pings and never reads grows the server by less than 64 MiB and a
bystander's ping keeps its round trip under 100 ms; a client guessing the
arbiter token gets at most about 100 comparisons per second; HTTP answers
only GET and HEAD, and a pipelined request ends the connection without a
traceback.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

from websockets.asyncio.client import connect

from tests.conftest import RunningTracker
from tests.gateway.test_hostile import RawWs, frame
from tests.gateway.test_limits import rss_mib
from tests.reliability_log import record

Factory = Callable[..., RunningTracker]

PING = 0x9
FLOOD_SECONDS = 4.0


def flood_pings(port: int, until: float, sent: list[int]) -> None:
    """Send 125-byte pings on one connection until ``until`` (monotonic), never reading a pong."""
    ws = RawWs(port)
    assert ws.status == 101
    burst = b"".join(frame(PING, bytes(125)) for _ in range(500))
    ws.sock.settimeout(0.05)
    try:
        while time.monotonic() < until:
            try:
                ws.sock.sendall(burst)
            except TimeoutError:
                continue  # the server stopped reading us: exactly what it should do
            except OSError:
                break  # the server closed us: also fine
            sent[0] += 500
    finally:
        ws.close()


def test_a_ping_flood_neither_grows_the_server_nor_delays_a_bystander(tracker_server: RunningTracker) -> None:
    pid = tracker_server.proc.pid
    before = rss_mib(pid)
    sent = [0]
    rtts: list[float] = []
    peak = before

    async def bystander(until: float) -> None:
        nonlocal peak
        async with connect(tracker_server.ws_url) as ws:
            while time.monotonic() < until:
                started = time.perf_counter()
                pong = await ws.ping()
                async with asyncio.timeout(10):
                    await pong
                rtts.append(time.perf_counter() - started)
                peak = max(peak, rss_mib(pid))
                await asyncio.sleep(0.1)

    until = time.monotonic() + FLOOD_SECONDS
    flooder = threading.Thread(target=flood_pings, args=(tracker_server.port, until, sent))
    flooder.start()
    try:
        asyncio.run(bystander(until))
    finally:
        flooder.join(timeout=30)
    peak = max(peak, rss_mib(pid))
    worst = max(rtts)
    assert tracker_server.proc.poll() is None
    assert peak - before < 64, f"the server grew by {peak - before:.1f} MiB under a ping flood"
    assert worst < 0.1, f"a bystander's ping took {worst * 1000:.0f} ms under a ping flood"
    record(
        "limits",
        f"ping flood without reading for {FLOOD_SECONDS:.0f} s ({sent[0]} pings sent)",
        tried=len(rtts),
        unit="bystander pings",
        outcome=f"server RSS +{peak - before:.1f} MiB, worst bystander round trip {worst * 1000:.1f} ms",
    )


def test_pings_read_together_get_one_pong_for_the_latest(tracker_server: RunningTracker) -> None:
    ws = RawWs(tracker_server.port)
    try:
        assert ws.status == 101
        ws.send(b"".join(frame(PING, f"ping {k}".encode()) for k in range(2000)))
        pongs: list[bytes] = []
        while not pongs or pongs[-1] != b"ping 1999":
            opcode, payload = ws.read_frame()
            assert opcode == 0xA, (opcode, payload)
            pongs.append(payload)
    finally:
        ws.close()
    # every pong answers a ping, in order, and far fewer than one per ping (the reads took many pings each)
    numbers = [int(p.split()[1]) for p in pongs]
    assert numbers == sorted(set(numbers))
    assert len(pongs) < 200, f"{len(pongs)} pongs for 2000 pings read together"
