"""What every workload shares: sizes, statistics, results, the machine, profiles.

A workload is a function ``run(sizes) -> Result``.  A :class:`Result` holds
the rows of the table in ``docs/benchmarks.md`` (each with its baseline,
ratio, target and whether it was met), free-text notes, plots and, where a
target was missed, a profile summary saying where the time goes.

Numbers on a shared 2-core machine are noisy, so every workload measures
its baseline in the same run, interleaved with the measured path where
possible, and reports medians and ratios.
"""

from __future__ import annotations

import contextlib
import math
import os
import platform
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
IMG = DOCS / "img"


@dataclass(frozen=True, slots=True)
class Sizes:
    """How big each workload is: ``quick`` (smoke run), ``default`` (``make bench``), ``full`` (the issue's sizes)."""

    mode: str
    # 1. core: players -> (tournaments measured, rebuild measured on every k-th result)
    core: tuple[tuple[int, int, int], ...]
    # 2. replay: events in the journal, tournaments per interleaved group, groups timed both ways
    replay_events: int
    replay_group: int
    replay_pairs: int  # 0 = every group
    # 3. ingest: seconds per run, runs per mode, concurrent clients, window per client
    ingest_seconds: float
    ingest_rounds: int
    ingest_clients: int
    ingest_window: int
    # 4. fan-out: subscriber counts, updates per count, client processes (max)
    fanout_subscribers: tuple[int, ...]
    fanout_updates: int
    fanout_processes: int
    # 5. kafka: results produced per run, runs
    kafka_events: int
    kafka_rounds: int
    # 6. many: concurrent tournaments, single-tournament repetitions, tracemalloc tournaments
    many_tournaments: int
    many_single: int
    many_traced: int
    many_wave: int  # a season: tournaments live at a time (many_tournaments in all)
    # 7. projection repetitions
    projection_repeats: int
    # 4. fan-out: subscriber counts whose server CPU per subscriber per update is read; one burst's subscribers
    fanout_cpu: tuple[int, ...] = ()
    fanout_burst: int = 0
    # 12. through Kafka: subscribers of one gateway process (two hold 1.7× as many), results sent to them
    cluster_subscribers: int = 1000
    cluster_updates: int = 10
    # 10. live boards: seconds per phase (with and without boards), alternated rounds
    boards_seconds: float = 60.0
    boards_rounds: int = 1
    # 16. a connection storm: connections, handshakes in flight
    storm: tuple[int, int] = (20_000, 2_000)


QUICK = Sizes(
    mode="quick",
    core=((10, 20, 1), (24, 3, 4), (100, 1, 400)),
    replay_events=50_000,
    replay_group=100,
    replay_pairs=3,
    ingest_seconds=2.5,
    ingest_rounds=1,
    ingest_clients=4,
    ingest_window=32,
    fanout_subscribers=(100, 1000),
    fanout_updates=8,
    fanout_processes=2,
    fanout_cpu=(200, 1000),
    fanout_burst=1000,
    cluster_subscribers=500,
    cluster_updates=5,
    kafka_events=1_000,
    kafka_rounds=1,
    many_tournaments=300,
    many_single=30,
    many_traced=100,
    many_wave=100,
    projection_repeats=2,
    boards_seconds=10.0,
    boards_rounds=1,
    storm=(2_000, 500),
)

DEFAULT = Sizes(
    mode="default",
    core=((10, 100, 1), (24, 20, 3), (100, 1, 70)),
    replay_events=1_000_000,
    replay_group=100,
    replay_pairs=8,
    ingest_seconds=8.0,
    ingest_rounds=2,
    ingest_clients=4,
    ingest_window=32,
    fanout_subscribers=(100, 1000, 2000, 10_000),
    fanout_updates=25,
    fanout_processes=4,
    fanout_cpu=(1000, 5000, 10_000, 20_000),  # issue 40's counts
    fanout_burst=10_000,
    cluster_subscribers=5000,
    cluster_updates=15,
    kafka_events=5_000,
    kafka_rounds=2,
    many_tournaments=10_000,
    many_single=200,
    many_traced=500,
    many_wave=1_000,
    projection_repeats=5,
    boards_seconds=45.0,
    boards_rounds=1,
)

FULL = Sizes(
    mode="full",
    core=((10, 400, 1), (24, 60, 1), (100, 3, 10)),
    replay_events=1_000_000,
    replay_group=100,
    replay_pairs=0,
    ingest_seconds=20.0,
    ingest_rounds=3,
    ingest_clients=8,
    ingest_window=32,
    fanout_subscribers=(100, 300, 1000, 3000, 10_000),
    fanout_updates=60,
    fanout_processes=4,
    fanout_cpu=(1000, 5000, 10_000, 20_000),  # issue 40's counts
    fanout_burst=10_000,
    cluster_subscribers=8000,
    cluster_updates=25,
    kafka_events=20_000,
    kafka_rounds=3,
    many_tournaments=10_000,
    many_single=1_000,
    many_traced=10_000,
    many_wave=1_000,
    projection_repeats=20,
    boards_seconds=600.0,
    boards_rounds=1,
)

SIZES = {s.mode: s for s in (QUICK, DEFAULT, FULL)}


# -- results --------------------------------------------------------------------


@dataclass(slots=True)
class Row:
    """One line of the table: what was measured against what, and the verdict."""

    workload: str
    size: str
    measured: str
    baseline: str
    ratio: str
    target: str
    met: bool | None  # None: reported only, or not measured


@dataclass(slots=True)
class Result:
    """Everything one workload produced."""

    key: str
    title: str
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    plots: list[Path] = field(default_factory=list)
    profiles: list[tuple[str, str]] = field(default_factory=list)  # (title, text)
    raw: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    error: str | None = None


# -- statistics -----------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0–100) with linear interpolation; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    if len(ordered) == 1:
        return float(ordered[0])
    pos = (len(ordered) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return float(ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo))


def median(values: Sequence[float]) -> float:
    return percentile(values, 50)


def fmt_us(us: float) -> str:
    """Microseconds, in the unit that reads best."""
    if math.isnan(us):
        return "n/a"
    if us >= 10_000:
        return f"{us / 1000:,.0f} ms"
    if us >= 1000:
        return f"{us / 1000:,.1f} ms"
    return f"{us:,.0f} µs"


def fmt_ms(ms: float) -> str:
    if math.isnan(ms):
        return "n/a"
    if ms >= 100:
        return f"{ms:,.0f} ms"
    if ms >= 10:
        return f"{ms:,.1f} ms"
    return f"{ms:,.2f} ms"


def fmt_rate(per_s: float) -> str:
    if math.isnan(per_s):
        return "n/a"
    if per_s >= 100_000:
        return f"{per_s / 1000:,.0f} k/s"
    if per_s >= 10_000:
        return f"{per_s / 1000:,.1f} k/s"
    return f"{per_s:,.0f}/s"


def fmt_ratio(x: float) -> str:
    if math.isnan(x):
        return "n/a"
    return f"{x:,.1f}×" if x < 100 else f"{x:,.0f}×"


def fmt_pct(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{100 * x:,.0f}%"


# -- the machine ----------------------------------------------------------------


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def git_state() -> str:
    """The commit measured, and whether the working tree had changes (read-only git commands)."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "tracker"],  # untracked modules count: they are measured
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if not head:
        return "unknown"
    return head + (" (with uncommitted changes)" if dirty else "")


def machine() -> dict[str, str]:
    import msgspec
    import websockets

    return {
        "nproc": str(len(os.sched_getaffinity(0))),
        "cpu": cpu_model(),
        "python": platform.python_version() + f" ({platform.python_implementation()})",
        "os": f"{platform.system()} {platform.release()}",
        "memory": _memory(),
        "websockets": websockets.__version__,
        "msgspec": msgspec.__version__,
        "commit": git_state(),
    }


def _memory() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    return "n/a"


def raise_fd_limit() -> int:
    """Raise the soft open-files limit to the hard one (children inherit it); return it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = 1 << 20
    if soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def save_figure(fig: Any, name: str) -> Path:
    """Write a matplotlib figure to ``docs/img/<name>`` (laid out tight), close it, and return its path."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    path = IMG / name
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def rss_bytes() -> int:
    """Resident set size of this process (Linux ``/proc/self/statm``)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def now_ns() -> int:
    """CLOCK_MONOTONIC in ns: one clock for every process on this machine."""
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def python() -> str:
    return sys.executable


def child_env() -> dict[str, str]:
    """Environment for bench subprocesses: the repo importable, output unbuffered."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    return env


# -- profiles ---------------------------------------------------------------------


def profile(fn: Callable[[], object], *, top: int = 16, interval: float = 0.0005) -> str:
    """Run ``fn`` under pyinstrument; return where the time goes, as text.

    Two lists: functions by *self* time, and by *inclusive* time (each
    function counted once per stack, so recursion is not double counted),
    both as a share of the profiled run.
    """
    from pyinstrument import Profiler

    profiler = Profiler(interval=interval)
    profiler.start()
    try:
        fn()
    finally:
        session = profiler.stop()
    root = session.root_frame()
    if root is None:
        return "(no samples)"
    total = root.time or 1.0
    own: dict[str, float] = {}
    inclusive: dict[str, float] = {}

    def name(frame: Any) -> str:
        path = frame.file_path_short or frame.file_path or ""
        return f"{frame.function}  {path}:{frame.line_no}"

    def walk(frame: Any, parent: str, stack: frozenset[str]) -> None:
        synthetic = frame.identifier.startswith("[")
        key = parent if synthetic else name(frame)
        children_time = sum(c.time for c in frame.children)
        own[key] = own.get(key, 0.0) + max(frame.time - children_time, 0.0)
        if not synthetic and key not in stack:
            inclusive[key] = inclusive.get(key, 0.0) + frame.time
            stack = stack | {key}
        for child in frame.children:
            walk(child, key, stack)

    walk(root, "", frozenset())
    skip = ("profile  ", "<module>  ", "run  bench/")

    def table(values: dict[str, float]) -> list[str]:
        ranked = sorted(values.items(), key=lambda kv: -kv[1])
        return [f"{100 * t / total:5.1f}%  {k}" for k, t in ranked if not k.startswith(skip)][:top]

    return (
        f"pyinstrument, {total:.2f} s sampled every {interval * 1000:g} ms\n\n"
        "inclusive time (share of the run spent inside each function):\n"
        + "\n".join(table(inclusive))
        + "\n\nself time (share of the run spent in each function's own code):\n"
        + "\n".join(table(own))
    )


@contextlib.contextmanager
def timed(result: Result) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        result.seconds = time.perf_counter() - started


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process (not its children) has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def spy(pid: int, seconds: float, *, top: int = 14, rate: int = 200) -> str:
    """Sample another process with py-spy for ``seconds``; return where its time went, as text.

    Only samples where a thread was running are kept (py-spy's default), so
    the share of samples against the wall time is how busy the process was.
    Returns a one-line explanation when py-spy is not installed or cannot attach.
    """
    import shutil
    import tempfile

    exe = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(exe).exists():
        return "(py-spy is not installed: pip install py-spy)"
    with tempfile.NamedTemporaryFile(suffix=".txt") as out:
        args = ["record", "--pid", str(pid), "--duration", str(max(1, round(seconds))), "--rate", str(rate)]
        proc = subprocess.run(
            [exe, *args, "--format", "raw", "--nonblocking", "-o", out.name],
            capture_output=True,
            text=True,
            timeout=seconds + 60,
        )
        text = Path(out.name).read_text() if Path(out.name).exists() else ""
    if not text.strip():
        return f"(py-spy could not sample pid {pid}: {proc.stderr.strip()[-300:]})"
    own: dict[str, int] = {}
    inclusive: dict[str, int] = {}
    total = 0
    for line in text.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        total += count
        frames = [
            f.split(" (", 1)[0] + " (" + f.split(" (", 1)[1].rsplit(":", 1)[0].split("/")[-1] + ")" if " (" in f else f
            for f in stack.split(";")
        ]
        own[frames[-1]] = own.get(frames[-1], 0) + count
        for frame in set(frames):
            inclusive[frame] = inclusive.get(frame, 0) + count
    expected = rate * max(1, round(seconds))
    skip = ("<module>", "run (", "run_forever", "_run_once", "_run (", "main (", "execute_from_commandline")

    def table(values: dict[str, int]) -> list[str]:
        ranked = sorted(values.items(), key=lambda kv: -kv[1])
        return [f"{100 * c / total:5.1f}%  {k}" for k, c in ranked if not k.startswith(skip)][:top]

    return (
        f"py-spy, {seconds:.0f} s at {rate} Hz: {total} samples with a thread on CPU out of {expected} "
        f"({100 * total / expected:.0f}% busy, all threads)\n\ninclusive (share of busy samples):\n"
        + "\n".join(table(inclusive))
        + "\n\nself:\n"
        + "\n".join(table(own))
    )
