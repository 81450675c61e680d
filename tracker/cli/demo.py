"""``tracker up --demo``: replay the bundled Sinquefield Cup 2021 at a watchable pace, narrating each update.

The first :data:`WARM_UP_ROUNDS` rounds go in at once, so that the pages a
newcomer opens show a real table and a filled "what changed" feed; the rest
follow at ``rate`` results per second (default :data:`DEMO_RATE`: one every
five seconds, about two minutes for the last five rounds), so there is time
to open the pages and watch results arrive.

Each of those rounds is played on live boards: every game of the round is in
progress from the start of the round, its board moving every
:data:`BOARD_EVERY` seconds (a generated game: legal moves, python-chess,
seeded per game, with an evaluation that drifts toward the game's real
result), until the game ends with its real result; so the boards, the
standings "if the games ended now" and the live chances move within seconds
of the start.  The generated moves are not the games that were played; the
results are.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from contextlib import aclosing
from dataclasses import dataclass, replace
from importlib import resources
from typing import Final

import chess

from tracker.client import TrackerClient, replay_ws
from tracker.config import ServerConfig
from tracker.core.events import BoardUpdated, EvalSource, Evaluation, Event, GameResult, ResultRecorded
from tracker.formats import TournamentFile

DEMO_FILE = "sinquefield-cup-2021.trf"
DEMO_RATE: Final = 0.2  # results per second after the warm-up
WARM_UP_ROUNDS: Final = 4
BOARD_EVERY: Final = 2.0  # seconds between two boards of a game in progress
#: Where a game's evaluation heads for, by its result (centipawns, White's side).
_TOWARD: Final[dict[GameResult, int]] = {"1-0": 450, "0-1": -450, "1/2-1/2": 0}


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
        f"then {len(rest.events)} results live, one every {1 / rate:.3g} s, each round on live boards\n"
        f"  spectators: {base}/t/{tid}\n  overlay:    {base}/overlay/{tid}\n"
        f"  as it stands: {base}/overlay/{tid}?mode=live&boards=1\n"
        f"  arbiter:    {base}/arbiter/{tid}\n  standings:  {base}/api/tournaments/{tid}/standings",
        flush=True,
    )
    url = f"ws://{config.host}:{port}/ws"
    watcher = asyncio.create_task(_narrate(url, tid, 1 + len(tf.events)))
    try:
        await replay_ws(head, url, config.token)
        async with TrackerClient(url, config.token, timeout=60) as client:
            for round_events in _by_round(rest.events):
                await _play_round(client, tid, round_events, rate)
        async with asyncio.timeout(10):
            await watcher
    finally:
        watcher.cancel()
    print(f"demo: all {1 + len(tf.events)} events acknowledged; final standings at {base}/t/{tid}", flush=True)
    return None


def _by_round(events: tuple[Event, ...]) -> Iterator[list[Event]]:
    rounds: dict[int, list[Event]] = {}
    for event in events:
        rounds.setdefault(getattr(event, "round", 0), []).append(event)
    for number in sorted(rounds):
        yield rounds[number]


@dataclass(slots=True)
class _Game:
    """A generated game on a live board: its moves so far and where its evaluation heads."""

    result: ResultRecorded
    board: chess.Board
    rng: random.Random
    cp: float = 0.0
    last_move: str = ""

    def advance(self, plies: int) -> None:
        for _ in range(plies):
            moves = list(self.board.legal_moves)
            if not moves or self.board.is_game_over():
                return
            move = self.rng.choice(moves)
            self.last_move = self.board.san(move)
            self.board.push(move)
        toward = _TOWARD[self.result.result]
        self.cp += (toward - self.cp) * 0.12 + self.rng.uniform(-25, 25)

    def event(self, tournament: str) -> BoardUpdated:
        r = self.result
        ply = self.board.ply()
        return BoardUpdated(
            id=f"{tournament}/demo-board/r{r.round}/{r.white}-{r.black}/{ply}",
            tournament=tournament,
            round=r.round,
            white=r.white,
            black=r.black,
            ply=ply,
            last_move=self.last_move,
            fen=self.board.fen(),
            evaluation=Evaluation(cp=round(self.cp)),
            source=EvalSource(kind="engine", engine="demo (generated)"),
        )


async def _play_round(client: TrackerClient, tournament: str, events: list[Event], rate: float) -> None:
    """Play one round on live boards: every game moves, then ends with its result, one every ``1/rate`` s."""
    games = [
        _Game(e, chess.Board(), random.Random(f"{e.round}/{e.white}/{e.black}"))
        for e in events
        if isinstance(e, ResultRecorded)
    ]
    others = [e for e in events if not isinstance(e, ResultRecorded)]
    if others:
        await client.submit_many(others)
    loop = asyncio.get_running_loop()
    gap = 1.0 / rate
    next_result = loop.time() + gap
    playing = list(games)
    while playing:
        for game in playing:
            game.advance(2)
        await client.submit_many([g.event(tournament) for g in playing])
        now = loop.time()
        if now >= next_result:
            done = playing.pop(0)
            await client.submit(done.result)
            next_result = now + gap
        await asyncio.sleep(min(BOARD_EVERY, max(0.0, next_result - loop.time())))


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
