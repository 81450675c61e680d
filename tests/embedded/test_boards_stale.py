"""Boards that age, through a real ``tracker up`` (issue 36): a board its source has not sent again within the
stale time (``--stale-after``) is marked stale in the ``boards`` message with its age, a re-sent board is live
again, a restart brings boards back stale (never live), and a follower that stops ends its boards."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from websockets.asyncio.client import connect

from tests.conftest import RunningTracker
from tests.embedded.test_boards_live import before_the_last_round, send_board, submit_all
from tests.follow.test_follow import Broadcast, broadcast, pgn_number, trf_games
from tests.follow.test_follow_boards import boards_watcher, live_pgn
from tests.wsclient import recv_until, send
from tracker.core.events import BoardUpdated, Evaluation
from tracker.follow import Follower, HttpSource, WebsocketTracker
from tracker.follow.boards import BoardFeed

__all__ = ["broadcast"]  # the fixture, used by name

STALE_AFTER = 1.5  # seconds: small, for the test; the default is 120


async def test_a_board_not_sent_again_goes_stale_with_its_age_and_a_resent_one_is_live_again(
    tracker_factory: Callable[..., RunningTracker],
) -> None:
    tid, played, pairs = before_the_last_round()
    server = tracker_factory("--stale-after", str(STALE_AFTER))
    (w, b) = pairs[0]
    board = BoardUpdated("b-age", tid, 9, w, b, ply=30, last_move="Nf3", evaluation=Evaluation(cp=40))
    async with connect(server.ws_url) as arbiter, connect(server.ws_url) as watcher:
        await submit_all(arbiter, server.token, played)
        await send(watcher, {"type": "subscribe", "tournament": tid, "boards": True})
        await recv_until(watcher, lambda m: m["type"] == "snapshot")
        assert (await send_board(arbiter, server.token, board))["type"] == "ack"
        fresh, _ = await recv_until(watcher, lambda m: m["type"] == "boards" and len(m["boards"]) == 1, timeout=30)
        (shown,) = fresh["boards"]
        assert shown["stale"] is False and shown["age"] is not None and 0 <= shown["age"] < STALE_AFTER
        estimated, _ = await recv_until(watcher, lambda m: m["type"] == "live" and m["results"], timeout=30)
        assert (9, w, b) in {(r["round"], r["white"], r["black"]) for r in estimated["results"]}  # live: counted
        # nothing more from the source: a boards message says it is stale once the stale time has passed
        stale, _ = await recv_until(watcher, lambda m: m["type"] == "boards" and m["boards"][0]["stale"], timeout=30)
        (aged,) = stale["boards"]
        assert aged["age"] >= STALE_AFTER and aged["ply"] == 30  # the position as last known, its age shown
        assert stale["live_seq"] > fresh["live_seq"]
        # and the estimates no longer count it: "if the games ended now" has no result for its game
        counted, _ = await recv_until(watcher, lambda m: m["type"] == "live" and m["live_seq"] >= stale["live_seq"])
        assert (9, w, b) not in {(r["round"], r["white"], r["black"]) for r in counted["results"]}
        # the source sends the same board again (a long think): live again, its age from zero
        assert (await send_board(arbiter, server.token, board))["type"] == "ack"
        again, _ = await recv_until(
            watcher, lambda m: m["type"] == "boards" and not m["boards"][0]["stale"], timeout=30
        )
        assert again["boards"][0]["age"] < STALE_AFTER


async def test_a_restart_brings_the_boards_back_stale_until_their_source_sends_them(
    tracker_factory: Callable[..., RunningTracker],
) -> None:
    tid, played, pairs = before_the_last_round()
    first = tracker_factory()  # the default stale time (120 s): the board is live before the restart
    w, b = pairs[2]
    board = BoardUpdated("b-kept", tid, 9, w, b, ply=44, fen="8/8/8/8/8/8/8/K6k w - - 0 1")
    async with connect(first.ws_url) as arbiter, connect(first.ws_url) as watcher:
        await submit_all(arbiter, first.token, played)
        await send(watcher, {"type": "subscribe", "tournament": tid, "boards": True})
        await recv_until(watcher, lambda m: m["type"] == "snapshot")
        assert (await send_board(arbiter, first.token, board))["type"] == "ack"
        before, _ = await recv_until(watcher, lambda m: m["type"] == "boards" and m["boards"], timeout=30)
        assert before["boards"][0]["stale"] is False
    assert first.stop() == 0
    again = tracker_factory(data_dir=first.data_dir)
    async with connect(again.ws_url) as arbiter, connect(again.ws_url) as watcher:
        await send(watcher, {"type": "subscribe", "tournament": tid, "boards": True})
        restored, _ = await recv_until(watcher, lambda m: m["type"] == "boards", timeout=30)
        assert [(x["ply"], x["stale"], x["age"]) for x in restored["boards"]] == [(44, True, None)]
        # its source sends it again: live
        assert (await send_board(arbiter, again.token, board))["type"] == "ack"
        live, _ = await recv_until(watcher, lambda m: m["type"] == "boards" and not m["boards"][0]["stale"], timeout=30)
        assert live["boards"][0]["age"] is not None


async def test_a_follower_that_stops_ends_its_boards(
    tracker_server: RunningTracker, broadcast: tuple[Broadcast, str]
) -> None:
    served, url = broadcast
    tid = "sinq-stale"
    rounds = trf_games()
    finished = [g for r in range(1, 9) for g in rounds[r]]
    playing = rounds[9][:2]
    follower = Follower(
        HttpSource(url),
        tid,
        WebsocketTracker(tracker_server.ws_url, tracker_server.token),
        boards=BoardFeed(tid, interval=0.05),
    )
    stop = asyncio.Event()
    try:
        served.publish(live_pgn(finished, [], evals=True))
        await follower.poll()  # opens the tournament and records rounds 1-8
        watcher = await boards_watcher(tracker_server, tid)
        served.publish(live_pgn(finished, playing, evals=True))
        running = asyncio.create_task(follower.run(0.05, stop))
        live, _ = await recv_until(watcher, lambda m: m["type"] == "boards" and len(m["boards"]) == 2, timeout=20)
        assert [x["stale"] for x in live["boards"]] == [False, False]
        stop.set()  # `tracker follow` stopped cleanly (Ctrl-C, SIGTERM)
        await asyncio.wait_for(running, 20)
        ended, _ = await recv_until(
            watcher, lambda m: m["type"] == "boards" and all(x["stale"] for x in m["boards"]), timeout=20
        )
        assert {x["white"] for x in ended["boards"]} == {pgn_number(g[1]) for g in playing}
        assert [x["ply"] for x in ended["boards"]] == [x["ply"] for x in live["boards"]]  # as last known
        await watcher.close()
    finally:
        stop.set()
        await follower.aclose()
