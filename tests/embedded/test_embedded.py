"""The embedded tracker end to end: a real ``tracker up`` process, real websocket clients."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from tests.conftest import RunningTracker, data_file
from tests.wsclient import recv, recv_until, reply_to, send, submit
from tracker.client import replay_ws
from tracker.core.events import Player, TournamentOpened
from tracker.core.standings import standings
from tracker.formats import state_from
from tracker.formats.files import read_file
from tracker.protocol import standings_json

SINQUEFIELD = data_file("sinquefield-cup-2021.trf")
EXERCISE = data_file("fide-tec-exercise16-rr6.trf")


def offline_rows(path: Path) -> list[dict[str, Any]]:
    """What ``tracker standings FILE --format json`` prints, as rows."""
    out = subprocess.run(
        [sys.executable, "-m", "tracker.cli", "standings", str(path), "--format", "json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    rows: list[dict[str, Any]] = json.loads(out)["standings"]
    return rows


def http_json(server: RunningTracker, path: str) -> Any:
    with urllib.request.urlopen(server.http_url + path, timeout=10) as response:
        return json.loads(response.read())


def comparable(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(r["rank"], r["start_no"], r["name"], r["points"], r["tiebreaks"]) for r in rows]


async def test_subscriber_sees_snapshot_then_one_update_per_result_and_final_rows_match_offline(
    tracker_server: RunningTracker,
) -> None:
    tf = read_file(str(SINQUEFIELD))
    tid = tf.opened.tournament
    async with connect(tracker_server.ws_url) as ws:
        await send(ws, {"type": "subscribe", "tournament": tid})
        snapshot = await recv(ws)
        assert snapshot["type"] == "snapshot" and snapshot["seq"] == 0 and snapshot["standings"] == []
        result = await replay_ws(tf, tracker_server.ws_url, tracker_server.token)
        assert result.acked == 1 + len(tf.events) and not result.rejected
        updates = []
        while len(updates) < 1 + len(tf.events):
            message = await recv(ws)
            assert message["type"] == "update"
            updates.append(message)
    assert [u["seq"] for u in updates] == list(range(1, 2 + len(tf.events)))
    assert [u["event"]["id"] for u in updates] == [e.id for e in (tf.opened, *tf.events)]
    assert comparable(updates[-1]["standings"]) == comparable(offline_rows(SINQUEFIELD))
    assert updates[-1]["provisional"] is False
    page = http_json(tracker_server, f"/api/tournaments/{tid}/standings")
    assert page["standings"] == updates[-1]["standings"]
    listing = http_json(tracker_server, "/api/tournaments")
    assert listing["tournaments"] == [
        {"id": tid, "name": "Sinquefield Cup 2021", "rounds": 9, "games_played": 45, "seq": 46}
    ]


async def test_update_says_what_changed_and_why(tracker_server: RunningTracker) -> None:
    tf = read_file(str(EXERCISE))
    async with connect(tracker_server.ws_url) as ws:
        await submit(ws, tracker_server.token, tf.opened)
        assert (await reply_to(ws, tf.opened.id))["type"] == "ack"
        await send(ws, {"type": "subscribe", "tournament": tf.opened.tournament})
        assert (await recv(ws))["type"] == "snapshot"
        first = tf.events[0]
        await submit(ws, tracker_server.token, first)
        update, _ = await recv_until(ws, lambda m: m["type"] == "update")
    assert update["event"]["id"] == first.id
    assert update["changed"] and "summary" in update and update["summary"].startswith("Alyx–Franck")
    assert all(set(q) == {"player", "entered", "left"} for q in update["qualification"])


async def test_resubscribing_with_since_fills_the_gap_without_duplicates(tracker_server: RunningTracker) -> None:
    tf = read_file(str(SINQUEFIELD))
    tid = tf.opened.tournament
    first_half = tf.until_round(4)
    seen: list[int] = []
    async with connect(tracker_server.ws_url) as ws:
        await send(ws, {"type": "subscribe", "tournament": tid})
        await recv(ws)  # empty snapshot
        await replay_ws(first_half, tracker_server.ws_url, tracker_server.token)
        while len(seen) < 1 + len(first_half.events):
            seen.append((await recv(ws))["seq"])
    # disconnected: the rest of the tournament is played meanwhile
    await replay_ws(tf, tracker_server.ws_url, tracker_server.token)
    async with connect(tracker_server.ws_url) as ws:
        await send(ws, {"type": "subscribe", "tournament": tid, "since": seen[-1]})
        last: dict[str, Any] = {}
        while not seen or seen[-1] < 1 + len(tf.events):
            last = await recv(ws)
            assert last["type"] == "update"
            seen.append(last["seq"])
    assert seen == list(range(1, 2 + len(tf.events)))
    assert comparable(last["standings"]) == comparable(offline_rows(SINQUEFIELD))


async def test_resume_from_a_seq_no_longer_kept_gets_a_fresh_snapshot(tracker_factory: Any) -> None:
    server = tracker_factory()
    tf = read_file(str(SINQUEFIELD))
    await replay_ws(tf, server.ws_url, server.token)
    async with connect(server.ws_url) as ws:
        await send(ws, {"type": "subscribe", "tournament": tf.opened.tournament, "since": 10**6})
        message = await recv(ws)
    assert message["type"] == "snapshot" and message["seq"] == 1 + len(tf.events)


def test_sigkill_mid_replay_loses_no_acknowledged_event_and_the_replay_resumes(tracker_factory: Any) -> None:
    server = tracker_factory()
    tf = read_file(str(SINQUEFIELD))
    acked: list[str] = []

    async def replay_until_killed() -> None:
        async with connect(server.ws_url) as ws:
            for event in (tf.opened, *tf.events):
                await submit(ws, server.token, event)
                reply = await reply_to(ws, event.id)
                assert reply["type"] == "ack"
                acked.append(event.id)
                if len(acked) == 20:
                    server.proc.send_signal(signal.SIGKILL)
                    server.proc.wait(timeout=10)
                    return

    asyncio.run(replay_until_killed())
    assert server.proc.returncode == -signal.SIGKILL
    journal = sqlite3.connect(server.data_dir / "journal.sqlite3")
    stored = [row[0] for row in journal.execute("SELECT id FROM events ORDER BY pos")]
    journal.close()
    assert stored[: len(acked)] == acked  # every acknowledged event survived, in order

    restarted = tracker_factory(data_dir=server.data_dir)
    resumed = subprocess.run(
        [
            sys.executable,
            "-m",
            "tracker.cli",
            "replay",
            str(SINQUEFIELD),
            "--url",
            restarted.ws_url,
            "--token",
            restarted.token,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr
    page = http_json(restarted, f"/api/tournaments/{tf.opened.tournament}/standings")
    assert comparable(page["standings"]) == comparable(offline_rows(SINQUEFIELD))
    assert page["seq"] == 1 + len(tf.events)  # nothing counted twice


BAD_INPUTS: list[tuple[str, str | dict[str, Any], str]] = [
    ("malformed JSON", "{not json", "bad-message"),
    ("unknown message type", {"type": "dance"}, "bad-message"),
    ("wrong field type", {"type": "subscribe", "tournament": 5}, "bad-message"),
]


@pytest.mark.parametrize(("what", "raw", "code"), BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
async def test_malformed_messages_get_an_error_and_the_server_keeps_serving(
    tracker_server: RunningTracker, what: str, raw: str | dict[str, Any], code: str
) -> None:
    async with connect(tracker_server.ws_url) as ws:
        await ws.send(raw if isinstance(raw, str) else json.dumps(raw))
        message = await recv(ws)
        assert message["type"] == "error" and message["code"] == code and message["reason"]
        await send(ws, {"type": "subscribe", "tournament": "still-serving"})
        assert (await recv(ws))["type"] == "snapshot"


def four_players(tid: str = "bad-input-cup") -> TournamentOpened:
    return TournamentOpened(
        id=f"{tid}/open",
        tournament=tid,
        name="Bad Input Cup",
        players=tuple(Player(start_no=i, name=f"Player {i}") for i in range(1, 5)),
        schedule=(((1, 4), (2, 3)), ((4, 3), (1, 2)), ((2, 4), (3, 1))),
    )


def game(event_id: str, rnd: int, white: int, black: int, result: str = "1-0") -> dict[str, Any]:
    return {
        "type": "result_recorded",
        "id": event_id,
        "tournament": "bad-input-cup",
        "round": rnd,
        "white": white,
        "black": black,
        "result": result,
    }


REJECTED: list[tuple[str, dict[str, Any], str]] = [
    ("unknown player", game("x1", 1, 1, 9), "unknown-player"),
    ("player paired twice in a round", game("x2", 1, 1, 2), "invalid-pairing"),
    ("pairing not in the schedule", game("x3", 2, 1, 3), "invalid-pairing"),
    ("round out of range", game("x4", 7, 1, 4), "invalid-pairing"),
    ("unknown tournament", {**game("x5", 1, 1, 4), "tournament": "nope"}, "unknown-tournament"),
]


@pytest.mark.parametrize(("what", "event", "code"), REJECTED, ids=[r[0] for r in REJECTED])
async def test_invalid_events_are_rejected_with_a_reason_and_change_nothing(
    tracker_server: RunningTracker, what: str, event: dict[str, Any], code: str
) -> None:
    token = tracker_server.token
    async with connect(tracker_server.ws_url) as ws:
        await submit(ws, token, four_players())
        assert (await reply_to(ws, "bad-input-cup/open"))["type"] == "ack"
        await send(ws, {"type": "submit", "token": token, "event": game("ok", 1, 1, 4)})
        assert (await reply_to(ws, "ok"))["type"] == "ack"
        before = http_json(tracker_server, "/api/tournaments/bad-input-cup/standings")
        await send(ws, {"type": "submit", "token": token, "event": event})
        reply = await reply_to(ws, event["id"])
        assert reply["type"] == "rejected" and reply["code"] == code and reply["reason"]
    assert http_json(tracker_server, "/api/tournaments/bad-input-cup/standings") == before
    journal = sqlite3.connect(tracker_server.data_dir / "journal.sqlite3")
    assert [r[0] for r in journal.execute("SELECT id FROM events ORDER BY pos")] == ["bad-input-cup/open", "ok"]
    journal.close()


@pytest.mark.parametrize(
    ("what", "event"),
    [
        ("impossible result code", {**game("y1", 1, 2, 3), "result": "2-0"}),
        ("unknown event type", {"type": "result_guessed", "id": "y2", "tournament": "bad-input-cup"}),
        ("missing field", {k: v for k, v in game("y3", 1, 2, 3).items() if k != "black"}),
    ],
)
async def test_undecodable_events_are_refused_with_the_field_named(
    tracker_server: RunningTracker, what: str, event: dict[str, Any]
) -> None:
    async with connect(tracker_server.ws_url) as ws:
        await send(ws, {"type": "submit", "token": tracker_server.token, "event": event})
        message = await recv(ws)
    assert message["type"] == "error" and message["code"] == "bad-message"
    assert "$.event" in message["reason"]


async def test_submit_without_the_token_changes_nothing(tracker_server: RunningTracker) -> None:
    async with connect(tracker_server.ws_url) as ws:
        await submit(ws, "wrong-token", four_players())
        reply = await reply_to(ws, "bad-input-cup/open")
    assert reply["type"] == "rejected" and reply["code"] == "unauthorized"
    assert http_json(tracker_server, "/api/tournaments") == {"tournaments": []}
    assert tracker_server.token not in json.dumps(reply)


async def test_oversized_frame_closes_the_connection_with_1009(tracker_server: RunningTracker) -> None:
    async with connect(tracker_server.ws_url, max_size=None) as ws:
        await ws.send("x" * (65 * 1024))
        with pytest.raises(ConnectionClosed) as closed:
            await recv(ws)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009


async def test_a_stalled_subscriber_does_not_delay_the_others_and_is_dropped(tracker_factory: Any) -> None:
    tracker_server = tracker_factory("--max-buffer", "65536")
    token = tracker_server.token
    tid = "big-open"
    opened = TournamentOpened(
        id="big/open",
        tournament=tid,
        name="Big Open",
        players=tuple(Player(start_no=i, name=f"Player Number {i:03d}") for i in range(1, 151)),
    )
    # the stalled client: a raw socket that does the handshake, subscribes, and never reads again
    stalled = raw_websocket(tracker_server.port)
    stalled.sendall(masked_text_frame(json.dumps({"type": "subscribe", "tournament": tid})))
    # once it is dropped, what the server still writes it (the updates it had buffered, then the close frame) is
    # read at once: the close waits only the server's close timeout (5 s) for it to drain, and the submits below
    # can take longer than that on a busy machine
    received = bytearray()
    reader = threading.Thread(target=read_once_dropped, args=(tracker_server, stalled, received), daemon=True)
    reader.start()
    async with connect(tracker_server.ws_url, max_size=2**24) as live:
        await send(live, {"type": "subscribe", "tournament": tid})
        await recv(live)
        await submit(live, token, opened)
        await reply_to(live, opened.id)
        await recv_until(live, lambda m: m["type"] == "update")  # the opening's, fanned out after its ack
        results = ["1-0", "0-1", "1/2-1/2"]
        first = game("flip-0", 1, 1, 2)
        await send(live, {"type": "submit", "token": token, "event": {**first, "tournament": tid}})
        for k in range(1, 350):  # under the submit burst limit (400); each update is ~25 KB
            body = {**first, "type": "result_corrected", "id": f"flip-{k}", "tournament": tid, "result": results[k % 3]}
            await send(live, {"type": "submit", "token": token, "event": body})
            # no schema check here: the drop must happen within the server's 5 s close timeout
            update, _ = await recv_until(live, lambda m: m["type"] == "update", timeout=5, check=False)
            assert update["event"]["id"] == f"flip-{k - 1}"
    metrics = urllib.request.urlopen(tracker_server.http_url + "/metrics", timeout=10).read().decode()
    assert "tracker_clients_dropped_total 1" in metrics
    reader.join(timeout=60)
    assert not reader.is_alive()
    stalled.close()
    assert b"too slow" in received[-200:]  # the close frame's reason


def read_once_dropped(tracker: RunningTracker, sock: socket.socket, into: bytearray) -> None:
    """Wait (60 s at most) until the server counts one client dropped, then read ``sock`` to its end."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        metrics = urllib.request.urlopen(tracker.http_url + "/metrics", timeout=10).read().decode()
        if "tracker_clients_dropped_total 1" in metrics:
            break
        time.sleep(0.1)
    sock.settimeout(10)
    with contextlib.suppress(OSError):
        while chunk := sock.recv(1 << 16):  # the server closed it: read to the end
            into += chunk


def raw_websocket(port: int) -> socket.socket:
    """A client socket past the websocket handshake, with a tiny receive window."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    response = b""
    while b"\r\n\r\n" not in response:
        response += sock.recv(1)
    assert response.startswith(b"HTTP/1.1 101")
    return sock


def masked_text_frame(text: str) -> bytes:
    payload = text.encode()
    mask = os.urandom(4)
    assert len(payload) < 126
    return bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def test_sigterm_closes_clients_with_going_away_and_keeps_the_journal(tracker_factory: Any) -> None:
    server = tracker_factory()
    tf = read_file(str(EXERCISE))
    await replay_ws(tf, server.ws_url, server.token)
    async with connect(server.ws_url) as ws:
        await send(ws, {"type": "subscribe", "tournament": tf.opened.tournament})
        await recv(ws)
        server.proc.send_signal(signal.SIGTERM)
        with pytest.raises(ConnectionClosed) as closed:
            await recv(ws, timeout=15)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001
    assert server.proc.wait(timeout=15) == 0
    again = tracker_factory(data_dir=server.data_dir)
    page = http_json(again, f"/api/tournaments/{tf.opened.tournament}/standings")
    expected = standings_json(standings(state_from(tf)))["standings"]
    assert comparable(page["standings"]) == comparable(expected)  # type: ignore[arg-type]
