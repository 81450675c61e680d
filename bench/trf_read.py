"""Workload 8: reading and ranking a big round-robin TRF file, as ``tracker standings FILE`` does.

A complete single round robin of 200 and 500 players (the most tracker
accepts) is written as TRF16 text (Berger pairings, seeded results, the points
column filled in where it fits), then timed through :func:`tracker.formats.trf.parse_trf`
(parse, pair the blocks, check against the wire schema, fold through the
core, compare the points column) and :func:`tracker.core.standings.standings`.
Issue 19 measured 20–28 s for 200 players and 490 s for 500 before the
reader stopped building standings for each event; the target is under 2 s
for 200 players.
"""

from __future__ import annotations

import gc
import random
import time
import tracemalloc

from bench.common import Result, Row, Sizes, median, say, timed
from bench.scenario import berger
from tracker.core.standings import standings
from tracker.formats import state_from
from tracker.formats.trf import parse_trf

#: players -> target seconds for read + rank (None: reported only)
TARGETS: dict[int, float | None] = {200: 2.0, 500: None}
_CODES = {"1-0": ("1", "0"), "1/2-1/2": ("=", "="), "0-1": ("0", "1")}


def round_robin_trf(n: int, seed: int = 7) -> str:
    """A finished ``n``-player single round robin as TRF16 text (the points column where it fits in four columns)."""
    rng = random.Random(seed)
    rounds = berger(n)
    blocks: list[list[str]] = [[] for _ in range(n + 1)]
    halves = [0] * (n + 1)
    for pairs in rounds:
        free = set(range(1, n + 1))
        for white, black in pairs:
            result = rng.choices(tuple(_CODES), weights=(0.30, 0.45, 0.25))[0]
            cw, cb = _CODES[result]
            blocks[white].append(f"{black:>4} w {cw}  ")
            blocks[black].append(f"{white:>4} b {cb}  ")
            halves[white] += {"1": 2, "=": 1, "0": 0}[cw]
            halves[black] += {"1": 2, "=": 1, "0": 0}[cb]
            free -= {white, black}
        for p in free:
            blocks[p].append("0000 - Z  ")
    lines = [f"012 Bench round robin {n}", f"XXR {len(rounds)}"]
    for no in range(1, n + 1):
        points = f"{halves[no] // 2}.{5 if halves[no] % 2 else 0}"
        if len(points) > 4:  # 100 points and more do not fit TRF's four columns: "105", or left blank
            points = points.removesuffix(".0") if points.endswith(".0") else ""
        name = f"Player{no:04d}, Bench"
        static = f"001 {no:>4} m    {name:<33} {2700 - no:>4} {'NOR':<3} {'':>11} {'':<10} {points:>4} {no:>4}  "
        lines.append((static + "".join(blocks[no])).rstrip())
    return "\n".join(lines) + "\n"


def read_and_rank(text: str, path: str) -> int:
    """What ``tracker standings FILE`` does before printing: returns the number of rows."""
    tf = parse_trf(text, path)
    return len(standings(state_from(tf)).rows)


def measure(n: int, repeats: int) -> dict[str, float]:
    text = round_robin_trf(n)
    seconds = []
    for _ in range(repeats):
        gc.collect()
        started = time.perf_counter()
        rows = read_and_rank(text, f"rr{n}.trf")
        seconds.append(time.perf_counter() - started)
        assert rows == n
    tracemalloc.start()
    read_and_rank(text, f"rr{n}.trf")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"players": n, "bytes": len(text.encode()), "median_s": median(seconds), "peak_mb": peak / 1e6}


def run(sizes: Sizes) -> Result:
    result = Result("trf", "8. reading and ranking a big round-robin TRF file")
    repeats = 1 if sizes.mode == "quick" else 3
    with timed(result):
        figures = {}
        for n, target in TARGETS.items():
            say(f"  trf: {n}-player round robin, read + rank × {repeats}")
            fig = measure(n, repeats)
            figures[n] = fig
            result.rows.append(
                Row(
                    workload=f"read + rank, {n} players",
                    size=f"{n * (n - 1) // 2:,} games, {fig['bytes'] / 1e6:.1f} MB",
                    measured=f"median {fig['median_s']:.2f} s, peak {fig['peak_mb']:.0f} MB traced",
                    baseline="issue 19: 20–28 s (200), 490 s (500)",
                    ratio="",
                    target=f"< {target:g} s" if target is not None else "reported",
                    met=fig["median_s"] < target if target is not None else None,
                )
            )
        result.raw = {"figures": figures}
        result.notes.append(
            "Read + rank = `parse_trf` (cut the columns, pair both players' blocks, check every event against "
            "the wire schema, fold them through the core without standings or diffs, compare each points column) "
            "then one `standings()`. Peak memory is what tracemalloc saw during one more run."
        )
    return result
