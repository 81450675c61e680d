"""Workload 13: what a result is worth — rating changes and prize money with 3 rounds left of a 10-player round robin.

A 10-player single round robin (ratings 2793 … 2730, seeded random results) with every round but the last
three recorded (15 games open, 3¹⁵ outcomes): timed as every player's rating change and performance
(:func:`tracker.core.worth.rating.rating_changes`) and, for each sharing rule, every player's least and
most prize money with a scenario each (:func:`tracker.core.worth.prizes.money`, prizes 1000/600/400),
``repeats`` times (the median), with whether every extreme is proven.  Target (issue 39): ≤ 1 s for the
rating and prize answers together.
"""

from __future__ import annotations

import time
from fractions import Fraction

from bench.common import Result, Row, Sizes, median, say, timed
from bench.scenario import tournament
from tracker.core.apply import step
from tracker.core.crosstable import Tournament
from tracker.core.standings import standings
from tracker.core.worth.norms import norms
from tracker.core.worth.prizes import SHARINGS, money
from tracker.core.worth.rating import rating_changes

PLAYERS = 10
ROUNDS_LEFT = 3
PRIZES = (Fraction(1000), Fraction(600), Fraction(400))
TARGET_S = 1.0


def state_before(rounds_left: int = ROUNDS_LEFT, players: int = PLAYERS, seed: int = 39) -> Tournament:
    opened, results = tournament(f"worth-rr{players}", players, seed)
    last = max(e.round for e in results)
    t, _ = step(None, opened)
    for event in results:
        if event.round <= last - rounds_left:
            t, _ = step(t, event)
    return t


def measure(repeats: int) -> dict[str, object]:
    t = state_before()
    s = standings(t)
    figures: dict[str, object] = {"games": len(t.pending_pairs())}
    seconds = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        rating_changes(t)
        seconds.append(time.perf_counter() - t0)
    figures["rating_s"] = median(seconds)
    seconds = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        norms(t)
        seconds.append(time.perf_counter() - t0)
    figures["norms_s"] = median(seconds)
    for sharing in SHARINGS:
        seconds = []
        cpu = []
        exact = True
        for _ in range(repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            found = money(t, s, PRIZES, sharing)
            seconds.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            exact = exact and all(m.exact for m in found)
        figures[f"{sharing}_s"] = median(seconds)
        figures[f"{sharing}_cpu_s"] = median(cpu)
        figures[f"{sharing}_exact"] = exact
    return figures


def run(sizes: Sizes) -> Result:
    result = Result("worth", "13. rating change, norms and prize money: 3 rounds left of a 10-player round robin")
    repeats = 1 if sizes.mode == "quick" else 3
    with timed(result):
        say(f"  worth: {PLAYERS} players, {ROUNDS_LEFT} rounds left, × {repeats}")
        fig = measure(repeats)
        for sharing in SHARINGS:
            total = float(fig["rating_s"]) + float(fig["norms_s"]) + float(fig[f"{sharing}_s"])  # type: ignore[arg-type]
            result.rows.append(
                Row(
                    workload=f"rating changes + norms + prize money ({sharing})",
                    size=f"{PLAYERS} players, {fig['games']} games open",
                    measured=f"median {total:.2f} s, prizes {float(fig[f'{sharing}_cpu_s']):.2f} s CPU "  # type: ignore[arg-type]
                    f"(rating {float(fig['rating_s']) * 1000:.1f} ms, norms {float(fig['norms_s']) * 1000:.1f} ms)"  # type: ignore[arg-type]
                    + ("" if fig[f"{sharing}_exact"] else ", not all exact"),
                    baseline="",
                    ratio="",
                    target=f"≤ {TARGET_S:g} s",
                    met=total <= TARGET_S and bool(fig[f"{sharing}_exact"]),
                )
            )
        result.raw = {"figures": fig}
        result.notes.append(
            "Every player's rating change and TPR, then every player's least and most money with a scenario "
            "each (prizes 1000/600/400), exact unless said. The target is wall time; the CPU time of the prize "
            "search is beside it, as a busy machine stretches the wall time."
        )
    return result
