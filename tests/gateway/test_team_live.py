"""A team event live (issue 35): after ``tracker replay`` of a team file into a real ``tracker up``, every
standings payload carries the ``"teams"`` rows ``tracker standings FILE --format json`` gives offline: the
HTTP standings page, the last full websocket update, and the standings a delta subscriber rebuilds (each
delta's digest checked).  The same on the Kafka deployment: tests/kafka/test_kafka_teams.py.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect

from tests.conftest import SHARED_DATA, TEST_DATA, RunningTracker
from tracker.formats.files import read_file
from tracker.gateway.channel import empty_payload
from tracker.protocol import apply_delta, standings_digest

TEAM_RR = SHARED_DATA / "team-rr" if (SHARED_DATA / "team-rr").exists() else TEST_DATA / "team-rr"
#: 12 teams of 4 boards, 11 rounds, with forfeited boards
TEAM_FILE = TEAM_RR / "team-rr-9008.trf"
CLI = [sys.executable, "-m", "tracker.cli"]


def offline_teams(path: Path) -> list[dict[str, Any]]:
    """The ``"teams"`` rows of ``tracker standings FILE --format json``."""
    out = subprocess.run([*CLI, "standings", str(path), "--format", "json"], check=True, capture_output=True, text=True)
    teams: list[dict[str, Any]] = json.loads(out.stdout)["teams"]
    assert len(teams) == 12, "a team file gives team rows offline"
    return teams


async def follow(
    url: str, subscribe: dict[str, Any], last: int, held: asyncio.Event | None = None
) -> list[dict[str, Any]]:
    """The snapshot and every update up to seq ``last``, decoded.

    With ``held``, the client reads its snapshot and then nothing until ``held`` is set: its receive buffer is
    small and it takes one message at a time, so the server holds what it cannot send, as for a stalled viewer.
    """
    seen: list[dict[str, Any]] = []
    sock = None
    if held is not None:
        address = urllib.parse.urlsplit(url)
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect((address.hostname, address.port))
        sock.setblocking(False)
    async with connect(url, compression=None, sock=sock, max_queue=1 if held else 16) as ws:
        await ws.send(json.dumps(subscribe))
        async with asyncio.timeout(120):
            while True:
                message = json.loads(await ws.recv())
                seen.append(message)
                if held is not None and len(seen) == 1:
                    await held.wait()
                if message["type"] == "update" and message["seq"] == last:
                    return seen


def rebuilt(tid: str, messages: list[dict[str, Any]]) -> tuple[dict[str, Any], list[tuple[dict[str, Any], bool]]]:
    """The standings a delta subscriber holds after ``messages`` (snapshot, then deltas), every digest checked.

    Also each delta applied, with whether it changed the team rows.  A follower that fell behind is written a
    snapshot and then the next delta (the fan-out's seq contract; a loaded machine makes it happen): the client
    starts again from that snapshot, as a real one does.
    """
    snapshot, *updates = messages
    assert snapshot["type"] == "snapshot"
    standings: dict[str, Any] = dict(empty_payload(tid)) if snapshot["seq"] == 0 else snapshot
    applied: list[tuple[dict[str, Any], bool]] = []
    for message in updates:
        if message["type"] == "snapshot":
            assert message["seq"] > standings["seq"], "a merge only moves forward"
            standings = message
            continue
        assert message["delta"] is True and message["seq"] == standings["seq"] + 1
        before = standings.get("teams")
        standings = apply_delta(standings, message)
        assert standings_digest(standings) == message["digest"], message["seq"]
        applied.append((message, standings.get("teams") != before))
    return standings, applied


def check_team_rows(
    tid: str, expected: list[dict[str, Any]], full: list[dict[str, Any]], deltas: list[dict[str, Any]]
) -> None:
    """Full updates and rebuilt deltas carry the offline team rows at the end; team rows arrive with the opening."""
    updates = [m for m in full if m["type"] == "update"]
    assert updates[0]["seq"] == 1 and updates[0]["teams"][0]["match_points"] == 0, "the opening carries the teams"
    assert [row["team"] for row in updates[0]["teams"]] == list(range(1, 13))
    assert updates[-1]["teams"] == expected
    held, applied = rebuilt(tid, deltas)
    assert held["teams"] == expected
    assert all(("teams" in m) == changed for m, changed in applied), (
        "a delta carries the team rows only when they changed"
    )
    # the matches: rebuilt from deltas that carry only the rounds whose matches changed
    assert held["matches"] == updates[-1]["matches"] and len(held["matches"]) == 11
    # a board result changes its round's matches, and the last one of a round lists the next round's too
    later = [m for m, _ in applied if m["seq"] > 1]  # the opening lists every round
    assert all(len(m.get("matches", ())) <= 2 for m in later), "a board result changes at most two rounds"


def http_json(base: str, path: str) -> Any:
    with urllib.request.urlopen(base + path, timeout=10) as response:
        return json.loads(response.read())


async def test_a_replayed_team_file_gives_the_offline_team_rows_on_every_payload(
    tracker_factory: Callable[..., RunningTracker],
) -> None:
    # clients that read every full update of a whole replay: one held back by a loaded machine must not be dropped
    # as slow (the subject of test_embedded's stalled subscriber)
    tracker_server = tracker_factory("--max-buffer", str(64 << 20))
    tf = read_file(str(TEAM_FILE), "teams-live")
    last = 1 + len(tf.events)
    expected = offline_teams(TEAM_FILE)
    url = tracker_server.ws_url
    full = asyncio.create_task(follow(url, {"type": "subscribe", "tournament": "teams-live"}, last))
    deltas = asyncio.create_task(
        follow(url, {"type": "subscribe", "tournament": "teams-live", "updates": "delta"}, last)
    )
    replayed = asyncio.Event()
    stalled = asyncio.create_task(
        follow(url, {"type": "subscribe", "tournament": "teams-live", "updates": "delta"}, last, held=replayed)
    )
    await asyncio.sleep(0.3)  # all subscribed to the empty channel before the first event
    replay = await asyncio.create_subprocess_exec(
        *CLI,
        "replay",
        str(TEAM_FILE),
        "--tournament",
        "teams-live",
        "--url",
        url,
        "--token",
        tracker_server.token,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(replay.communicate(), 120)
    assert replay.returncode == 0, (out, err)
    replayed.set()
    full_messages, delta_messages, stalled_messages = await asyncio.wait_for(asyncio.gather(full, deltas, stalled), 120)
    check_team_rows("teams-live", expected, full_messages, delta_messages)
    # a delta follower that read nothing through the replay: merged (a snapshot, then the next delta), and its
    # standings are the offline ones all the same
    assert any(m["type"] == "snapshot" for m in stalled_messages[1:]), "held back: written a merge"
    assert rebuilt("teams-live", stalled_messages)[0]["teams"] == expected
    page = http_json(tracker_server.http_url, "/api/tournaments/teams-live/standings")
    assert page["teams"] == expected
    assert page["standings"] == full_messages[-1]["standings"]
