"""The durable results log of the embedded deployment: a SQLite journal.

One table, append-only: ``events(pos, tournament, id, body)``, in WAL mode
with ``synchronous=FULL`` so a committed transaction survives a crash or a
power cut.  Appends are *group-committed*: callers enqueue an event and
await its future; one writer task takes everything queued, inserts it in one
transaction and commits once, then resolves the futures.  Under load one
fsync covers many events; alone, an event waits for exactly one commit.

A failed commit (disk full, read-only file system) fails every future of
the batch, and of everything queued behind it, with :class:`JournalError`;
those events were not acknowledged, and ``on_failure`` lets the owner drop
them from its in-memory state before anything else runs.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from tracker.core.errors import TrackerError


class JournalError(TrackerError):
    """The journal could not make an event durable."""


@dataclass(slots=True)
class _Pending:
    tournament: str
    event_id: str
    body: bytes
    done: asyncio.Future[int]


_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    pos INTEGER PRIMARY KEY,
    tournament TEXT NOT NULL,
    id TEXT NOT NULL,
    body BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_tournament ON events (tournament, pos);
"""


class Journal:
    """An append-only SQLite journal with group commit.

    Use as ``async with Journal(path) as journal``; the writer task lives as
    long as the block.  ``durable=False`` turns fsync off (benchmarks only).
    """

    def __init__(self, path: Path, *, durable: bool = True, max_batch: int = 1024) -> None:
        self.path = path
        self.durable = durable
        self.max_batch = max_batch
        self._queue: asyncio.Queue[_Pending] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None
        self._db: sqlite3.Connection | None = None
        self.appended = 0
        self.commits = 0
        #: called with the tournaments of a failed batch, before anything else runs
        self.on_failure: Callable[[set[str]], None] | None = None

    def open(self) -> None:
        """Open (creating if needed) the database file; raises :class:`JournalError`."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={'FULL' if self.durable else 'OFF'}")
            db.executescript(_SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            raise JournalError(f"cannot open the journal {self.path}: {exc}") from None
        self._db = db

    def read(self) -> Iterator[tuple[int, bytes]]:
        """Every event body with its row position, in append order (for replay on start)."""
        assert self._db is not None
        for pos, body in self._db.execute("SELECT pos, body FROM events ORDER BY pos"):
            yield int(pos), bytes(body)

    def read_tournament(self, tournament: str) -> list[bytes]:
        """The bodies of one tournament's committed events, in order (by the ``(tournament, pos)`` index).

        Raises :class:`JournalError` when the database cannot be read.  Read
        on the writer's connection: rows of a batch being committed are seen
        too, so the caller reads only tournaments with nothing in flight (a
        rebuild after a failed commit, which rolled back, or a compacted
        tournament).
        """
        assert self._db is not None
        try:
            rows = self._db.execute("SELECT body FROM events WHERE tournament = ? ORDER BY pos", (tournament,))
            return [bytes(body) for (body,) in rows]
        except sqlite3.Error as exc:
            raise JournalError(f"cannot read the journal {self.path}: {exc}") from None

    def count(self) -> int:
        assert self._db is not None
        (n,) = self._db.execute("SELECT count(*) FROM events").fetchone()
        return int(n)

    async def __aenter__(self) -> Journal:
        if self._db is None:
            self.open()
        self._writer = asyncio.create_task(self._write_loop(), name="journal-writer")
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.flush()
        if self._writer is not None:
            self._writer.cancel()
            with suppress(asyncio.CancelledError):
                await self._writer
        if self._db is not None:
            self._db.close()
            self._db = None

    @property
    def lag(self) -> int:
        """Events waiting to be committed."""
        return self._queue.qsize()

    def append(self, tournament: str, event_id: str, body: bytes) -> asyncio.Future[int]:
        """Queue one event; the future resolves to its position once committed."""
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(_Pending(tournament, event_id, body, done))
        return done

    async def flush(self) -> None:
        """Wait until everything queued so far is committed (or failed)."""
        await self._queue.join()

    async def _write_loop(self) -> None:
        while True:
            batch = [await self._queue.get()]
            while len(batch) < self.max_batch and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            try:
                positions = await asyncio.to_thread(self._commit, batch)
            except (sqlite3.Error, OSError) as exc:
                # everything queued behind the failed batch was applied on top of it: fail it too
                failed = list(batch)
                while not self._queue.empty():
                    failed.append(self._queue.get_nowait())
                    batch.append(failed[-1])
                for item in failed:
                    if not item.done.done():
                        item.done.set_exception(JournalError(f"journal write failed: {exc}"))
                if self.on_failure is not None:
                    self.on_failure({item.tournament for item in failed})
                del failed
            else:
                self.appended += len(batch)
                self.commits += 1
                for item, pos in zip(batch, positions, strict=True):
                    if not item.done.done():
                        item.done.set_result(pos)
            finally:
                for _ in batch:
                    self._queue.task_done()
                batch.clear()  # not kept while waiting for the next: up to max_batch bodies and futures

    def _commit(self, batch: list[_Pending]) -> list[int]:
        db = self._db
        assert db is not None
        db.execute("BEGIN IMMEDIATE")
        try:
            positions = []
            for item in batch:
                cur = db.execute(
                    "INSERT INTO events (tournament, id, body) VALUES (?, ?, ?)",
                    (item.tournament, item.event_id, item.body),
                )
                positions.append(int(cur.lastrowid or 0))
            db.execute("COMMIT")
        except BaseException:
            with suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise
        return positions
