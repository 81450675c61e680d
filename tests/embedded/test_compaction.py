"""Finished tournaments compacted by the embedded processor behave exactly like live ones.

A real :class:`Journal` in a temporary directory and a real
:class:`EmbeddedProcessor`; the sink records what would reach the hub.  Each
test runs the same events through a processor that never compacts (the
reference, what tracker did before compaction) and one that compacts a
finished tournament as soon as it is idle, and compares what comes out:
seqs, rejections, published updates byte for byte, installed standings.
"""

from __future__ import annotations

import asyncio
import urllib.request
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from tests.builders import TID, berger, correct, game, opened
from tests.conftest import RunningTracker
from tests.wsclient import recv_until, reply_to, send, submit
from tracker.core.apply import fold
from tracker.core.errors import EventRejected
from tracker.core.events import Event, GameResult
from tracker.core.standings import standings
from tracker.embedded.journal import Journal, JournalError
from tracker.embedded.processor import EmbeddedProcessor
from tracker.gateway.metrics import Metrics
from tracker.protocol import StandingsPayload, standings_json

TRF = f"/api/tournaments/{TID}/trf"
STANDINGS = f"/api/tournaments/{TID}/standings"
NEVER = 3600.0  # seconds: the reference processor never compacts within a test


class Recorder:
    """A sink that keeps what a hub would be sent."""

    def __init__(self) -> None:
        self.published: list[bytes] = []
        self.installed: dict[str, StandingsPayload] = {}

    def publish(self, payload: StandingsPayload, message: bytes) -> bool:
        self.published.append(message)
        return True

    def install(self, payload: StandingsPayload) -> None:
        self.installed[payload["tournament"]] = payload

    def seq(self, tournament: str) -> int:
        return 0


@asynccontextmanager
async def processor(path: Path, compact_after: float) -> AsyncIterator[tuple[EmbeddedProcessor, Recorder]]:
    """A processor over the journal at ``path``, replayed and attached as ``tracker up`` does on start."""
    async with Journal(path, durable=False) as journal:
        proc = EmbeddedProcessor(journal, Metrics(), compact_after=compact_after)
        proc.replay(journal.read())
        sink = Recorder()
        proc.attach(sink)
        yield proc, sink
        await proc.drain()


def round_robin(n: int = 4) -> list[Event]:
    """An ``n``-player round robin, opened and every game in (white wins, except draws on board 2)."""
    events: list[Event] = [opened(n, id="open")]
    for rnd in berger(n):
        for board, (w, b) in enumerate(rnd.pairs, start=1):
            result: GameResult = "1/2-1/2" if board == 2 else "1-0"
            events.append(game(rnd.number, w, b, result, id=f"r{rnd.number}b{board}"))
    return events


async def until_compacted(proc: EmbeddedProcessor, tid: str = TID) -> None:
    """Wait (bounded) for the processor's idle timer to compact ``tid``."""
    async with asyncio.timeout(5):
        while tid not in proc.compacted:  # noqa: ASYNC110 - a timer callback compacts; nothing to await but a turn
            await asyncio.sleep(0)


async def outcome(proc: EmbeddedProcessor, event: Event) -> int | str:
    """The seq an event is acknowledged with, or the code it is rejected with."""
    try:
        return await proc.submit(event)
    except EventRejected as exc:
        return f"rejected: {exc.code}"


async def feed(proc: EmbeddedProcessor, events: Sequence[Event]) -> list[int | str]:
    return [await outcome(proc, e) for e in events]


async def test_finished_tournament_is_compacted_to_its_id_and_its_state_folds_back_from_the_journal(
    tmp_path: Path,
) -> None:
    events = round_robin()
    async with processor(tmp_path / "j.sqlite3", 0) as (proc, _):
        await feed(proc, events[:-1])
        await asyncio.sleep(0)
        assert TID in proc.states and not proc.compacted, "an unfinished tournament stays live"
        await feed(proc, events[-1:])
        await until_compacted(proc)
        assert proc.states == {} and proc.last == {}
        state = proc.state(TID)
        assert state is not None and TID not in proc.states, "a reader gets a copy; nothing is kept"
        expected = fold(events)
        assert expected is not None
        assert state.seq == expected.seq == len(events)
        assert standings_json(standings(state)) == standings_json(standings(expected))


async def test_a_finished_tournament_stays_live_until_it_has_been_idle(tmp_path: Path) -> None:
    async with processor(tmp_path / "j.sqlite3", NEVER) as (proc, _):
        await feed(proc, round_robin())
        await asyncio.sleep(0)
        assert TID in proc.states and not proc.compacted


async def test_correction_and_redeliveries_to_a_compacted_tournament_behave_as_to_a_live_one(
    tmp_path: Path,
) -> None:
    events = round_robin()
    after: list[Event] = [
        correct(1, *berger(4)[0].pairs[0], "0-1", id="fix-1"),  # a correction
        events[3],  # a re-delivered result: already applied
        correct(1, *berger(4)[0].pairs[0], "0-1", id="fix-1"),  # the correction re-delivered
        correct(1, *berger(4)[0].pairs[0], "1-0", id="fix-1"),  # its id reused for something else
        game(1, *berger(4)[0].pairs[0], "1-0", id="again"),  # a game already in
        correct(2, *berger(4)[1].pairs[0], "1-0", id="same"),  # a correction that changes nothing
        correct(2, *berger(4)[1].pairs[0], "0-1", id="fix-2"),
    ]
    answers = {}
    messages = {}
    for name, compact_after in (("live", NEVER), ("compacted", 0.0)):
        async with processor(tmp_path / f"{name}.sqlite3", compact_after) as (proc, sink):
            await feed(proc, events)
            answers[name] = []
            for event in after:
                if compact_after == 0.0:
                    await until_compacted(proc)  # before every event: each one arrives for a compacted tournament
                answers[name].append(await outcome(proc, event))
            messages[name] = sink.published
    assert (
        answers["compacted"]
        == answers["live"]
        == [
            len(events) + 1,
            len(events) + 1,
            len(events) + 1,
            "rejected: id-reused",
            "rejected: duplicate-result",
            "rejected: unchanged",
            len(events) + 2,
        ]
    )
    assert messages["compacted"] == messages["live"]


async def test_events_in_flight_when_a_tournament_finishes_are_kept_and_compaction_waits_for_them(
    tmp_path: Path,
) -> None:
    events = round_robin()
    last, fix = events[-1], correct(1, *berger(4)[0].pairs[0], "0-1", id="fix-in-flight")
    together = [last, fix, last, fix]  # the finishing result, a correction, both re-delivered, all at once
    seen = {}
    for name, compact_after in (("live", NEVER), ("compacted", 0.0)):
        async with processor(tmp_path / f"{name}.sqlite3", compact_after) as (proc, sink):
            await feed(proc, events[:-1])
            answers = await asyncio.gather(*(outcome(proc, e) for e in together))
            if compact_after == 0.0:
                await until_compacted(proc)
            state = proc.state(TID)
            assert state is not None
            seen[name] = (answers, sink.published, standings_json(standings(state)))
    assert seen["compacted"] == seen["live"]
    assert seen["live"][0] == [len(events), len(events) + 1, len(events) + 1, len(events) + 1]


async def test_a_restart_replays_compacted_tournaments_and_a_later_correction_behaves_as_before(
    tmp_path: Path,
) -> None:
    events = round_robin()
    fix = correct(3, *berger(4)[2].pairs[1], "1-0", id="fix-after-restart")
    results = {}
    for name, compact_after in (("live", NEVER), ("compacted", 0.0)):
        path = tmp_path / f"{name}.sqlite3"
        async with processor(path, compact_after) as (proc, _):
            await feed(proc, events)
            if compact_after == 0.0:
                await until_compacted(proc)
        async with processor(path, compact_after) as (proc, sink):
            if compact_after == 0.0:
                assert proc.compacted == {TID} and proc.states == {}, "finished: compacted once installed"
            installed = sink.installed[TID]
            seq = await proc.submit(fix)
            results[name] = (installed, seq, sink.published)
    assert results["compacted"] == results["live"]
    assert results["live"][1] == len(events) + 1


async def test_an_event_for_a_compacted_tournament_is_refused_when_the_journal_cannot_be_read(
    tmp_path: Path,
) -> None:
    events = round_robin()
    async with processor(tmp_path / "j.sqlite3", 0) as (proc, sink):
        await feed(proc, events)
        await until_compacted(proc)
        published = len(sink.published)

        def unreadable(tournament: str) -> list[bytes]:
            raise JournalError("cannot read the journal: disk I/O error")

        proc.journal.read_tournament = unreadable  # type: ignore[method-assign]
        with pytest.raises(EventRejected) as refused:
            await proc.submit(correct(1, *berger(4)[0].pairs[0], "0-1", id="fix"))
        assert refused.value.code == "not-durable"
        assert proc.compacted == {TID} and proc.states == {} and len(sink.published) == published


def http_get(server: RunningTracker, path: str) -> str:
    with urllib.request.urlopen(server.http_url + path, timeout=10) as response:
        return str(response.read().decode("utf-8"))


def gauge(metrics: str, name: str) -> float:
    return next(float(line.split()[1]) for line in metrics.splitlines() if line.startswith(name + " "))


async def test_tracker_up_restarted_serves_a_compacted_tournament_and_takes_a_correction_and_a_redelivery(
    tracker_factory: Callable[..., RunningTracker],
) -> None:
    """The real server: after a restart a finished tournament is compacted, yet TRF, corrections, re-deliveries work."""
    events = round_robin()
    first = tracker_factory()
    async with connect(first.ws_url) as ws:
        for event in events:
            await submit(ws, first.token, event)
            assert (await reply_to(ws, event.id))["type"] == "ack"
    trf, standings_before = http_get(first, TRF), http_get(first, STANDINGS)
    assert first.stop() == 0

    again = tracker_factory(data_dir=first.data_dir)
    metrics = http_get(again, "/metrics")
    compacted, live = (gauge(metrics, f'tracker_tournaments{{state="{state}"}}') for state in ("compacted", "live"))
    assert (compacted, live) == (1, 0)
    assert http_get(again, TRF) == trf, "the TRF page folds the compacted tournament back"
    assert http_get(again, STANDINGS) == standings_before
    fix = correct(1, *berger(4)[0].pairs[0], "0-1", id="fix-after-restart")
    async with connect(again.ws_url) as ws:
        await send(ws, {"type": "subscribe", "tournament": TID})
        await recv_until(ws, lambda m: m["type"] == "snapshot")
        await submit(ws, again.token, events[5])  # a re-delivery of a result in the compacted tournament
        redelivered = await reply_to(ws, events[5].id)
        assert (redelivered["type"], redelivered["seq"]) == ("ack", len(events))
        await submit(ws, again.token, fix)
        update, before = await recv_until(ws, lambda m: m["type"] == "update")
        assert update["seq"] == len(events) + 1
        # the ack goes out before the fan-out (it does not wait for the audience)
        acks = [m for m in before if m.get("id") == fix.id]
        ack = acks[0] if acks else await reply_to(ws, fix.id)
        assert (ack["type"], ack["seq"]) == ("ack", len(events) + 1)
