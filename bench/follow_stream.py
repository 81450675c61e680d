"""Workload 14: ``tracker follow`` — a result at the source → a subscriber's update, a stream vs a polled PGN.

A real ``tracker up``; a publisher on 127.0.0.1 (aiohttp, in this process)
serving one 10-board round (Sinquefield Cup 2021, rounds 1-2) both as a
round stream (``/stream``: every game's PGN, then each game's PGN again as
it changes, the response kept open: the lichess form) and as a whole PGN
polled with ``ETag`` (``/games.pgn``); a follower (in this process) for
each; a spectator subscribed over websockets.  Each result is published at
a random moment (uniform over one poll interval) and the figure is the
time from publishing it to the spectator reading its update: p99 over the
results.  The polled follower runs at the default PGN cadence of a
broadcast (2 s), so its figure is about one interval; the stream's does not
wait for any interval.  One clock: everything is in this process.
"""

from __future__ import annotations

import asyncio
import json
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from websockets.asyncio.client import ClientConnection, connect

from bench.common import Result, Row, Sizes, median, percentile, python, say
from bench.procs import Proc, kill_all, start_tracker
from tracker.core.events import ResultRecorded
from tracker.follow import Confirm, Follower, WebsocketTracker, source_for
from tracker.formats.trf import parse_trf

TOKEN = "bench-follow-token-0123"
POLL = 2.0  # seconds between two polls of the polled follower
TARGET_STREAM = 1.0  # stream: result → subscriber p99, seconds
COUNTS = {"quick": 10, "default": 20, "full": 40}  # results measured per mode (each round replayed as needed)

Game = tuple[int, str, str, str]  # round, white, black, result


def games() -> list[Game]:
    from tracker.data import __file__ as data_init

    path = Path(data_init).parent / "sinquefield-cup-2021.trf"
    tf = parse_trf(path.read_text(encoding="utf-8"), str(path))
    names = {p.start_no: p.name for p in tf.opened.players}
    return [
        (e.round, names[e.white], names[e.black], e.result)
        for e in tf.events
        if isinstance(e, ResultRecorded) and e.round <= 2
    ]


def pgn(game: Game, result: str) -> str:
    r, white, black, _ = game
    moves = "1. d4 d5 2. c4 e6 *" if result == "*" else f"1. e4 e5 {result}"
    return f'[Event "Bench"]\n[Round "{r}"]\n[White "{white}"]\n[Black "{black}"]\n[Result "{result}"]\n\n{moves}\n'


class Publisher:
    """The round as a stream and as a whole PGN; ``publish`` changes one game in both."""

    def __init__(self, round_: list[Game]) -> None:
        self.round = round_
        self.pgns = {g[:3]: pgn(g, "*") for g in round_}
        self.version = 0
        self.queues: list[asyncio.Queue[str]] = []

    def publish(self, game: Game, result: str) -> None:
        self.pgns[game[:3]] = text = pgn(game, result)
        self.version += 1
        for q in self.queues:
            q.put_nowait(text)

    async def whole(self, request: web.Request) -> web.StreamResponse:
        etag = f'"v{self.version}"'
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers={"ETag": etag})
        return web.Response(text="\n".join(self.pgns.values()), headers={"ETag": etag})

    async def stream(self, request: web.Request) -> web.StreamResponse:
        queue: asyncio.Queue[str] = asyncio.Queue()
        response = web.StreamResponse(headers={"Content-Type": "application/x-chess-pgn"})
        await response.prepare(request)
        self.queues.append(queue)
        try:
            for text in list(self.pgns.values()):
                await response.write((text + "\n\n").encode())
            while True:
                await response.write((await queue.get() + "\n\n").encode())
        except ConnectionResetError:  # the follower went away (its run ended): the stream ends with it
            return response
        finally:
            self.queues.remove(queue)


async def _measure(ws_url: str, mode: str, count: int) -> list[float]:
    """Seconds from publishing each result to the spectator's update, for ``count`` results through ``mode``."""
    round_ = games()
    pub = Publisher(round_)
    app = web.Application()
    app.router.add_get("/games.pgn", pub.whole)
    app.router.add_get("/stream", pub.stream)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    base = f"http://127.0.0.1:{runner.addresses[0][1]}"
    latencies: list[float] = []
    rng = random.Random(14)
    loop = asyncio.get_running_loop()
    try:
        for replay in range((count + len(round_) - 1) // len(round_)):
            tid = f"bench-follow-{mode}-{replay}"
            pub.pgns = {g[:3]: pgn(g, "*") for g in round_}
            pub.version += 1
            source = source_for(f"{base}/stream" if mode == "stream" else f"{base}/games.pgn")
            tracker = WebsocketTracker(ws_url, TOKEN)
            follower = Follower(source, tid, tracker, confirm=Confirm(trust_voids=True))
            spectator = await connect(ws_url)
            await spectator.send(json.dumps({"type": "subscribe", "tournament": tid}))
            stop = asyncio.Event()
            task = asyncio.create_task(follower.run(POLL, stop))
            try:
                async with asyncio.timeout(60):
                    await _until(spectator, lambda m: m.get("type") == "update")  # opened from the source
                for game in round_[: count - len(latencies)]:
                    await asyncio.sleep(rng.uniform(0, POLL))
                    sent = loop.time()
                    pub.publish(game, game[3])
                    async with asyncio.timeout(30):
                        await _until(spectator, _is_result)  # one result at a time: this one
                    latencies.append(loop.time() - sent)
            finally:
                stop.set()
                await task
                await follower.aclose()
                await spectator.close()
    finally:
        await runner.cleanup()
    return latencies


def _is_result(message: dict[str, Any]) -> bool:
    event = message.get("event") or {}
    return message.get("type") == "update" and event.get("type") == "result_recorded"


async def _until(ws: ClientConnection, match: Callable[[dict[str, Any]], bool]) -> None:
    while not match(json.loads(await ws.recv())):
        pass


def run(sizes: Sizes) -> Result:
    result = Result("follow", "14. tracker follow: result at the source → subscriber, a stream vs polling")
    started = time.perf_counter()
    count = COUNTS.get(sizes.mode, COUNTS["default"])
    raw: dict[str, Any] = {"count": count, "poll_s": POLL}
    procs: list[Proc] = []
    try:
        with tempfile.TemporaryDirectory(prefix="bench-follow-") as data:
            up, port = start_tracker(python(), data, TOKEN, stock=True)
            procs.append(up)
            url = f"ws://127.0.0.1:{port}/ws"
            for mode in ("stream", "polled"):
                say(f"  follow: {mode}, {count} results")
                raw[mode] = asyncio.run(_measure(url, mode, count))
            up.stop()
    finally:
        kill_all(procs)
    stream, polled = raw["stream"], raw["polled"]
    p99s, p99p = percentile(stream, 99), percentile(polled, 99)
    result.rows.append(
        Row(
            "follow: result → subscriber p99 through a round stream",
            f"{count} results of a 10-board round, each at a random moment",
            f"{p99s * 1000:.0f} ms (p50 {median(stream) * 1000:.0f} ms)",
            f"polled every {POLL:g} s: {p99p * 1000:.0f} ms (p50 {median(polled) * 1000:.0f} ms)",
            f"{p99s / p99p:.2f}×" if p99p else "—",
            f"≤ {TARGET_STREAM:g} s",
            p99s <= TARGET_STREAM,
        )
    )
    result.notes.append(
        "The publisher, both followers and the spectator share this process's clock; the tracker is a real "
        "tracker up. A polled PGN waits for the next poll (uniform over the interval), the stream for nothing."
    )
    result.raw = raw
    result.seconds = time.perf_counter() - started
    return result
