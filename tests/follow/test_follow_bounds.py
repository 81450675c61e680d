"""A hostile or broken source cannot take ``tracker follow`` down: size after gzip, one deadline per read.

The publisher is the tiny aiohttp server of tests/follow/httpd.py on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import gzip
import os
import sys
import zlib

import pytest

from tests.conftest import RunningTracker
from tests.follow.httpd import publisher
from tests.follow.test_follow import pgn, trf_games
from tracker.follow import HttpSource, SourceError
from tracker.follow.sources import MAX_BODY

#: The child runs ``tracker follow`` and reports its own peak resident set (KiB) as its last line.  It reads
#: ``VmHWM``, not ``getrusage``: Linux carries the parent's high-water mark into ``ru_maxrss`` across the
#: fork (or vfork) and exec, so a child of a large test worker would report the worker's peak, not its own.
PEAK = (
    "import sys\n"
    "from tracker.cli import main\n"
    "try:\n"
    "    code = main(sys.argv[1:])\n"
    "finally:\n"
    "    with open('/proc/self/status') as status:\n"
    "        hwm = next(line.split()[1] for line in status if line.startswith('VmHWM:'))\n"
    "    print('peak-rss-kib', hwm, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def bomb(size: int) -> bytes:
    """A gzip body of ``size`` zero bytes (a few hundred KB on the wire), written without holding it whole."""
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"\0" * (1 << 20)
    parts = [squeeze.compress(block) for _ in range(size >> 20)]
    return b"".join([*parts, squeeze.flush()])


async def test_a_gzip_body_that_expands_past_the_cap_is_refused_in_one_line_within_bounded_memory(
    tracker_server: RunningTracker,
) -> None:
    async with publisher() as (served, base):
        served.gzip = True
        served.raw = bomb(4 * MAX_BODY)  # 256 MiB once decompressed
        assert len(served.raw) < 1 << 20
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            PEAK,
            "follow",
            f"{base}/games.pgn",
            "--tournament",
            "bomb",
            "--url",
            tracker_server.ws_url,
            "--token",
            tracker_server.token,
            "--once",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        async with asyncio.timeout(120):
            _, err = await proc.communicate()
    lines = err.decode().splitlines()
    assert proc.returncode == 1, lines
    refused = [line for line in lines if "larger than" in line]
    assert len(refused) == 1 and "once decompressed" in refused[0], lines
    assert not [line for line in lines if "Traceback" in line], lines
    peak_mib = int(lines[-1].split()[-1]) / 1024
    print(f"follow peak RSS {peak_mib:.0f} MiB")
    assert peak_mib < 300, f"follow peaked at {peak_mib:.0f} MiB"


async def test_a_gzip_body_within_the_cap_is_read_whole() -> None:
    text = pgn(trf_games()[1])
    async with publisher() as (served, base):
        served.gzip = True
        served.publish(text)
        source = HttpSource(f"{base}/games.pgn")
        try:
            assert await source.read() == text
            assert await source.read() is None  # 304
        finally:
            await source.aclose()
    assert gzip.decompress(gzip.compress(text.encode())) == text.encode()


async def test_a_server_sending_a_byte_every_five_seconds_fails_the_read_within_its_deadline_then_reading_goes_on() -> (
    None
):
    text = pgn(trf_games()[1])
    deadline = 0.5
    async with publisher() as (served, base):
        served.publish(text)
        source = HttpSource(f"{base}/games.pgn", deadline=deadline)
        try:
            loop = asyncio.get_running_loop()
            started = loop.time()
            assert await source.read() == text
            baseline = loop.time() - started  # a whole read of the same body, same machine, same moment
            served.drip = 5.0
            served.version += 1  # not a 304
            started = loop.time()
            with pytest.raises(SourceError, match=r"no whole answer within 0\.5 s"):
                await source.read()
            took = loop.time() - started
            # functional bound: the deadline plus ten baseline reads, far below one 5 s drip
            assert took < deadline + 10 * baseline + 1.0, (took, baseline)
            served.drip = None
            later = pgn(trf_games()[1] + trf_games()[2])
            served.publish(later)
            assert await source.read() == later  # the next poll goes on
        finally:
            await source.aclose()
