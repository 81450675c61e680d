"""``tracker up --demo``: the first rounds at once, the rest paced, and it ends."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.conftest import TOKEN
from tests.processes import spawn, stop_process
from tracker.cli.demo import DEMO_RATE, WARM_UP_ROUNDS, demo_file, demo_plan
from tracker.formats.files import read_file


def test_the_demo_sends_the_first_rounds_at_once_and_paces_the_rest_at_a_result_every_few_seconds() -> None:
    tf = read_file(demo_file())
    head, rest = demo_plan(tf)
    assert {getattr(e, "round", 0) for e in head.events} == set(range(1, WARM_UP_ROUNDS + 1))
    assert {getattr(e, "round", 0) for e in rest.events} == set(range(WARM_UP_ROUNDS + 1, 10))
    assert len(head.events) + len(rest.events) == len(tf.events)
    assert 2 <= 1 / DEMO_RATE <= 10, "a result every few seconds"
    assert len(rest.events) / DEMO_RATE >= 90, "live for long enough to open the pages"


def test_tracker_up_demo_replays_the_whole_event_and_says_so(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "tracker.cli", "up", "--demo", "--rate", "50", "--port", "0"]
    process = spawn("tracker up --demo", [*cmd, "--data-dir", str(tmp_path / "data"), "--token", TOKEN])
    try:
        plan = process.expect(r"rounds 1–4 at once \((\d+) results\), then (\d+) results live", timeout=30)
        assert int(plan.group(1)) + int(plan.group(2)) == 45
        process.expect(r"demo: all 46 events acknowledged", timeout=30)
    finally:
        stop_process(process.proc)
