"""Workload 2: replaying the journal on start, against applying the same events live.

The journal (the same SQLite file and schema ``tracker up`` uses) is
generated once, outside any timing, by a bulk insert: 10-player single
round robins (1 opening + 45 results = 46 events each), in groups of
``replay_group`` tournaments played at the same time (their events
interleaved round by round, as concurrent events reach a journal).

Measured:

* **start-up replay** — ``EmbeddedProcessor.replay(journal.read())`` over
  the whole journal, exactly as ``tracker up`` starts (SQLite read, decode,
  ``fold``, then the standings of every tournament installed in the hub);
* **replay vs live, interleaved** — for sampled groups, the group's bodies
  (read beforehand) are replayed by a fresh processor and, alternately
  first or second, applied live as ``EmbeddedProcessor.submit`` does it
  minus the I/O: decode → ``apply`` (with the previous standings) →
  ``standings_payload`` → ``update_message``.  The ratio is taken per group
  and its median reported.
"""

from __future__ import annotations

import asyncio
import gc
import sqlite3
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from bench.common import Result, Row, Sizes, fmt_rate, fmt_ratio, median, profile, say, timed
from bench.scenario import berger, opened, players
from tracker.core.apply import apply
from tracker.core.crosstable import Tournament
from tracker.core.events import ResultRecorded, encode_event
from tracker.core.standings import Standings
from tracker.embedded.journal import Journal
from tracker.embedded.processor import EmbeddedProcessor
from tracker.gateway.hub import Hub
from tracker.gateway.metrics import Metrics
from tracker.protocol import standings_payload, update_message

PLAYERS = 10
EVENTS_PER_TOURNAMENT = 1 + PLAYERS * (PLAYERS - 1) // 2
TARGET = 3.0


def generate(path: Path, events: int, group: int, seed: int = 3) -> tuple[int, int, list[tuple[int, int]]]:
    """Write the journal; return (events, tournaments, per group the (first, last) journal positions)."""
    import random

    tournaments = events // EVENTS_PER_TOURNAMENT
    rng = random.Random(seed)
    rounds = berger(PLAYERS)
    roster = players(PLAYERS)
    journal = Journal(path, durable=False)
    journal.open()  # the journal's own schema
    asyncio.run(_close(journal))
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=OFF")
    groups: list[tuple[int, int]] = []
    pos = 0
    db.execute("BEGIN")
    for start in range(0, tournaments, group):
        ids = [f"rr{k:06d}" for k in range(start, min(start + group, tournaments))]
        rows: list[tuple[str, str, bytes]] = []
        for tid in ids:
            event = opened(tid, PLAYERS)
            assert event.players == roster
            rows.append((tid, event.id, encode_event(event)))
        for r, pairs in enumerate(rounds, start=1):
            for tid in ids:
                for w, b in pairs:
                    result = rng.choices(("1-0", "1/2-1/2", "0-1"), (0.30, 0.45, 0.25))[0]
                    ev = ResultRecorded(f"{tid}/r{r}/{w}-{b}", tid, r, w, b, result)  # type: ignore[arg-type]
                    rows.append((tid, ev.id, encode_event(ev)))
        db.executemany("INSERT INTO events (tournament, id, body) VALUES (?, ?, ?)", rows)
        groups.append((pos + 1, pos + len(rows)))
        pos += len(rows)
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return pos, tournaments, groups


async def _close(journal: Journal) -> None:
    async with journal:
        pass


def group_bodies(path: Path, first: int, last: int) -> list[bytes]:
    db = sqlite3.connect(path)
    try:
        rows = db.execute("SELECT body FROM events WHERE pos BETWEEN ? AND ? ORDER BY pos", (first, last))
        return [bytes(body) for (body,) in rows]
    finally:
        db.close()


def replay_once(bodies: Iterable[bytes]) -> tuple[int, EmbeddedProcessor]:
    """What ``tracker up`` does on start, for these bodies: a fresh processor folds them."""
    metrics = Metrics()
    hub = Hub(metrics)
    processor = EmbeddedProcessor(_NoJournal(), metrics)  # type: ignore[arg-type]
    count = processor.replay(enumerate(bodies, start=1))
    processor.attach(hub)  # the standings of every tournament installed in the hub, as on start
    return count, processor


class _NoJournal:
    """The two attributes the processor's constructor touches; replay never writes."""

    on_failure = None
    lag = 0


def live_once(bodies: list[bytes]) -> int:
    """``EmbeddedProcessor.submit`` without the I/O: decode → apply → payload → update message."""
    from tracker.core.events import decode_event

    states: dict[str, Tournament] = {}
    last: dict[str, Standings] = {}
    count = 0
    for body in bodies:
        event = decode_event(body)
        tid = event.tournament
        state, update = apply(states.get(tid), event, last.get(tid))
        assert update is not None
        states[tid] = state
        last[tid] = update.standings
        standings_payload(update.standings)
        update_message(update)
        count += 1
    return count


def run(sizes: Sizes) -> Result:
    result = Result("replay", "2. journal replay on start vs live apply")
    with timed(result), tempfile.TemporaryDirectory(prefix="tracker-bench-replay-") as tmp:
        path = Path(tmp) / "journal.sqlite3"
        say(f"  replay: generating a journal of ~{sizes.replay_events:,} events (bulk insert, not timed)")
        t0 = time.perf_counter()
        events, tournaments, groups = generate(path, sizes.replay_events, sizes.replay_group)
        generated = time.perf_counter() - t0
        size_mb = path.stat().st_size / 1e6
        say(f"  replay: {events:,} events, {tournaments:,} tournaments, {size_mb:.0f} MB in {generated:.0f} s")

        # the start-up replay, as tracker up runs it
        gc.collect()
        journal = Journal(path)
        journal.open()
        metrics = Metrics()
        processor = EmbeddedProcessor(journal, metrics)
        t0 = time.perf_counter()
        replayed = processor.replay(journal.read())
        processor.attach(Hub(metrics))
        startup = time.perf_counter() - t0
        # every tournament is either live or, finished, compacted to its id (folded back from the journal on demand)
        assert replayed == events and len(processor.states) + len(processor.compacted) == tournaments
        asyncio.run(_close(journal))
        del processor, journal, metrics  # the journal's on_failure holds the processor: drop all three
        gc.collect()
        startup_rate = events / startup
        say(f"  replay: start-up replay {startup:.1f} s = {fmt_rate(startup_rate)}")

        # replay vs live on the same groups, interleaved
        if sizes.replay_pairs and sizes.replay_pairs < len(groups):
            step = len(groups) / sizes.replay_pairs
            chosen = [groups[int(k * step + step / 2)] for k in range(sizes.replay_pairs)]
        else:
            chosen = groups
        replay_rates: list[float] = []
        live_rates: list[float] = []
        ratios: list[float] = []
        live_events = 0
        for k, (first, last) in enumerate(chosen):
            bodies = group_bodies(path, first, last)
            timings: dict[str, float] = {}
            order = ("replay", "live") if k % 2 == 0 else ("live", "replay")
            for what in order:
                gc.collect()
                t0 = time.perf_counter()
                if what == "replay":
                    n, _ = replay_once(bodies)
                else:
                    n = live_once(bodies)
                timings[what] = time.perf_counter() - t0
                assert n == len(bodies)
            replay_rates.append(len(bodies) / timings["replay"])
            live_rates.append(len(bodies) / timings["live"])
            ratios.append(timings["live"] / timings["replay"])
            live_events += len(bodies)
        ratio = median(ratios)
        result.raw = {
            "events": events,
            "tournaments": tournaments,
            "journal_mb": size_mb,
            "generate_s": generated,
            "startup_s": startup,
            "startup_rate": startup_rate,
            "replay_rates": replay_rates,
            "live_rates": live_rates,
            "ratios": ratios,
        }
        result.rows.append(
            Row(
                workload="journal replay on start (whole journal)",
                size=f"{events:,} events, {tournaments:,} tournaments ({size_mb:.0f} MB)",
                measured=f"{fmt_rate(startup_rate)} ({startup:.1f} s to start)",
                baseline="—",
                ratio="—",
                target="reported",
                met=None,
            )
        )
        result.rows.append(
            Row(
                workload="replay vs live apply, same events",
                size=f"{len(chosen)} groups × {sizes.replay_group} tournaments = {live_events:,} events, interleaved",
                measured=f"replay {fmt_rate(median(replay_rates))}",
                baseline=f"live apply + diffs {fmt_rate(median(live_rates))}",
                ratio=f"{fmt_ratio(ratio)} (range {fmt_ratio(min(ratios))}–{fmt_ratio(max(ratios))})",
                target=f"replay ≥ {TARGET:g}× live",
                met=ratio >= TARGET,
            )
        )
        result.notes.append(
            f"The journal is generated by a bulk insert ({generated:.0f} s, not timed) into the journal's own "
            "schema: 10-player round robins (46 events each: the opening + 45 results), in groups of "
            f"{sizes.replay_group} tournaments whose events are interleaved round by round. The whole-journal "
            "figure is `EmbeddedProcessor.replay(journal.read())` exactly as `tracker up` starts (SQLite read, "
            "msgspec decode, `fold`, then the standings of every tournament installed in the hub). The ratio pairs "
            "time the same group's bodies both ways, alternating which goes first: replay (`fold`, no standings "
            "per event) vs live (decode → `apply` with the previous standings → `standings_payload` → "
            "`update_message`, i.e. `EmbeddedProcessor.submit` without the journal and the sockets)."
        )
        if ratio < TARGET:
            bodies = group_bodies(path, *chosen[0])
            result.profiles.append(("replay of one group", profile(lambda: replay_once(bodies))))
    return result
