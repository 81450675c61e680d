"""Workload 6: many tournaments at once in one process, against one tournament alone.

In a fresh subprocess (so its memory is its own), what ``tracker up`` runs:
a real :class:`EmbeddedProcessor` over a real SQLite :class:`Journal` (in a
temporary directory, ``durable=False`` so the disk's fsync is not what is
measured) publishing into a :class:`Hub` built with the gateway's default
limits.  Open ``tournaments`` 10-player round robins, then feed their
results round by round — every tournament's games of round 1 submitted in
order, :data:`WINDOW` of them in flight at a time, then round 2, … — ten
thousand tournaments at once.  Each tournament is compacted as soon as its last
result is durable (``compact_after=0``; ``tracker up`` waits
:data:`~tracker.embedded.processor.COMPACT_AFTER` seconds of idleness first).

Baseline: the same work for one tournament alone (a fresh processor and
journal, opened, its 45 results submitted round by round), repeated; half of
the repetitions run before the many-tournament phase and half after.

Memory per tournament: the RSS growth of the process divided by the
number of tournaments (events are generated beforehand and freed before
the last reading), and, in a second subprocess under ``tracemalloc``, the
exact Python heap retained, split into the hub's share and the processor's.
With every tournament live at once, that RSS is the peak's: memory freed by
compaction stays with the process wherever one live object remains in its
page or arena.  So a third subprocess plays a season: the same number of
tournaments, ``Sizes.many_wave`` of them live at a time (a wave opens once
the last one is finished and compacted), and reads the RSS after each wave.
Its growth per tournament over the season is what a finished tournament
costs a long-running process, and the slope from the first wave to the last
what one more finished tournament costs.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from bench.common import Result, Row, Sizes, fmt_pct, fmt_rate, median, python, rss_bytes, save_figure, say, timed
from bench.procs import start
from bench.scenario import tournament
from tracker.config import Limits
from tracker.core.events import ResultRecorded, TournamentOpened
from tracker.embedded.journal import Journal
from tracker.embedded.processor import EmbeddedProcessor
from tracker.gateway.hub import Hub
from tracker.gateway.metrics import Metrics

PLAYERS = 10
MEMORY_TARGET_KB = 20.0
PROCESSOR_TARGET_KB = 10.0
RATE_TARGET = 0.5
WINDOW = 128  # submits in flight at once: four arbiters' clients pipelining 32 each (as bench ingest)
NEVER = 1e9  # compact_after for a processor that keeps every tournament live (the comparison)


def hub(metrics: Metrics, compact_after: float) -> Hub:
    """The hub as :class:`~tracker.gateway.serve.Gateway` builds it, with the default limits.

    ``compact_after``: seconds a finished tournament keeps its whole resume history (the gateway's default
    is ten minutes; the benchmark measures what a finished tournament costs after that, so it passes 0).
    """
    limits = Limits()
    return Hub(
        metrics,
        compact_after=compact_after,
        history=limits.history,
        history_bytes=limits.history_bytes,
        max_buffer=limits.max_buffer,
        max_resume=limits.max_resume,
    )


class Live:
    """``tracker up`` without the sockets: processor + journal publishing into a hub."""

    def __init__(self, journal: Journal, *, compact: bool = True) -> None:
        metrics = Metrics()
        self.journal = journal
        self.processor = EmbeddedProcessor(journal, metrics, compact_after=0.0 if compact else NEVER)
        self.hub = hub(metrics, 0.0 if compact else NEVER)
        self.processor.attach(self.hub)

    async def submit_rounds(self, rounds: Iterable[list[TournamentOpened | ResultRecorded]]) -> list[tuple[int, float]]:
        """Submit each round's events in order, :data:`WINDOW` at most in flight; (events, seconds) per round.

        A round starts once the previous one is durable.  The window is what
        arbiters' clients keep in flight (``tracker replay`` pipelines), so the
        journal group-commits up to that many events at once.
        """
        rates = []
        for events in rounds:
            t0 = time.perf_counter()
            pending: set[asyncio.Task[int]] = set()
            for event in events:
                if len(pending) >= WINDOW:
                    done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                    for task in done:
                        task.result()
                pending.add(asyncio.create_task(self.processor.submit(event)))
            for seq in await asyncio.gather(*pending):
                assert seq > 0
            rates.append((len(events), time.perf_counter() - t0))
        await asyncio.sleep(0)  # the compactions scheduled by the last commits
        return rates


def _bytes_on_disk(directory: Path, pattern: str) -> int:
    return sum(f.stat().st_size for f in directory.glob(pattern))


def _rounds(count: int, prefix: str) -> Iterator[list[TournamentOpened | ResultRecorded]]:
    """Round 0 (every opening), then every tournament's games of round 1, of round 2, …

    Each round is generated only when it is asked for (before its timing starts), so the process never
    holds more than one round of the benchmark's own input: all of it at once (9.6 KB per tournament)
    would be counted in the RSS as if tracker kept it.
    """

    def games(k: int) -> list[ResultRecorded]:
        return tournament(f"{prefix}{k:06d}", PLAYERS, seed=13)[1]

    yield [tournament(f"{prefix}{k:06d}", PLAYERS, seed=13)[0] for k in range(count)]
    for r in range(1, max(e.round for e in games(0)) + 1):
        yield [e for k in range(count) for e in games(k) if e.round == r]


async def single_rates(count: int, directory: Path) -> list[float]:
    """Results/s of one tournament alone, ``count`` times (opening not timed), each with its own journal."""
    rates = []
    for k in range(count):
        rounds = list(_rounds(1, f"alone{k}-"))
        async with Journal(directory / f"alone-{k}.sqlite3", durable=False) as journal:
            live = Live(journal)
            await live.submit_rounds(rounds[:1])
            t0 = time.perf_counter()
            await live.submit_rounds(rounds[1:])
            rates.append(sum(len(r) for r in rounds[1:]) / (time.perf_counter() - t0))
            assert live.processor.compacted == {rounds[0][0].tournament}
    return rates


async def many(count: int, singles: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="bench-many-") as tmp:
        directory = Path(tmp)
        before_single = await single_rates(singles // 2, directory)
        gc.collect()
        rss0 = rss_bytes()
        async with Journal(directory / "many.sqlite3", durable=False) as journal:
            live = Live(journal)
            rounds = _rounds(count, "many")
            await live.submit_rounds([next(rounds)])
            timed_rounds = await live.submit_rounds(rounds)
            total = sum(n for n, _ in timed_rounds)
            t_all = sum(seconds for _, seconds in timed_rounds)
            gc.collect()
            rss1 = rss_bytes()
            assert len(live.processor.compacted) == count and not live.processor.states
            journal_bytes = _bytes_on_disk(directory, "many.sqlite3*")
            after_single = await single_rates(singles - singles // 2, directory)
    return {
        "tournaments": count,
        "results": total,
        "rate": total / t_all,
        "round_rates": [n / seconds for n, seconds in timed_rounds],
        "single_rates": before_single + after_single,
        "rss_per_tournament": (rss1 - rss0) / count,
        "rss_growth": rss1 - rss0,
        "journal_bytes_per_tournament": journal_bytes / count,
    }


async def season(count: int, wave: int) -> dict[str, object]:
    """``count`` tournaments, ``wave`` of them live at a time; the RSS growth after each wave."""
    with tempfile.TemporaryDirectory(prefix="bench-many-") as tmp:
        gc.collect()
        rss0 = rss_bytes()
        async with Journal(Path(tmp) / "season.sqlite3", durable=False) as journal:
            live = Live(journal)
            readings: list[int] = []
            for k in range(count // wave):
                await live.submit_rounds(_rounds(wave, f"season{k:03d}-"))
                gc.collect()
                readings.append(rss_bytes() - rss0)
            assert len(live.processor.compacted) == len(readings) * wave and not live.processor.states
    played = len(readings) * wave
    return {
        "tournaments": played,
        "wave": wave,
        "rss_growth": readings,
        "rss_per_tournament": readings[-1] / played,
        "rss_marginal": (readings[-1] - readings[0]) / (played - wave) if played > wave else None,
    }


async def traced(count: int, compact: bool = True) -> dict[str, object]:
    """Python heap retained per tournament (tracemalloc), split into the hub's share and the processor's.

    ``compact=False``: finished tournaments stay live (what the processor kept before compaction).
    """
    with tempfile.TemporaryDirectory(prefix="bench-many-") as tmp:
        async with Journal(Path(tmp) / "traced.sqlite3", durable=False) as journal:
            tracemalloc.start()
            gc.collect()
            base = tracemalloc.get_traced_memory()[0]
            live = Live(journal, compact=compact)
            rounds = _rounds(count, "traced")
            await live.submit_rounds(islice(rounds, PLAYERS - 1))  # the openings and every round but the last
            gc.collect()
            live_total = tracemalloc.get_traced_memory()[0] - base  # every tournament live, one round to go
            await live.submit_rounds(rounds)
            gc.collect()
            processor = live.processor
            assert len(processor.compacted if compact else processor.states) == count
            total = tracemalloc.get_traced_memory()[0] - base
            history = live.hub.stats().history_bytes
            processor.sink = None
            live.hub.clear()  # the hub's per-tournament share (the hub itself stays: metrics gauges hold it)
            gc.collect()
            no_hub = tracemalloc.get_traced_memory()[0] - base
            ids = sum(sys.getsizeof(tid) for tid in processor.compacted) + sys.getsizeof(processor.compacted)
            tracemalloc.stop()
    return {
        "tournaments": count,
        "total_per_tournament": total / count,
        "hub_per_tournament": (total - no_hub) / count,
        "history_bytes_per_tournament": history / count,
        "processor_per_tournament": no_hub / count,
        "compacted_ids_per_tournament": ids / count,
        "live_per_tournament": live_total / count,
    }


def run(sizes: Sizes) -> Result:
    result = Result("many", "6. many tournaments at once vs one tournament alone")
    with timed(result):
        say(f"  many: {sizes.many_tournaments:,} concurrent tournaments (subprocess)")
        main = _child(["--many", str(sizes.many_tournaments), "--single", str(sizes.many_single)])
        say(f"  many: tracemalloc over {sizes.many_traced:,} tournaments (subprocess)")
        heap = _child(["--traced", str(sizes.many_traced)])
        say(f"  many: tracemalloc over {sizes.many_traced:,} tournaments kept live (subprocess)")
        kept = _child(["--traced", str(sizes.many_traced), "--keep-live"])
        say(
            f"  many: a season of {sizes.many_tournaments:,} tournaments, "
            f"{sizes.many_wave:,} live at a time (subprocess)"
        )
        played = _child(["--season", str(sizes.many_tournaments), "--wave", str(sizes.many_wave)])
        single = median(main["single_rates"])
        ratio = main["rate"] / single
        rss_kb = main["rss_per_tournament"] / 1024
        heap_kb = heap["total_per_tournament"] / 1024
        hub_kb = heap["hub_per_tournament"] / 1024
        processor_kb = heap["processor_per_tournament"] / 1024
        kept_kb = kept["processor_per_tournament"] / 1024
        season_kb = played["rss_per_tournament"] / 1024
        result.raw = {"many": main, "traced": heap, "traced_live": kept, "season": played}
        result.rows.append(
            Row(
                workload="many tournaments at once: results/s",
                size=f"{main['tournaments']:,} × 10-player RR, {main['results']:,} results round by round",
                measured=f"{fmt_rate(main['rate'])}",
                baseline=f"one tournament alone {fmt_rate(single)} (median of {len(main['single_rates'])})",
                ratio=fmt_pct(ratio),
                target=f"≥ {fmt_pct(RATE_TARGET)} of alone",
                met=ratio >= RATE_TARGET,
            )
        )
        result.rows.append(
            Row(
                workload="memory per tournament, all live at once, whole process",
                size=f"{main['tournaments']:,} 10-player RR played together, all finished",
                measured=f"RSS {rss_kb:,.1f} KB; Python heap {heap_kb:,.1f} KB (tracemalloc, {heap['tournaments']:,})",
                baseline="—",
                ratio="—",
                target=f"≤ {MEMORY_TARGET_KB:g} KB",
                met=max(rss_kb, heap_kb) <= MEMORY_TARGET_KB,
            )
        )
        marginal = played["rss_marginal"]
        result.rows.append(
            Row(
                workload="memory per finished tournament, a season, whole process",
                size=f"{played['tournaments']:,} × 10-player RR, {played['wave']:,} live at a time",
                measured=f"RSS {season_kb:,.1f} KB"
                + ("" if marginal is None else f"; {marginal / 1024:,.1f} KB per further tournament (slope)"),
                baseline=f"all live at once: RSS {rss_kb:,.1f} KB",
                ratio="—",
                target=f"≤ {MEMORY_TARGET_KB:g} KB",
                met=season_kb <= MEMORY_TARGET_KB,
            )
        )
        result.plots.append(_plot(main, played))
        result.rows.append(
            Row(
                workload="memory per tournament: hub | processor",
                size=f"{heap['tournaments']:,} finished 10-player RR (tracemalloc)",
                measured=f"hub {hub_kb:,.1f} KB | processor {processor_kb:,.2f} KB",
                baseline=f"processor keeping them live {kept_kb:,.1f} KB",
                ratio=f"{100 * processor_kb / kept_kb:.1f}%",
                target=f"processor ≤ {PROCESSOR_TARGET_KB:g} KB",
                met=processor_kb <= PROCESSOR_TARGET_KB,
            )
        )
        result.notes.append(
            "Both phases run what `tracker up` runs, minus the sockets: `EmbeddedProcessor.submit` (apply → "
            "standings payload → update message → SQLite journal, group-committed, `durable=False` so the disk's "
            f"fsync is not measured → `Hub.publish`), each round's games submitted in order with at most {WINDOW} "
            "in flight (four arbiters' clients pipelining 32 each). The many-tournament "
            "phase opens every tournament, then submits round 1 of all of them, round 2 of all, and so on. 'Alone' "
            "opens one tournament with its own journal and submits its 45 results round by round; half of those "
            "runs happen before the many-tournament phase, half after. A finished tournament is compacted as soon "
            "as its last result is durable (`tracker up` waits until it has been idle for `COMPACT_AFTER` = 30 s): "
            "the processor keeps its id, and folds it back from the journal when an event or a reader needs it. "
            "Memory: RSS growth of the subprocess over the phase (each round's events are generated just before "
            "it is submitted, so at most one round of the benchmark's own input is held; SQLite's page cache "
            "included), and the Python heap retained under `tracemalloc` in a second subprocess, split by "
            "dropping the hub. "
            f"Hub share: {hub_kb:,.1f} KB per tournament, of which "
            f"{heap['history_bytes_per_tournament'] / 1024:,.1f} KB are the newest field deltas kept for "
            "resume with `since` (the rest: the snapshot, zlib-compressed). Processor share: "
            f"{heap['compacted_ids_per_tournament']:,.0f} bytes of it the compacted tournament's id. "
            f"The journal on disk: {main['journal_bytes_per_tournament'] / 1024:,.1f} KB per tournament. "
            f"One round before the end, every tournament still live, the heap was "
            f"{heap['live_per_tournament'] / 1024:,.1f} KB per tournament (hub and processor)."
        )
        result.notes.append(
            f"**Two readings of memory per tournament.** With all {main['tournaments']:,} tournaments live at once, "
            "the RSS after they finish is the peak's (see below). A server that runs tournaments over a season "
            f"has far fewer live at a time: the season phase plays {played['tournaments']:,} of them "
            f"{played['wave']:,} at a time (a wave opens once the previous one is finished and compacted) and reads "
            f"the RSS growth after each wave: {season_kb:,.1f} KB per tournament over the season, "
            + (
                ""
                if marginal is None
                else f"and {marginal / 1024:,.1f} KB for each tournament after the first wave (the slope: the "
                "memory freed by one wave's compaction is reused by the next, so what grows is what a finished "
                "tournament keeps), "
            )
            + "which the figure shows against the all-at-once reading."
        )
        if max(rss_kb, heap_kb) > MEMORY_TARGET_KB:
            result.notes.append(
                "**What limits the all-at-once reading.** What a finished tournament keeps is "
                f"{heap_kb:,.1f} KB of Python heap (hub {hub_kb:,.1f} KB: its compressed snapshot and newest "
                f"deltas; processor {processor_kb:,.2f} KB). The RSS is the peak's: with every tournament live "
                "at once, one round before the end, the "
                f"heap held {heap['live_per_tournament'] / 1024:,.0f} KB per tournament, and the memory freed by "
                "compaction stays with the process, scattered between live objects (pymalloc arenas and the C "
                "heap are returned to the system only when wholly free). The hub's resume history, two thirds of "
                "that peak before, is now compressed eight deltas at a time; what is left at the peak is the "
                "standings each side keeps (the hub's payload and digest parts, the processor's rows) and the "
                "crosstable (Entry objects, cached result lines, applied ids). Reaching 20 KB of RSS with all of "
                "them live at once needs a smaller live state at the peak, not a smaller finished one."
            )
    return result


def _plot(main: dict[str, Any], played: dict[str, Any]) -> Path:
    """RSS growth against tournaments finished: the season wave by wave, all at once, and the 20 KB budget."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mib = 1 << 20
    wave = played["wave"]
    finished = [wave * (k + 1) for k in range(len(played["rss_growth"]))]
    fig, ax = plt.subplots(figsize=(7.2, 4.6), dpi=110)
    ax.plot(
        finished,
        [r / mib for r in played["rss_growth"]],
        "o-",
        color="tab:blue",
        label=f"a season: {wave:,} live at a time, RSS after each wave",
    )
    ax.plot(
        [main["tournaments"]],
        [main["rss_growth"] / mib],
        "s",
        color="tab:red",
        markersize=8,
        label=f"all {main['tournaments']:,} live at once, RSS once finished",
    )
    ax.plot(
        [0, max(finished[-1], main["tournaments"])],
        [0, max(finished[-1], main["tournaments"]) * MEMORY_TARGET_KB * 1024 / mib],
        "--",
        color="grey",
        label=f"{MEMORY_TARGET_KB:g} KB per tournament",
    )
    ax.set_xlabel("10-player round robins finished")
    ax.set_ylabel("RSS growth of the process (MiB)")
    ax.set_title("Memory per finished tournament: a season vs all at once")
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return save_figure(fig, "bench-memory.png")


def _child(args: list[str]) -> dict[str, Any]:
    proc = start([python(), "-m", "bench.many", *args], "many")
    match = proc.expect(r"^RESULT (.*)$", timeout=1800)
    proc.stop()
    out: dict[str, Any] = json.loads(match.group(1))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--many", type=int)
    p.add_argument("--single", type=int, default=100)
    p.add_argument("--traced", type=int)
    p.add_argument("--keep-live", action="store_true", help="with --traced: no compaction (the comparison)")
    p.add_argument("--season", type=int, help="tournaments played a wave at a time")
    p.add_argument("--wave", type=int, default=1000, help="with --season: tournaments live at a time")
    args = p.parse_args(argv)
    if args.many:
        out = asyncio.run(many(args.many, args.single))
    elif args.season:
        out = asyncio.run(season(args.season, args.wave))
    else:
        out = asyncio.run(traced(args.traced, not args.keep_live))
    print("RESULT " + json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
