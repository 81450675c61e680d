"""``tracker follow`` of a live PGN's games in progress: boards with the feed's [%eval] and [%clk], an engine
where the feed has no evaluation, and a follower that outlives its engine."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from tests.conftest import RunningTracker
from tests.follow.test_follow import BROADCAST_NAMES, Broadcast, Game, broadcast, pgn_number, trf_games
from tests.wsclient import recv_until, send
from tracker.core.boards import wdl_from_eval
from tracker.core.events import Evaluation
from tracker.follow import Follower, HttpSource, WebsocketTracker
from tracker.follow.boards import BoardFeed
from tracker.follow.engine import Engine
from tracker.formats.progress import games_in_progress

__all__ = ["broadcast"]  # the fixture, used by name

STOCKFISH = shutil.which("stockfish") or ("/usr/games/stockfish" if os.path.exists("/usr/games/stockfish") else None)


def live_pgn(finished: list[Game], playing: list[Game], *, evals: bool) -> str:
    """A broadcast PGN: the finished games, and those being played with moves, clocks and (or not) evals."""
    out = []
    for r, w, b, result in finished:
        out.append(_game(r, w, b, result, f"1. e4 e5 {result}"))
    for k, (r, w, b, _) in enumerate(playing):
        e1, e2 = ("{ [%eval 0.21] [%clk 1:40:02] }", "{ [%eval 2.35] [%clk 1:31:10] }") if evals else ("", "")
        moves = f"1. d4 {{ [%clk 1:59:51] }} d5 {e1} 2. c4 {{ [%clk 1:58:40] }} e6 {e2} *"
        if k == 1:  # a second game, further on, drawn-looking
            moves = "1. e4 { [%clk 1:59:00] } c5 { [%eval 0.0] [%clk 1:58:30] } *" if evals else "1. e4 c5 *"
        out.append(_game(r, w, b, "*", moves))
    return "\n".join(out)


def _game(r: int, w: int, b: int, result: str, moves: str) -> str:
    return (
        f'[Event "Sinquefield Cup 2021"]\n[Round "{r}"]\n[White "{BROADCAST_NAMES[w]}"]\n'
        f'[Black "{BROADCAST_NAMES[b]}"]\n[Result "{result}"]\n\n{moves}\n'
    )


async def boards_watcher(server: RunningTracker, tid: str) -> ClientConnection:
    ws = await connect(server.ws_url)
    await send(ws, {"type": "subscribe", "tournament": tid, "boards": True, "updates": "delta"})
    await recv_until(ws, lambda m: m["type"] == "snapshot")
    return ws


def test_games_in_progress_are_read_with_their_moves_clocks_and_evals() -> None:
    rounds = trf_games()
    (game,) = games_in_progress(live_pgn(rounds[1], rounds[2][:1], evals=True))
    assert (game.round, game.ply, game.last_move) == (2, 4, "e6")
    assert (game.white_clock, game.black_clock) == (7120.0, 5470.0)
    assert (game.cp, game.mate, game.eval_ply) == (235, None, 4)
    assert wdl_from_eval(Evaluation(cp=game.cp))[0] > 900  # type: ignore[index]


async def test_following_a_live_pgn_pushes_boards_and_live_messages_and_a_result_ends_its_board(
    tracker_server: RunningTracker, broadcast: tuple[Broadcast, str]
) -> None:
    served, url = broadcast
    tid = "sinq-boards"
    rounds = trf_games()
    finished = [g for r in range(1, 9) for g in rounds[r]]
    playing = rounds[9][:2]
    feed = BoardFeed(tid, interval=0.05)
    follower = Follower(
        HttpSource(url), tid, WebsocketTracker(tracker_server.ws_url, tracker_server.token), boards=feed
    )
    try:
        served.publish(live_pgn(finished, [], evals=True))
        await follower.poll()  # opens the tournament and records rounds 1-8
        watcher = await boards_watcher(tracker_server, tid)
        served.publish(live_pgn(finished, playing, evals=True))
        result = await follower.poll()
        assert result.boards == 2
        boards, _ = await recv_until(watcher, lambda m: m["type"] == "boards" and len(m["boards"]) == 2, timeout=20)
        first = next(b for b in boards["boards"] if b["white"] == pgn_number(playing[0][1]))
        assert (first["ply"], first["last_move"], first["eval_text"], first["white_clock"]) == (4, "e6", "+2.4", 7120)
        assert first["source"]["kind"] == "feed" and first["likely"] == "1-0"
        live, _ = await recv_until(watcher, lambda m: m["type"] == "live", timeout=20)
        assert {(x["white"], x["result"]) for x in live["results"]} >= {(pgn_number(playing[0][1]), "1-0")}
        # the first game ends: its result is recorded, its board goes
        r, w, b, res = playing[0]
        served.publish(live_pgn([*finished, (r, w, b, res)], playing[1:], evals=True))
        await follower.poll()
        after, _ = await recv_until(watcher, lambda m: m["type"] == "boards" and len(m["boards"]) == 1, timeout=20)
        assert after["boards"][0]["white"] == pgn_number(playing[1][1])
        await watcher.close()
    finally:
        await follower.aclose()


@pytest.mark.skipif(STOCKFISH is None and not os.environ.get("TRACKER_REQUIRE_ENGINE"), reason="no stockfish")
async def test_an_engine_evaluates_what_the_feed_does_not_and_follow_outlives_it(
    tracker_server: RunningTracker, broadcast: tuple[Broadcast, str], caplog: Any
) -> None:
    assert STOCKFISH is not None, "make test installs Debian's stockfish (TRACKER_REQUIRE_ENGINE is set)"
    served, url = broadcast
    tid = "sinq-engine"
    rounds = trf_games()
    finished = [g for r in range(1, 9) for g in rounds[r]]
    playing = rounds[9][:2]
    engine = Engine(STOCKFISH, nodes=20_000)
    feed = BoardFeed(tid, interval=0.05, engine=engine)
    follower = Follower(
        HttpSource(url), tid, WebsocketTracker(tracker_server.ws_url, tracker_server.token), boards=feed
    )
    try:
        served.publish(live_pgn(finished, playing, evals=False))
        await follower.poll()
        watcher = await boards_watcher(tracker_server, tid)

        async def engine_boards() -> dict[str, Any]:
            while True:
                await follower.poll()
                try:
                    found, _ = await recv_until(watcher, lambda m: m["type"] == "boards", timeout=1)
                except TimeoutError:
                    continue
                if all(b["source"] and b["source"]["kind"] == "engine" for b in found["boards"]):
                    return found

        async with asyncio.timeout(60):
            boards = await engine_boards()
        for b in boards["boards"]:
            assert b["wdl"] is not None and sum(b["wdl"]) == 1000
            assert b["source"]["engine"].startswith("Stockfish") and b["source"]["depth"]
        # the engine dies mid-round: one warning, and follow goes on entering results
        pid = engine.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        r, w, b, res = playing[1]
        served.publish(live_pgn([*finished, (r, w, b, res)], playing[:1], evals=False))
        async with asyncio.timeout(30):
            while not engine.dead:  # noqa: ASYNC110 - the engine's own task notices the exit
                await asyncio.sleep(0.05)
        result = await follower.poll()
        update, _ = await recv_until(watcher, lambda m: m["type"] == "update", timeout=20)
        assert update["event"]["type"] == "result_recorded" and update["event"]["round"] == 9
        assert any("the engine" in r.getMessage() and "stopped" in r.getMessage() for r in caplog.records)
        assert result is not None
        await watcher.close()
    finally:
        await engine.aclose()
        await follower.aclose()
