"""A damaged or vanished ``boards.sqlite3`` (issue 37, item 4): boards are data whose loss costs nothing, so
``tracker up`` sets a damaged file aside with one warning naming it and makes a fresh one, and notices a file
deleted while it runs."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from tests.conftest import RunningTracker
from tests.gateway.test_viewers import fill, round_robin
from tests.wsclient import reply_to, send
from tracker.core.events import BoardUpdated, ResultRecorded, encode_board
from tracker.embedded.boards import BoardStore

Factory = Callable[..., RunningTracker]


def truncated(path: Path) -> None:
    """A boards file with rows, cut in the middle of a page (a partial copy)."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE boards (tournament TEXT, round INTEGER, white INTEGER, black INTEGER, body BLOB)")
    db.executemany("INSERT INTO boards VALUES ('t', 1, ?, 1, ?)", [(k, b"x" * 500) for k in range(200)])
    db.commit()
    db.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2 + 100])


DAMAGE: dict[str, Callable[[Path], None]] = {
    "garbage": lambda path: path.write_bytes(b"this is not a database at all\n" * 100),
    "truncated": truncated,
    "a directory": lambda path: path.mkdir(),
}


async def board_acked(server: RunningTracker, board: BoardUpdated) -> None:
    async with connect(server.ws_url) as ws:
        await send(ws, {"type": "submit", "token": server.token, "event": json.loads(encode_board(board))})
        assert (await reply_to(ws, board.id))["type"] == "ack"


async def said(server: RunningTracker, text: str, timeout: float = 30) -> str:
    """The first output line of ``server`` that holds ``text`` (waiting for it)."""
    async with asyncio.timeout(timeout):
        while True:
            for line in list(server.output):
                if text in line:
                    return line
            await asyncio.sleep(0.05)  # the output is read by a thread: nothing to await but its next line


@pytest.mark.parametrize("damage", list(DAMAGE))
async def test_tracker_up_starts_with_a_damaged_boards_file_set_aside(
    tracker_factory: Factory, tmp_path: Path, damage: str
) -> None:
    """Reproduction: garbage, a truncated copy or a directory as ``boards.sqlite3`` stopped ``tracker up``
    with a raw traceback.  Now it is set aside, one warning names it, and boards are kept in a fresh file."""
    data = tmp_path / "data"
    data.mkdir()
    DAMAGE[damage](data / "boards.sqlite3")
    server = tracker_factory(data_dir=data)
    warnings = [line for line in server.output if "could not be read as boards" in line]
    assert len(warnings) == 1, server.output
    aside = [p for p in data.iterdir() if p.name.startswith("boards.sqlite3.damaged-")]
    assert len(aside) == 1 and aside[0].name in warnings[0] and "Traceback" not in "".join(server.output)
    tid = "boards-cup"
    events = round_robin(tid, 4, 0)
    await fill(server, events)
    await board_acked(server, BoardUpdated("b-1", tid, 1, 1, 4, ply=12))
    await said(server, "listening")
    assert server.stop() == 0
    rows = sqlite3.connect(data / "boards.sqlite3").execute("SELECT count(*) FROM boards").fetchone()
    assert rows == (1,), "the board went to the fresh file"


async def test_a_boards_file_deleted_while_running_is_noticed_and_made_again(tracker_factory: Factory) -> None:
    """Reproduction: deleted while running, later boards went to the unlinked file without a word."""
    server = tracker_factory()
    path = server.data_dir / "boards.sqlite3"
    tid = "vanishing-cup"
    events = round_robin(tid, 4, 0)
    await fill(server, events)
    game = next(e for e in round_robin(tid, 4, 2)[1:] if isinstance(e, ResultRecorded))
    await board_acked(server, BoardUpdated("b-1", tid, game.round, game.white, game.black, ply=10))
    path.unlink()
    await board_acked(server, BoardUpdated("b-2", tid, game.round, game.white, game.black, ply=11))
    line = await said(server, "vanished while running")
    assert str(path) in line
    assert server.stop() == 0
    (body,) = sqlite3.connect(path).execute("SELECT body FROM boards").fetchone()
    assert json.loads(body)["ply"] == 11, "the next board went to a fresh file"


class SlowDisk(BoardStore):
    """A store whose writes wait for ``go`` (a slow disk): a stop can come while one is under way."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, flush_every=0.0)
        self.writing = threading.Event()
        self.go = threading.Event()

    def _write(self, batch: dict[tuple[str, int, int, int], bytes | None]) -> None:
        self.writing.set()
        self.go.wait(10)
        super()._write(batch)


async def test_a_stop_while_boards_are_being_written_waits_for_that_write(tmp_path: Path) -> None:
    """Reproduction (an idle CI run of the test above): ``tracker up`` stopped while a flush was in its thread
    (it had just made the fresh file); the stop cancelled the flush, closed the file under the thread's feet,
    and that batch was lost.  Now the stop waits for the write under way."""
    store = SlowDisk(tmp_path / "boards.sqlite3")
    board = BoardUpdated("b-1", "slow-cup", 1, 1, 2, ply=7)
    async with store:
        store.put(board)
        await asyncio.to_thread(store.writing.wait, 10)
        assert store.writing.is_set(), "the flush began"
        threading.Timer(0.2, store.go.set).start()  # the disk answers after the stop began
    rows = sqlite3.connect(store.path).execute("SELECT body FROM boards").fetchall()
    assert [json.loads(body)["ply"] for (body,) in rows] == [7]
