"""Live boards through a real ``tracker up``: boards and live messages for who asks, nothing for who does not,
a result ends its board, a board for a decided game is refused, the seq never moves, a restart keeps them."""

from __future__ import annotations

import json
from collections.abc import Callable

from websockets.asyncio.client import ClientConnection, connect

from tests.conftest import RunningTracker, data_file
from tests.wsclient import Message, recv, recv_until, reply_to, send, submit
from tracker.core.events import BoardUpdated, EvalSource, Evaluation, Event, ResultRecorded, encode_board
from tracker.formats.files import read_file

SINQUEFIELD = data_file("sinquefield-cup-2021.trf")


def before_the_last_round() -> tuple[str, list[Event], list[tuple[int, int]]]:
    tf = read_file(str(SINQUEFIELD))
    assert tf.opened.schedule is not None
    played = [tf.opened, *(e for e in tf.events if getattr(e, "round", 0) <= 8)]
    return tf.opened.tournament, played, list(tf.opened.schedule[8])


async def send_board(ws: ClientConnection, token: str, board: BoardUpdated) -> Message:
    await send(ws, {"type": "submit", "token": token, "event": json.loads(encode_board(board))})
    return await reply_to(ws, board.id)


async def submit_all(ws: ClientConnection, token: str, events: list[Event]) -> int:
    seq = 0
    for event in events:
        await submit(ws, token, event)
    for event in events:
        reply = await reply_to(ws, event.id, timeout=30)
        assert reply["type"] == "ack", reply
        seq = reply["seq"]
    return seq


async def test_boards_and_live_reach_who_asks_and_a_result_ends_its_board(tracker_server: RunningTracker) -> None:
    tid, played, pairs = before_the_last_round()
    token = tracker_server.token
    (w1, b1), (w2, b2) = pairs[0], pairs[1]
    async with (
        connect(tracker_server.ws_url) as arbiter,
        connect(tracker_server.ws_url) as watcher,
        connect(tracker_server.ws_url) as plain,
    ):
        seq = await submit_all(arbiter, token, played)
        await send(watcher, {"type": "subscribe", "tournament": tid, "boards": True, "updates": "delta"})
        await send(plain, {"type": "subscribe", "tournament": tid})
        assert (await recv(watcher))["type"] == "snapshot" and (await recv(plain))["type"] == "snapshot"
        # a board is kept, never in the results: its ack carries the official seq
        first = BoardUpdated(
            "b-1", tid, 9, w1, b1, ply=31, last_move="Nf3", evaluation=Evaluation(cp=350), source=EvalSource()
        )
        assert await send_board(arbiter, token, first) == {
            "type": "ack",
            "id": "b-1",
            "tournament": tid,
            "seq": seq,
            "ref": None,
        }
        boards, _ = await recv_until(watcher, lambda m: m["type"] == "boards")
        assert boards["seq"] == seq
        assert [(b["white"], b["black"], b["board"], b["eval_text"], b["likely"]) for b in boards["boards"]] == [
            (w1, b1, 1, "+3.5", "1-0")
        ]
        live, _ = await recv_until(watcher, lambda m: m["type"] == "live" and m["chances"] is not None, timeout=20)
        assert live["estimate"] is True and live["seq"] == seq and live["chances_seq"] == seq
        assert live["results"] == [{"round": 9, "white": w1, "black": b1, "result": "1-0"}]
        assert live["chances"]["estimate"] is True and "boards" in live["chances"]["model"]
        assert {m["start_no"] for m in live["moves"]} >= {w1}  # the winner moves up as it stands
        # a second board; then the first game's result ends its board, the official seq moves by one
        await send_board(arbiter, token, BoardUpdated("b-2", tid, 9, w2, b2, ply=20, evaluation=Evaluation(cp=-20)))
        await submit(arbiter, token, ResultRecorded("r9-1", tid, 9, w1, b1, "1-0"))
        assert (await reply_to(arbiter, "r9-1"))["seq"] == seq + 1
        after, _ = await recv_until(
            watcher, lambda m: m["type"] == "boards" and m["seq"] == seq + 1 and len(m["boards"]) == 1, timeout=15
        )
        assert [(b["white"], b["black"]) for b in after["boards"]] == [(w2, b2)]
        # a board for the decided game is refused, and says why
        late = await send_board(arbiter, token, BoardUpdated("b-3", tid, 9, w1, b1, ply=80))
        assert late["type"] == "rejected" and late["code"] == "game-finished"
        # the subscriber that did not ask saw its update and nothing of the boards
        update, before = await recv_until(plain, lambda m: m["type"] == "update")
        assert update["seq"] == seq + 1 and not before


async def test_the_boards_come_back_after_a_restart(tracker_factory: Callable[..., RunningTracker]) -> None:
    tid, played, pairs = before_the_last_round()
    first = tracker_factory()
    w, b = pairs[2]
    async with connect(first.ws_url) as arbiter:
        await submit_all(arbiter, first.token, played)
        board = BoardUpdated("b-kept", tid, 9, w, b, ply=44, fen="8/8/8/8/8/8/8/K6k w - - 0 1")
        assert (await send_board(arbiter, first.token, board))["type"] == "ack"
    assert first.stop() == 0
    again = tracker_factory(data_dir=first.data_dir)
    assert any("games in progress restored" in line for line in again.output)
    async with connect(again.ws_url) as watcher:
        await send(watcher, {"type": "subscribe", "tournament": tid, "boards": True})
        boards, _ = await recv_until(watcher, lambda m: m["type"] == "boards", timeout=15)
        assert [(x["white"], x["black"], x["ply"], x["fen"]) for x in boards["boards"]] == [(w, b, 44, board.fen)]
