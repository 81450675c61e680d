"""Limits: each has a safe default, can be set on ``tracker up``, and going over it gets a clear answer.

| limit | default | over it |
| --- | --- | --- |
| frame size (``--max-frame``) | 64 KiB | close 1009 |
| subscriptions per connection | 32 | ``error`` ``too-many-subscriptions`` |
| connections in total (``--max-connections``) | 20,000 | HTTP 503 on the upgrade |
| submits per second per token | 200/s, burst 400 | ``rejected`` ``rate-limited`` |
| unsent bytes per subscriber (``--max-buffer``) | 1 MiB | close 1008 (tests/embedded/test_embedded.py) |
| unanswered submits per connection | 64 | the server stops reading that connection |

Each test starts its own ``tracker up`` with small limits, so they are cheap to reach.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import select
import time
from collections.abc import Callable
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.conftest import TOKEN, RunningTracker
from tests.gateway.test_hostile import RawWs, four_players, frame, http_get, http_json, journal_rows, result
from tests.reliability_log import record
from tests.wsclient import recv, recv_until, reply_to, send
from tracker.config import Limits

Factory = Callable[..., RunningTracker]


def rss_mib(pid: int) -> float:
    """Resident memory of a process, from /proc/PID/status."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def metric(server: RunningTracker, name: str) -> float:
    text = http_get(server.port, "/metrics")[1].decode()
    return float(next(line.split()[1] for line in text.splitlines() if line.startswith(name + " ")))


def test_the_defaults_are_safe() -> None:
    limits = Limits()
    assert 16 * 1024 <= limits.max_frame <= 1 << 20  # a 500-player opening fits; a client cannot make us buffer MBs
    assert 1 <= limits.max_subscriptions <= 100
    assert limits.max_connections <= 65_000
    assert 0 < limits.submits_per_second <= 1000 and limits.submit_burst <= 2 * 1000
    assert limits.max_buffer <= 16 << 20
    record("limits", "default limits are finite and small", tried=5, unit="limits", outcome="all bounded")


def test_a_message_of_exactly_max_frame_is_served_and_one_byte_more_closes_1009(tracker_factory: Factory) -> None:
    server = tracker_factory("--max-frame", "2048")

    def padded(n: int) -> str:
        text = json.dumps({"type": "subscribe", "tournament": "frame-cup"})
        return text[:-1] + " " * (n - len(text)) + "}"

    async def probe() -> tuple[str, int | None]:
        async with connect(server.ws_url, max_size=None) as bystander:
            await send(bystander, {"type": "subscribe", "tournament": "frame-cup"})
            await recv(bystander)
            async with connect(server.ws_url, max_size=None) as ws:
                await ws.send(padded(2048))
                served = (await recv(ws))["type"]
                await ws.send(padded(2049))
                with pytest.raises(ConnectionClosed) as closed:
                    await recv(ws)
            await send(bystander, {"type": "submit", "token": TOKEN, "event": four_players("frame-cup", "Frame Cup")})
            update, _ = await recv_until(bystander, lambda m: m["type"] == "update")  # the others are still served
            assert update["seq"] == 1
            return served, None if closed.value.rcvd is None else closed.value.rcvd.code

    assert asyncio.run(probe()) == ("snapshot", 1009)
    record(
        "limits",
        "frame size (--max-frame 2048): 2,048 bytes served, 2,049 closed",
        tried=2,
        unit="messages",
        outcome="snapshot, then close 1009; other clients served",
    )


def test_the_subscription_limit_answers_too_many_subscriptions(tracker_server: RunningTracker) -> None:
    limit = Limits().max_subscriptions

    async def probe() -> dict[str, Any]:
        async with connect(tracker_server.ws_url) as ws:
            for i in range(limit):
                await send(ws, {"type": "subscribe", "tournament": f"t{i}"})
                assert (await recv(ws))["type"] == "snapshot"
            await send(ws, {"type": "subscribe", "tournament": "one-too-many"})
            over = await recv(ws)
            await send(ws, {"type": "subscribe", "tournament": "t0"})  # the same ones again are fine
            assert (await recv(ws))["type"] == "snapshot"
            return over

    over = asyncio.run(probe())
    assert over == {"type": "error", "code": "too-many-subscriptions", "reason": f"at most {limit} per connection"}
    record(
        "limits",
        f"subscriptions per connection (default {limit})",
        tried=limit + 2,
        unit="subscribes",
        outcome="error too-many-subscriptions past the limit; connection kept",
    )


def test_the_subscription_limit_is_configurable(tracker_factory: Factory) -> None:
    server = tracker_factory("--max-subscriptions", "2")

    async def probe() -> list[str]:
        async with connect(server.ws_url) as ws:
            codes = []
            for tid in ("a", "b", "c"):
                await send(ws, {"type": "subscribe", "tournament": tid})
                message = await recv(ws)
                codes.append(str(message.get("code", message["type"])))
            return codes

    assert asyncio.run(probe()) == ["snapshot", "snapshot", "too-many-subscriptions"]
    record(
        "limits",
        "subscriptions per connection set on the command line (--max-subscriptions 2)",
        tried=3,
        unit="subscribes",
        outcome="the third got error too-many-subscriptions",
    )


def test_connections_over_the_limit_get_503_and_pages_are_still_served(tracker_factory: Factory) -> None:
    limit = 5
    server = tracker_factory("--max-connections", str(limit))

    async def attempt() -> ClientConnection | int:
        try:
            return await connect(server.ws_url)
        except InvalidStatus as exc:
            assert exc.response.body is not None and b"too many connections" in exc.response.body
            return exc.response.status_code

    async def probe() -> tuple[int, int]:
        burst = await asyncio.gather(*(attempt() for _ in range(60)))  # concurrent handshakes race for the slots
        held = [c for c in burst if not isinstance(c, int)]
        refused = [c for c in burst if isinstance(c, int)]
        assert len(held) == limit and set(refused) == {503}
        assert http_json(server.port, "/healthz")["status"] == "ok"  # HTTP is not a websocket slot
        assert await attempt() == 503
        await held.pop().close()
        async with asyncio.timeout(10):  # the slot frees once the server has seen the close; ask until it has
            for _ in range(500):
                again = await attempt()
                if not isinstance(again, int):
                    break
                await asyncio.sleep(0.02)
        assert not isinstance(again, int), "the freed slot was never given to a new connection"
        held.append(again)
        await send(again, {"type": "subscribe", "tournament": "conn-cup"})
        assert (await recv(again))["type"] == "snapshot"
        await asyncio.gather(*(c.close() for c in held))
        return len(held), len(refused)

    held, refused = asyncio.run(probe())
    record(
        "limits",
        f"connections in total (--max-connections {limit}, 60 concurrent handshakes)",
        tried=62,
        unit="handshakes",
        outcome=f"{held} accepted, {refused + 1} got HTTP 503; a freed slot is reused; pages still served",
    )


def test_submits_over_the_rate_get_rate_limited_and_the_bucket_refills(tracker_server: RunningTracker) -> None:
    limits = Limits()
    n = 1200

    async def probe() -> tuple[dict[str, int], float]:
        codes: dict[str, int] = {}
        async with connect(tracker_server.ws_url) as ws:
            started = time.monotonic()
            for k in range(n):  # pipelined; the events name no open tournament, so none changes anything
                event = result("nowhere-cup", f"rate-{k}", 1, 1, 2, "1-0")
                await send(ws, {"type": "submit", "token": TOKEN, "event": event})
            async with asyncio.timeout(30):
                for _ in range(n):
                    message = json.loads(await ws.recv())
                    codes[message["code"]] = codes.get(message["code"], 0) + 1
                    if message["code"] == "rate-limited":
                        assert message["reason"] == "too many submits per second"
            elapsed = time.monotonic() - started
            async with asyncio.timeout(10):  # the bucket refills at the sustained rate
                while True:
                    await send(
                        ws, {"type": "submit", "token": TOKEN, "event": result("nowhere-cup", "refill", 1, 1, 2, "1-0")}
                    )
                    if (await reply_to(ws, "refill"))["code"] != "rate-limited":
                        break
                    await asyncio.sleep(1 / limits.submits_per_second)
        return codes, elapsed

    codes, elapsed = asyncio.run(probe())
    assert set(codes) == {"unknown-tournament", "rate-limited"}
    allowed = limits.submit_burst + limits.submits_per_second * elapsed + 1
    assert limits.submit_burst <= codes["unknown-tournament"] <= allowed
    assert journal_rows(tracker_server.data_dir) == {}
    record(
        "limits",
        f"submits per second per token (default {limits.submits_per_second:g}/s, burst {limits.submit_burst})",
        tried=n,
        unit="submits",
        outcome=(
            f"{codes['rate-limited']} rejected rate-limited, {codes['unknown-tournament']} processed "
            f"(≤ burst + rate × {elapsed:.2f} s); refills"
        ),
    )


def test_the_submit_rate_is_configurable(tracker_factory: Factory) -> None:
    server = tracker_factory("--submits-per-second", "1", "--submit-burst", "3")

    async def probe() -> list[str]:
        async with connect(server.ws_url) as ws:
            for k in range(5):
                await send(ws, {"type": "submit", "token": TOKEN, "event": result("nowhere", f"r{k}", 1, 1, 2, "1-0")})
            return [(await reply_to(ws, f"r{k}"))["code"] for k in range(5)]

    assert asyncio.run(probe()) == ["unknown-tournament"] * 3 + ["rate-limited"] * 2
    record(
        "limits",
        "submit rate set on the command line (--submits-per-second 1 --submit-burst 3)",
        tried=5,
        unit="submits",
        outcome="3 processed, the next 2 rejected rate-limited",
    )


@pytest.mark.timeout(120)
def test_a_client_that_never_reads_its_replies_cannot_grow_the_servers_memory(tracker_factory: Factory) -> None:
    """Without a token, a client pipelines submits and never reads: each becomes a task blocked on its reply.

    Unbounded, those tasks took the server from 33 MB to 1.7 GB in 20 s.  With the bound
    (``Limits.max_pending_submits``) the server stops reading that connection and the client's own send blocks.
    """
    server = tracker_factory()
    raw = RawWs(server.port)
    sock = raw.sock
    sock.setblocking(False)
    message = {"type": "submit", "token": "not-the-token", "event": result("t", "x" * 100, 1, 1, 2, "1-0")}
    batch = frame(0x1, json.dumps(message).encode()) * 100
    before = rss_mib(server.proc.pid)
    growth, sent, stalls, pending = 0.0, 0, 0, b""
    deadline = time.monotonic() + 20
    measured = time.monotonic()
    try:
        # write whole frames and never read; stop when the server has not taken a byte for 3 s (it stopped
        # reading us), when its memory grew past any reason, or after 20 s
        while time.monotonic() < deadline and growth < 200 and stalls < 3:
            pending = pending or batch
            if not select.select([], [sock], [], 1.0)[1]:
                stalls += 1
                continue
            stalls = 0
            with contextlib.suppress(BlockingIOError):
                n = sock.send(pending)
                sent += n
                pending = pending[n:]
            if time.monotonic() - measured > 0.25:
                growth, measured = rss_mib(server.proc.pid) - before, time.monotonic()
        growth = rss_mib(server.proc.pid) - before
    finally:
        raw.close()
    assert growth < 64, f"the server grew by {growth:.0f} MiB"

    async def still_serving() -> str:
        async with connect(server.ws_url) as ws:
            await send(ws, {"type": "subscribe", "tournament": "after-flood"})
            return str((await recv(ws))["type"])

    assert asyncio.run(still_serving()) == "snapshot"
    record(
        "limits",
        "unanswered submits per connection (client never reads)",
        tried=1,
        unit="connections",
        outcome=f"{sent / 1e6:.1f} MB sent before the server stopped reading; its memory grew {growth:.0f} MiB",
    )
