"""The fan-out baseline: a bare websockets server that broadcasts what it is given.

``python -m bench.bare_server`` prints ``listening PORT`` (127.0.0.1, a free
port).  A connection whose first message is ``{"type": "control"}`` is the
benchmark's controller: every later message it sends is broadcast as is,
with ``websockets.broadcast``, to every other connection, then answered with
``{"type": "ack", "broadcast_s": …}``.  Any other connection is a
subscriber: it gets one hello message and then whatever is broadcast.

Same websockets version and server settings as tracker's gateway (ping
every 20 s, 64 KiB frames, permessage-deflate when the client offers it),
and nothing else: no protocol, no state, no buffer checks.  Its deflate is
websockets' default, as tracker's was before issue 17: each connection
compresses its own copy of every message, against the ones before it.
"""

from __future__ import annotations

import asyncio
import json
import time

from websockets.asyncio.server import ServerConnection, broadcast, serve

HELLO = '{"type":"snapshot","seq":1}'  # as tracker's snapshot after the opening: the first update is seq 2


async def main() -> None:
    subscribers: set[ServerConnection] = set()

    async def handler(ws: ServerConnection) -> None:
        first = await ws.recv()
        if json.loads(first).get("type") == "control":
            async for payload in ws:
                started = time.perf_counter()
                broadcast(subscribers, payload)
                spent = time.perf_counter() - started
                await ws.send(json.dumps({"type": "ack", "broadcast_s": spent}))
            return
        subscribers.add(ws)
        try:
            await ws.send(HELLO)
            await ws.wait_closed()
        finally:
            subscribers.discard(ws)

    async with serve(
        handler, "127.0.0.1", 0, max_size=64 * 1024, ping_interval=20, ping_timeout=20, close_timeout=5
    ) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        print(f"listening {port}", flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    asyncio.run(main())
