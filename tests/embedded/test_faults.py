"""Durability faults of the embedded tracker: a full disk, a read-only journal, SIGKILL twenty times.

What must hold every time: an event is acknowledged only once it is in the journal; an event that
cannot be made durable is rejected with a reason (``not-durable``), never acknowledged, never
published; after the fault the tracker carries on, and after any restart its standings are exactly
the fold of what the journal holds.

How the faults are made (the tests run as root, and root ignores file permissions):

- *disk full*: the data directory lives on a 4 MiB tmpfs mounted for the test; a filler file takes
  every free byte while the server runs, and is deleted to recover;
- *read-only*: ``chattr +i`` on the journal and its ``-wal`` file (immutable: even root's writes fail
  with EPERM; ``-shm`` is left alone, it is memory-mapped);
- *crash*: SIGKILL after a random number of acknowledgements, or a random delay, of a pipelined
  replay, twenty times in a row on the same data directory (seeded RNG).

Each test skips, saying why, where the machine cannot make its fault (no mount, no chattr).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import random
import signal
import sqlite3
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tests.builders import berger
from tests.conftest import TOKEN, RunningTracker, data_file
from tests.gateway.test_hostile import http_json
from tests.reliability_log import record
from tests.wsclient import recv, recv_until, reply_to, send, submit
from tracker.core.apply import step
from tracker.core.crosstable import Tournament
from tracker.core.events import (
    Event,
    GameResult,
    Player,
    ResultCorrected,
    ResultRecorded,
    TournamentOpened,
    decode_event,
)
from tracker.core.standings import standings
from tracker.formats import TournamentFile, state_from
from tracker.formats.files import read_file
from tracker.protocol import standings_json

Factory = Callable[..., RunningTracker]
EXERCISE = data_file("fide-tec-exercise16-rr6.trf")


def comparable(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(r["rank"], r["start_no"], r["name"], r["points"], r["tiebreaks"], r["games"]) for r in rows]


def journal_ids(data_dir: Path) -> list[str]:
    db = sqlite3.connect(data_dir / "journal.sqlite3", timeout=10)
    try:
        return [row[0] for row in db.execute("SELECT id FROM events ORDER BY pos")]
    finally:
        db.close()


def journal_fold(data_dir: Path) -> dict[str, Tournament]:
    """What an offline fold of the journal gives: the state every restart must come back to."""
    db = sqlite3.connect(data_dir / "journal.sqlite3", timeout=10)
    try:
        states: dict[str, Tournament] = {}
        for (body,) in db.execute("SELECT body FROM events ORDER BY pos"):
            event = decode_event(bytes(body))
            states[event.tournament], _ = step(states.get(event.tournament), event)
        return states
    finally:
        db.close()


def expected_rows(state: Tournament) -> list[tuple[Any, ...]]:
    return comparable(standings_json(standings(state))["standings"])  # type: ignore[arg-type]


async def submit_all(ws: ClientConnection, events: list[Event]) -> dict[str, dict[str, Any]]:
    """Pipeline ``events`` and collect the reply to each, by event id."""
    for event in events:
        await submit(ws, TOKEN, event)
    replies: dict[str, dict[str, Any]] = {}
    async with asyncio.timeout(30):
        while len(replies) < len(events):
            message = json.loads(await ws.recv())
            if message["type"] in ("ack", "rejected"):
                replies[message["id"]] = message
    return replies


# -- disk full and read-only ----------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs mounted for this test (skips where mounting is not allowed)."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m,mode=0755", f"tracker-test-{uuid.uuid4().hex[:8]}", str(mount_point)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root and CAP_SYS_ADMIN): {done.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(directory: Path) -> Path:
    """Take every free byte of the file system ``directory`` is on; return the filler to delete later."""
    filler = directory / "filler"
    chunk = b"\0" * (64 * 1024)
    with open(filler, "wb", buffering=0) as out:
        try:
            while True:
                out.write(chunk)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
        with contextlib.suppress(OSError):  # the last partial block
            while True:
                out.write(b"\0" * 512)
    return filler


class Immutable:
    """``chattr +i`` on files while the block runs; ``chattr -i`` after (skips where chattr does not work)."""

    def __init__(self, *paths: Path) -> None:
        self.paths = paths

    def __enter__(self) -> None:
        for path in self.paths:
            done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
            if done.returncode != 0:
                self.__exit__()
                pytest.skip(f"chattr +i does not work here ({done.stderr.strip()}): cannot make the journal read-only")

    def __exit__(self, *exc: object) -> None:
        for path in self.paths:
            subprocess.run(["chattr", "-i", str(path)], capture_output=True, check=False)


def fault_scenario(
    server: RunningTracker,
    tf: TournamentFile,
    fault: Any,
    *,
    expect_reason: str,
) -> dict[str, int]:
    """Replay part of ``tf``, break the journal with ``fault`` (a context manager), submit, heal, finish.

    Returns counts for the reliability log.  Asserts: during the fault every submit is rejected
    ``not-durable`` with a reason and nothing is acknowledged, published or changed; afterwards the
    same events are accepted and the standings equal the offline fold.
    """
    events: list[Event] = [tf.opened, *tf.events]
    before_fault, during, after = events[:6], events[6:11], events[6:]
    tid = tf.opened.tournament
    acked: set[str] = set()

    async def scenario() -> dict[str, int]:
        async with connect(server.ws_url, max_size=2**24) as arbiter, connect(server.ws_url, max_size=2**24) as watcher:
            replies = await submit_all(arbiter, before_fault)
            assert all(r["type"] == "ack" for r in replies.values())
            acked.update(replies)
            await send(watcher, {"type": "subscribe", "tournament": tid})
            snapshot = await recv(watcher)
            seq = snapshot["seq"]
            page = http_json(server.port, f"/api/tournaments/{tid}/standings")
            rows = journal_ids(server.data_dir)
            with fault:
                replies = await submit_all(arbiter, during)  # pipelined: they share failing group commits
                for reply in replies.values():
                    assert reply["type"] == "rejected" and reply["code"] == "not-durable", reply
                    assert expect_reason in reply["reason"], reply
                    assert TOKEN not in reply["reason"]
                # retried one by one while still broken: each fails on its own commit
                for event in during[:2]:
                    await submit(arbiter, TOKEN, event)
                    again = await reply_to(arbiter, event.id)
                    assert again["type"] == "rejected" and again["code"] == "not-durable"
                assert http_json(server.port, f"/api/tournaments/{tid}/standings") == page
                assert journal_ids(server.data_dir) == rows
            # healed: the same events go through, and the watcher sees the next seq, nothing in between
            replies = await submit_all(arbiter, after)
            assert all(r["type"] == "ack" for r in replies.values()), replies
            acked.update(replies)
            update, skipped = await recv_until(watcher, lambda m: m["type"] == "update")
            assert update["seq"] == seq + 1 and update["event"]["id"] == after[0].id and not skipped
            last = update
            while last["seq"] < len(events):
                last = await recv(watcher)
                assert last["seq"] == update["seq"] + 1, "the watcher missed or repeated an update"
                update = last
            return {"rejected": len(during) + 2, "acked": len(acked)}

    counts = asyncio.run(scenario())
    ids = journal_ids(server.data_dir)
    assert len(ids) == len(set(ids)) == len(events)  # each event once
    assert acked <= set(ids)  # every acknowledged event is in the journal
    page = http_json(server.port, f"/api/tournaments/{tid}/standings")
    assert comparable(page["standings"]) == expected_rows(state_from(tf))
    return counts


def test_a_full_disk_rejects_submits_with_a_reason_and_nothing_is_acknowledged(
    tracker_factory: Factory, small_disk: Path
) -> None:
    tf = read_file(str(EXERCISE))
    server = tracker_factory(data_dir=small_disk / "data")
    filler: list[Path] = []

    @contextlib.contextmanager
    def disk_full() -> Iterator[None]:
        filler.append(fill(small_disk))
        try:
            yield
        finally:
            filler.pop().unlink()

    counts = fault_scenario(server, tf, disk_full(), expect_reason="full")
    server.stop()
    again = tracker_factory(data_dir=server.data_dir)  # the journal written around the fault replays
    page = http_json(again.port, f"/api/tournaments/{tf.opened.tournament}/standings")
    assert comparable(page["standings"]) == expected_rows(state_from(tf))
    assert "Traceback" not in "".join(server.output)
    record(
        "durability",
        "journal disk full (4 MiB tmpfs filled while serving)",
        tried=counts["rejected"],
        unit="submits",
        outcome=(
            "all rejected not-durable ('database or disk is full'), none acknowledged or published; "
            f"{counts['acked']} acknowledged events all survived a restart"
        ),
    )


def test_a_read_only_journal_rejects_submits_with_a_reason_and_nothing_is_acknowledged(
    tracker_factory: Factory,
) -> None:
    tf = read_file(str(EXERCISE))
    server = tracker_factory()
    journal = server.data_dir / "journal.sqlite3"
    counts = fault_scenario(
        server, tf, Immutable(journal, journal.with_name(journal.name + "-wal")), expect_reason="I/O"
    )
    server.stop()
    again = tracker_factory(data_dir=server.data_dir)
    page = http_json(again.port, f"/api/tournaments/{tf.opened.tournament}/standings")
    assert comparable(page["standings"]) == expected_rows(state_from(tf))
    record(
        "durability",
        "journal read-only (chattr +i on the database and its WAL while serving)",
        tried=counts["rejected"],
        unit="submits",
        outcome=(
            "all rejected not-durable ('disk I/O error'), none acknowledged or published; "
            f"{counts['acked']} acknowledged events all survived a restart"
        ),
    )


def test_a_journal_that_is_not_a_database_stops_the_start_with_a_sentence(
    tracker_factory: Factory, tmp_path: Path
) -> None:
    """A damaged journal file must stop ``tracker up`` with one sentence naming it, not a traceback."""
    data = tmp_path / "not-a-journal"
    data.mkdir()
    (data / "journal.sqlite3").write_bytes(b"this is not a database" * 100)
    with pytest.raises(RuntimeError) as failed:
        tracker_factory(data_dir=data)
    output = str(failed.value).replace("\n", "")  # the terminal may wrap the sentence anywhere
    assert "Traceback" not in output, output
    assert "journal.sqlite3" in output and "not a database" in output
    record(
        "durability",
        "journal file that is not a database",
        tried=1,
        unit="starts",
        outcome="refused to start with one sentence",
    )


# -- SIGKILL at random points, twenty times -----------------------------------------------------------------


OUTCOMES: tuple[GameResult, ...] = ("1-0", "1/2-1/2", "0-1", "1-0", "0-1", "+-")


def long_tournament(seed: int) -> TournamentFile:
    """A 16-player double round robin (240 games) with a correction now and then; deterministic per seed."""
    rng = random.Random(seed)
    tid = "kill-cup"
    opened = TournamentOpened(
        id=f"{tid}/open",
        tournament=tid,
        name="Kill Cup",
        players=tuple(Player(start_no=i, name=f"Player {i:02d}", rating=2400 + 10 * i) for i in range(1, 17)),
        format="double",
        tiebreaks=("PTS", "DE", "SB", "KS", "KS/L-1", "WON"),
    )
    events: list[Event] = []
    played: list[ResultRecorded] = []
    for rnd in berger(16, 2):
        for white, black in rnd.pairs:
            game = ResultRecorded(
                id=f"{tid}/r{rnd.number}/{white}-{black}",
                tournament=tid,
                round=rnd.number,
                white=white,
                black=black,
                result=rng.choice(OUTCOMES),
            )
            events.append(game)
            played.append(game)
        if rng.random() < 0.3:
            old = rng.choice(played)
            new = rng.choice([r for r in OUTCOMES[:3] if r != old.result])
            events.append(
                ResultCorrected(
                    id=f"{tid}/fix/{len(events)}",
                    tournament=tid,
                    round=old.round,
                    white=old.white,
                    black=old.black,
                    result=new,
                )
            )
            played[played.index(old)] = ResultRecorded(
                id=old.id, tournament=tid, round=old.round, white=old.white, black=old.black, result=new
            )
    return TournamentFile(opened, tuple(events))


def test_sigkill_at_random_points_twenty_times_loses_no_acknowledged_event(
    tracker_factory: Factory, tmp_path: Path
) -> None:
    seed = 20_260_801
    rng = random.Random(seed)
    tf = long_tournament(seed)
    events: list[Event] = [tf.opened, *tf.events]
    data_dir = tmp_path / "data"
    acked: set[str] = set()
    kills: list[dict[str, Any]] = []
    redelivered = 0

    async def replay_until_killed(
        server: RunningTracker, batch: list[Event], after_acks: int | None, after_s: float
    ) -> int:
        acks = 0
        async with connect(server.ws_url, max_size=2**24) as ws:
            for event in batch:
                await submit(ws, TOKEN, event)
            started = time.monotonic()
            try:
                async with asyncio.timeout(30):
                    while True:
                        left = after_s - (time.monotonic() - started)
                        if after_acks is None and left <= 0:
                            break
                        try:
                            async with asyncio.timeout(left if after_acks is None else None):
                                message = json.loads(await ws.recv())
                        except TimeoutError:
                            break
                        if message["type"] == "ack":
                            acked.add(message["id"])
                            acks += 1
                            if after_acks is not None and acks >= after_acks:
                                break
                        elif message["type"] == "rejected":
                            raise AssertionError(f"rejected during the replay: {message}")
            finally:
                server.proc.send_signal(signal.SIGKILL)  # mid-flight: the rest of the window is in the air
                server.proc.wait(timeout=10)
                with contextlib.suppress(ConnectionClosed):
                    await ws.close()
        return acks

    for round_ in range(20):
        server = tracker_factory(data_dir=data_dir)
        # after every restart: the state is exactly the fold of the journal, and no acknowledged event is missing
        ids = journal_ids(data_dir)
        assert len(ids) == len(set(ids)), "an event was journalled twice"
        assert acked <= set(ids), f"acknowledged but lost: {sorted(acked - set(ids))[:5]}"
        folded = journal_fold(data_dir)
        if folded:
            page = http_json(server.port, "/api/tournaments/kill-cup/standings")
            assert comparable(page["standings"]) == expected_rows(folded["kill-cup"])
            assert page["seq"] == folded["kill-cup"].seq
        start = len(ids)
        replayed = rng.randint(0, min(start, 8))  # a few already-journalled events are delivered again
        redelivered += replayed
        batch = events[start - replayed : start + rng.randint(4, 12)]  # pipelined, all in flight at once
        if rng.random() < 0.5:
            after_acks, after_s = rng.randint(1, len(batch)), 0.0
        else:
            after_acks, after_s = None, rng.uniform(0.0, 0.15)
        acks = asyncio.run(replay_until_killed(server, batch, after_acks, after_s))
        assert server.proc.returncode == -signal.SIGKILL
        kills.append(
            {"round": round_, "journalled_before": start, "acks": acks, "journalled_after": len(journal_ids(data_dir))}
        )

    final = tracker_factory(data_dir=data_dir)
    ids = journal_ids(data_dir)
    assert acked <= set(ids) and len(ids) == len(set(ids))

    async def finish() -> dict[str, dict[str, Any]]:
        async with connect(final.ws_url, max_size=2**24) as ws:
            return await submit_all(ws, events)  # everything again: the journalled ones are re-acknowledged

    replies = asyncio.run(finish())
    assert all(r["type"] == "ack" for r in replies.values())
    page = http_json(final.port, "/api/tournaments/kill-cup/standings")
    assert comparable(page["standings"]) == expected_rows(state_from(tf))  # the offline standings
    assert page["seq"] == len(events)  # nothing counted twice
    assert journal_ids(data_dir) == [e.id for e in events]
    assert len(journal_ids(data_dir)) > 0 and kills[-1]["journalled_after"] < len(events)  # the kills hit a replay
    record(
        "durability",
        "SIGKILL at random points of a pipelined replay, 20 times in a row on one data dir (seed 20260801)",
        tried=len(kills),
        unit="kills",
        outcome=(
            f"{len(acked)} acknowledged events, all in the journal after every restart; "
            f"{redelivered} re-deliveries counted once; final standings = offline"
        ),
        figures={"kills": kills, "events": len(events)},
    )
