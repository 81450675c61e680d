"""Adding an event type is guided: every dispatch over the closed union fails type-checking (issue 25, item 2).

A copy of the tree gets a test-only event in ``tracker.core.events.Event``; ``mypy --strict`` must then name
each ``match`` that ends in ``assert_never`` — the validation, the step, the follower's ledger (twice) and the
arbiters' desk — and nothing else.  The copy reuses the tree's mypy cache when there is one (seconds; a cold
run takes about a minute).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNION = "Event = TournamentOpened | ResultRecorded |"
PROBE = """class TestOnly(msgspec.Struct, frozen=True, tag="test_only", tag_field="type"):
    id: str
    tournament: str


Event = TestOnly | TournamentOpened | ResultRecorded |"""
#: The dispatch sites a new event type must be handled at: (file, how many ``assert_never`` there).
SITES = {
    "tracker/core/checks.py": 1,
    "tracker/core/apply.py": 1,
    "tracker/follow/ledger.py": 2,
    "tracker/gateway/desk.py": 1,
}


@pytest.mark.timeout(300)
def test_a_new_event_type_fails_type_checking_at_every_dispatch_site(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "tracker", tmp_path / "tracker", ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    if (ROOT / ".mypy_cache").is_dir():
        shutil.copytree(ROOT / ".mypy_cache", tmp_path / ".mypy_cache")
    events = tmp_path / "tracker" / "core" / "events.py"
    text = events.read_text(encoding="utf-8")
    assert text.count(UNION) == 1, "the union's definition moved: update the probe"
    events.write_text(text.replace(UNION, PROBE), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=tmp_path, capture_output=True, text=True, timeout=280, check=False
    )
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    sites = Counter(
        m.group(1)
        for line in errors
        if (m := re.match(r'(tracker/\S+\.py):\d+: error: Argument 1 to "assert_never"', line))
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert dict(sites) == SITES, "\n".join(errors)
    assert len(errors) == sum(SITES.values()), "\n".join(errors)  # nothing but the dispatch sites
