"""The tracker server's memory per idle subscriber: RSS, and with ``--trace`` where tracemalloc sees it go.

``python -m bench.idle_memory [-n 2000] [--reps 3] [--tree DIR ...] [--trace] [--compression deflate|none]``

For each repetition and each tree (the source tree the server imports, e.g. a copy of an older commit's
``tracker/``; default: this checkout; their order alternates between repetitions), start a stock
``tracker up`` (durable journal, the per-address caps lifted as in :mod:`bench.fanout`), open the
benchmark's 16-player round robin, read the server's RSS, open ``n`` subscribers from separate processes
(:mod:`bench.fanout_client`: permessage-deflate offered as browsers do, subscribed as ``--subscribe`` says,
each waits for its snapshot), wait ``--settle`` seconds, read the RSS again: (after - before) / n is the
figure, as :mod:`bench.fanout` computes its RSS per subscriber.  Nothing is sent after the snapshots: the
subscribers are idle.

``--trace`` runs the server under tracemalloc (:mod:`bench._traced_up`, 1 frame) and prints the allocations
still held per subscriber, grouped by file and by line (the RSS figures of a traced run include
tracemalloc's own overhead: read the untraced runs' RSS).

Talks only to 127.0.0.1; every process is bounded in time and stopped by its own pid.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

from bench.common import REPO, loadavg, python, raise_fd_limit, say
from bench.fanout import TID, TOKEN, TRACKER_LIMITS, _open, _processes, _rss, _wait_lines, expected_messages
from bench.procs import Proc, kill_all, start


def _server(tree: Path, data: str, trace: str | None) -> tuple[Proc, int]:
    module = ["bench._traced_up", trace] if trace else ["tracker.cli"]
    # -P: not the working directory first on sys.path (it would be this checkout's tracker/, whatever the tree)
    cmd = [python(), "-P", "-m", *module, "up", "--port", "0", "--data-dir", data, "--token", TOKEN, *TRACKER_LIMITS]
    env = {"PYTHONPATH": os.pathsep.join(dict.fromkeys([str(tree), str(REPO)]))}
    running = start(cmd, "tracker up", env=env)
    match = running.expect(r"listening on http://127\.0\.0\.1:(\d+)/", timeout=60)
    return running, int(match.group(1))


def _dump(server: Proc, path: str, timeout: float = 60) -> tracemalloc.Snapshot:
    """Ask the traced server for a snapshot (SIGUSR2) and read it back."""
    Path(path).unlink(missing_ok=True)
    os.kill(server.proc.pid, signal.SIGUSR2)
    done = path + ".done"
    deadline = time.monotonic() + timeout
    while not os.path.exists(done):
        if time.monotonic() > deadline:
            raise TimeoutError("no tracemalloc snapshot from the server")
        time.sleep(0.05)
    os.unlink(done)
    return tracemalloc.Snapshot.load(path)


def one(tree: Path, n: int, args: argparse.Namespace, trace: bool) -> float:
    """RSS growth per subscriber (bytes) of one server from ``tree``; with ``trace``, print the breakdown."""
    opened = expected_messages(0)[0][0]
    with tempfile.TemporaryDirectory(prefix="tracker-idle-memory-") as data:
        dump = os.path.join(data, "snapshot") if trace else None
        server, port = _server(tree, data, dump)
        procs = [server]
        try:
            url = f"ws://127.0.0.1:{port}/ws"
            asyncio.run(_open(url, opened))
            time.sleep(args.settle)
            before_snapshot = _dump(server, dump) if dump else None
            rss0 = _rss(server.proc.pid)
            command = [python(), "-m", "bench.fanout_client", url, TID]
            clients = [
                start(
                    [*command, str(count), "1", args.compression, args.subscribe],
                    f"subscribers-{k}",
                    stdin=True,
                )
                for k, count in enumerate(_processes(n, 2))
            ]
            procs += clients
            _wait_lines(clients, "ready", 600.0)
            time.sleep(args.settle)
            rss1 = _rss(server.proc.pid)
            if dump:
                assert before_snapshot is not None
                _breakdown(_dump(server, dump), before_snapshot, n, args.top)
            for client in clients:
                client.send("quit\n")
            for client in clients:
                client.stop(timeout=10)
        finally:
            for p in procs[1:]:
                p.stop(timeout=5)
            server.stop()
            kill_all(procs)
    return (rss1 - rss0) / n


def _breakdown(after: tracemalloc.Snapshot, before: tracemalloc.Snapshot, n: int, top: int) -> None:
    for key in ("filename", "lineno"):
        stats = after.compare_to(before, key)
        total = sum(s.size_diff for s in stats)
        say(f"  tracemalloc by {key}: {total / n / 1024:.2f} KB per subscriber held in all")
        for s in stats[:top]:
            if s.size_diff <= 0:
                break
            where = s.traceback[0]
            label = where.filename if key == "filename" else f"{where.filename}:{where.lineno}"
            say(f"    {s.size_diff / n:8.0f} B  {s.count_diff / n:6.2f} blocks  {_short(label)}")


def _short(path: str) -> str:
    for marker in ("site-packages/", "/lib/python3.11/", str(REPO) + "/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.idle_memory", description=__doc__.splitlines()[0])
    p.add_argument("-n", type=int, default=2000, help="idle subscribers (default 2000)")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--tree", action="append", type=Path, help="a source tree holding tracker/ (repeatable)")
    p.add_argument("--trace", action="store_true", help="one traced run per tree, after the RSS runs")
    p.add_argument("--compression", choices=("deflate", "none"), default="deflate")
    p.add_argument("--subscribe", default=json.dumps({"updates": "delta"}), help="extra subscribe fields (JSON)")
    p.add_argument("--settle", type=float, default=1.0, help="seconds before each RSS reading")
    p.add_argument("--top", type=int, default=25)
    args = p.parse_args()
    raise_fd_limit()
    trees = args.tree or [REPO]
    say(f"idle memory: {args.n} subscribers ({args.compression}, subscribe {args.subscribe}), load {loadavg()}")
    figures: dict[Path, list[float]] = {tree: [] for tree in trees}
    for rep in range(args.reps):
        for tree in trees if rep % 2 == 0 else trees[::-1]:
            per = one(tree, args.n, args, trace=False)
            figures[tree].append(per)
            say(f"  rep {rep + 1} {tree}: {per / 1024:.2f} KB per subscriber (load {loadavg()})")
    for tree, values in figures.items():
        if values:
            say(
                f"{tree}: RSS per idle subscriber median {statistics.median(values) / 1024:.2f} KB "
                f"(runs: {', '.join(f'{v / 1024:.2f}' for v in values)})"
            )
    if args.trace:
        for tree in trees:
            say(f"traced run, {tree}:")
            per = one(tree, args.n, args, trace=True)
            say(f"  (traced RSS {per / 1024:.2f} KB per subscriber, tracemalloc's overhead included)")
    say(f"load at the end {loadavg()}")


if __name__ == "__main__":
    main()
