"""The reliability log: what a test tried, how many times, and what was lost.

Reliability tests call :func:`record` after their assertions passed.  When
the environment variable ``TRACKER_RELIABILITY_LOG`` names a file, each call
appends one row to the JSON list in that file (created when missing; a file
lock keeps concurrent pytest processes from losing rows); otherwise
:func:`record` does nothing, so a normal ``make test`` writes no files.

``tools/reliability_report.py`` turns the file into ``docs/reliability.md``::

    TRACKER_RELIABILITY_LOG=/tmp/rel.json .venv/bin/python -m pytest -q -m 'soak or not soak' \
        tests/gateway/test_hostile.py tests/gateway/test_limits.py tests/gateway/test_abuse.py \
        tests/embedded/test_faults.py tests/embedded/test_soak.py
    .venv/bin/python tools/reliability_report.py /tmp/rel.json > docs/reliability.md
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path
from typing import Any, Literal

ENV = "TRACKER_RELIABILITY_LOG"

Area = Literal["hostile input", "file formats", "limits", "access", "durability", "distributed", "soak"]


def enabled() -> bool:
    return bool(os.environ.get(ENV))


def record(
    area: Area,
    what: str,
    *,
    tried: int,
    unit: str,
    lost: int = 0,
    outcome: str,
    test: str | None = None,
    figures: dict[str, Any] | None = None,
) -> None:
    """Append one row: ``tried`` attempts (counted in ``unit``) of ``what``, ``lost`` of them lost.

    ``lost`` counts acknowledged events that disappeared, updates a client
    that stayed connected never received, or state that changed when it
    must not have; a passing test always records 0.  ``outcome`` says in
    words what every attempt got (e.g. "error with a reason, connection
    kept").  ``figures`` carries measurements (memory, timings) for the
    report.
    """
    path = os.environ.get(ENV)
    if not path:
        return
    row = {
        "area": area,
        "what": what,
        "tried": int(tried),
        "unit": unit,
        "lost": int(lost),
        "outcome": outcome,
        "test": test or os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0],
        "figures": figures or {},
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "a+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            handle.seek(0)
            text = handle.read()
            rows: list[dict[str, Any]] = json.loads(text) if text.strip() else []
            rows.append(row)
            handle.seek(0)
            handle.truncate()
            handle.write(json.dumps(rows, indent=1, ensure_ascii=False))
            handle.flush()
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class Counter:
    """Counts attempts across Hypothesis examples; :meth:`flush` records the total once."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def add(self, kind: str, n: int = 1) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + n

    def total(self) -> int:
        return sum(self.counts.values())
