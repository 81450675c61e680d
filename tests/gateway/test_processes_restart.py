"""``tracker gateway --processes N`` keeps serving when one process dies (issue 37, item 8).

A SIGKILLed child is named by the parent (its number and pid, and why it ended) and replaced on the same port while
the others serve; a child that keeps dying is restarted at most a bounded number of times a minute, then the set
stops with a sentence that says so; the per-address caps and token throttles are divided among the processes so
that they hold for the set.

Real pieces: Tansu, a worker, the gateway command (the fixtures of ``tests/kafka``); the restart bound runs
:func:`run_processes` itself with a child that exits at once.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from websockets.asyncio.client import ClientConnection, connect

from tests.builders import TID, opened
from tests.conftest import TOKEN
from tests.kafka.test_kafka_processes import children, connections_by_process, start_gateway
from tests.kafka_fixtures import Broker, kafka_broker  # noqa: F401  (a fixture)
from tests.wsclient import recv_until, reply_to, send, submit
from tracker.config import Limits
from tracker.gateway.auth import TokenGuard, Verdict
from tracker.gateway.processes import per_process

pytestmark = pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads /proc (Linux)")


async def served_by(url: str, port: int, pid: int, most: int = 64) -> int:
    """Open subscribed connections (each must get its snapshot) until one is held by process ``pid``; return
    how many it took.  The kernel spreads connections over the processes by a hash, so 64 tries miss a
    process serving half of them with odds of 2**-64."""
    held: list[ClientConnection] = []
    try:
        for tries in range(1, most + 1):
            ws = await connect(url)
            held.append(ws)
            await send(ws, {"type": "subscribe", "tournament": TID})
            message, _ = await recv_until(ws, lambda m: m.get("type") == "snapshot", timeout=30)
            assert message["tournament"] == TID
            if connections_by_process([pid], port)[pid] > 0:
                return tries
        raise AssertionError(f"none of {most} connections reached process {pid}")
    finally:
        for ws in held:
            await ws.close()


def test_a_killed_child_is_named_and_replaced_while_the_set_serves(
    kafka_broker: Broker,  # noqa: F811  (the fixture)
) -> None:
    kafka_broker.worker()
    gateway, port = start_gateway(kafka_broker, 2)
    before = children(gateway.proc.pid)
    assert len(before) == 2
    url = f"ws://127.0.0.1:{port}/ws"

    async def opening() -> None:
        async with connect(url) as arbiter:
            event = opened(4)
            await submit(arbiter, TOKEN, event)
            assert (await reply_to(arbiter, event.id, timeout=60))["type"] == "ack"

    asyncio.run(opening())
    victim = before[0]
    os.kill(victim, signal.SIGKILL)
    said = gateway.expect(r"process (\d) of 2 \(pid (\d+)\) was killed by SIGKILL; restarting it", timeout=30)
    assert int(said.group(2)) == victim
    number = said.group(1)
    again = gateway.expect(rf"process {number} of 2 \(pid (\d+)\) serving on ", timeout=60)
    replacement = int(again.group(1))
    assert replacement != victim
    assert gateway.proc.poll() is None  # the parent still runs
    now = children(gateway.proc.pid)
    assert sorted(now) == sorted([before[1], replacement])  # the other child was never stopped
    # every connection gets a snapshot on the same port, whichever child the kernel hands it to
    assert asyncio.run(served_by(url, port, replacement)) >= 1
    assert sum("was killed by" in line for line in gateway.output) == 1  # said once
    gateway.proc.send_signal(signal.SIGTERM)  # a clean shutdown still drains and stops them all
    assert gateway.proc.wait(timeout=30) == 0
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() for pid in now) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(Path(f"/proc/{pid}").exists() for pid in now)


#: The restart bound's scenario, run in a process of its own: run_processes forks, and a fork beside a test
#: runner's threads (pytest-xdist's execnet) can hang the child on a lock the fork copied held.
DYING = """
import signal
from tracker.gateway.processes import run_processes

def serve(port, child):
    if child.number == 2:  # this one serves, until it is told to stop
        child.say(f"test: listening on http://127.0.0.1:{port}/")
        signal.pause()
        return 0
    return 3  # dies at once, without a sentence: restarted until the bound

status = run_processes("test", "127.0.0.1", 0, 2, serve, say=lambda line: print("set serving", flush=True), restarts=3)
print("status", status, flush=True)
"""


def test_a_child_that_keeps_dying_stops_the_set_after_the_restart_bound() -> None:
    run = subprocess.run([sys.executable, "-c", DYING], capture_output=True, text=True, timeout=120, check=False)
    out, err = run.stdout, run.stderr
    assert "status 3" in out, (out, err)
    assert err.count("test: process 1 of 2 (pid ") == 4  # its first life and 3 restarts, each said once
    assert err.count("exited with status 3; restarting it") == 3
    assert "test: process 1 of 2 ended 4 times within 60 s (at most 3 restarts in 60 s); stopping all" in err
    assert "set serving" not in out  # the set never served in full


#: A SIGTERM that reaches a child in its first moments, before it has put back the default handlers (it still
#: has the parent's, copied by the fork), must end it as it would later: the set's stop must not depend on how fast
#: a child starts.  The hook holds child 2 in those moments (the second fork) while child 1 dies to the bound.
SLOW_START = """
import os, signal, time
from tracker.gateway.processes import run_processes

forks = []  # counted in the parent before each fork: a child sees its own place

def slow_second_child():
    if len(forks) == 2:  # child 2: the set stops while it is still starting
        time.sleep(1.5)

os.register_at_fork(before=lambda: forks.append(1), after_in_child=slow_second_child)

def serve(port, child):
    if child.number == 2:
        child.say(f"test: listening on http://127.0.0.1:{port}/")
        signal.pause()
        return 0
    return 3

status = run_processes("test", "127.0.0.1", 0, 2, serve, say=print, restarts=3)
print("status", status, flush=True)
"""


def test_a_child_stopped_while_it_starts_still_stops() -> None:
    run = subprocess.run([sys.executable, "-c", SLOW_START], capture_output=True, text=True, timeout=30, check=False)
    assert "status 3" in run.stdout, (run.stdout, run.stderr)
    assert "stopping all" in run.stderr, run.stderr


#: A child that has already ended when the supervisor first looks (it died between the fork and the first
#: wait, or between two turns of the loop) must still be seen: said, and restarted or counted to the bound.
ENDED_BEFORE_LOOKING = """
import multiprocessing, os, time
from tracker.gateway.processes import _Slot, _supervise

context = multiprocessing.get_context("fork")

def life(code, write):
    if code == 0:
        os.write(write, b"ready\\n")
        time.sleep(90)  # serves; ends by itself even if this script is killed
    os._exit(code)

def start(slot):
    read, write = os.pipe()
    process = context.Process(target=life, args=(3 if slot.number == 1 else 0, write))
    process.start()
    os.close(write)
    slot.process, slot.pipe, slot.served = process, read, False

slots = [_Slot(1), _Slot(2)]
for slot in slots:
    start(slot)
while slots[0].process.exitcode is None:  # child 1 has ended, and its end been reaped, before the loop looks
    time.sleep(0.01)
try:
    print("status", _supervise("test", "127.0.0.1", 0, slots, start, print, lambda: False, [], 0, 60.0), flush=True)
finally:
    slots[1].process.kill()
"""


def test_a_child_that_ended_before_the_supervisor_looked_is_still_seen() -> None:
    run = subprocess.run(
        [sys.executable, "-c", ENDED_BEFORE_LOOKING], capture_output=True, text=True, timeout=60, check=False
    )
    assert "status 3" in run.stdout, (run.stdout, run.stderr)
    assert "test: process 1 of 2" in run.stderr and "exited with status 3" in run.stderr, run.stderr


@pytest.mark.parametrize(
    ("processes", "cap", "per_address", "joins", "submits"),
    [(1, 300, 100, 2.0, 200.0), (3, 100, 34, 2.0 / 3, 200.0 / 3)],
)
def test_caps_and_throttles_are_shared_among_the_processes(
    processes: int, cap: int, per_address: int, joins: float, submits: float
) -> None:
    limits = per_process(Limits(max_connections=300, max_connections_per_address=100), processes)
    assert limits.max_connections == cap
    assert limits.max_connections_per_address == per_address  # rounded up: 3 × 34 ≥ 100
    assert limits.stakes_joins_per_second == pytest.approx(joins)
    assert limits.stakes_join_burst == -(-Limits().stakes_join_burst // processes)
    assert limits.submits_per_second == pytest.approx(submits)
    assert limits.submit_burst == -(-Limits().submit_burst // processes)
    assert limits.max_subscriptions == Limits().max_subscriptions  # per connection: as it was
    assert limits.subscribes_per_second == Limits().subscribes_per_second


def test_the_wrong_token_budgets_hold_for_the_set_not_per_process() -> None:
    """Two children's guards together compare no more wrong tokens than one gateway's budget allows."""
    whole = Limits()

    def guard_of(limits: Limits) -> TokenGuard:
        return TokenGuard.of_limits("right-token", limits, clock=lambda: 0.0)  # time stands still: nothing refills

    one = guard_of(whole)
    alone = sum(one.check(f"guess-{k}", "203.0.113.7") is Verdict.WRONG for k in range(1000))
    children = [guard_of(per_process(whole, 2)) for _ in range(2)]
    together = sum(child.check(f"guess-{k}", "203.0.113.7") is Verdict.WRONG for child in children for k in range(1000))
    assert alone == whole.wrong_token_burst
    assert alone <= together <= alone + 1  # rounded up per child: at most one more than one gateway's burst
    # every address's and the global budget, shared the same way
    shared = per_process(whole, 3)
    assert shared.wrong_tokens_per_second == pytest.approx(whole.wrong_tokens_per_second / 3)
    assert shared.wrong_tokens_total_per_second == pytest.approx(whole.wrong_tokens_total_per_second / 3)
    assert shared.wrong_token_total_burst == -(-whole.wrong_token_total_burst // 3)
