"""Sources that push: a round stream that stays open (the lichess form) is applied as each game's PGN arrives.

The stream is served by tests/follow/httpd.py (``/stream``: every game's PGN at once, then each
game's PGN again whenever the test pushes it, the response kept open until the test cuts it);
the tracker is a real ``tracker up``; a spectator's websocket sees the updates.
"""

from __future__ import annotations

import asyncio
from typing import Any

from tests.conftest import RunningTracker
from tests.follow.httpd import Published, publisher
from tests.follow.test_follow import Game, pgn, trf_games, watch
from tests.wsclient import recv
from tracker.follow import Follower, WebsocketTracker, source_for
from tracker.follow.stream import StreamSource

TID = "streamed"
ROUND = trf_games()[1] + trf_games()[2]  # ten boards


def board(game: Game, result: str) -> tuple[str, str]:
    """The stream's key for a game (its round and board) and its PGN with ``result``."""
    r, w, b, _ = game
    return f"{r}.{w}-{b}", pgn([(r, w, b, result)])


def start(served: Published) -> None:
    for game in ROUND:
        served.push(*board(game, "*"))


async def opened(follower: Follower) -> None:
    """Wait until the follower opened the tournament from the stream's first games."""
    async with asyncio.timeout(30):
        while follower.ledger is None:  # noqa: ASYNC110 - the follower's own state: no message says it
            await asyncio.sleep(0.02)


async def results(ws: Any, count: int, timeout: float = 30) -> list[tuple[Any, ...]]:
    """The next ``count`` result updates: (type, round, white, black, result); other messages skipped."""
    got: list[tuple[Any, ...]] = []
    async with asyncio.timeout(timeout):
        while len(got) < count:
            message = await recv(ws, timeout, check=False)
            if message["type"] == "update" and message["event"]["type"].startswith("result_"):
                e = message["event"]
                got.append((e["type"], e["round"], e["white"], e["black"], e.get("result")))
    return got


def test_a_url_whose_path_says_stream_or_stream_forced_reads_as_a_stream() -> None:
    assert isinstance(source_for("https://lichess.org/api/stream/broadcast/round/abc.pgn"), StreamSource)
    assert isinstance(source_for("http://h/games.pgn", stream=True), StreamSource)
    assert not isinstance(source_for("http://h/stream/x.pgn", stream=False), StreamSource)
    assert not isinstance(source_for("http://h/games.pgn"), StreamSource)


async def test_a_stream_delivers_a_result_to_a_subscriber_within_a_second_of_being_sent(
    tracker_server: RunningTracker,
) -> None:
    async with publisher() as (served, base):
        start(served)
        follower = Follower(
            source_for(f"{base}/stream"), TID, WebsocketTracker(tracker_server.ws_url, tracker_server.token)
        )
        spectator = await watch(tracker_server, TID)
        stop = asyncio.Event()
        task = asyncio.create_task(follower.run(5.0, stop))  # the interval is a poll's: a stream does not wait for it
        loop = asyncio.get_running_loop()
        try:
            await opened(follower)
            latencies = []
            for game in ROUND[:5]:
                sent = loop.time()
                served.push(*board(game, game[3]))
                (got,) = await results(spectator, 1)
                latencies.append(loop.time() - sent)
                assert got[0] == "result_recorded" and got[4] == game[3]
            # functional bound (the issue's): each result reaches the subscriber within a second of being sent;
            # a polled source at the default interval takes up to the 5 s of that interval
            assert max(latencies) <= 1.0, latencies
        finally:
            stop.set()
            await task
            await follower.aclose()
            await spectator.close()


async def test_a_stream_cut_and_resumed_five_times_misses_nothing_and_applies_nothing_twice(
    tracker_server: RunningTracker,
) -> None:
    async with publisher() as (served, base):
        start(served)
        source = source_for(f"{base}/stream")
        assert isinstance(source, StreamSource)
        follower = Follower(source, TID, WebsocketTracker(tracker_server.ws_url, tracker_server.token))
        spectator = await watch(tracker_server, TID)
        stop = asyncio.Event()
        task = asyncio.create_task(follower.run(5.0, stop))
        got: list[tuple[Any, ...]] = []
        try:
            await opened(follower)
            for i, game in enumerate(ROUND):
                served.push(*board(game, game[3]))
                if i % 2 == 1:  # five cuts, each right after a result was sent: the next connection resends it all
                    served.cut()
                    async with asyncio.timeout(30):
                        while served.connections < 2 + i // 2:  # noqa: ASYNC110 - the server counts connections
                            await asyncio.sleep(0.02)
            got = await results(spectator, len(ROUND))
            # nothing more arrives: no result applied twice
            try:
                extra = await results(spectator, 1, timeout=1.0)
            except TimeoutError:
                extra = []
        finally:
            stop.set()
            await task
            await follower.aclose()
            await spectator.close()
    assert served.connections == 6
    assert extra == []
    assert sorted(g[4] for g in got) == sorted(g[3] for g in ROUND)
    assert len({(g[1], g[2], g[3]) for g in got}) == len(ROUND)  # each board's result once
    assert all(g[0] == "result_recorded" for g in got)
