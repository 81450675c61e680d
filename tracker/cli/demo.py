"""``tracker up --demo``: replay the bundled Sinquefield Cup 2021 at a watchable pace, narrating each update."""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from importlib import resources

from tracker.client import TrackerClient, replay_ws
from tracker.config import ServerConfig
from tracker.formats import TournamentFile

DEMO_FILE = "sinquefield-cup-2021.trf"


def demo_file() -> str:
    return str(resources.files("tracker.data").joinpath(DEMO_FILE))


async def run_demo(tf: TournamentFile, config: ServerConfig, port: int, rate: float) -> object:
    base = f"http://{config.host}:{port}"
    tid = tf.opened.tournament
    print(
        f"demo: replaying {tf.opened.name} ({len(tf.events)} results, {rate:g} per second)\n"
        f"  spectators: {base}/t/{tid}\n  overlay:    {base}/overlay/{tid}\n"
        f"  arbiter:    {base}/arbiter/{tid}\n  standings:  {base}/api/tournaments/{tid}/standings",
        flush=True,
    )
    watcher = asyncio.create_task(_narrate(f"ws://{config.host}:{port}/ws", tid, 1 + len(tf.events)))
    try:
        result = await replay_ws(tf, f"ws://{config.host}:{port}/ws", config.token, rate=rate)
        async with asyncio.timeout(10):
            await watcher
    finally:
        watcher.cancel()
    print(f"demo: all {result.acked} events acknowledged; final standings at {base}/t/{tid}", flush=True)
    return result


async def _narrate(url: str, tournament: str, last_seq: int) -> None:
    """Print each update of the demo in plain words, with the leaders."""
    async with TrackerClient(url) as client, aclosing(client.updates(tournament)) as stream:
        async for message in stream:
            if message["type"] != "update":
                continue
            top = ", ".join(
                f"{row['rank']}. {row['name'].split(',')[0]} {row['points']:g} (KS {row['tiebreaks']['KS']:g})"
                for row in message["standings"][:3]
            )
            print(f"  #{message['seq']:>3} {message['summary']}\n        leaders: {top}", flush=True)
            if message["seq"] >= last_seq:
                return
