"""Workload 7: the arbiter projection before the last round of a 16-player round robin.

A 16-player single round robin (Berger pairings, seeded random results)
with every round but the last recorded: 8 games left, so ``project``
enumerates all 3⁸ = 6,561 outcomes exactly.  Timed ``repeats`` times on the
same state; the median and the spread are reported.  For scale, the same
with two rounds left (16 games: sound bounds, not exact) is reported too.
"""

from __future__ import annotations

import time

from bench.common import Result, Row, Sizes, fmt_ms, median, say, timed
from bench.scenario import tournament
from tracker.core.apply import fold
from tracker.core.crosstable import Tournament
from tracker.core.projection import project

PLAYERS = 16


def state_before(rounds_left: int, seed: int = 21) -> Tournament:
    opened, results = tournament("projection-rr16", PLAYERS, seed)
    last = max(e.round for e in results)
    t, _ = fold(None, opened)
    for event in results:
        if event.round <= last - rounds_left:
            t, _ = fold(t, event)
    return t


def time_projection(t: Tournament, repeats: int) -> tuple[list[float], bool, int]:
    spent = []
    exact = False
    games = len(t.pending_pairs())
    for _ in range(repeats):
        t0 = time.perf_counter()
        p = project(t)
        spent.append(1000 * (time.perf_counter() - t0))
        exact = p.exact
    return spent, exact, games


def run(sizes: Sizes) -> Result:
    result = Result("projection", "7. projection: last round of a 16-player round robin")
    with timed(result):
        raw = {}
        for rounds_left in (1, 2):
            t = state_before(rounds_left)
            spent, exact, games = time_projection(t, sizes.projection_repeats if rounds_left == 1 else 1)
            say(f"  projection: {games} games left: median {median(spent):.0f} ms ({'exact' if exact else 'bounds'})")
            raw[rounds_left] = {"ms": spent, "exact": exact, "games": games}
            result.rows.append(
                Row(
                    workload=f"projection, 16 players, {rounds_left} round{'s' if rounds_left > 1 else ''} left",
                    size=f"{games} games left ({'exact: 3^' + str(games) + ' outcomes' if exact else 'sound bounds'})",
                    measured=(
                        f"median {fmt_ms(median(spent))} (min {fmt_ms(min(spent))}, max {fmt_ms(max(spent))}, "
                        f"{len(spent)} run{'s' if len(spent) > 1 else ''})"
                    ),
                    baseline="—",
                    ratio="—",
                    target="reported",
                    met=None,
                )
            )
        result.raw = raw
        result.notes.append(
            "`tracker.core.projection.project` on the live state of a 16-player round robin, all rounds but the "
            "last (or the last two) recorded. The gateway runs it in a worker process "
            "(`tracker/server/projecting.py`), debounced, for arbiters only."
        )
    return result
