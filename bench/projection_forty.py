"""Workload 7b: the exact projection with 40 open games, on generated round robins that are not workload 7's.

Two shapes of 40 open games (3⁴⁰ outcomes): 16 players with 5 rounds to
play, and 20 players with 4.  Each on several seeds of the benchmarks'
generator (:func:`bench.scenario.tournament`: Berger pairings, 30% White
wins, 45% draws, 25% Black wins), none of them the seed workload 7's own
30-game cases use (21).  For each: the seconds of one
:func:`tracker.core.projection.project` (its node budget as shipped), and
how many of the player extremes (best and worst rank, lowest and highest
KS) it proved exact, and in how many games the per-game effects are exact
(``games[*].exact``).  Target (issue 40): every extreme exact in ≤ 3 s; the
per-game effects are reported beside it.
"""

from __future__ import annotations

import time

from bench.common import Result, Row, Sizes, say, timed
from bench.projection import states_before
from tracker.core.projection import project

#: (players, rounds left): 40 open games each.
SHAPES = ((16, 5), (20, 4))
#: Generator seeds (workload 7's 30-game cases use 21).
SEEDS = (1, 2, 3, 4)
TARGET_S = 3.0


def measure(players: int, rounds_left: int, seed: int) -> dict[str, object]:
    """One projection of one generated state: seconds, open games, extremes exact and in all, those left open, games
    whose effects are exact."""
    t = states_before(rounds_left, seed=seed, players=players)[0]
    started = time.perf_counter()
    p = project(t)
    seconds = time.perf_counter() - started
    reached = [(pp.start_no, name, r.exact) for pp in p.players for name, r in pp.reached.items()]
    return {
        "seed": seed,
        "games": p.remaining,
        "seconds": seconds,
        "exact": sum(exact for _, _, exact in reached),
        "extremes": len(reached),
        "open": [(start_no, name) for start_no, name, exact in reached if not exact],
        "games_exact": sum(g.exact for g in p.games),
    }


def run(sizes: Sizes) -> Result:
    result = Result("projection_forty", "7b. exact projection with 40 open games, seeds not workload 7's")
    del sizes  # one size: the issue's
    with timed(result):
        raw: dict[str, object] = {}
        for players, rounds_left in SHAPES:
            found = [measure(players, rounds_left, seed) for seed in SEEDS]
            raw[f"{players}x{rounds_left}"] = found
            for f in found:
                say(
                    f"  projection: {players} players, {rounds_left} rounds left, seed {f['seed']}: "
                    f"{f['seconds']:.2f} s, {f['exact']}/{f['extremes']} extremes exact"
                )
            seconds = [float(str(f["seconds"])) for f in found]
            cases_exact = sum(f["exact"] == f["extremes"] for f in found)
            exact = sum(int(str(f["exact"])) for f in found)
            extremes = sum(int(str(f["extremes"])) for f in found)
            games_exact = sum(int(str(f["games_exact"])) for f in found)
            games = sum(int(str(f["games"])) for f in found)
            result.rows.append(
                Row(
                    workload=f"projection, {players} players, {rounds_left} rounds left (40 games)",
                    size=f"seeds {', '.join(str(s) for s in SEEDS)} of the generator (3^40 outcomes each)",
                    measured=(
                        f"{min(seconds):.2f}–{max(seconds):.2f} s; {cases_exact}/{len(found)} cases every extreme "
                        f"exact ({exact}/{extremes} extremes); per-game effects exact in {games_exact}/{games} games"
                    ),
                    baseline="—",
                    ratio="—",
                    target=f"every extreme exact in ≤ {TARGET_S:g} s",
                    met=cases_exact == len(found) and max(seconds) <= TARGET_S,
                )
            )
        result.raw = raw
        result.notes.append(
            "`tracker.core.projection.project` (node budgets as shipped) on generated round robins with 40 games "
            "open, seeds other than workload 7's; the extremes a budget left open are listed in the raw figures."
        )
    return result
