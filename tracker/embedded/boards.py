"""The embedded deployment's boards on disk: the newest board per game, in a SQLite file of its own.

Boards are not results: they change every few seconds, and losing the last
second of them costs nothing (the next board says where the game stands).
So they never go through the results journal and never share its commits
or its fsync: :class:`BoardStore` keeps one row per game in progress
(``boards.sqlite3`` beside the journal, WAL, ``synchronous=NORMAL``),
replaced by each newer board and deleted when the game ends.  Writes are
collected and flushed once per ``flush_every`` seconds, in a thread, by a
task the store owns; the table holds at most one row per game being played,
so it stays small whatever the traffic.  On start :meth:`BoardStore.load`
gives the boards back, so a restart shows them again.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from contextlib import suppress
from pathlib import Path

from tracker.core.boards import GameKey
from tracker.core.errors import DecodeError
from tracker.core.events import BoardUpdated, decode_board, encode_board

log = logging.getLogger(__name__)

BOARDS_FILE = "boards.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS boards (
    tournament TEXT NOT NULL,
    round INTEGER NOT NULL,
    white INTEGER NOT NULL,
    black INTEGER NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (tournament, round, white, black)
);
"""


class BoardStore:
    """The newest board of each game, flushed once per ``flush_every`` seconds (see the module docstring).

    Use as ``async with store``: the flushing task lives as long as the block, and the last writes are
    flushed when it ends.
    """

    def __init__(self, path: Path, *, flush_every: float = 1.0) -> None:
        self.path = path
        self.flush_every = flush_every
        self._db: sqlite3.Connection | None = None
        self._dirty: dict[tuple[str, int, int, int], bytes | None] = {}
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()

    def open(self) -> None:
        """Open (or create) the file.  Raises :class:`sqlite3.Error` when it cannot be."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(_SCHEMA)
        self._db = db

    def load(self) -> list[BoardUpdated]:
        """Every board kept; a row that no longer decodes (written by another version) is skipped, logged."""
        assert self._db is not None, "open() first"
        boards = []
        for (body,) in self._db.execute("SELECT body FROM boards ORDER BY tournament, round, white, black"):
            try:
                boards.append(decode_board(body))
            except DecodeError as exc:
                log.warning("%s: a board that no longer reads was skipped: %s", self.path, exc)
        return boards

    def put(self, board: BoardUpdated) -> None:
        """Keep ``board`` as its game's (written at the next flush)."""
        self._dirty[(board.tournament, board.round, board.white, board.black)] = encode_board(board)
        self._wake.set()

    def delete(self, tournament: str, key: GameKey) -> None:
        """The game ended: forget its board (at the next flush)."""
        self._dirty[(tournament, *key)] = None
        self._wake.set()

    async def __aenter__(self) -> BoardStore:
        if self._db is None:
            self.open()
        self._task = asyncio.create_task(self._flusher(), name="boards-flush")
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with suppress(asyncio.CancelledError):
                await self._task
        await self.flush()
        if self._db is not None:
            self._db.close()
            self._db = None

    async def _flusher(self) -> None:
        while True:
            await self._wake.wait()
            await asyncio.sleep(self.flush_every)  # what arrives meanwhile goes in the same write
            self._wake.clear()
            await self.flush()

    async def flush(self) -> None:
        """Write what changed since the last flush (a failure is logged: boards are not results)."""
        batch, self._dirty = self._dirty, {}
        if not batch or self._db is None:
            return
        try:
            await asyncio.to_thread(self._write, batch)
        except sqlite3.Error as exc:
            log.warning("%s: %d boards not written: %s", self.path, len(batch), exc)

    def _write(self, batch: dict[tuple[str, int, int, int], bytes | None]) -> None:
        assert self._db is not None
        with self._db:
            self._db.execute("BEGIN")
            for (tid, r, w, b), body in batch.items():
                if body is None:
                    self._db.execute(
                        "DELETE FROM boards WHERE tournament=? AND round=? AND white=? AND black=?", (tid, r, w, b)
                    )
                else:
                    self._db.execute("INSERT OR REPLACE INTO boards VALUES (?, ?, ?, ?, ?)", (tid, r, w, b, body))
