"""The fault harness as tests: a reduced bounded run in the normal suite, the long one behind ``-m chaos``.

``make chaos`` plays ``TRACKER_CHAOS_ROUNDS`` (default 200) randomized fault rounds per deployment
(:mod:`tests.chaos.harness`); the reduced tests here play a handful, within about a minute in all.
Every run writes its counts per fault and per invariant to the reliability log
(:func:`tests.reliability_log.record`, area ``durability`` for the embedded deployment, ``distributed``
for Kafka) *before* asserting, so a violation is reported with its counts, never hidden; then the test
fails when any invariant was violated, naming each failing round's seed and round number.

Reproduce one round: ``TRACKER_CHAOS_SEED=S TRACKER_CHAOS_FIRST_ROUND=R TRACKER_CHAOS_ROUNDS=1
.venv/bin/python -m pytest -q -m chaos -p no:cacheprovider tests/chaos -k embedded`` (the seed fixes what
is tried; the exact interleaving still depends on timing).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests.chaos.faults import small_disk
from tests.chaos.harness import FAULTS, RunResult, run_embedded, run_kafka
from tests.reliability_log import record

SEED = int(os.environ.get("TRACKER_CHAOS_SEED", "20261414"))
ROUNDS = int(os.environ.get("TRACKER_CHAOS_ROUNDS", "200"))
FIRST = int(os.environ.get("TRACKER_CHAOS_FIRST_ROUND", "0"))
MAX_SECONDS = float(os.environ.get("TRACKER_CHAOS_MAX_SECONDS", "5400"))

OUTCOME = {
    "acked-lost": "acknowledged but not in the durable log",
    "applied-twice": "applied twice",
    "final-state": "final state ≠ fold of the durable log",
    "seq-order": "subscriber seq gap, repeat or reorder",
    "published-not-durable": "published but not durable",
    "durable-not-published": "durable but never published",
}


def report(result: RunResult, what: str) -> None:
    """One reliability-log row per fault injected, and one for the run; print the run's summary."""
    area = "durability" if result.deployment == "embedded" else "distributed"
    counts = result.counts()
    seeds = [f"{r.seed}/{r.round}" for r in result.failing()]
    words = ", ".join(f"{n} {OUTCOME[k]}" for k, n in counts.items() if n) or "no invariant violated"
    print("\n" + result.report())
    for fault, (n, rounds, lost, by) in result.per_fault().items():
        label = FAULTS[fault].replace("DISK", f"by {result.disk or 'tmpfs'}")
        record(
            area,
            f"chaos {result.deployment}: {label}",
            tried=n,
            unit="faults",
            lost=lost,
            outcome=(
                f"in {rounds} randomized rounds (violations counted in every round that had this fault; "
                "a round has several faults, so rows overlap): "
                + (", ".join(f"{v} {OUTCOME[k]}" for k, v in by.items() if v) or "every invariant held")
            ),
            figures={"rounds": rounds, "by_invariant": by, "seed": result.seed},
        )
    record(
        area,
        f"chaos {result.deployment}: {what} (seed {result.seed})",
        tried=len(result.rounds),
        unit="rounds",
        lost=result.violations(),
        outcome=(
            f"{sum(r.events for r in result.rounds)} events, "
            f"{sum(r.acked for r in result.rounds)} acknowledged; {words}"
            + (f"; failing rounds (seed/round): {' '.join(seeds[:20])}" if seeds else "")
        ),
        figures={"by_invariant": counts, "failing_rounds": seeds, "seconds": sum(r.seconds for r in result.rounds)},
    )


def assert_held(result: RunResult) -> None:
    assert result.violations() == 0, result.report()


# -- the reduced run: part of the normal suite ---------------------------------------------------------------------


@pytest.mark.timeout(120)
def test_randomized_faults_on_tracker_up_lose_repeat_and_reorder_nothing(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk") as disk:
        result = asyncio.run(run_embedded(disk, SEED, 4, max_seconds=30))
    report(result, "reduced run, randomized fault rounds")
    assert_held(result)


@pytest.mark.kafka
@pytest.mark.timeout(180)
def test_randomized_faults_on_kafka_lose_repeat_and_reorder_nothing() -> None:
    result = asyncio.run(run_kafka(SEED, 2, max_seconds=30))
    report(result, "reduced run, randomized fault rounds")
    assert_held(result)


# -- the long run: make chaos -----------------------------------------------------------------------------------------


@pytest.mark.chaos
@pytest.mark.timeout(4 * 3600)
def test_chaos_embedded(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk") as disk:
        result = asyncio.run(run_embedded(disk, SEED, ROUNDS, first=FIRST, max_seconds=MAX_SECONDS))
    report(result, "randomized fault rounds")
    assert_held(result)


@pytest.mark.chaos
@pytest.mark.kafka
@pytest.mark.timeout(4 * 3600)
def test_chaos_kafka() -> None:
    result = asyncio.run(run_kafka(SEED, ROUNDS, first=FIRST, max_seconds=MAX_SECONDS))
    report(result, "randomized fault rounds")
    assert_held(result)
