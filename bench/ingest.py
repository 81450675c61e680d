"""Workload 3: results submitted over websockets to a real ``tracker up``, durable acks vs no durability.

Each run starts a fresh ``tracker up`` subprocess (fresh data directory)
and ``clients`` arbiters, each on its own websocket connection with a
window of ``window`` submits in flight (pipelined), each submitting the
events of its own 10-player round robins (opening, then 45 results, then
the next tournament).  A run sends for ``seconds`` seconds, then waits for
the outstanding acknowledgements (bounded).  The rate counts the acks
received after a 1 s warm-up until the end of sending.

Runs alternate durable (the default: WAL, ``synchronous=FULL``, group
commit; an ack is sent only after the commit) and ``--no-durability``
(``synchronous=OFF``), ``rounds`` times each.

The server is ``bench._up``: ``tracker up``'s own CLI entry point with the
per-token submit limiter (200/s, burst 400) lifted, since all arbiters here
share one token.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import tempfile
import time

from websockets.asyncio.client import connect

from bench.common import Result, Row, Sizes, fmt_ms, fmt_pct, fmt_rate, median, percentile, python, say, timed
from bench.procs import start_tracker
from bench.scenario import tournament
from tracker.core.events import encode_event

TOKEN = "bench-arbiter-token"
TARGET = 0.5
WARMUP = 1.0


async def _client(url: str, client: int, seconds: float, window: int, deadline_extra: float) -> dict[str, object]:
    acks: list[float] = []
    latencies: list[float] = []
    rejected: list[str] = []
    sent_at: dict[str, float] = {}
    slots = asyncio.Semaphore(window)
    drained = asyncio.Event()
    token = json.dumps(TOKEN)

    def frames():  # type: ignore[no-untyped-def]
        k = 0
        while True:
            opened, results = tournament(f"ingest-c{client}-{k}", 10, seed=5)
            for event in (opened, *results):
                yield event.id, f'{{"type":"submit","token":{token},"event":{encode_event(event).decode()}}}'
            k += 1

    async with connect(url, max_size=2**24, open_timeout=20, ping_interval=None) as ws:

        async def read() -> None:
            async for raw in ws:
                msg = json.loads(raw)
                kind = msg.get("type")
                if kind not in ("ack", "rejected"):
                    continue
                now = time.perf_counter()
                started = sent_at.pop(msg.get("id"), None)
                if kind == "ack":
                    acks.append(now)
                    if started is not None:
                        latencies.append(now - started)
                else:
                    rejected.append(f"{msg.get('code')}: {msg.get('reason')}")
                slots.release()
                if not sent_at:
                    drained.set()

        reader = asyncio.create_task(read())
        start = time.perf_counter()
        stop_at = start + seconds
        sent = 0
        for event_id, frame in frames():
            if time.perf_counter() >= stop_at:
                break
            await slots.acquire()
            sent_at[event_id] = time.perf_counter()
            await ws.send(frame)
            sent += 1
        end = time.perf_counter()
        if sent_at:
            drained.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(deadline_extra):
                    await drained.wait()
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
    return {"start": start, "end": end, "acks": acks, "latencies": latencies, "sent": sent, "rejected": rejected}


async def _drive(url: str, clients: int, seconds: float, window: int) -> dict[str, object]:
    runs = await asyncio.gather(*(_client(url, c, seconds, window, 30.0) for c in range(clients)))
    start = min(r["start"] for r in runs)  # type: ignore[type-var]
    end = max(r["end"] for r in runs)  # type: ignore[type-var]
    acks = sorted(t for r in runs for t in r["acks"])  # type: ignore[attr-defined]
    latencies = [x for r in runs for x in r["latencies"]]  # type: ignore[attr-defined]
    rejected = [x for r in runs for x in r["rejected"]]  # type: ignore[attr-defined]
    sent = sum(r["sent"] for r in runs)  # type: ignore[misc]
    warm = min(start + WARMUP, end - 0.5)
    counted = sum(1 for t in acks if warm <= t <= end)
    return {
        "rate": counted / (end - warm),
        "acked": len(acks),
        "sent": sent,
        "rejected": rejected,
        "lat_p50_ms": 1000 * median(latencies),
        "lat_p99_ms": 1000 * percentile(latencies, 99),
    }


def one_run(durable: bool, sizes: Sizes, *, seconds: float | None = None) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="tracker-bench-ingest-") as data:
        extra = () if durable else ("--no-durability",)
        server, port = start_tracker(python(), data, TOKEN, *extra)
        try:
            out = asyncio.run(
                _drive(
                    f"ws://127.0.0.1:{port}/ws",
                    sizes.ingest_clients,
                    seconds or sizes.ingest_seconds,
                    sizes.ingest_window,
                )
            )
        finally:
            code = server.stop()
        out["exit"] = code
        return out


def run(sizes: Sizes) -> Result:
    result = Result("ingest", "3. embedded ingest over websockets: durable vs no durability")
    with timed(result):
        durable: list[dict[str, object]] = []
        fast: list[dict[str, object]] = []
        for k in range(sizes.ingest_rounds):
            for mode in (True, False) if k % 2 == 0 else (False, True):
                out = one_run(mode, sizes)
                (durable if mode else fast).append(out)
                say(
                    f"  ingest: {'durable' if mode else 'no durability'}: {fmt_rate(out['rate'])} acked "  # type: ignore[arg-type]
                    f"(p50 {out['lat_p50_ms']:.1f} ms, rejected {len(out['rejected'])})"  # type: ignore[arg-type]
                )
        d_rate = median([o["rate"] for o in durable])  # type: ignore[misc]
        f_rate = median([o["rate"] for o in fast])  # type: ignore[misc]
        ratio = d_rate / f_rate
        rejected = sum(len(o["rejected"]) for o in durable + fast)  # type: ignore[arg-type]
        result.raw = {"durable": durable, "no_durability": fast}
        lat = median([o["lat_p50_ms"] for o in durable])  # type: ignore[misc]
        lat99 = median([o["lat_p99_ms"] for o in durable])  # type: ignore[misc]
        flat = median([o["lat_p50_ms"] for o in fast])  # type: ignore[misc]
        flat99 = median([o["lat_p99_ms"] for o in fast])  # type: ignore[misc]
        result.rows.append(
            Row(
                workload="embedded ingest, durable acks",
                size=(
                    f"{sizes.ingest_clients} arbiters × window {sizes.ingest_window}, "
                    f"{sizes.ingest_rounds}×{sizes.ingest_seconds:g} s per mode"
                ),
                measured=f"{fmt_rate(d_rate)} acked (ack p50 {fmt_ms(lat)}, p99 {fmt_ms(lat99)})",
                baseline=f"--no-durability {fmt_rate(f_rate)} (ack p50 {fmt_ms(flat)}, p99 {fmt_ms(flat99)})",
                ratio=fmt_pct(ratio),
                target=f"≥ {fmt_pct(TARGET)} of no-durability",
                met=ratio >= TARGET and rejected == 0,
            )
        )
        result.notes.append(
            "Each run is a fresh `tracker up` subprocess on 127.0.0.1 with an empty data directory on the same "
            f"ext4 disk as the repository; {sizes.ingest_clients} arbiter connections each keep "
            f"{sizes.ingest_window} submits in flight, each for its own 10-player round robins. Durable: SQLite "
            "WAL with `synchronous=FULL` and group commit (one fsync per batch); an ack leaves only after its "
            "batch is committed. The rate counts acks after a 1 s warm-up until sending stops. Runs alternate "
            f"durable / `--no-durability`; medians of {sizes.ingest_rounds} runs each. Rejected events: "
            f"{rejected}."
        )
        result.notes.append(
            "The measured server is `python -m bench._up`: `tracker up`'s own CLI entry point with the per-token "
            "submit limiter (`Limits.submits_per_second` = 200/s, burst 400) lifted, because all arbiters here "
            "share one token: with it on, four free-running arbiters get 200 results/s between them and every "
            "other submit is rejected (`rate-limited`). "
            "`tracker up` has no flag for it; a `--submit-rate` flag would let operators of big events (and this "
            "benchmark) set it."
        )
    return result
