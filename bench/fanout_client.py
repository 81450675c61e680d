"""One subscriber process of the fan-out benchmark: many websocket connections to one server.

``python -m bench.fanout_client URL TOURNAMENT COUNT UPDATES [deflate|none]``

Opens ``COUNT`` connections (offering permessage-deflate, as browsers do,
unless ``none``) (a few at a time, so the server's listen
backlog never overflows), subscribes each to ``TOURNAMENT`` and waits for
its first message (the snapshot).  Then prints ``ready``.  For every later
message it reads the ``seq`` from the message's head and stamps the arrival
with CLOCK_MONOTONIC (one clock for every process on the machine); when all
connections have a seq it prints ``done SEQ LENGTH TIMES`` (TIMES: the
arrival times in ns, JSON).  After ``UPDATES`` updates, or on ``quit`` on
stdin, or after the time limit, it exits without closing handshakes.

Talks only to the URL given (127.0.0.1 in the benchmark).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

from websockets.asyncio.client import ClientConnection, connect

CONNECT_AT_ONCE = 20
TIME_LIMIT = 900.0


def _seq(message: str | bytes) -> int:
    text = message if isinstance(message, str) else message.decode()
    at = text.find('"seq":', 0, 400)
    if at < 0:
        return -1
    end = at + 6
    while end < len(text) and text[end].isdigit():
        end += 1
    return int(text[at + 6 : end])


async def main(url: str, tournament: str, count: int, updates: int, compression: str | None) -> None:
    arrivals: dict[int, list[int]] = {}
    lengths: dict[int, int] = {}
    finished = asyncio.Event()
    reported = 0
    clock = time.clock_gettime_ns
    monotonic = time.CLOCK_MONOTONIC
    subscribe = json.dumps({"type": "subscribe", "tournament": tournament})

    def emit(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    async def follow(ws: ClientConnection) -> None:
        nonlocal reported
        async for message in ws:
            now = clock(monotonic)
            seq = _seq(message)
            times = arrivals.setdefault(seq, [])
            times.append(now)
            lengths.setdefault(seq, len(message))
            if len(times) == count:
                emit(f"done {seq} {lengths[seq]} {json.dumps(times)}")
                del arrivals[seq]
                reported += 1
                if reported >= updates:
                    finished.set()

    gate = asyncio.Semaphore(CONNECT_AT_ONCE)
    conns: list[ClientConnection] = []

    async def open_one() -> ClientConnection:
        async with gate:
            ws = await connect(url, open_timeout=120, ping_interval=None, max_size=2**24, compression=compression)
            await ws.send(subscribe)
            await ws.recv()  # the snapshot (or the bare server's hello)
            return ws

    async with asyncio.timeout(TIME_LIMIT):
        conns = list(await asyncio.gather(*(open_one() for _ in range(count))))
        readers = [asyncio.create_task(follow(ws)) for ws in conns]
        emit("ready")
        loop = asyncio.get_running_loop()
        stdin_closed = loop.run_in_executor(None, sys.stdin.readline)
        await asyncio.wait([asyncio.ensure_future(finished.wait()), stdin_closed], return_when=asyncio.FIRST_COMPLETED)
        emit("finished")
    for task in readers:
        task.cancel()
    os._exit(0)  # no closing handshakes: the server is stopped next anyway


if __name__ == "__main__":
    deflate = sys.argv[5] if len(sys.argv) > 5 else "deflate"
    compression = None if deflate == "none" else deflate
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), compression))
