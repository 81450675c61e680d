"""``tracker up --demo``: the first rounds at once, the rest paced, and it ends."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.conftest import TOKEN
from tests.processes import spawn, stop_process
from tracker.cli.demo import DEMO_RATE, WARM_UP_ROUNDS, demo_file, demo_plan
from tracker.formats.files import read_file


def test_the_demo_sends_the_first_rounds_at_once_and_paces_the_rest_at_a_result_every_few_seconds() -> None:
    tf = read_file(demo_file())
    head, rest = demo_plan(tf)
    assert {getattr(e, "round", 0) for e in head.events} == set(range(1, WARM_UP_ROUNDS + 1))
    assert {getattr(e, "round", 0) for e in rest.events} == set(range(WARM_UP_ROUNDS + 1, 10))
    assert len(head.events) + len(rest.events) == len(tf.events)
    assert 2 <= 1 / DEMO_RATE <= 10, "a result every few seconds"
    assert len(rest.events) / DEMO_RATE >= 90, "live for long enough to open the pages"


def test_tracker_up_demo_replays_the_whole_event_and_says_so(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "tracker.cli", "up", "--demo", "--rate", "50", "--port", "0"]
    process = spawn("tracker up --demo", [*cmd, "--data-dir", str(tmp_path / "data"), "--token", TOKEN])
    try:
        plan = process.expect(r"rounds 1–4 at once \((\d+) results\), then (\d+) results live", timeout=30)
        assert int(plan.group(1)) + int(plan.group(2)) == 45
        process.expect(r"demo: all 46 events acknowledged", timeout=30)
    finally:
        stop_process(process.proc)


def test_the_demos_live_rounds_are_played_on_boards_that_move(tmp_path: Path) -> None:
    import asyncio
    import json

    from websockets.asyncio.client import connect

    cmd = [sys.executable, "-m", "tracker.cli", "up", "--demo", "--rate", "1", "--port", "0"]
    process = spawn("tracker up --demo", [*cmd, "--data-dir", str(tmp_path / "data"), "--token", TOKEN])
    tid = read_file(demo_file()).opened.tournament

    async def watch(port: int) -> list[dict[str, object]]:
        seen: list[dict[str, object]] = []
        async with connect(f"ws://127.0.0.1:{port}/ws") as ws:
            await ws.send(json.dumps({"type": "subscribe", "tournament": tid, "boards": True}))
            async with asyncio.timeout(60):
                while len(seen) < 2:  # two boards messages: the games moved
                    message = json.loads(await ws.recv())
                    if message["type"] == "boards" and message["boards"]:
                        seen.append(message)
        return seen

    try:
        port = int(process.expect(r"listening on http://127\.0\.0\.1:(\d+)/", timeout=30).group(1))
        first, second = asyncio.run(watch(port))
        plies = lambda m: {(b["white"], b["black"]): b["ply"] for b in m["boards"]}  # noqa: E731
        before, after = plies(first), plies(second)
        assert any(after[game] > ply for game, ply in before.items() if game in after), "the boards move"
        assert all(b["eval_text"] for b in second["boards"])  # type: ignore[union-attr]
    finally:
        stop_process(process.proc)
