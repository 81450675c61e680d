"""Stakes, chances and cues over the websocket, for subscribers who ask; a spoiler delay for one subscriber only.

A real ``tracker up``: four players, the games submitted one by one; every message is held to its schema.
"""

from __future__ import annotations

import time

from websockets.asyncio.client import connect

from tests.builders import berger, game, opened, schedule_of
from tests.conftest import TOKEN, RunningTracker
from tests.wsclient import Message, recv, recv_until, reply_to, send, submit
from tracker.core.events import Event


def _events() -> list[Event]:
    return [
        opened(4, schedule=schedule_of(berger(4)), id="s-open"),
        game(1, 1, 4, "1-0", id="s-1"),
        game(1, 2, 3, "1/2-1/2", id="s-2"),
        game(2, 1, 2, "1-0", id="s-3"),
        # P3 can no longer catch P1 (P4 can tie on points but lost to P1): P1 clinches 1st
        game(2, 4, 3, "1-0", id="s-4"),
    ]


async def test_stakes_and_cues_go_to_those_who_ask_and_v1_subscribers_get_what_they_always_got(
    tracker_server: RunningTracker,
) -> None:
    events = _events()
    tid = events[0].tournament
    async with (
        connect(tracker_server.ws_url) as arbiter,
        connect(tracker_server.ws_url) as plain,
        connect(tracker_server.ws_url) as producer,
    ):
        for event in events[:4]:
            await submit(arbiter, TOKEN, event)
            assert (await reply_to(arbiter, event.id))["type"] == "ack"
        await send(plain, {"type": "subscribe", "tournament": tid})
        await send(producer, {"type": "subscribe", "tournament": tid, "stakes": True})
        first, before = await recv_until(producer, lambda m: m["type"] == "stakes" and m["seq"] == 4)
        assert [m["type"] for m in before] == ["snapshot"]
        assert first["lines"] == [{"places": 1, "name": "1st"}]
        states = {p["start_no"]: p["lines"][0]["state"] for p in first["players"]}
        assert states[1] == "open"
        assert first["exact"] and all(g["exact"] for g in first["games"])
        game_4_3 = next(g for g in first["games"] if (g["white"], g["black"]) == (4, 3))
        white_wins = game_4_3["outcomes"][0]
        assert white_wins["result"] == "1-0"
        assert {
            "start_no": 1,
            "places": 1,
            "line": "1st",
            "before": "open",
            "after": "clinched",
            "text": "P1 clinches 1st",
            "said": {"key": "stakes.clinches", "args": {"who": 1, "line": 1}},  # the words as a phrase
        } in white_wins["stakes"]
        estimate = first["chances"]
        assert estimate["estimate"] is True and estimate["runs"] >= 10_000
        assert abs(sum(p["first"] for p in estimate["players"]) - 1) < 1e-9

        await submit(arbiter, TOKEN, events[4])
        assert (await reply_to(arbiter, events[4].id))["type"] == "ack"
        after, between = await recv_until(producer, lambda m: m["type"] == "stakes" and m["seq"] == 5)
        cue_messages = [m for m in between if m["type"] == "cue"]
        assert [(c["kind"], c["players"], c["line"], c["text"]) for c in cue_messages] == [
            ("clinched", [1], "1st", "P1 clinches 1st"),
            ("lost", [3], "1st", "P3 can no longer finish 1st"),
        ]
        assert {p["start_no"]: p["lines"][0]["state"] for p in after["players"]}[1] == "clinched"

        seen = [await recv(plain), await recv(plain)]
        assert [m["type"] for m in seen] == ["snapshot", "update"]
        try:
            extra = await recv(plain, timeout=1.0)
        except TimeoutError:
            extra = None
        assert extra is None, "a subscriber that did not ask for stakes gets none"


async def test_a_spoiler_delay_holds_back_one_subscriber_and_nobody_else(tracker_server: RunningTracker) -> None:
    """A delayed subscriber sees at once the standings as they were ``delay`` seconds ago, then each update
    ``delay`` seconds after it was published; a live subscriber beside it is not held back."""
    events = _events()
    tid = events[0].tournament
    delay = 1.5
    async with (
        connect(tracker_server.ws_url) as arbiter,
        connect(tracker_server.ws_url) as live,
        connect(tracker_server.ws_url) as delayed,
    ):
        # the opening is published between its submit and its ack: measured from the submit, "delay seconds
        # after publication" is a bound that holds however slow the ack (a fresh server's first event is)
        opened_at = time.monotonic()
        await submit(arbiter, TOKEN, events[0])
        await reply_to(arbiter, events[0].id)
        await send(live, {"type": "subscribe", "tournament": tid})
        assert (await recv(live))["type"] == "snapshot"
        await send(delayed, {"type": "subscribe", "tournament": tid, "delay": delay})
        snapshot = await recv(delayed, timeout=5)
        assert (snapshot["type"], snapshot["seq"]) == ("snapshot", 0), "1.5 s ago the tournament was not open"
        await submit(arbiter, TOKEN, events[1])
        await reply_to(arbiter, events[1].id)
        acked = time.monotonic()
        update: Message = await recv(live)
        live_at = time.monotonic()
        assert update["type"] == "update" and live_at - acked < 1.0, "the live subscriber is not held back"
        opening = await recv(delayed, timeout=delay + 5)
        opening_at = time.monotonic()
        late = await recv(delayed, timeout=delay + 5)
        late_at = time.monotonic()
        assert opening["type"] == "update" and opening["seq"] == 1 and opening_at - opened_at >= delay - 0.05
        assert late["type"] == "update" and late["seq"] == update["seq"]
        assert late_at - live_at >= delay - 0.3


async def test_a_delay_beyond_the_bound_is_refused_with_a_reason(tracker_server: RunningTracker) -> None:
    async with connect(tracker_server.ws_url) as ws:
        await send(ws, {"type": "subscribe", "tournament": "x", "delay": 3600})
        message = await recv(ws)
        assert message["type"] == "error" and "delay" in message["reason"]
