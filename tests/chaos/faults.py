"""The faults a chaos round injects into the processes it runs.

- :class:`DiskFull`: the embedded journal's file system runs out of space.  Where ``mount -t tmpfs``
  works (root with CAP_SYS_ADMIN) the data directory lives on a small tmpfs and a filler file takes
  every free byte (writes fail with ENOSPC); elsewhere the server's ``RLIMIT_FSIZE`` is lowered to
  1 byte with ``prlimit`` while it runs (every write fails with EFBIG: Python ignores SIGXFSZ).
  Either way the fault is undone by deleting the filler or restoring the limit.
- :func:`sigkill`: SIGKILL of a process (the server, a worker, a gateway), waited for.
- :func:`freeze`: SIGSTOP of a process (the Kafka broker) for a while, then SIGCONT.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import resource
import signal
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path


class DiskFull:
    """Fills (and frees) the file system of one data directory; :attr:`how` says which way."""

    def __init__(self, root: Path, how: str) -> None:
        self.root = root
        self.how = how  # "tmpfs" or "rlimit"
        self.filler = root / "filler"
        self.pid: int | None = None  # the server process, for the rlimit way
        self.full = False

    def fill(self) -> None:
        if self.how == "tmpfs":
            with open(self.filler, "wb", buffering=0) as out:  # unbuffered: no flush left to fail on close
                chunk = b"\0" * (1 << 20)
                while True:
                    try:
                        out.write(chunk)
                    except OSError as exc:
                        if exc.errno != errno.ENOSPC:
                            raise
                        if len(chunk) == 1:
                            break
                        chunk = chunk[: len(chunk) // 2]
        elif self.pid is not None:
            resource.prlimit(self.pid, resource.RLIMIT_FSIZE, (1, resource.RLIM_INFINITY))
        self.full = True

    def free(self) -> None:
        if self.how == "tmpfs":
            with contextlib.suppress(FileNotFoundError):
                self.filler.unlink()
        elif self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                resource.prlimit(self.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        self.full = False


@contextlib.contextmanager
def small_disk(where: Path, size_mib: int = 64) -> Iterator[DiskFull]:
    """A directory on a tmpfs of ``size_mib`` MiB, unmounted afterwards; a plain one (rlimit way) if mounting fails."""
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [
            "mount",
            "-t",
            "tmpfs",
            "-o",
            f"size={size_mib}m,mode=0755",
            f"tracker-chaos-{uuid.uuid4().hex[:8]}",
            str(where),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        yield DiskFull(where, "rlimit")
        return
    try:
        yield DiskFull(where, "tmpfs")
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


async def sigkill(proc: subprocess.Popen[str]) -> None:
    """SIGKILL ``proc`` (no goodbye) and wait until it is gone."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGKILL)
    await asyncio.to_thread(proc.wait, 10)


async def freeze(proc: subprocess.Popen[str], seconds: float) -> None:
    """SIGSTOP ``proc`` for ``seconds``, then SIGCONT (always, even when cancelled)."""
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        await asyncio.sleep(seconds)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
