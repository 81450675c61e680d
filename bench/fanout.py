"""Workload 4: fan-out to many subscribers of one tournament, against a bare websockets broadcast and the floor.

For each subscriber count, three times (tracker, the bare broadcast and the
floor, each first in turn): start the server, open a 16-player round robin
(tracker only), start subscriber processes (:mod:`bench.fanout_client`, a
few hundred to a few thousand connections each, never in this process),
wait until every connection has its snapshot, then send ``updates``
results one at a time:

* **tracker** — a ``tracker up`` subprocess (stock CLI, durable journal);
  the controller submits a result as an arbiter and gets the ``ack``
  (sent after the update was published to every subscriber);
* **bare** — :mod:`bench.bare_server`: the controller sends the very same
  ``update`` message bytes tracker sent for that result (computed by the
  core from the same events), the server ``broadcast``s them and acks;
* **floor** — :mod:`bench.floor_server`: the controller sends the very
  delta bytes tracker writes its delta subscribers for that result
  (:func:`expected_deltas`); the server frames them once, on one deflate
  stream at tracker's settings, and writes that one byte string to every
  subscriber's transport, then acks.  Nothing per subscriber but the write.

Per update, "ack → last" is the time from the controller receiving the ack
to the last subscriber receiving the update (every process stamps with
CLOCK_MONOTONIC, one clock for the machine); "send → last" starts at the
controller sending.  The next update is sent once every subscriber has the
previous one.

The subscribers offer permessage-deflate as browsers do.  The bare server
keeps websockets' defaults, so it compresses every subscriber's copy with
that connection's own compressor (today's broadcast, the baseline); tracker
compresses each update once per window size, on the feed's own deflate
stream with context takeover (:mod:`tracker.gateway.frames`).  :data:`TRACKER_SUBSCRIBE`
adds fields to the tracker subscribers' ``subscribe`` (field deltas).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import math
import os
import signal
import statistics
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from websockets.asyncio.client import connect

from bench.common import (
    Result,
    Row,
    Sizes,
    cpu_seconds,
    fmt_ms,
    fmt_ratio,
    median,
    now_ns,
    percentile,
    python,
    raise_fd_limit,
    save_figure,
    say,
    timed,
)
from bench.procs import Proc, kill_all, start, start_tracker
from bench.scenario import tournament
from tracker.core.apply import apply
from tracker.core.events import encode_event
from tracker.gateway.hub import Hub
from tracker.gateway.metrics import Metrics
from tracker.protocol import standings_payload, update_message

ANCHORS = {"bare": "bench.bare_server", "floor": "bench.floor_server"}  # each anchor's server module
SYSTEMS = ("tracker", "bare", "floor")
TOKEN = "bench-fanout-token"
TID = "fanout-rr16"
PLAYERS = 16
TARGET = 0.5
PER_PROCESS = 2500
# Extra fields of the tracker subscribers' ``subscribe`` (the bare server ignores what subscribers send), e.g.
# ``{"updates": "delta"}`` to measure field deltas; empty: full updates, the very bytes the bare server sends.
TRACKER_SUBSCRIBE: dict[str, object] = {"updates": "delta"}
# every subscriber connects from 127.0.0.1: the per-address cap (a bound on one client) is lifted for the benchmark
TRACKER_LIMITS = ("--max-connections-per-address", "1000000", "--max-connections", "1000000")
IDLE_SECONDS = 2.0  # the server's idle CPU is read over this long before the updates and after them
CPU_TARGET_US = 20.0  # CPU per subscriber per update at 10,000 subscribers
CPU_FLAT = 1.2  # at the highest count over at the lowest (the issue: 20,000 over 1,000)
CPU_FLOOR = 1.2  # tracker's CPU per subscriber per update over the floor's, at every count
BURST_SINGLES = 5
BURST_COUNT = 3
BURST_SIZE = 10
BURST_GAP = 0.2
BURST_PAUSE = 0.5
BURST_TARGET = 2.0  # the last result of a burst's p99 over a single result's
# the burst's subscribers decode every message as it is read (bench.fanout_client's decode mode), as pages do: a
# subscriber that falls behind then pays for each message it is written, and the server's merges are what it saves
BURST_CLIENTS = "decode"


@dataclass
class Sample:
    seq: int
    sent: int
    acked: int
    first: int
    last: int
    median_arrival: int
    length: int
    broadcast_s: float | None = None


@dataclass
class Run:
    system: str
    subscribers: int
    samples: list[Sample] = field(default_factory=list)
    connect_s: float = 0.0
    server_broadcast_s: float | None = None
    missing: int = 0
    cpu_s: float = math.nan  # the server's CPU time (user + system) from the first update sent to the last received
    elapsed_s: float = math.nan  # the wall time of that
    idle_rate: float = math.nan  # the server's CPU s per s, everyone connected, no update (mean of before and after)
    bursts: Bursts | None = None
    latencies: list[float] = field(default_factory=list)  # send → each subscriber's arrival, every update (ms)
    rss_per_subscriber: float = math.nan  # the server's RSS growth from no subscriber to all connected (bytes)
    merged: float | None = None  # tracker: subscribers written a merge (a snapshot and the newest), all the run
    dropped: float | None = None  # tracker: subscribers dropped as slow clients, all the run

    def cpu_per_delivery_us(self) -> float:
        """The server's CPU per subscriber per update (µs), its idle CPU over the same time taken off."""
        spent = self.cpu_s - self.idle_rate * self.elapsed_s
        return 1e6 * spent / (self.subscribers * len(self.samples)) if self.samples else math.nan

    def spread_ms(self) -> list[float]:
        """First subscriber receiving → last subscriber receiving: the fan-out itself."""
        return [(s.last - s.first) / 1e6 for s in self.samples]

    def ack_to_last_ms(self) -> list[float]:
        return [(s.last - s.acked) / 1e6 for s in self.samples]

    def send_to_last_ms(self) -> list[float]:
        return [(s.last - s.sent) / 1e6 for s in self.samples]

    def send_to_median_ms(self) -> list[float]:
        return [(s.median_arrival - s.sent) / 1e6 for s in self.samples]


def expected_messages(updates: int, tid: str = TID) -> tuple[list[object], list[str]]:
    """The result events and the exact ``update`` text tracker publishes for each."""
    opened, results = tournament(tid, PLAYERS, seed=9)
    state, first = apply(None, opened)
    assert first is not None
    previous = first.standings
    events: list[object] = [opened]
    messages: list[str] = []
    for event in results[:updates]:
        state, update = apply(state, event, previous)
        assert update is not None
        previous = update.standings
        events.append(event)
        messages.append(update_message(update).decode())
    return events, messages


def expected_deltas(updates: int, tid: str = TID) -> list[bytes]:
    """The exact ``update`` bytes tracker writes its delta subscribers for each result (what the floor sends).

    Worked out by a hub of tracker's own (:class:`~tracker.gateway.hub.Hub`), given what the embedded
    processor publishes: the opening's update, then each result's.
    """
    opened, results = tournament(tid, PLAYERS, seed=9)
    hub = Hub(Metrics())
    state, update = apply(None, opened)
    assert update is not None
    previous = update.standings
    payload = standings_payload(update.standings)
    hub.publish(payload, update_message(update, payload))
    deltas: list[bytes] = []
    for event in results[:updates]:
        state, update = apply(state, event, previous)
        assert update is not None
        previous = update.standings
        payload = standings_payload(update.standings)
        hub.publish(payload, update_message(update, payload))
        latest = hub.latest(tid)
        assert latest is not None and latest[0] == update.seq
        deltas.append(latest[1])
    return deltas


def _processes(count: int, limit: int) -> list[int]:
    procs = max(1, min(limit, math.ceil(count / PER_PROCESS), count))
    procs = max(procs, min(limit, math.ceil(count / 500)))  # 1,000: two, so the subscribers are not the bottleneck
    base, extra = divmod(count, procs)
    return [base + (1 if k < extra else 0) for k in range(procs)]


def _wait_lines(clients: list[Proc], prefix: str, timeout: float) -> list[str]:
    """One line starting with ``prefix`` from each client (other lines are kept in their output)."""
    got: list[str] = []
    deadline = time.monotonic() + timeout
    for client in clients:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {prefix!r} line from a subscriber process within {timeout:g} s")
            line = client.readline(timeout=min(left, 1.0))
            if line is None:
                if client.proc.poll() is not None:
                    raise RuntimeError("a subscriber process died:\n" + "".join(client.output[-20:]))
                if deadline - time.monotonic() <= 0:
                    states = []
                    for other in clients:
                        with contextlib.suppress(OSError):
                            os.kill(other.proc.pid, signal.SIGUSR1)
                        state = other.readline(timeout=2.0)
                        states.append((state or "no answer").strip())
                    raise TimeoutError(f"no {prefix!r} line from a subscriber process within {timeout:g} s: {states}")
                continue
            if line.startswith(prefix):
                got.append(line)
                break
    return got


async def _control(
    system: str,
    url: str,
    events: list[object],
    messages: list[str],
    clients: list[Proc],
    pid: int | None = None,
    token: str = TOKEN,
    deltas: list[bytes] | None = None,
) -> Run:
    """Send the updates one at a time (tracker: as an arbiter's submits; bare: ``messages``; floor: ``deltas``)."""
    run = Run(system, 0)
    async with connect(url, max_size=2**24, open_timeout=30, ping_interval=None) as ws:
        if system in ANCHORS:
            await ws.send(json.dumps({"type": "control"}))
        if pid is not None:  # the server's CPU with everyone connected and nothing sent: its keepalive pings
            cpu0, t0 = cpu_seconds(pid), time.perf_counter()
            await asyncio.sleep(IDLE_SECONDS)
            run.idle_rate = (cpu_seconds(pid) - cpu0) / (time.perf_counter() - t0)
            cpu0, t0 = cpu_seconds(pid), time.perf_counter()
        for k, message in enumerate(messages):
            event = events[k + 1]
            delta = deltas[k].decode() if deltas is not None else None
            if system == "tracker":
                frame = json.dumps({"type": "submit", "token": token, "event": json.loads(encode_event(event))})  # type: ignore[arg-type]
            elif system == "floor":
                assert delta is not None, "the floor sends tracker's delta bytes"
                frame = delta
            else:
                frame = message
            sent = now_ns()
            await ws.send(frame)
            while True:
                reply = json.loads(await ws.recv())
                if reply.get("type") == "ack":
                    break
                if reply.get("type") in ("rejected", "error"):
                    raise RuntimeError(f"{system}: {reply}")
            acked = now_ns()
            lines = await asyncio.to_thread(_wait_lines, clients, "done ", 120.0)
            seqs, lengths, arrivals = set(), set(), []
            for line in lines:
                _, seq, length, times = line.split(" ", 3)
                seqs.add(int(seq))
                lengths.add(int(length))
                arrivals.extend(json.loads(times))
            assert len(seqs) == 1, seqs
            if system == "bare" or (system == "tracker" and not TRACKER_SUBSCRIBE):
                assert lengths == {len(message)}, (lengths, len(message))
            elif delta is not None and (system == "floor" or TRACKER_SUBSCRIBE == {"updates": "delta"}):
                # tracker's delta subscribers and the floor's read the very same text (a merge counts 0)
                assert lengths <= {len(delta), 0}, (system, lengths, len(delta))
            arrivals.sort()
            run.latencies += [(t - sent) / 1e6 for t in arrivals]
            run.samples.append(
                Sample(
                    seq=seqs.pop(),
                    sent=sent,
                    acked=acked,
                    first=arrivals[0],
                    last=arrivals[-1],
                    median_arrival=arrivals[len(arrivals) // 2],
                    length=max(lengths),
                    broadcast_s=reply.get("broadcast_s"),
                )
            )
            await asyncio.sleep(0.02)
        if pid is not None:
            run.cpu_s, run.elapsed_s = cpu_seconds(pid) - cpu0, time.perf_counter() - t0
            cpu0, t0 = cpu_seconds(pid), time.perf_counter()
            await asyncio.sleep(IDLE_SECONDS)  # and after: the keepalive pings grow as connections age
            run.idle_rate = (run.idle_rate + (cpu_seconds(pid) - cpu0) / (time.perf_counter() - t0)) / 2
    return run


async def _open(url: str, opened: object) -> None:
    async with connect(url, max_size=2**24, open_timeout=30) as ws:
        await ws.send(json.dumps({"type": "submit", "token": TOKEN, "event": json.loads(encode_event(opened))}))  # type: ignore[arg-type]
        while True:
            reply = json.loads(await ws.recv())
            if reply.get("type") == "ack":
                return
            if reply.get("type") in ("rejected", "error"):
                raise RuntimeError(f"cannot open the tournament: {reply}")


def _metrics(port: int) -> str:
    """tracker's /metrics text (empty when it does not answer)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
            return str(resp.read().decode())
    except OSError:
        return ""


def _counter(port: int, name: str) -> float | None:
    """A counter from tracker's /metrics, ``None`` when it is not there."""
    for line in _metrics(port).splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def _fanout_histogram(port: int) -> float | None:
    """Mean server-side broadcast time from tracker's /metrics (update published → written to all)."""
    text = _metrics(port)
    if not text:
        return None
    total = count = None
    for line in text.splitlines():
        if line.startswith("tracker_fanout_latency_seconds_sum"):
            total = float(line.split()[1])
        elif line.startswith("tracker_fanout_latency_seconds_count"):
            count = float(line.split()[1])
    return total / count if total is not None and count else None


def one_run(
    system: str,
    subscribers: int,
    sizes: Sizes,
    events: list[object],
    messages: list[str],
    *,
    burst: bool = False,
    deltas: list[bytes] | None = None,
    mode: str = "",
) -> Run:
    """Start the server and the subscribers, send the updates (or, with ``burst``, the singles and bursts).

    ``system``: ``tracker``, or one of :data:`ANCHORS` (the floor sends ``deltas``, tracker's delta bytes).
    ``mode``: the subscriber processes' (:mod:`bench.fanout_client`: ``decode`` for decoding clients).
    """
    procs: list[Proc] = []
    # the subscriber processes stop on "quit" (sent below), not at their last update: the server's idle CPU is
    # read after the updates too, which their closing connections would swell
    updates = 1 + (len(messages) if not burst else BURST_SINGLES + BURST_COUNT * BURST_SIZE)
    with tempfile.TemporaryDirectory(prefix="tracker-bench-fanout-") as data:
        if system == "tracker":
            server, port = start_tracker(python(), data, TOKEN, *TRACKER_LIMITS, stock=True)
            url = f"ws://127.0.0.1:{port}/ws"
            asyncio.run(_open(url, events[0]))
        else:
            server = start([python(), "-m", ANCHORS[system]], f"{system} server")
            port = int(server.expect(r"listening (\d+)", timeout=30).group(1))
            url = f"ws://127.0.0.1:{port}/ws"
        procs.append(server)
        extra = json.dumps(TRACKER_SUBSCRIBE if system == "tracker" else {})
        rss0 = _rss(server.proc.pid)
        try:
            t0 = time.perf_counter()
            clients = [
                start(
                    [python(), "-m", "bench.fanout_client", url, TID, str(count), str(updates), "deflate", extra]
                    + ([mode] if mode else []),
                    f"subscribers-{k}",
                    stdin=True,
                )
                for k, count in enumerate(_processes(subscribers, sizes.fanout_processes))
            ]
            procs += clients
            _wait_lines(clients, "ready", 600.0)
            connected = time.perf_counter() - t0
            rss1 = _rss(server.proc.pid)
            if burst:
                run = asyncio.run(_bursts(url, events, clients))
            else:
                run = asyncio.run(_control(system, url, events, messages, clients, server.proc.pid, deltas=deltas))
            run.subscribers = subscribers
            run.connect_s = connected
            run.rss_per_subscriber = (rss1 - rss0) / subscribers
            if system == "tracker":
                run.server_broadcast_s = _fanout_histogram(port)
                run.merged = _counter(port, "tracker_updates_merged_total")
                run.dropped = _counter(port, "tracker_clients_dropped_total")
            else:
                spent = [s.broadcast_s for s in run.samples if s.broadcast_s is not None]
                run.server_broadcast_s = statistics.fmean(spent) if spent else None
            for client in clients:
                with contextlib.suppress(OSError):
                    client.send("quit\n")
            for client in clients:
                client.stop(timeout=10)
        finally:
            for p in procs[1:]:
                p.stop(timeout=5)
            server.stop()
            kill_all(procs)
    return run


def _rss(pid: int) -> int:
    """A process's resident set size in bytes (Linux ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def _wait_seq(clients: list[Proc], seq: int, timeout: float) -> list[int]:
    """Every connection's arrival time (ns) of update ``seq``, from each client's ``done SEQ`` line."""
    arrivals: list[int] = []
    for line in _wait_lines_for(clients, f"done {seq} ", timeout):
        arrivals.extend(json.loads(line.split(" ", 3)[3]))
    return arrivals


def _wait_lines_for(clients: list[Proc], prefix: str, timeout: float) -> list[str]:
    """One line starting with ``prefix`` from each client, the lines before it dropped."""
    got = []
    deadline = time.monotonic() + timeout
    for client in clients:
        while True:
            (line,) = _wait_lines([client], "done ", max(0.1, deadline - time.monotonic()))
            if line.startswith(prefix):
                got.append(line)
                break
    return got


@dataclass
class Bursts:
    """What :func:`_bursts` measured: per subscriber, send → arrival (ms) of each single result and of each
    burst's last result (a merge that carried it counts: it arrived then)."""

    singles: list[list[float]] = field(default_factory=list)
    lasts: list[list[float]] = field(default_factory=list)
    every: list[float] = field(default_factory=list)  # every result of the bursts, every subscriber


async def _bursts(url: str, events: list[object], clients: list[Proc]) -> Run:
    """``BURST_SINGLES`` results one at a time, then ``BURST_COUNT`` bursts of ``BURST_SIZE`` results
    ``BURST_GAP`` s apart (not waiting for the acks in between); each burst once every subscriber has the last."""
    run = Run("tracker", 0)
    measured = run.bursts = Bursts()
    acks = 0
    async with connect(url, max_size=2**24, open_timeout=30, ping_interval=None) as ws:

        async def read() -> None:
            nonlocal acks
            async for raw in ws:
                reply = json.loads(raw)
                if reply.get("type") == "ack":
                    acks += 1
                elif reply.get("type") in ("rejected", "error"):
                    raise RuntimeError(f"tracker: {reply}")

        reader = asyncio.create_task(read())
        k = 1  # events[k] is the result of seq k + 1 (the opening is seq 1)

        async def send(event: object) -> int:
            await ws.send(json.dumps({"type": "submit", "token": TOKEN, "event": json.loads(encode_event(event))}))  # type: ignore[arg-type]
            return now_ns()

        try:
            for _ in range(BURST_SINGLES):
                sent = await send(events[k])
                arrivals = await asyncio.to_thread(_wait_seq, clients, k + 1, 120.0)
                measured.singles.append([(t - sent) / 1e6 for t in arrivals])
                k += 1
                await asyncio.sleep(BURST_PAUSE)
            for _ in range(BURST_COUNT):
                sent_at = []
                for j in range(BURST_SIZE):
                    sent_at.append(await send(events[k + j]))
                    if j < BURST_SIZE - 1:
                        await asyncio.sleep(BURST_GAP)
                for j in range(BURST_SIZE):
                    arrivals = await asyncio.to_thread(_wait_seq, clients, k + j + 1, 120.0)
                    latencies = [(t - sent_at[j]) / 1e6 for t in arrivals]
                    measured.every += latencies
                    if j == BURST_SIZE - 1:
                        measured.lasts.append(latencies)
                k += BURST_SIZE
                await asyncio.sleep(BURST_PAUSE)
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
    return run


def _order(k: int) -> tuple[str, ...]:
    """The systems in the ``k``-th round: each goes first, second and last in turn."""
    at = k % len(SYSTEMS)
    return SYSTEMS[at:] + SYSTEMS[:at]


def run(sizes: Sizes) -> Result:
    result = Result("fanout", "4. fan-out to subscribers vs a bare websockets broadcast")
    with timed(result):
        events, messages = expected_messages(sizes.fanout_updates)
        deltas = expected_deltas(sizes.fanout_updates)
        runs: dict[tuple[str, int], Run] = {}
        for k, n in enumerate(sizes.fanout_subscribers):
            for system in _order(k):
                say(f"  fanout: {system}, {n:,} subscribers × {len(messages)} updates")
                r = one_run(system, n, sizes, events, messages, deltas=deltas)
                runs[(system, n)] = r
                a = r.ack_to_last_ms()
                say(
                    f"    connected in {r.connect_s:.1f} s; ack→last p50 {median(a):.1f} ms p99 "
                    f"{percentile(a, 99):.1f} ms; send→last p50 {median(r.send_to_last_ms()):.1f} ms; "
                    f"server CPU {r.cpu_per_delivery_us():.1f} µs per subscriber per update"
                )
        payload = len(messages[0])
        figures = {}
        for n in sizes.fanout_subscribers:
            t, b, f = runs[("tracker", n)], runs[("bare", n)], runs[("floor", n)]
            fig = {
                "subscribers": n,
                "floor_spread_p50": median(f.spread_ms()),
                "floor_spread_p99": percentile(f.spread_ms(), 99),
                "tracker_spread_p50": median(t.spread_ms()),
                "tracker_spread_p99": percentile(t.spread_ms(), 99),
                "bare_spread_p50": median(b.spread_ms()),
                "bare_spread_p99": percentile(b.spread_ms(), 99),
                "tracker_ack_last_p50": median(t.ack_to_last_ms()),
                "tracker_ack_last_p99": percentile(t.ack_to_last_ms(), 99),
                "bare_ack_last_p50": median(b.ack_to_last_ms()),
                "bare_ack_last_p99": percentile(b.ack_to_last_ms(), 99),
                "tracker_send_last_p50": median(t.send_to_last_ms()),
                "tracker_send_last_p99": percentile(t.send_to_last_ms(), 99),
                "bare_send_last_p50": median(b.send_to_last_ms()),
                "bare_send_last_p99": percentile(b.send_to_last_ms(), 99),
                "tracker_send_median_p50": median(t.send_to_median_ms()),
                "bare_send_median_p50": median(b.send_to_median_ms()),
                "tracker_broadcast_ms": 1000 * t.server_broadcast_s if t.server_broadcast_s else math.nan,
                "bare_broadcast_ms": 1000 * b.server_broadcast_s if b.server_broadcast_s else math.nan,
                "tracker_connect_s": t.connect_s,
                "bare_connect_s": b.connect_s,
            }
            figures[n] = fig
            ratio = fig["tracker_spread_p99"] / fig["bare_spread_p99"]
            fig["ratio_p99"] = ratio
            measured_target = n in (1000, 10_000)
            result.rows.append(
                Row(
                    workload=f"fan-out, {n:,} subscribers",
                    size=f"{len(messages)} updates of {payload:,} B, 16-player RR",
                    measured=(
                        f"publish→last p50 {fmt_ms(fig['tracker_spread_p50'])}, p99 {fmt_ms(fig['tracker_spread_p99'])}"
                    ),
                    baseline=(
                        f"bare broadcast p50 {fmt_ms(fig['bare_spread_p50'])}, p99 {fmt_ms(fig['bare_spread_p99'])}"
                    ),
                    ratio=f"p99 {fmt_ratio(ratio)}",
                    target=f"p99 ≤ {TARGET:g}× bare" if measured_target else "reported",
                    met=(ratio <= TARGET) if measured_target else None,
                )
            )
        result.raw = {"figures": figures, "payload_bytes": payload}
        result.plots.append(_plot(figures))
        _cpu_rows(result, sizes, runs, events, messages, deltas)
        _burst_rows(result, sizes)
        lines = [
            "| subscribers | tracker publish→last p50 / p99 | bare publish→last p50 / p99 | "
            "floor publish→last p50 / p99 | tracker ack→last p50 / p99 | bare ack→last p50 / p99 | "
            "tracker send→last p50 / p99 | "
            "bare send→last p50 / p99 | send→median subscriber p50 (tracker / bare) | server broadcast mean "
            "(tracker / bare) | connect (tracker / bare) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for n, f in figures.items():
            lines.append(
                f"| {n:,} | {fmt_ms(f['tracker_spread_p50'])} / {fmt_ms(f['tracker_spread_p99'])} | "
                f"{fmt_ms(f['bare_spread_p50'])} / {fmt_ms(f['bare_spread_p99'])} | "
                f"{fmt_ms(f['floor_spread_p50'])} / {fmt_ms(f['floor_spread_p99'])} | "
                f"{fmt_ms(f['tracker_ack_last_p50'])} / {fmt_ms(f['tracker_ack_last_p99'])} | "
                f"{fmt_ms(f['bare_ack_last_p50'])} / {fmt_ms(f['bare_ack_last_p99'])} | "
                f"{fmt_ms(f['tracker_send_last_p50'])} / {fmt_ms(f['tracker_send_last_p99'])} | "
                f"{fmt_ms(f['bare_send_last_p50'])} / {fmt_ms(f['bare_send_last_p99'])} | "
                f"{fmt_ms(f['tracker_send_median_p50'])} / {fmt_ms(f['bare_send_median_p50'])} | "
                f"{fmt_ms(f['tracker_broadcast_ms'])} / {fmt_ms(f['bare_broadcast_ms'])} | "
                f"{f['tracker_connect_s']:.0f} s / {f['bare_connect_s']:.0f} s |"
            )
        result.notes.append(
            f"One 16-player round robin; each of the {len(messages)} results is sent once every subscriber has the "
            f"previous update, so p99 over {len(messages)} updates is close to the worst one. The update message is "
            f"{payload:,} bytes (full standings rows + what changed); the bare server broadcasts the very same bytes. "
            "Subscribers run in separate processes (up to "
            f"{sizes.fanout_processes}, ≤ {PER_PROCESS:,} and two from 1,000 on, connections each, offering "
            "permessage-deflate as browsers do: websockets' `ClientProtocol` for the handshake, then each message "
            "stamped when its bytes are read and inflated and decoded right after the reads of that turn of the "
            "event loop, so the subscribers spend as little CPU as they can); the servers are separate processes "
            "too, so on this 2-core machine the servers and the subscriber processes compete for the CPUs; every "
            "figure includes that.\n\n"
            "**Which latency.** tracker acknowledges a submit only *after* `Hub.publish` has written the update "
            "to every subscriber socket (publish, then ack: DESIGN §1), so 'ack → last subscriber' only sees the "
            "tail left after the broadcast and is near zero — even negative — at 3,000+ subscribers, for tracker "
            "and the bare server alike (both ack after `broadcast()` returns); it is in the table below but says "
            "little. The figure compared is therefore **publish → last**: from the first subscriber receiving the "
            "update (publishing starts then; all processes stamp arrivals with CLOCK_MONOTONIC) to the last one "
            "receiving it — the same definition for both servers. 'send → last' adds what happens before the "
            "publish: tracker's validation, `apply` and the journal's fsync, which the bare server does not do. "
            "Server broadcast mean: tracker's `tracker_fanout_latency_seconds` histogram vs the bare server's own "
            "timing of `broadcast()`. The bare server uses websockets' defaults, so every subscriber that offers "
            "permessage-deflate gets its copy compressed separately (most of its broadcast's CPU time); tracker "
            "compresses and frames each update once per window size, on the feed's own deflate stream with context "
            "takeover (`tracker/gateway/frames.py`), then writes the same bytes to every subscriber that shares it.\n\n"
            + (
                f"Tracker's subscribers subscribe with {json.dumps(TRACKER_SUBSCRIBE)}: they get "
                f"{median([float(s.length) for r in runs.values() if r.system == 'tracker' for s in r.samples]):,.0f} "
                "B per update (median), the bare server's the full message.\n\n"
                if TRACKER_SUBSCRIBE
                else ""
            )
            + "\n".join(lines)
        )
    return result


def _cpu_rows(
    result: Result,
    sizes: Sizes,
    runs: dict[tuple[str, int], Run],
    events: list[object],
    messages: list[str],
    deltas: list[bytes],
) -> None:
    """The servers' CPU per subscriber per update at ``sizes.fanout_cpu`` subscribers: tracker against the floor
    and the bare broadcast, interleaved (the latency runs reused where the counts meet)."""
    if not sizes.fanout_cpu:
        return
    room = raise_fd_limit() - 300  # the server's open files: one per connection, and its own
    counts = sorted({min(n, room) for n in sizes.fanout_cpu})
    for k, n in enumerate(counts):
        for system in _order(k):
            if (system, n) in runs:
                continue
            say(f"  fanout: {system}, {n:,} subscribers × {len(messages)} updates (CPU)")
            runs[(system, n)] = one_run(system, n, sizes, events, messages, deltas=deltas)
            say(f"    {runs[(system, n)].cpu_per_delivery_us():.1f} µs of server CPU per subscriber per update")
    us = {(system, n): runs[(system, n)].cpu_per_delivery_us() for system in SYSTEMS for n in counts}
    low, high = counts[0], counts[-1]
    result.raw["cpu"] = {
        f"{system} {n}": {
            "us": us[(system, n)],
            "cpu_s": r.cpu_s,
            "elapsed_s": r.elapsed_s,
            "idle_rate": r.idle_rate,
            "rss_per_subscriber": r.rss_per_subscriber,
            "spread_p50": median(r.spread_ms()),
            "spread_p99": percentile(r.spread_ms(), 99),
            "send_last_p99": percentile(r.send_to_last_ms(), 99),
        }
        for (system, n), r in runs.items()
        if n in counts
    }
    for n in counts:
        t, b, f = (us[(system, n)] for system in SYSTEMS)
        ratio = t / f
        target, met = f"≤ {CPU_FLOOR:g}× the floor", ratio <= CPU_FLOOR
        if n == 10_000:
            target += f"; ≤ {CPU_TARGET_US:g} µs"
            met = met and t <= CPU_TARGET_US
        note = "" if n in sizes.fanout_cpu else f" (of {max(sizes.fanout_cpu):,} asked: the open-files limit)"
        result.rows.append(
            Row(
                workload=f"fan-out CPU per subscriber per update, {n:,} subscribers{note}",
                size=f"{len(messages)} updates, subscribers offering permessage-deflate (tracker's: deltas)",
                measured=f"tracker {t:.1f} µs (RSS {runs[('tracker', n)].rss_per_subscriber / 1024:.1f} KB per "
                f"subscriber); bare broadcast {b:.1f} µs",
                baseline=f"floor {f:.1f} µs",
                ratio=fmt_ratio(ratio),
                target=target,
                met=met,
            )
        )
    if high != low:
        flat = {system: us[(system, high)] / us[(system, low)] for system in SYSTEMS}
        result.rows.append(
            Row(
                workload=f"fan-out CPU per subscriber per update, {high:,} over {low:,} subscribers",
                size=f"{len(messages)} updates at each",
                measured=f"tracker {fmt_ratio(flat['tracker'])} ({us[('tracker', high)]:.1f} µs over "
                f"{us[('tracker', low)]:.1f} µs); bare {fmt_ratio(flat['bare'])}",
                baseline=f"floor {fmt_ratio(flat['floor'])}",
                ratio=fmt_ratio(flat["tracker"]),
                target=f"tracker ≤ {CPU_FLAT:g}×",
                met=flat["tracker"] <= CPU_FLAT,
            )
        )
    if len(counts) > 2:
        fits = {system: _fit([(n, runs[(system, n)]) for n in counts]) for system in SYSTEMS}
        result.raw["cpu_fit"] = {
            system: {"per_update_ms": a, "per_subscriber_us": b} for system, (a, b) in fits.items()
        }
    result.notes.append(
        "**CPU per subscriber per update.** Each server's `/proc` CPU time (user + system) from the first update "
        "sent to the last one received by every subscriber, less its idle CPU over the same time (read for "
        f"{IDLE_SECONDS:g} s before the updates and {IDLE_SECONDS:g} s after, every subscriber connected: "
        "websockets' keepalive pings; the floor pings nobody), over subscribers × updates. Three servers, "
        "interleaved (each goes first in turn), the same subscriber processes (`bench/fanout_client.py`, "
        "offering permessage-deflate): **tracker** (a stock `tracker up`, delta subscribers; it includes each "
        "update's own work: validate, apply, the journal, the ack, about a millisecond); **bare** "
        "(`bench/bare_server.py`: `websockets.broadcast` of the full update, each copy compressed by its "
        "connection); **floor** (`bench/floor_server.py`: the very delta bytes tracker's subscribers read, "
        "framed once on one deflate stream with context takeover at tracker's settings, 4 KiB window, memLevel "
        "5, then one `transport.write` of the same bytes per socket and nothing else). tracker's ratio is to "
        "the floor at the same count. The servers that ping (tracker, bare: every 20 s per connection) have "
        "their pings in the window when the updates run past the connections' twentieth second (the idle windows "
        "miss them): at the largest counts that counts against tracker and bare. The raw figures (``cpu_fit``) "
        "split each server's CPU per update, by least squares over the counts, into what every update costs and "
        "what each more subscriber costs: with four noisy points, a reading, not a row."
    )


def _fit(points: list[tuple[int, Run]]) -> tuple[float, float]:
    """``(a, b)`` of the least-squares line CPU per update = a (ms) + b (µs) × subscribers over the runs given: what
    each update costs whoever reads it, and what each more subscriber costs."""
    xs = [float(n) for n, _ in points]
    ys = [(r.cpu_s - r.idle_rate * r.elapsed_s) / len(r.samples) for _, r in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    return 1e3 * (my - b * mx), 1e6 * b


def _burst_rows(result: Result, sizes: Sizes, mode: str = BURST_CLIENTS) -> None:
    """A burst of results against single results, at ``sizes.fanout_burst`` subscribers (``mode``: theirs)."""
    if not sizes.fanout_burst:
        return
    n = sizes.fanout_burst
    events, messages = expected_messages(BURST_SINGLES + BURST_COUNT * BURST_SIZE)
    say(
        f"  fanout: tracker, {n:,} subscribers: {BURST_SINGLES} single results, then {BURST_COUNT} bursts of "
        f"{BURST_SIZE} results {BURST_GAP:g} s apart"
    )
    run = one_run("tracker", n, sizes, events, messages, burst=True, mode=mode)
    measured = run.bursts
    assert measured is not None
    single = [x for one in measured.singles for x in one]
    last = [x for one in measured.lasts for x in one]
    ratio = percentile(last, 99) / percentile(single, 99)
    say(f"    single p99 {fmt_ms(percentile(single, 99))}, a burst's last p99 {fmt_ms(percentile(last, 99))}")
    result.raw["burst"] = {
        "subscribers": n,
        "single_p50": median(single),
        "single_p99": percentile(single, 99),
        "last_p50": median(last),
        "last_p99": percentile(last, 99),
        "every_p99": percentile(measured.every, 99),
        "last_max": [max(one) for one in measured.lasts],
        "lap_mean_ms": None if run.server_broadcast_s is None else 1000 * run.server_broadcast_s,
        "merged": run.merged,
        "dropped": run.dropped,
        "clients": mode or "plain",
    }
    result.rows.append(
        Row(
            workload=f"fan-out: a burst of {BURST_SIZE} results {BURST_GAP:g} s apart, {n:,} subscribers",
            size=f"{BURST_COUNT} bursts; {BURST_SINGLES} single results before them",
            measured=(
                f"the burst's last result, send → subscriber p50 {fmt_ms(median(last))}, p99 "
                f"{fmt_ms(percentile(last, 99))}, last subscriber {fmt_ms(max(last))} (every result of the bursts: "
                f"p99 {fmt_ms(percentile(measured.every, 99))}; subscribers written a merge: "
                f"{run.merged or 0:,.0f}, dropped: {run.dropped or 0:,.0f})"
            ),
            baseline=(
                f"a single result alone: p50 {fmt_ms(median(single))}, p99 {fmt_ms(percentile(single, 99))}, "
                f"last subscriber {fmt_ms(max(single))}"
            ),
            ratio=f"p99 {fmt_ratio(ratio)}",
            target=f"p99 ≤ {BURST_TARGET:g}× a single result's",
            met=ratio <= BURST_TARGET,
        )
    )
    result.notes.append(
        f"**Bursts.** {BURST_SINGLES} results one at a time (each once every subscriber has the one before), "
        f"then {BURST_COUNT} bursts of {BURST_SIZE} results sent {BURST_GAP:g} s apart without waiting for their "
        "acks (a round's last results), each burst once every subscriber has the one before; the latency of a "
        "result at a subscriber is from its submit to the subscriber reading a message with its seq or a later "
        "one (a subscriber still waiting for an update when the next one comes is written a snapshot and the "
        "newest instead: the seq contract in `tracker/gateway/fanout.py`). p99 over every subscriber of every "
        "single result, against p99 over every subscriber of each burst's last result. The subscriber processes "
        "decode every message right after the read that completes it and stamp it once decoded (decoding "
        "clients, as pages are: `bench/fanout_client.py`, mode `decode`; the machine's two cores are shared)."
    )


def _plot(figures: dict[int, dict[str, float]]) -> object:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ns = sorted(figures)
    fig, ax = plt.subplots(figsize=(6.8, 4.4), dpi=110)
    for system, color, marker, label in (("tracker", "C0", "o", "tracker"), ("bare", "C1", "s", "bare broadcast")):
        ax.plot(
            ns,
            [figures[n][f"{system}_spread_p50"] for n in ns],
            f"{marker}-",
            color=color,
            label=f"{label}, publish→last p50",
        )
        ax.plot(
            ns,
            [figures[n][f"{system}_spread_p99"] for n in ns],
            f"{marker}--",
            color=color,
            alpha=0.55,
            label=f"{label}, publish→last p99",
        )
        ax.plot(
            ns,
            [figures[n][f"{system}_send_last_p50"] for n in ns],
            f"{marker}:",
            color=color,
            alpha=0.35,
            label=f"{label}, send→last p50",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(ns, [f"{n:,}" for n in ns])
    ax.set_xlabel("subscribers of one tournament")
    ax.set_ylabel("ms until the last subscriber has the update")
    ax.set_title("Fan-out latency vs subscribers (one gateway)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return save_figure(fig, "bench-fanout.png")


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.fanout --burst [--subscribers N] [--mode decode|plain]``: the burst rows alone."""
    import argparse

    from bench.common import SIZES

    parser = argparse.ArgumentParser(prog="python -m bench.fanout")
    parser.add_argument(
        "--burst", action="store_true", required=True, help="only the burst (the rest: python -m bench)"
    )
    parser.add_argument("--subscribers", type=int, default=SIZES["default"].fanout_burst)
    parser.add_argument("--mode", choices=("decode", "plain"), default=BURST_CLIENTS)
    args = parser.parse_args(argv)
    raise_fd_limit()
    result = Result("fanout", "4. fan-out: a burst")
    sizes = dataclasses.replace(SIZES["default"], fanout_burst=args.subscribers)
    _burst_rows(result, sizes, "" if args.mode == "plain" else args.mode)
    for row in result.rows:
        print(f"{row.workload}: {row.measured} | {row.baseline} | {row.ratio} | {row.met}")
    print(json.dumps(result.raw.get("burst"), indent=1))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
