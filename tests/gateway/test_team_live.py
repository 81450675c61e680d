"""A team event live (issue 35): after ``tracker replay`` of a team file into a real ``tracker up``, every
standings payload carries the ``"teams"`` rows ``tracker standings FILE --format json`` gives offline: the
HTTP standings page, the last full websocket update, and the standings a delta subscriber rebuilds (each
delta's digest checked).  The same on the Kafka deployment: tests/kafka/test_kafka_teams.py.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
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


async def follow(url: str, subscribe: dict[str, Any], last: int) -> list[dict[str, Any]]:
    """The snapshot and every update up to seq ``last``, decoded."""
    seen: list[dict[str, Any]] = []
    async with connect(url, compression=None) as ws:
        await ws.send(json.dumps(subscribe))
        async with asyncio.timeout(120):
            while True:
                message = json.loads(await ws.recv())
                seen.append(message)
                if message["type"] == "update" and message["seq"] == last:
                    return seen


def rebuilt(tid: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The standings a delta subscriber holds after ``messages`` (snapshot, then deltas), every digest checked."""
    snapshot, *updates = messages
    assert snapshot["type"] == "snapshot"
    standings: dict[str, Any] = dict(empty_payload(tid)) if snapshot["seq"] == 0 else snapshot
    for delta in updates:
        assert delta["delta"] is True
        standings = apply_delta(standings, delta)
        assert standings_digest(standings) == delta["digest"], delta["seq"]
    return standings


def check_team_rows(
    tid: str, expected: list[dict[str, Any]], full: list[dict[str, Any]], deltas: list[dict[str, Any]]
) -> None:
    """Full updates and rebuilt deltas carry the offline team rows at the end; team rows arrive with the opening."""
    updates = [m for m in full if m["type"] == "update"]
    assert updates[0]["seq"] == 1 and updates[0]["teams"][0]["match_points"] == 0, "the opening carries the teams"
    assert [row["team"] for row in updates[0]["teams"]] == list(range(1, 13))
    assert updates[-1]["teams"] == expected
    held = rebuilt(tid, deltas)
    assert held["teams"] == expected
    moved = [m for m in deltas[1:] if "teams" in m]
    assert 1 < len(moved) < len(deltas), "a delta carries the team rows only when they changed"
    # the matches: rebuilt from deltas that carry only the rounds whose matches changed
    assert held["matches"] == updates[-1]["matches"] and len(held["matches"]) == 11
    # a board result changes its round's matches, and the last one of a round lists the next round's too
    assert all(len(m.get("matches", ())) <= 2 for m in deltas[2:]), "a board result changes at most two rounds"


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
    await asyncio.sleep(0.3)  # both subscribed to the empty channel before the first event
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
    full_messages, delta_messages = await asyncio.wait_for(asyncio.gather(full, deltas), 120)
    check_team_rows("teams-live", expected, full_messages, delta_messages)
    page = http_json(tracker_server.http_url, "/api/tournaments/teams-live/standings")
    assert page["teams"] == expected
    assert page["standings"] == full_messages[-1]["standings"]
