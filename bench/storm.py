"""A connection storm: N subscribers arriving with K websocket handshakes in flight, tracker against bare websockets.

``make bench`` (workload 16, ``Sizes.storm``) or ``python -m bench.storm [--connections 20000] [--in-flight 2000]
[--clients 2]`` starts ``tracker up`` (the
CLI as shipped, connection caps lifted: every client is 127.0.0.1) and opens one tournament; then
``--clients`` client processes each open their share of the connections with websockets' own client, at most
their share of ``--in-flight`` handshakes at a time, each subscribing and waiting for its snapshot, and
holding every connection open until all clients are done.  The same clients then storm
:mod:`bench.bare_server` (its hello for the snapshot).  Reported per server: connections that failed (by
why), how long the storm took, connections per second, and the server's CPU per connection.

A client is ``python -m bench.storm client URL COUNT IN_FLIGHT TOURNAMENT``: it prints one JSON line,
``{"ok", "failed": {why: count}, "seconds"}``, once every connection of its share has its first message or
has failed, then waits for its stdin to close.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import Result, Row, Sizes, cpu_seconds, fmt_rate, python, raise_fd_limit, say, timed
from bench.fanout import TOKEN, TRACKER_LIMITS, _open
from bench.procs import Proc, kill_all, start, start_tracker
from bench.scenario import tournament

TID = "storm-rr10"
CLIENTS = 2  # client processes: one per core


async def _client(url: str, count: int, in_flight: int, tid: str) -> None:
    from websockets.asyncio.client import connect

    gate = asyncio.Semaphore(in_flight)
    held: list[Any] = []
    failed: collections.Counter[str] = collections.Counter()
    subscribe = json.dumps({"type": "subscribe", "tournament": tid, "updates": "delta"})

    async def one() -> None:
        async with gate:
            try:
                ws = await connect(url, open_timeout=10, max_size=2**24, ping_interval=None)
                held.append(ws)
                await ws.send(subscribe)
                async with asyncio.timeout(30):
                    await ws.recv()
            except Exception as exc:  # counted by kind: the report says why
                failed[f"{type(exc).__name__}: {str(exc)[:60]}"] += 1

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(count)))
    ok = count - sum(failed.values())
    print(json.dumps({"ok": ok, "failed": dict(failed), "seconds": time.perf_counter() - started}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    os._exit(0)


def storm(url: str, connections: int, in_flight: int, clients: int, tid: str) -> dict[str, Any]:
    share, spare = divmod(connections, clients)
    procs: list[Proc] = []
    try:
        for k in range(clients):
            count = share + (1 if k < spare else 0)
            cmd = [python(), "-m", "bench.storm", "client", url, str(count), str(max(1, in_flight // clients)), tid]
            procs.append(start(cmd, f"storm client {k}", stdin=True))
        reports = [json.loads(p.expect(r"^\{.*\}$", timeout=600).group(0)) for p in procs]
    finally:
        kill_all(procs)
    failed: collections.Counter[str] = collections.Counter()
    for report in reports:
        failed.update(report["failed"])
    seconds = max(report["seconds"] for report in reports)
    ok = sum(report["ok"] for report in reports)
    return {"ok": ok, "failed": dict(failed), "seconds": seconds, "rate": ok / seconds if seconds else 0.0}


def room(pid: int) -> int:
    """How many more files process ``pid`` may open: its open-files limit less the files it holds now (Linux).

    Every connection a server holds is one; the server's own (its standard streams, the event loop's epoll and
    self-pipe, the listening socket, the journal's three files) come off the limit first.
    """
    limit = 0
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            limit = int(line.split()[3])
    return limit - len(os.listdir(f"/proc/{pid}/fd"))


def run(sizes: Sizes) -> Result:
    """``make bench``'s workload 16: tracker then bare websockets, the same storm, ``sizes.storm``.

    At most as many connections as tracker's open-files limit leaves room for (see :func:`room`); bare websockets
    is stormed with as many as tracker was.
    """
    asked, in_flight = sizes.storm
    result = Result("storm", "16. a connection storm: subscribers arriving with thousands of handshakes in flight")
    with timed(result):
        figures = {"tracker": _one("tracker", asked, in_flight, CLIENTS)}
        connections = figures["tracker"]["connections"]
        figures["bare"] = _one("bare", connections, in_flight, CLIENTS)
        result.raw = figures
        result.notes.append(
            "Each client process opens its share of the connections with websockets' own client (opening timeout "
            "10 s), at most its share of the handshakes in flight, subscribes and waits for the first message; "
            "tracker up (connection caps lifted) and then bare websockets (bench.bare_server) are stormed alike. "
            "The clients run on the same two cores as the server: a handshake that fails timed out waiting for "
            "CPU on either side. tracker listens with a backlog of 4,096 (asyncio's default is 100, which a storm "
            "overflows while the loop is busy: the kernel then drops the SYNs beyond it, retried after 1, 3 and 7 s). "
            "A server holds one file per connection: the storm is at most as big as its open-files limit less the "
            "files it holds before (tracker: standard streams, event loop, listening socket, journal); a connection "
            "past that waits in the backlog until its client times out."
        )
        tracker, bare = figures["tracker"], figures["bare"]

        def failed(fig: dict[str, Any]) -> str:
            count = sum(fig["failed"].values())
            why = "; ".join(f"{n:,} {k}" for k, n in sorted(fig["failed"].items(), key=lambda kv: -kv[1]))
            return f"{count:,} failed" + (f" ({why})" if why else "")

        size = f"{connections:,} subscribers, {in_flight:,} handshakes in flight ({CLIENTS} client processes)"
        if connections < asked:
            size += (
                f"; {asked:,} asked, the most tracker's open-files limit ({figures['tracker']['fd_limit']:,}) "
                "leaves room for beside the server's own files"
            )
        result.rows.append(
            Row(
                workload="connection storm: handshakes that fail",
                size=size,
                measured=f"{failed(tracker)}; connected at {fmt_rate(tracker['rate'])}",
                baseline=f"bare websockets: {failed(bare)}; connected at {fmt_rate(bare['rate'])}",
                ratio="—",
                target="0 failed",
                met=not tracker["failed"],
            )
        )
        ratio = tracker["server_cpu_ms_per_connection"] / bare["server_cpu_ms_per_connection"]
        result.rows.append(
            Row(
                workload="connection storm: server CPU per connection",
                size=size,
                measured=f"{tracker['server_cpu_ms_per_connection']:.2f} ms (handshake, subscribe, snapshot)",
                baseline=f"bare websockets {bare['server_cpu_ms_per_connection']:.2f} ms (handshake, hello)",
                ratio=f"{ratio:.2f}×",
                target="reported",
                met=None,
            )
        )
    return result


def _one(which: str, connections: int, in_flight: int, clients: int) -> dict[str, Any]:
    """One storm against ``which`` (``tracker`` or ``bare``), started and stopped here: ``connections``, or as
    many as the server's open-files limit leaves room for (:func:`room`), the figures say which."""
    with tempfile.TemporaryDirectory() as data:
        if which == "tracker":
            server, port = start_tracker(python(), data, TOKEN, *TRACKER_LIMITS, stock=True)
            url = f"ws://127.0.0.1:{port}/ws"
            opened, _ = tournament(TID, 10, seed=5)
            asyncio.run(_open(url, opened))
        else:
            server = start([python(), "-m", "bench.bare_server"], "bare server")
            bare_port = int(server.expect(r"listening (\d+)", timeout=60).group(1))
            url = f"ws://127.0.0.1:{bare_port}/"
        try:
            fits = min(connections, room(server.proc.pid))
            cpu = cpu_seconds(server.proc.pid)
            figures = storm(url, fits, in_flight, clients, TID)
            figures["connections"] = fits
            figures["fd_limit"] = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
            spent = cpu_seconds(server.proc.pid) - cpu
            figures["server_cpu_ms_per_connection"] = 1000 * spent / max(1, figures["ok"])
        finally:
            kill_all([server])
    say(f"  {which}: {json.dumps(figures)}")
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.storm")
    parser.add_argument("--connections", type=int, default=20_000)
    parser.add_argument("--in-flight", type=int, default=2_000)
    parser.add_argument("--clients", type=int, default=CLIENTS)
    parser.add_argument("--only", choices=("tracker", "bare"))
    args = parser.parse_args(argv)
    raise_fd_limit()
    results: dict[str, dict[str, Any]] = {}
    connections = args.connections
    for which in ("tracker", "bare"):
        if not args.only or which == args.only:
            results[which] = _one(which, connections, args.in_flight, args.clients)
            connections = results[which]["connections"]  # bare: as many as tracker could hold
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "client":
        raise_fd_limit()
        _, _, url, count, in_flight, tid = sys.argv
        asyncio.run(_client(url, int(count), int(in_flight), tid))
    else:
        sys.exit(main())
