"""``tracker up`` with the per-token submit rate limit lifted — for the ingest benchmark only.

``tracker up`` limits each arbiter token to 200 submits per second (burst
400, ``Limits.submits_per_second``).  The ingest benchmark measures the
pipeline, not that limiter, so this runs the very same CLI entry point
(argument parsing, configuration, journal, processor, gateway) with only
those two limits raised through their options.

Usage: ``python -m bench._up --port 0 --data-dir DIR --token T [--no-durability]``.
"""

from __future__ import annotations

import sys

from tracker.cli import main

if __name__ == "__main__":
    sys.exit(main(["up", *sys.argv[1:], "--submits-per-second", "1e9", "--submit-burst", "1000000000"]))
