"""Submitting a tournament file's events to a running tracker over websockets.

Used by ``tracker replay`` and by the demo.  Events are pipelined (a window
of submits in flight) or paced (``rate`` events per second); every event
must be acknowledged.  A rejected event stops the replay with its reason.
Re-running a replay is safe: events already applied are acknowledged again
and change nothing, so an interrupted replay is resumed by running it again.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass

from websockets.asyncio.client import connect

from tracker.core.events import Event, encode_event
from tracker.formats import TournamentFile


@dataclass(frozen=True, slots=True)
class ReplayResult:
    acked: int
    rejected: tuple[tuple[str, str, str], ...]  # (event id, code, reason)
    last_seq: int


class ReplayRejected(Exception):
    """An event of the replay was rejected; the message says which and why."""


async def replay_ws(
    tf: TournamentFile,
    url: str,
    token: str,
    *,
    rate: float | None = None,
    window: int = 64,
    progress: Callable[[int], None] | None = None,
    stop_on_reject: bool = True,
) -> ReplayResult:
    """Submit ``tf``'s opening event and then its results, in round order."""
    events: list[Event] = [tf.opened, *tf.events]
    acked = 0
    last_seq = 0
    rejected: list[tuple[str, str, str]] = []
    async with connect(url, max_size=2**24, open_timeout=10) as ws:
        pending: dict[str, asyncio.Future[None]] = {}
        loop = asyncio.get_running_loop()
        slots = asyncio.Semaphore(1 if rate else window)

        async def read_replies() -> None:
            nonlocal acked, last_seq
            async for raw in ws:
                msg = json.loads(raw)
                kind = msg.get("type")
                if kind not in ("ack", "rejected"):
                    continue
                future = pending.pop(msg.get("id") or "", None)
                if kind == "ack":
                    acked += 1
                    last_seq = max(last_seq, int(msg["seq"]))
                    if progress is not None:
                        progress(1)
                else:
                    rejected.append((str(msg.get("id")), str(msg.get("code")), str(msg.get("reason"))))
                if future is not None and not future.done():
                    future.set_result(None)
                slots.release()
            # the server closed the connection: nothing more will be acknowledged
            for future in pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("the tracker closed the connection before acknowledging"))
            for _ in range(window):
                slots.release()

        reader = asyncio.create_task(read_replies(), name="replay-replies")
        try:
            for event in events:
                if stop_on_reject and rejected:
                    break
                await slots.acquire()
                pending[event.id] = loop.create_future()
                body = encode_event(event).decode()
                await ws.send(f'{{"type":"submit","token":{json.dumps(token)},"event":{body}}}')
                if rate:
                    await pending[event.id]
                    await asyncio.sleep(1.0 / rate)
            waiting = [f for f in pending.values() if not f.done()]
            if waiting:
                async with asyncio.timeout(60):
                    await asyncio.gather(*waiting)
        finally:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
    return ReplayResult(acked, tuple(rejected), last_seq)
