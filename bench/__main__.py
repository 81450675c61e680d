"""``python -m bench``: run every workload, write ``docs/benchmarks.md`` and ``docs/img/bench-*.png``.

Sizes: ``--quick`` (a ~1 minute smoke run), the default (``make bench``,
under ~10 minutes), ``--full`` (the issue's full sizes); ``BENCH_SIZE`` in
the environment picks one too.  ``--only core,replay`` runs some workloads
(the report is then printed, and written only with ``--write``).

Every load generator is bounded in count and time and talks only to
127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import sys
import time
import traceback
from datetime import UTC, datetime

from bench.common import DOCS, SIZES, Result, loadavg, machine, raise_fd_limit, say
from bench.report import render

WORKLOADS = (
    ("core", "bench.core", "1. core: one result applied vs rebuilding the standings"),
    ("replay", "bench.replay", "2. journal replay on start vs live apply"),
    ("ingest", "bench.ingest", "3. embedded ingest over websockets: durable vs no durability"),
    ("fanout", "bench.fanout", "4. fan-out to subscribers vs a bare websockets broadcast"),
    ("kafka", "bench.kafka", "5. Faust worker vs a bare aiokafka consume→produce loop"),
    ("many", "bench.many", "6. many tournaments at once vs one tournament alone"),
    ("projection", "bench.projection", "7. projection: last round of a 16-player round robin"),
    ("projection_forty", "bench.projection_forty", "7b. exact projection with 40 open games (16×5, 20×4 rounds left)"),
    ("trf", "bench.trf_read", "8. reading and ranking a big round-robin TRF file"),
    ("wire", "bench.wire", "9. bytes per update on the wire: full update vs field delta"),
    ("boards", "bench.boards", "10. live boards: results' acks with and without ten moving boards"),
    ("viewers", "bench.viewers", "11. viewers: the arbiter's ack with 1,000 subscribers, and a 500-player tie"),
    ("cluster", "bench.cluster", "12. through Kafka: submit → screen, and gateway processes"),
    ("worth", "bench.worth", "13. rating change, norms and prize money: 3 rounds left of a 10-player round robin"),
    ("follow", "bench.follow_stream", "14. tracker follow: result at the source → subscriber, a stream vs polling"),
    ("teams", "bench.teams", "15. team projection: 10 teams of 4 boards, the last rounds"),
    ("storm", "bench.storm", "16. a connection storm: subscribers arriving with thousands of handshakes in flight"),
)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    group = p.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="small smoke run (~1 minute)")
    group.add_argument("--full", action="store_true", help="the issue's full sizes (longer)")
    p.add_argument("--only", help="comma-separated workloads: " + ",".join(k for k, _, _ in WORKLOADS))
    p.add_argument("--write", action="store_true", help="write docs/benchmarks.md even with --only")
    p.add_argument("--json", help="also write the raw figures to this file")
    args = p.parse_args(argv)
    mode = "quick" if args.quick else "full" if args.full else os.environ.get("BENCH_SIZE", "default")
    if mode not in SIZES:
        p.error(f"BENCH_SIZE must be one of {', '.join(SIZES)}")
    sizes = SIZES[mode]
    only = {w.strip() for w in args.only.split(",")} if args.only else None
    if only is not None and (unknown := only - {k for k, _, _ in WORKLOADS}):
        p.error(f"unknown workloads: {', '.join(sorted(unknown))}")
    raise_fd_limit()
    command = "python -m bench" + (f" --{mode}" if mode != "default" else "") + (f" --only {args.only}" if only else "")
    started = datetime.now(UTC)
    started_s = time.perf_counter()
    load_start = loadavg()
    info = machine()
    say(f"bench: {mode} sizes on {info['nproc']} × {info['cpu']}, Python {info['python']}")
    results: list[Result] = []
    for key, module, title in WORKLOADS:
        if only is not None and key not in only:
            continue
        say(f"bench: {title}")
        t0 = time.perf_counter()
        try:
            result: Result = importlib.import_module(module).run(sizes)
        except (Exception, asyncio.CancelledError) as exc:  # one broken workload must not hide the others' figures
            traceback.print_exc()
            result = Result(key, title, error=f"failed: {type(exc).__name__}: {exc}")
            result.seconds = time.perf_counter() - t0
        results.append(result)
        for row in result.rows:
            say(f"  {row.workload}: {row.measured} | {row.baseline} | {row.ratio} | {row.target} | {row.met}")
        say(f"  ({result.seconds:.0f} s)")
    elapsed = time.perf_counter() - started_s
    text = render(
        results,
        sizes,
        info,
        command,
        started.strftime("%Y-%m-%d %H:%M UTC"),
        elapsed,
        f"{load_start} → {loadavg()}",
    )
    if only is None or args.write:
        DOCS.mkdir(exist_ok=True)
        (DOCS / "benchmarks.md").write_text(text, encoding="utf-8")
        say(f"bench: wrote {DOCS / 'benchmarks.md'} in {elapsed / 60:.1f} min")
    else:
        print(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({r.key: {"raw": r.raw, "seconds": r.seconds, "error": r.error} for r in results}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
