"""``tracker up`` with the per-token submit rate limit lifted — for the ingest benchmark only.

``tracker up`` limits each arbiter token to 200 submits per second (burst
400, ``Limits.submits_per_second``), and offers no flag to change it.  The
ingest benchmark measures the pipeline, not that limiter, so this runs the
very same CLI entry point (argument parsing, configuration, journal,
processor, gateway) with only those two limits raised.

Usage: ``python -m bench._up --port 0 --data-dir DIR --token T [--no-durability]``.
"""

from __future__ import annotations

import functools
import sys

import tracker.cli as cli
from tracker.config import Limits


def main() -> int:
    cli.Limits = functools.partial(Limits, submits_per_second=1e9, submit_burst=1_000_000_000)  # type: ignore[misc]
    return cli.main(["up", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
