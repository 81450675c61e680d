"""``tracker up`` under tracemalloc, for :mod:`bench.idle_memory` only.

``python -m bench._traced_up PATH up ...``: the stock CLI with tracemalloc started first (one frame per
allocation); on SIGUSR2 it writes a snapshot to ``PATH`` (then an empty ``PATH.done``).
"""

from __future__ import annotations

import gc
import signal
import sys
import tracemalloc
from pathlib import Path

if __name__ == "__main__":
    tracemalloc.start(1)
    path = sys.argv[1]

    def dump(signum: int, frame: object) -> None:
        gc.collect()
        tracemalloc.take_snapshot().dump(path)
        Path(path + ".done").touch()

    signal.signal(signal.SIGUSR2, dump)
    from tracker.cli import main

    sys.exit(main(sys.argv[2:]))
