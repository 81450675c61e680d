"""Workload 1: one result applied by the core, against rebuilding the standings from scratch.

For round robins of 10, 24 and 100 players, every result of whole
tournaments (Berger pairings, seeded random results) goes through
``tracker.core.apply.apply`` — fold, standings, diff and summary, with the
previous standings passed in as the processor does.  Interleaved with it, a
second copy of the tournament folds the same result (not timed) and then
``rebuild_standings`` rebuilds the standings from nothing (timed): the
baseline.  The baseline is timed on every ``k``-th result (phase shifted per
tournament, so all positions of the tournament are sampled) because a
rebuild at 100 players costs a tenth of a second.
"""

from __future__ import annotations

import gc
import time

from bench.common import (
    Result,
    Row,
    Sizes,
    fmt_ratio,
    fmt_us,
    median,
    percentile,
    profile,
    save_figure,
    say,
    timed,
)
from bench.scenario import tournament
from tracker.core.apply import apply, describe, diff, step
from tracker.core.reference import rebuild_standings
from tracker.core.standings import standings

TARGETS = {24: (10.0, 50.0), 100: (50.0, None)}  # players -> (min ratio, max median µs)


def measure(n: int, count: int, every: int, seed: int = 7) -> dict[str, list[float]]:
    """Per-result µs of ``apply`` (all results) and of ``rebuild_standings`` (every ``every``-th)."""
    inc: list[float] = []
    reb: list[float] = []
    paired: list[float] = []  # rebuild / apply at the same result
    clock = time.perf_counter_ns
    for k in range(count):
        opened, results = tournament(f"core-{n}-{k}", n, seed)
        live, update = apply(None, opened)
        assert update is not None
        previous = update.standings
        shadow, _ = step(None, opened)
        for pos, event in enumerate(results):
            a = clock()
            live, update = apply(live, event, previous)
            b = clock()
            assert update is not None
            previous = update.standings
            spent = (b - a) / 1000
            inc.append(spent)
            shadow, _ = step(shadow, event)
            if (pos + k) % every == 0:
                a = clock()
                rebuilt = rebuild_standings(shadow)
                b = clock()
                reb.append((b - a) / 1000)
                paired.append((b - a) / 1000 / spent)
                assert rebuilt.rows == previous.rows, "incremental and rebuilt standings differ"
    return {"apply": inc, "rebuild": reb, "paired": paired}


def breakdown(n: int, count: int, seed: int = 19) -> dict[str, float]:
    """Median µs of each step ``apply`` takes, timed one by one on a second copy of the same tournaments."""
    steps: dict[str, list[float]] = {"fold": [], "standings": [], "diff": [], "describe": []}
    clock = time.perf_counter_ns
    for k in range(count):
        opened, results = tournament(f"steps-{n}-{k}", n, seed)
        live, update = apply(None, opened)
        assert update is not None
        previous = update.standings
        for event in results:
            a = clock()
            live, change = step(live, event)
            b = clock()
            after = standings(live)
            c = clock()
            diff(previous, after)
            d = clock()
            assert change is not None
            describe(live, event, change, previous, after)
            e = clock()
            for name, spent in zip(steps, (b - a, c - b, d - c, e - d), strict=True):
                steps[name].append(spent / 1000)
            previous = after
    return {name: median(values) for name, values in steps.items()}


def _profile_24(count: int) -> str:
    batches = [tournament(f"prof-24-{k}", 24, 11) for k in range(count)]

    def run() -> None:
        for opened, results in batches:
            live, update = apply(None, opened)
            assert update is not None
            previous = update.standings
            for event in results:
                live, update = apply(live, event, previous)
                assert update is not None
                previous = update.standings

    return profile(run)


def run(sizes: Sizes) -> Result:
    result = Result("core", "1. core: one result applied vs rebuilding the standings")
    with timed(result):
        figures = {}
        for n, count, every in sizes.core:
            say(f"  core: {n} players × {count} tournaments (rebuild timed on 1 result in {every})")
            gc.collect()
            data = measure(n, count, every)
            inc, reb = data["apply"], data["rebuild"]
            fig = {
                "players": n,
                "tournaments": count,
                "results": len(inc),
                "rebuild_samples": len(reb),
                "apply_median_us": median(inc),
                "apply_p99_us": percentile(inc, 99),
                "rebuild_median_us": median(reb),
                "rebuild_p99_us": percentile(reb, 99),
                "ratio": median(reb) / median(inc),
                "paired_ratio_median": median(data["paired"]),
            }
            figures[n] = fig
            ratio_target, us_target = TARGETS.get(n, (None, None))
            met: bool | None = None
            target = "reported"
            if ratio_target is not None:
                met = fig["ratio"] >= ratio_target
                target = f"≥ {ratio_target:g}×"
                if us_target is not None:
                    target += f"; median ≤ {us_target:g} µs"
                    met = met and fig["apply_median_us"] <= us_target
            result.rows.append(
                Row(
                    workload=f"core apply, {n} players",
                    size=f"{len(inc):,} results ({count} RR); rebuild on {len(reb):,}",
                    measured=f"median {fmt_us(fig['apply_median_us'])}, p99 {fmt_us(fig['apply_p99_us'])}",
                    baseline=f"rebuild median {fmt_us(fig['rebuild_median_us'])}, p99 {fmt_us(fig['rebuild_p99_us'])}",
                    ratio=f"{fmt_ratio(fig['ratio'])} (paired {fmt_ratio(fig['paired_ratio_median'])})",
                    target=target,
                    met=met,
                )
            )
        result.raw = {"figures": figures}
        result.notes.append(
            "Per result: `apply(state, event, previous)` = validate + fold the crosstable + new standings + "
            "diff + the one-line summary (what the live processor runs). Baseline: `rebuild_standings` folds "
            "every stored result into a fresh tournament and computes its standings. Both copies are asserted "
            "to give identical rows at every sampled result. Ratio = median(rebuild) / median(apply); "
            "'paired' = median over sampled results of rebuild/apply at the same result."
        )
        missed = [row for row in result.rows if row.met is False]
        if missed:
            steps = breakdown(24, max(2, sizes.core[1][1] // 4))
            result.raw["steps_24"] = steps
            total = sum(steps.values())
            result.notes.append(
                "**What limits it (24 players).** Median µs of each step of `apply`, timed one by one: "
                + ", ".join(f"{name} {us:,.0f} µs ({100 * us / total:.0f}%)" for name, us in steps.items())
                + ". `standings` still builds the whole table after every result: one sort of integer keys, "
                "direct-encounter places reused per tied group (recomputed only for the groups whose members "
                "changed — the two players' old and new score groups), then every row assembled column by column "
                "(most rows do change: the SB of both players' opponents moves with their scores, and ranks shift "
                "between their old and new places). `fold` is the crosstable, SB/Koya and the qualifying-set story. "
                "See the profile for what is left."
            )
            say("  core: a target was missed — profiling apply at 24 players")
            result.profiles.append(
                ("apply(), 24-player round robins (every result)", _profile_24(max(2, sizes.core[1][1] // 4)))
            )
        result.plots.append(_plot(figures))
    return result


def _plot(figures: dict[int, dict[str, float]]) -> object:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ns = sorted(figures)
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    for key, label, style in (
        ("apply", "apply (incremental)", "o-"),
        ("rebuild", "rebuild from scratch", "s--"),
    ):
        ax.plot(ns, [figures[n][f"{key}_median_us"] for n in ns], style, label=f"{label}, median")
        ax.plot(ns, [figures[n][f"{key}_p99_us"] for n in ns], style, alpha=0.4, label=f"{label}, p99")
    ax.axhline(50, color="grey", lw=0.8, ls=":")
    ax.text(ns[0], 55, "50 µs", color="grey", fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.set_xlabel("players in the round robin")
    ax.set_ylabel("µs per result")
    ax.set_title("Core: one result applied vs rebuilt from scratch")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return save_figure(fig, "bench-core.png")
