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

A file that cannot be read as boards (garbage, a truncated copy, a
directory in its place) is set aside, renamed ``boards.sqlite3.damaged-…``
with one warning naming both, and a fresh one is made: the journal has the
results, and the next board of each game says where it stands.  A file that
vanishes (or is replaced) while the server runs is noticed at the next
flush: a warning, and a fresh file from then on.  A stop waits for a write
under way (it is not cancelled in its thread), then flushes what is left.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import time
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
        self._writing: asyncio.Task[None] | None = None  # the flush's write, while its thread runs
        self._wake = asyncio.Event()
        self._inode = 0  # of the file opened: another one at that path means it was deleted or replaced

    def open(self) -> None:
        """Open (or create) the file; one that cannot be read as boards is set aside and a fresh one made
        (see the module docstring).  Raises :class:`sqlite3.Error` or :class:`OSError` when even a fresh
        one cannot be made (the directory is not writable)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = self._readable()

    def _readable(self) -> sqlite3.Connection:
        """The file opened, or, when it cannot be read as boards, set aside and a fresh one opened."""
        try:
            return self._connect()
        except (sqlite3.Error, OSError) as exc:
            aside = self._set_aside()
            log.warning("%s could not be read as boards (%s): set aside as %s, a fresh one made", self.path, exc, aside)
            return self._connect()

    def _connect(self) -> sqlite3.Connection:
        """The file opened and read through once (a damaged one fails here, not at the first board)."""
        if self.path.exists() and not self.path.is_file():
            raise IsADirectoryError(f"not a file: {self.path}")
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
            (verdict,) = db.execute("PRAGMA quick_check").fetchone()
            if verdict != "ok":
                raise sqlite3.DatabaseError(f"quick_check: {verdict}")
            db.execute("SELECT count(*) FROM boards").fetchone()
        except BaseException:
            db.close()
            raise
        self._inode = os.stat(self.path).st_ino
        return db

    def _set_aside(self) -> Path:
        """Rename the file (and its WAL files) out of the way; the new name."""
        aside = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        n = 1
        while aside.exists():
            n += 1
            aside = aside.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}-{n}")
        if self.path.exists() or self.path.is_symlink():
            self.path.rename(aside)
        for suffix in ("-wal", "-shm"):
            extra = self.path.with_name(self.path.name + suffix)
            if extra.exists():
                extra.rename(aside.with_name(aside.name + suffix))
        return aside

    def _still_there(self) -> None:
        """Notice a file deleted or replaced since it was opened: warn, and write to a fresh one from now on."""
        try:
            same = os.stat(self.path).st_ino == self._inode
        except OSError:
            same = False
        if same:
            return
        log.warning("%s vanished while running (deleted or replaced): a fresh one is made", self.path)
        if self._db is not None:
            with suppress(sqlite3.Error):
                self._db.close()
        self._db = self._readable()

    def load(self) -> list[BoardUpdated]:
        """Every board kept; a row that no longer decodes (written by another version) is skipped, logged."""
        assert self._db is not None, "open() first"
        boards = []
        try:
            rows = self._db.execute("SELECT body FROM boards ORDER BY tournament, round, white, black").fetchall()
        except sqlite3.Error as exc:  # damaged past what quick_check saw: set aside like a file that does not open
            self._db.close()
            aside = self._set_aside()
            log.warning("%s could not be read as boards (%s): set aside as %s, a fresh one made", self.path, exc, aside)
            self._db = self._connect()
            return []
        for (body,) in rows:
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
        if self._writing is not None:
            await self._writing  # a write under way ends first: cancelled, its batch was lost and its file closed
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
        writing = self._writing = asyncio.create_task(self._written(batch), name="boards-write")
        try:
            await asyncio.shield(writing)  # a stop cancels the flusher, not the write its thread has begun
        finally:
            if writing.done():
                self._writing = None

    async def _written(self, batch: dict[tuple[str, int, int, int], bytes | None]) -> None:
        try:
            await asyncio.to_thread(self._write, batch)
        except (sqlite3.Error, OSError) as exc:
            log.warning("%s: %d boards not written: %s", self.path, len(batch), exc)

    def _write(self, batch: dict[tuple[str, int, int, int], bytes | None]) -> None:
        self._still_there()
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
