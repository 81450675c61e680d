"""No viewer can starve, leak or swell the broadcast (issue 27): each reproduction, without the token, against
a real ``tracker up`` (or the hub itself), then what holds instead.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Callable

import msgspec
from websockets.asyncio.client import ClientConnection, connect

from tests.builders import berger, opened
from tests.conftest import RunningTracker
from tests.gateway.test_abuse import slower_than
from tests.gateway.test_limits import rss_mib
from tests.gateway.test_worker_process import children
from tests.wsclient import recv_until, reply_to, send, submit
from tracker.core.events import Event, ResultRecorded

Factory = Callable[..., RunningTracker]


def round_robin(tid: str, n: int, results: int) -> list[Event]:
    """An ``n``-player round robin opened and its first ``results`` games decided."""
    events: list[Event] = [msgspec.structs.replace(opened(n), tournament=tid, id=f"{tid}/open")]
    picks = ["1-0", "1/2-1/2", "0-1"]
    for rnd in berger(n):
        for w, b in rnd.pairs:
            if len(events) > results:
                return events
            events.append(ResultRecorded(f"{tid}/r{rnd.number}/{w}-{b}", tid, rnd.number, w, b, picks[(w + b) % 3]))
    return events


async def fill(server: RunningTracker, events: list[Event]) -> int:
    async with connect(server.ws_url, max_size=None) as ws:
        for event in events:
            await submit(ws, server.token, event)
        seq = 0
        for event in events:
            reply = await reply_to(ws, event.id, timeout=60)
            assert reply["type"] == "ack", reply
            seq = reply["seq"]
    return seq


async def many(server: RunningTracker, count: int, message: dict[str, object]) -> list[ClientConnection]:
    """``count`` connections (spread over loopback addresses) that each send ``message`` once."""
    conns = []
    for k in range(count):
        ws = await connect(server.ws_url, local_addr=(f"127.0.0.{2 + k % 8}", 0), max_size=None)
        await send(ws, message)
        conns.append(ws)
    return conns


async def test_a_thousand_delayed_resumes_do_not_swell_the_server(tracker_server: RunningTracker) -> None:
    """Reproduction (issue 27, item 3): 1,000 ``since: 1, delay: 600`` subscribers took the server from 39 MB to
    855 MB, and it stayed there after they closed.  Now what is delayed is read from the history when due."""
    tid = "delayed-cup"
    await fill(tracker_server, round_robin(tid, 24, 120))
    pid = tracker_server.proc.pid
    before = rss_mib(pid)
    conns = await many(tracker_server, 1000, {"type": "subscribe", "tournament": tid, "since": 1, "delay": 600})
    await asyncio.sleep(2)  # what the server does with them, it does now
    during = rss_mib(pid)
    for ws in conns:
        await ws.close()
    assert during - before < 64, f"1,000 delayed resumes grew the server by {during - before:.0f} MiB"
    await asyncio.sleep(1)
    after = rss_mib(pid)
    assert after - before < 64, f"and {after - before:.0f} MiB stayed after they closed"


async def test_one_address_cannot_take_every_connection_while_another_still_connects(
    tracker_factory: Factory,
) -> None:
    """Reproduction (item 4): 300 idle websockets from one address made every other websocket get HTTP 503."""
    server = tracker_factory("--max-connections-per-address", "200", "--max-connections", "1000")
    hogs = []
    refused = None
    for _ in range(300):
        ws = await connect(server.ws_url, local_addr=("127.0.0.9", 0))
        hogs.append(ws)
    try:
        for ws in hogs[200:]:  # past the cap: closed at once, with the reason
            async with asyncio.timeout(10):
                await ws.wait_closed()
            refused = ws.close_reason
            assert ws.close_code == 1008
        assert refused is not None and "too many connections from this address" in refused
        for ws in hogs[:200]:
            assert ws.close_code is None, "the ones under the cap stay"
        async with connect(server.ws_url, local_addr=("127.0.0.10", 0)) as other:
            await send(other, {"type": "subscribe", "tournament": "any"})
            message, _ = await recv_until(other, lambda m: m["type"] == "snapshot")
            assert message["seq"] == 0
    finally:
        for ws in hogs:
            await ws.close()


def test_wrong_tokens_from_many_addresses_are_compared_at_most_the_global_rate() -> None:
    """Reproduction (item 4): 50 loopback addresses compared 836 wrong tokens a second (100 each, no global cap)."""
    from tracker.gateway.auth import TokenGuard, Verdict

    now = [0.0]
    guard = TokenGuard("the-right-token-0123", clock=lambda: now[0])
    compared = 0
    for tick in range(100):  # one second, 50 addresses each sending 20 wrong tokens every 10 ms
        now[0] = tick / 100
        for k in range(50):
            for _ in range(20):
                if guard.check("wrong", f"10.0.{k}.1") is Verdict.WRONG:
                    compared += 1
    assert compared <= 300 + 300 * 1.0 + 1, f"{compared} wrong tokens compared in one second from 50 addresses"
    assert guard.check("the-right-token-0123", "10.9.9.9", proven=True) is Verdict.OK  # an arbiter at work is not


def test_an_ipv6_client_is_its_64_and_a_mapped_ipv4_client_its_address() -> None:
    from tracker.gateway.auth import address_of

    assert address_of(("2001:db8:1:2:aaaa::1", 1, 0, 0)) == address_of(("2001:db8:1:2:ffff::9", 1, 0, 0))
    assert address_of(("2001:db8:1:2::1", 1, 0, 0)) == "2001:db8:1:2::/64"
    assert address_of(("2001:db8:1:3::1", 1, 0, 0)) != "2001:db8:1:2::/64"
    assert address_of(("::ffff:192.0.2.7", 1, 0, 0)) == "192.0.2.7"
    assert address_of(("192.0.2.7", 1)) == "192.0.2.7"


def test_a_post_with_a_body_is_answered_405(tracker_server: RunningTracker) -> None:
    """Reproduction (item 8): ``POST /healthz`` with a body got no answer at all."""
    import socket

    with socket.create_connection(("127.0.0.1", tracker_server.port), timeout=10) as sock:
        sock.sendall(b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 405") and b"Allow: GET, HEAD" in answer


async def test_a_small_tournaments_stakes_arrive_while_a_client_loops_stakes_joins_on_three_slow_ones(
    tracker_server: RunningTracker,
) -> None:
    """Reproduction (issue 27 item 1, issue 37 item 6): one tokenless connection asking stakes of three 16-player
    tournaments (56 games open) and unsubscribing again, in a loop, with two CPU-bound processes beside the server.
    Each flip cancelled a big stakes job and its worker process and the next join started both again: a stream of
    process starts, 17-19 worker processes in three runs of this test at load 17-26, whose small tournament's
    stakes took 20.2, 15.3 and 14.6 s (at load 9: 23 processes, the stakes within 5 s).  Now a started
    spectators' job runs to its end (a seq's job is never started twice), a job is priced by its CPU time and a
    worker is kept running for the next one: 2 processes, 0.3-0.7 s."""
    slow = [f"slow-{k}" for k in range(3)]
    for tid in slow:
        await fill(tracker_server, round_robin(tid, 16, 64))  # 120 games, 56 open
    small = round_robin("small-cup", 4, 6)  # 4 players: 6 games, the last three go in one by one below
    await fill(tracker_server, small[:4])
    stop = asyncio.Event()

    async def loop_joins() -> None:
        async with connect(tracker_server.ws_url, local_addr=("127.0.0.5", 0)) as ws, asyncio.TaskGroup() as tasks:
            reading = tasks.create_task(drain(ws))  # an attacker who reads keeps the server sending to it
            while not stop.is_set():
                for tid in slow:
                    await send(ws, {"type": "subscribe", "tournament": tid, "stakes": True})
                    await asyncio.sleep(0.15)
                    await send(ws, {"type": "unsubscribe", "tournament": tid})
            reading.cancel()

    async def watch_workers() -> None:
        while not stop.is_set():
            workers.update(children(tracker_server.proc.pid))
            await asyncio.sleep(0.05)

    burners = burn(2)
    workers: set[int] = set()
    looping = asyncio.create_task(loop_joins())
    watching = asyncio.create_task(watch_workers())
    waited = []
    try:
        await asyncio.sleep(4)  # the loop's flips are under way
        async with (
            connect(tracker_server.ws_url, local_addr=("127.0.0.6", 0)) as watcher,
            connect(tracker_server.ws_url) as arbiter,
        ):
            await send(watcher, {"type": "subscribe", "tournament": "small-cup", "stakes": True})
            for event in small[4:]:
                await submit(arbiter, tracker_server.token, event)
                seq = (await reply_to(arbiter, event.id))["seq"]
                asked = time.monotonic()
                await recv_until(watcher, lambda m, s=seq: m["type"] == "stakes" and m["seq"] == s, timeout=20)
                waited.append(time.monotonic() - asked)
    finally:
        stop_all(burners)
        stop.set()
        await looping
        await watching
    assert max(waited) < 5, f"the small tournament's stakes took {', '.join(f'{w:.1f}' for w in waited)} s"
    # the pool's three, and one more for each big tournament whose one job ran past its time limit (then killed)
    assert len(workers) <= 3 + len(slow), f"{len(workers)} worker processes started under the loop"


async def drain(ws: ClientConnection) -> None:
    async for _ in ws:
        pass


def burn(count: int) -> list[subprocess.Popen[bytes]]:
    """``count`` CPU-bound processes (a busy machine), to be ended with :func:`stop_all`."""
    return [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(count)]


def stop_all(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.kill()
        process.wait()


async def test_the_arbiter_desk_stays_small_under_hundreds_of_rejected_big_openings(
    tracker_server: RunningTracker,
) -> None:
    """Reproduction (item 6): 320 rejected 500-player opens grew the server 36 → 95 MB and sent one arbiter
    70 MB; its 3.4 MB notices message closed a default client (1009).  Now a notice is a summary."""
    from tracker.core.events import Player, TournamentOpened

    tid = "desk-cup"
    token = tracker_server.token
    await fill(tracker_server, round_robin(tid, 4, 0))
    players = tuple(Player(start_no=k, name=f"P{k}") for k in range(1, 501))  # one frame (64 KiB) holds it
    twice = (*players[:-1], Player(start_no=1, name="Start number one again"))  # refused: two share a number
    received = 0
    async with connect(tracker_server.ws_url) as arbiter, connect(tracker_server.ws_url, max_size=None) as sender:
        await send(arbiter, {"type": "subscribe", "tournament": tid, "token": token})
        await recv_until(arbiter, lambda m: m["type"] == "notices")
        for k in range(320):
            await submit(sender, token, TournamentOpened(f"big-{k}", tid, "Big", twice))
        for k in range(320):
            assert (await reply_to(sender, f"big-{k}", timeout=60))["code"] in ("already-open", "invalid-tournament")
        async with asyncio.timeout(30):
            while True:
                data = await arbiter.recv()
                received += len(data)
                message = json.loads(data)
                if message["type"] == "notices" and message["notices"][-1]["event"]["id"] == "big-319":
                    break
        # a second arbiter device gets the whole desk: a default client (1 MiB frames) reads it
        async with connect(tracker_server.ws_url) as again:
            await send(again, {"type": "subscribe", "tournament": tid, "token": token})
            desk, _ = await recv_until(again, lambda m: m["type"] == "notices")
    assert received < 1 << 20, f"one arbiter was sent {received} bytes for 320 notices"
    assert len(json.dumps(desk)) < 64 << 10 and len(desk["notices"]) == 40
    assert desk["notices"][-1]["event"] == {
        "type": "tournament_opened",
        "id": "big-319",
        "tournament": tid,
        "players": 500,
    }


async def test_one_result_in_a_big_tie_does_not_hold_a_bystanders_ping(tracker_server: RunningTracker) -> None:
    """Reproduction (item 5): after two all-drawn rounds of a 500-player round robin one result cost 4.8 s on
    the event loop, so a bystander's ping waited 28.9 s over 20 results.  Compared with its own baseline."""
    tid = "tie-cup"
    n = 500
    rounds = berger(n)
    events: list[Event] = [msgspec.structs.replace(opened(n), tournament=tid, id=f"{tid}/open")]
    for rnd in rounds[:2]:
        events += [
            ResultRecorded(f"{tid}/r{rnd.number}/{w}-{b}", tid, rnd.number, w, b, "1/2-1/2") for w, b in rnd.pairs
        ]
    await fill(tracker_server, events)

    async def pings(ws: ClientConnection, count: int) -> list[float]:
        out = []
        for _ in range(count):
            started = time.perf_counter()
            async with asyncio.timeout(30):
                await (await ws.ping())
            out.append(time.perf_counter() - started)
            await asyncio.sleep(0.02)
        return out

    async with connect(tracker_server.ws_url) as bystander, connect(tracker_server.ws_url) as arbiter:
        baseline = await pings(bystander, 20)
        third = [ResultRecorded(f"{tid}/r3/{w}-{b}", tid, 3, w, b, "1-0") for w, b in rounds[2].pairs[:20]]

        async def results() -> None:
            for event in third:
                await submit(arbiter, tracker_server.token, event)
                assert (await reply_to(arbiter, event.id, timeout=60))["type"] == "ack"

        during, _ = await asyncio.gather(pings(bystander, 40), results())
    # the ping flood's yardstick (test_abuse.slower_than): nine in ten within ten times the baseline + 300 ms
    # and every one within a second; the loop held 4.8 s a result before.  A result of a 500-player event
    # still costs the loop its standings (tens of ms; 132 ms for one ping in ten with the other tests'
    # workers on the same two cores, CI of c74e632), hence 300 ms over the ping flood's 100
    assert (slow := slower_than(baseline, during, floor=0.3)) is None, f"during the results {slow}"
