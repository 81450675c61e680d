"""Small helpers for websocket tests: send JSON, wait for the message you expect."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection

from tracker.core.events import Event, encode_event

Message = dict[str, Any]


async def send(ws: ClientConnection, obj: object) -> None:
    await ws.send(json.dumps(obj))


async def submit(ws: ClientConnection, token: str, event: Event, ref: str | None = None) -> None:
    body = json.loads(encode_event(event))
    await send(ws, {"type": "submit", "token": token, "event": body, **({"ref": ref} if ref else {})})


def parse(data: str | bytes, check: bool = True) -> Message:
    """A server message as a dict, held to its published schema (docs/schema/server-*.json, closed).

    ``check=False`` skips the schema (≈10 ms per 25 KB update) for tests
    whose point is timing.  Raises ``jsonschema.ValidationError``.
    """
    if not check:
        message: Message = json.loads(data)
        return message
    from tests.protocol.test_schema import check_server_message  # late: test_schema imports this module

    return check_server_message(data)


async def recv(ws: ClientConnection, timeout: float = 10, *, check: bool = True) -> Message:
    async with asyncio.timeout(timeout):
        data = await ws.recv()
    return parse(data, check)


async def recv_until(
    ws: ClientConnection, match: Callable[[Message], bool], timeout: float = 10, *, check: bool = True
) -> tuple[Message, list[Message]]:
    """Read until a message matches; return it and everything read before it."""
    seen: list[Message] = []
    async with asyncio.timeout(timeout):
        while True:
            message = parse(await ws.recv(), check)
            if match(message):
                return message, seen
            seen.append(message)


async def reply_to(ws: ClientConnection, event_id: str, timeout: float = 10) -> Message:
    """The ack or rejected for ``event_id`` (other messages are skipped)."""
    message, _ = await recv_until(
        ws, lambda m: m.get("type") in ("ack", "rejected") and m.get("id") == event_id, timeout
    )
    return message
