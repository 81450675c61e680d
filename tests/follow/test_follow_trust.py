"""A live source never takes back a result by a hiccup: half-written reads, missing games and voids at the source.

The PGN is published by a tiny aiohttp server on 127.0.0.1 (tests/follow/httpd.py) or written to a
local file; the tracker is a real ``tracker up``; the arbiter's desk is read as an arbiter subscriber.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from tests.conftest import RunningTracker
from tests.follow.httpd import publisher
from tests.follow.test_follow import http_json, pgn, trf_games
from tests.wsclient import recv_until, send
from tracker.core.events import ResultVoided
from tracker.follow import Confirm, FileSource, Follower, HttpSource, Source, WebsocketTracker
from tracker.follow.errors import BrokenRead

TID = "trust"
ROUND = trf_games()[1] + trf_games()[2]  # ten finished games
FULL = pgn(ROUND)


def voided_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "voided (seq" in r.getMessage()]


def held_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "held back" in r.getMessage()]


async def arbiter(server: RunningTracker, tid: str) -> ClientConnection:
    """An arbiter subscribed to ``tid``, past its snapshot, schedule and notices."""
    ws = await connect(server.ws_url)
    await send(ws, {"type": "subscribe", "tournament": tid, "token": server.token})
    await recv_until(ws, lambda m: m["type"] == "notices")
    return ws


def seq(server: RunningTracker, tid: str = TID) -> int:
    value: int = http_json(server, f"/api/tournaments/{tid}/standings")["seq"]
    return value


async def settle(follower: Follower) -> None:
    """The first read: the tournament opened and its ten results recorded."""
    result = await follower.poll()
    assert len(result.acked) == 11, result


async def truncated_twice_then_restored(
    server: RunningTracker, follower: Follower, publish: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="tracker.follow")
    try:
        await settle(follower)
        before = seq(server)
        publish(FULL[:1200])  # game 1 cut in its moves (as a half-written upload), the others missing
        for _ in range(2):
            with pytest.raises(BrokenRead, match="cut"):
                await follower.poll()
        cut_at_a_game = FULL[: FULL.index('[Event "', 1200)]  # whole games only: the later ones are missing
        publish(cut_at_a_game)
        for _ in range(2):
            assert (await follower.poll()).acked == ()
        publish(FULL)
        result = await follower.poll()
        assert result.acked == () and result.rejected == ()
        assert seq(server) == before
        assert voided_lines(caplog) == []
        held = held_lines(caplog)
        # said once each: the cut read, and each game missing from the read of whole games
        assert len([line for line in held if "cut" in line]) == 1, held
        missing = len(ROUND) - cut_at_a_game.count('[Event "')
        assert len([line for line in held if "voided" in line]) == missing, held
    finally:
        await follower.aclose()


async def test_a_pgn_over_http_truncated_for_two_polls_then_restored_records_and_voids_nothing(
    tracker_server: RunningTracker, caplog: pytest.LogCaptureFixture
) -> None:
    async with publisher() as (served, base):
        served.publish(FULL)
        tracker = WebsocketTracker(tracker_server.ws_url, tracker_server.token)
        follower = Follower(HttpSource(f"{base}/games.pgn"), TID, tracker)
        await truncated_twice_then_restored(tracker_server, follower, served.publish, caplog)


async def test_a_local_pgn_truncated_for_two_polls_then_restored_records_and_voids_nothing(
    tracker_server: RunningTracker, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    live = tmp_path / "live.pgn"
    live.write_text(FULL, encoding="utf-8")
    follower = Follower(FileSource(live), TID, WebsocketTracker(tracker_server.ws_url, tracker_server.token))
    await truncated_twice_then_restored(
        tracker_server, follower, lambda text: live.write_text(text, encoding="utf-8"), caplog
    )


async def voided_at_the_source(
    server: RunningTracker, source: Source, confirm: Confirm, publish: Any
) -> tuple[Follower, list[list[Any]]]:
    """Record the round, then drop its third game at the source; poll until the confirmation reads are done."""
    follower = Follower(source, TID, WebsocketTracker(server.ws_url, server.token), confirm=confirm)
    await settle(follower)
    publish(pgn([g for g in ROUND if g != ROUND[2]]))
    acked = [list((await follower.poll()).acked)]
    assert follower.doubts  # held back at the first read
    step = confirm.seconds / (confirm.reads - 1)
    async with asyncio.timeout(30):
        while follower.doubts:  # read again until the reads span the confirmation's time
            await asyncio.sleep(step)
            acked.append(list((await follower.poll()).acked))
    assert len(acked) >= confirm.reads
    return follower, acked


async def test_a_game_voided_at_the_source_is_a_desk_notice_not_a_void_without_trust_voids(
    tracker_server: RunningTracker, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="tracker.follow")
    async with publisher() as (served, base):
        served.publish(FULL)
        desk = await arbiter(tracker_server, TID)
        confirm = Confirm(reads=3, seconds=0.3)
        follower, acked = await voided_at_the_source(
            tracker_server, HttpSource(f"{base}/games.pgn"), confirm, served.publish
        )
        try:
            assert all(a == [] for a in acked)
            notice, _ = await recv_until(desk, lambda m: m["type"] == "notices" and m.get("added") is True)
            (entry,) = notice["notices"]
            r = ROUND[2][0]
            assert entry["code"] == "proposed"
            assert entry["event"]["type"] == "result_voided" and entry["event"]["round"] == r
            assert "--trust-voids" in entry["reason"]
            assert seq(tracker_server) == 11
            # the source keeps saying so: no second notice, nothing voided
            for _ in range(3):
                assert (await follower.poll()).acked == ()
            with pytest.raises(TimeoutError):
                await recv_until(desk, lambda m: m["type"] == "notices", timeout=0.5)
            assert voided_lines(caplog) == [] and seq(tracker_server) == 11
        finally:
            await follower.aclose()
            await desk.close()


async def test_with_trust_voids_a_game_voided_at_the_source_is_voided_after_the_confirmation_reads(
    tracker_server: RunningTracker, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="tracker.follow")
    live = tmp_path / "live.pgn"
    live.write_text(FULL, encoding="utf-8")
    confirm = Confirm(reads=3, seconds=0.3, trust_voids=True)
    follower, acked = await voided_at_the_source(
        tracker_server, FileSource(live), confirm, lambda text: live.write_text(text, encoding="utf-8")
    )
    try:
        assert all(a == [] for a in acked[:-1])
        (voided,) = acked[-1]
        assert isinstance(voided, ResultVoided) and voided.round == ROUND[2][0]
        assert len(voided_lines(caplog)) == 1 and seq(tracker_server) == 12
    finally:
        await follower.aclose()


async def test_a_304_for_the_same_broken_body_is_not_a_recovery(
    tracker_server: RunningTracker, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="tracker.follow")
    async with publisher() as (served, base):
        served.publish(FULL)
        follower = Follower(
            HttpSource(f"{base}/games.pgn"), TID, WebsocketTracker(tracker_server.ws_url, tracker_server.token)
        )
        await settle(follower)
        served.publish("<!DOCTYPE html><html><body>502 Bad Gateway</body></html>", content_type="text/html")
        stop = asyncio.Event()
        task = asyncio.create_task(follower.run(0.02, stop))
        try:
            async with asyncio.timeout(20):
                await served.until(lambda: served.statuses.count(304) >= 3)
            messages = [r.getMessage() for r in caplog.records]
            assert not [m for m in messages if "recovered" in m or "whole again" in m], messages
            assert len([m for m in messages if "HTML" in m]) == 1, messages
            served.publish(FULL)
            after = len(served.statuses)
            async with asyncio.timeout(20):  # a 200, its poll done, then the next request
                await served.until(lambda: len(served.statuses) >= after + 2)
            assert len([r for r in caplog.records if "whole again" in r.getMessage()]) == 1
        finally:
            stop.set()
            await task
            await follower.aclose()
        assert seq(tracker_server) == 11 and voided_lines(caplog) == []
