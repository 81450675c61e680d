"""``tracker up --demo``: replay the bundled Sinquefield Cup 2021 at a watchable pace, narrating each update.

The first :data:`WARM_UP_ROUNDS` rounds go in at once, so that the pages a
newcomer opens show a real table and a filled "what changed" feed; the rest
follow at ``rate`` results per second (default :data:`DEMO_RATE`: one every
five seconds, about two minutes for the last five rounds), so there is time
to open the pages and watch results arrive.
"""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from dataclasses import replace
from importlib import resources
from typing import Final

from tracker.client import TrackerClient, replay_ws
from tracker.config import ServerConfig
from tracker.formats import TournamentFile

DEMO_FILE = "sinquefield-cup-2021.trf"
DEMO_RATE: Final = 0.2  # results per second after the warm-up
WARM_UP_ROUNDS: Final = 4


def demo_file() -> str:
    return str(resources.files("tracker.data").joinpath(DEMO_FILE))


def demo_plan(tf: TournamentFile, warm_up: int = WARM_UP_ROUNDS) -> tuple[TournamentFile, TournamentFile]:
    """The demo in two parts: the opening and the first ``warm_up`` rounds (sent at once), then the rest (paced)."""
    head = tf.until_round(warm_up)
    rest = replace(tf, events=tuple(e for e in tf.events if e not in head.events))
    return head, rest


async def run_demo(tf: TournamentFile, config: ServerConfig, port: int, rate: float) -> object:
    base = f"http://{config.host}:{port}"
    tid = tf.opened.tournament
    head, rest = demo_plan(tf)
    print(
        f"demo: {tf.opened.name}: rounds 1–{WARM_UP_ROUNDS} at once ({len(head.events)} results), "
        f"then {len(rest.events)} results live, one every {1 / rate:.3g} s\n"
        f"  spectators: {base}/t/{tid}\n  overlay:    {base}/overlay/{tid}\n"
        f"  arbiter:    {base}/arbiter/{tid}\n  standings:  {base}/api/tournaments/{tid}/standings",
        flush=True,
    )
    watcher = asyncio.create_task(_narrate(f"ws://{config.host}:{port}/ws", tid, 1 + len(tf.events)))
    try:
        url = f"ws://{config.host}:{port}/ws"
        await replay_ws(head, url, config.token)
        result = await replay_ws(rest, url, config.token, rate=rate)  # the opening again: a re-delivery, acked
        async with asyncio.timeout(10):
            await watcher
    finally:
        watcher.cancel()
    print(f"demo: all {1 + len(tf.events)} events acknowledged; final standings at {base}/t/{tid}", flush=True)
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
