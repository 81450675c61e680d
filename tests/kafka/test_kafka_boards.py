"""Live boards on Kafka: a board submitted at one gateway (or produced by ``follow``) reaches the other's subscribers.

A real worker and two real gateways on the test broker.  Boards travel on
``tracker-boards``, apart from the results: the official seq never moves
with them, a result read from the standings ends its game's board on every
gateway, and a board for a decided game is refused with ``game-finished``.
"""

from __future__ import annotations

import asyncio

import pytest
from websockets.asyncio.client import connect

from tests.embedded.test_boards_live import before_the_last_round, send_board
from tests.kafka_fixtures import Broker, kafka_broker  # noqa: F401  (a fixture)
from tests.wsclient import recv_until, reply_to, send, submit
from tracker.core.events import BoardUpdated, Evaluation, ResultRecorded
from tracker.kafka.producer import produce_boards, produce_events


@pytest.mark.kafka
async def test_a_board_reaches_the_other_gateway_and_a_result_read_from_the_standings_ends_it(
    kafka_broker: Broker,  # noqa: F811
) -> None:
    await asyncio.to_thread(kafka_broker.worker)
    first, second = await asyncio.to_thread(kafka_broker.gateway), await asyncio.to_thread(kafka_broker.gateway)
    tid, played, pairs = before_the_last_round()
    (w1, b1), (w2, b2) = pairs[0], pairs[1]
    await produce_events(played, kafka_broker.url)
    seq = len(played)
    async with connect(first.ws_url) as arbiter, connect(second.ws_url) as watcher:
        await send(watcher, {"type": "subscribe", "tournament": tid, "boards": True})
        await recv_until(watcher, lambda m: m["type"] in ("snapshot", "update") and m["seq"] == seq, timeout=90)
        await send(arbiter, {"type": "subscribe", "tournament": tid})  # the first gateway has folded it too
        await recv_until(arbiter, lambda m: m.get("seq") == seq, timeout=90)

        board = BoardUpdated("kb-1", tid, 9, w1, b1, ply=31, evaluation=Evaluation(cp=350))
        ack = await send_board(arbiter, first.token, board)
        assert (ack["type"], ack["seq"]) == ("ack", seq), ack  # a board never moves the official seq
        boards, _ = await recv_until(watcher, lambda m: m["type"] == "boards" and len(m["boards"]) == 1, timeout=60)
        assert [(b["white"], b["black"], b["likely"]) for b in boards["boards"]] == [(w1, b1, "1-0")]

        # follow's path: boards produced straight to the topic
        await produce_boards([BoardUpdated("kb-2", tid, 9, w2, b2, ply=20, evaluation=Evaluation(cp=-20))],
                             kafka_broker.url)  # fmt: skip
        await recv_until(watcher, lambda m: m["type"] == "boards" and len(m["boards"]) == 2, timeout=60)

        await submit(arbiter, first.token, ResultRecorded("kr9-1", tid, 9, w1, b1, "1-0"))
        assert (await reply_to(arbiter, "kr9-1", timeout=60))["seq"] == seq + 1
        after, _ = await recv_until(
            watcher, lambda m: m["type"] == "boards" and m["seq"] == seq + 1 and len(m["boards"]) == 1, timeout=60
        )
        assert [(b["white"], b["black"]) for b in after["boards"]] == [(w2, b2)]
        late = await send_board(arbiter, first.token, BoardUpdated("kb-3", tid, 9, w1, b1, ply=80))
        assert (late["type"], late["code"]) == ("rejected", "game-finished"), late
