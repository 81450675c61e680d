"""A tiny PGN publisher for the follow tests: aiohttp on 127.0.0.1, port 0, in the test's own event loop.

It serves whatever the test put in :class:`Published`: a body with an
``ETag`` (``304`` on a matching ``If-None-Match``), optionally gzipped, or
dripped one byte every ``drip`` seconds; and, at ``/stream``, a response
that stays open (the lichess round stream's form): every game's PGN at
once, then each PGN the test :meth:`Published.push` es, until the test
:meth:`Published.cut` s the connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from aiohttp import web


@dataclass
class Published:
    """What the server serves, and what it was asked."""

    body: bytes = b""
    version: int = 0
    gzip: bool = False
    raw: bytes | None = None  # sent as is (with Content-Encoding: gzip when ``gzip``), instead of ``body``
    content_type: str = "application/x-chess-pgn; charset=utf-8"
    drip: float | None = None  # seconds between bytes
    statuses: list[int] = field(default_factory=list)
    games: dict[str, str] = field(default_factory=dict)  # the stream's games, by board
    listeners: list[asyncio.Queue[str | None]] = field(default_factory=list)
    connections: int = 0
    asked: asyncio.Condition = field(default_factory=asyncio.Condition)  # notified at every request

    async def until(self, done: Callable[[], bool]) -> None:
        """Wait for a request after which ``done()`` holds (the caller bounds it with a timeout)."""
        async with self.asked:
            await self.asked.wait_for(done)

    async def note(self, status: int) -> None:
        self.statuses.append(status)
        async with self.asked:
            self.asked.notify_all()

    def publish(self, text: str, *, content_type: str | None = None) -> None:
        self.body = text.encode("utf-8")
        self.version += 1
        if content_type is not None:
            self.content_type = content_type

    @property
    def etag(self) -> str:
        return f'"v{self.version}"'

    def push(self, board: str, game: str) -> None:
        """A game's PGN changed: kept for new connections, sent to the open ones."""
        self.games[board] = game
        for queue in self.listeners:
            queue.put_nowait(game)

    def cut(self) -> None:
        """Drop every open stream connection."""
        for queue in self.listeners:
            queue.put_nowait(None)


STATE: web.AppKey[Published] = web.AppKey("state", Published)


async def _static(request: web.Request) -> web.StreamResponse:
    state: Published = request.app[STATE]
    if request.headers.get("If-None-Match") == state.etag and state.raw is None:
        await state.note(304)
        return web.Response(status=304, headers={"ETag": state.etag})
    await state.note(200)
    data = state.raw if state.raw is not None else state.body
    headers = {"ETag": state.etag, "Content-Type": state.content_type}
    if state.gzip:
        headers["Content-Encoding"] = "gzip"
        if state.raw is None:
            data = gzip.compress(data)
    if state.drip is None:
        return web.Response(body=data, headers=headers)
    response = web.StreamResponse(headers={**headers, "Content-Length": str(len(data))})
    await response.prepare(request)
    with contextlib.suppress(ConnectionError):
        for i in range(len(data)):
            await response.write(data[i : i + 1])
            await asyncio.sleep(state.drip)
    return response


async def _stream(request: web.Request) -> web.StreamResponse:
    state: Published = request.app[STATE]
    state.connections += 1
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    response = web.StreamResponse(headers={"Content-Type": "application/x-chess-pgn; charset=utf-8"})
    await response.prepare(request)
    state.listeners.append(queue)
    try:
        for game in list(state.games.values()):
            await response.write((game.strip() + "\n\n\n").encode())
        while (game := await queue.get()) is not None:
            await response.write((game.strip() + "\n\n\n").encode())
    except ConnectionError:
        pass
    finally:
        state.listeners.remove(queue)
    if request.transport is not None:
        request.transport.close()  # a drop, not a clean end of the response
    return response


@contextlib.asynccontextmanager
async def publisher() -> AsyncIterator[tuple[Published, str]]:
    """A running server and its base URL (``/games.pgn`` serves the body, ``/stream`` the stream)."""
    state = Published()
    app = web.Application()
    app[STATE] = state
    app.router.add_get("/games.pgn", _static)
    app.router.add_get("/stream", _stream)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield state, f"http://127.0.0.1:{port}"
    finally:
        state.cut()
        await runner.cleanup()
