"""No viewer can hurt, round two (issue 37): each reproduction as the attack round ran it (without the token
where it needed none), against a real ``tracker up`` or the piece itself, then what holds instead.
"""

from __future__ import annotations

import asyncio
import os
import time
from contextlib import suppress

from websockets.asyncio.client import ClientConnection, connect

from tests.conftest import RunningTracker
from tests.gateway.test_viewers import fill, round_robin
from tests.wsclient import recv_until, send


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def settled_cpu(pid: int) -> float:
    """The process's CPU time once it has stopped spending it (what it was given to do, it has done)."""
    last = cpu_seconds(pid)
    while True:
        await asyncio.sleep(0.3)
        now = cpu_seconds(pid)
        if now - last < 0.02:
            return now
        last = now


async def opened_and_answered(server: RunningTracker, count: int, message: dict[str, object]) -> list[ClientConnection]:
    """``count`` connections (over loopback addresses 127.0.0.2–9) that each sent ``message``, then a message the
    server answers with an error: once it answers, the server has handled the first."""
    conns = []
    for k in range(count):
        ws = await connect(server.ws_url, local_addr=(f"127.0.0.{2 + k % 8}", 0), max_size=None)
        await send(ws, message)
        await send(ws, {"type": "no-such-message"})
        conns.append(ws)
    for ws in conns:
        await recv_until(ws, lambda m: m["type"] == "error", timeout=120, check=False)
    return conns


async def test_three_hundred_delayed_subscribes_cost_about_what_plain_ones_do(tracker_server: RunningTracker) -> None:
    """Reproduction (item 1): 300 ``subscribe since=1 delay=600`` on a 30-player tournament with 300 updates cost
    20.8–21.7 s of server CPU against 0.3–0.4 s for 300 plain ones.  Now each delayed subscriber's cursor is
    looked at when its own data comes due: within 3× the plain ones, in the same test."""
    tid = "delayed-thirty"
    await fill(tracker_server, round_robin(tid, 30, 300))
    pid = tracker_server.proc.pid
    start = await settled_cpu(pid)
    plain = await opened_and_answered(tracker_server, 300, {"type": "subscribe", "tournament": tid, "since": 1})
    plain_cpu = await settled_cpu(pid) - start
    for ws in plain:
        await ws.close()
    start = await settled_cpu(pid)
    began = time.time()
    delayed = await opened_and_answered(
        tracker_server, 300, {"type": "subscribe", "tournament": tid, "since": 1, "delay": 600}
    )
    delayed_cpu = await settled_cpu(pid) - start
    try:
        early = []
        for ws in delayed[:20]:  # and none of them is sent anything 600 s early
            with suppress(TimeoutError):
                early.append(await asyncio.wait_for(ws.recv(), 0.05))
        assert not early, f"a delayed subscriber got {early[0][:80]!r} {time.time() - began:.0f} s after subscribing"
    finally:
        for ws in delayed:
            await ws.close()
    print(f"server CPU: 300 plain subscribes {plain_cpu:.2f} s, 300 delayed {delayed_cpu:.2f} s")
    assert delayed_cpu <= 3 * max(plain_cpu, 0.05), (
        f"300 delayed subscribes cost {delayed_cpu:.2f} s of server CPU, 300 plain ones {plain_cpu:.2f} s"
    )
