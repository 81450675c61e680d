"""A source that pushes: an HTTP response that stays open and carries each game's PGN whenever it changes.

How this works
--------------

The lichess broadcast round stream (``/api/stream/broadcast/round/{id}.pgn``)
answers with every game's PGN at once, then sends a game's PGN again each
time it changes, and keeps the response open.  :class:`StreamSource` reads
such a response as it arrives: a game is complete once its movetext ends
with its termination marker (``*`` while it is played) or the next game's
tags begin; it replaces the game of the same ``Round``, ``White`` and
``Black``.  Each complete game makes a new version of the source — all the
games known, in the order first seen — which :meth:`StreamSource.read`
hands to the follower as soon as it exists (the follower diffs it against
the tracker as it does a polled read, so a game sent again changes nothing).

A dropped connection is resumed after a short back-off (0.1 s, doubling, at
most :data:`MAX_RETRY`), logged once per outage; a fresh connection sends
every game again, so nothing is missed and, the ids being deterministic,
nothing is applied twice.  Games are kept across connections (a stream
never takes a game back).  Bounded: a game of at most :data:`MAX_GAME`
characters, at most :data:`~tracker.follow.whole.MAX_GAMES` games, the
connection and its headers within ``deadline`` seconds, and a connection
silent for ``idle`` seconds is dropped and resumed.
"""

from __future__ import annotations

import asyncio
import logging
import re
import urllib.parse
from contextlib import suppress
from typing import Final

import aiohttp

from tracker.follow.errors import SourceError
from tracker.follow.whole import MAX_GAMES

log = logging.getLogger("tracker.follow")

MAX_GAME: Final = 1 << 20  # characters of one game's PGN
MAX_RETRY: Final = 5.0  # seconds between reconnections at most
IDLE: Final = 120.0  # seconds without a byte before the connection counts as dropped
_TERMINATION: Final = re.compile(r"(?:^|\s)(1-0|0-1|1/2-1/2|\*)\s*$")
_TAG: Final = re.compile(r'^\s*\[\s*(\w+)\s+"((?:[^"\\]|\\.)*)"\s*\]\s*$')


class StreamSource:
    """A PGN round stream over HTTP(S) (see the module docstring).  ``read`` waits for the next version."""

    pushes = True

    def __init__(self, url: str, *, deadline: float = 20.0, wait: float = 1.0, idle: float = IDLE) -> None:
        self.url = url
        self.name = urllib.parse.urlsplit(url).path or url
        self.deadline = deadline
        self.wait = wait  # seconds read() waits for a change before answering "unchanged"
        self.idle = idle
        self.games: dict[tuple[str, str, str], str] = {}
        self.connections = 0
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._session: aiohttp.ClientSession | None = None
        self._version = 0
        self._read = 0

    async def read(self) -> str | None:
        """All the games known, once a game arrived since the last read; ``None`` after ``wait`` seconds without."""
        if self._task is None:
            self._task = asyncio.create_task(self._follow(), name=f"stream {self.name}")
        if self._version == self._read:
            self._changed.clear()
            try:
                async with asyncio.timeout(self.wait):
                    await self._changed.wait()
            except TimeoutError:
                return None
        self._read = self._version
        return "\n\n".join(game.strip() + "\n" for game in self.games.values())

    async def _follow(self) -> None:
        """Connect, read, and resume after every drop until closed."""
        retry = 0.1
        down: str | None = None
        while True:
            try:
                await self._connection()
                why = "the server ended the response"
            except SourceError as exc:
                why = str(exc)
            except (aiohttp.ClientError, OSError, TimeoutError, ValueError) as exc:
                why = f"{self.url}: {exc or type(exc).__name__}"
            if down is None:
                log.warning("follow: stream %s dropped (%s); resuming", self.name, why)
            down = why
            await asyncio.sleep(retry)
            retry = min(retry * 2, MAX_RETRY)
            if self._connected_once:
                retry, self._connected_once = 0.1, False
                down = None

    _connected_once = False

    async def _connection(self) -> None:
        if self._session is None:
            timeout = aiohttp.ClientTimeout(total=None, connect=self.deadline, sock_read=self.idle)
            self._session = aiohttp.ClientSession(timeout=timeout)
        headers = {"User-Agent": "tracker-follow", "Accept": "application/x-chess-pgn"}
        async with asyncio.timeout(self.deadline):
            reply = await self._session.get(self.url, headers=headers)
        async with reply:
            if reply.status >= 400:
                raise SourceError(f"{self.url}: HTTP {reply.status} {reply.reason or ''}".rstrip())
            self.connections += 1
            if self.connections > 1:
                log.info("follow: stream %s resumed (connection %d)", self.name, self.connections)
            self._connected_once = True
            lines: list[str] = []
            moves = False
            size = 0
            async for raw in reply.content:  # one line at a time (aiohttp's line limit bounds each)
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                stripped = line.strip()
                if stripped.startswith("[") and moves:  # the next game's tags: the previous one is complete
                    self._complete(lines)
                    lines, moves, size = [], False, 0
                if not stripped and not lines:
                    continue
                lines.append(line)
                size += len(line) + 1
                if size > MAX_GAME:
                    raise SourceError(f"{self.url}: a game longer than {MAX_GAME} characters: refused")
                if stripped and not stripped.startswith("["):
                    moves = True
                    if _TERMINATION.search(stripped) and "{" not in stripped.rpartition("}")[2]:
                        self._complete(lines)
                        lines, moves, size = [], False, 0
            if moves:
                self._complete(lines)

    def _complete(self, lines: list[str]) -> None:
        """One game's PGN arrived whole: keep it as its game's newest, and wake the reader."""
        tags = {m.group(1): m.group(2) for line in lines if (m := _TAG.match(line)) is not None}
        key = (tags.get("Round", "?"), tags.get("White", "?"), tags.get("Black", "?"))
        text = "\n".join(lines)
        if self.games.get(key) == text:
            return
        if key not in self.games and len(self.games) >= MAX_GAMES:
            raise SourceError(f"{self.url}: more than {MAX_GAMES} games: refused")
        self.games[key] = text
        self._version += 1
        self._changed.set()

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._session is not None:
            await self._session.close()
            self._session = None
