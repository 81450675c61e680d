"""``tracker follow`` of a team broadcast's PGN (``WhiteTeam``/``BlackTeam`` tags) into a running tracker: the
event opens as a team event from the first read, later rounds' boards are taken as the file grows, and the
tracker's live standings carry the teams as the whole file gives them (issue 35)."""

from __future__ import annotations

import dataclasses
import json
import urllib.request
from pathlib import Path
from typing import Any

from tests.conftest import RunningTracker
from tests.formats.test_pgn_teams import TEAM_RR, _played_games, _team_pgn
from tracker.core.events import ResultRecorded
from tracker.core.standings import standings
from tracker.follow import AT_ONCE, FileSource, Follower, WebsocketTracker
from tracker.formats import state_from
from tracker.formats.files import read_file
from tracker.formats.pgn import parse_pgn
from tracker.protocol.shapes import team_rows_json


def _standings(tracker: RunningTracker, tid: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{tracker.port}/api/tournaments/{tid}/standings") as answer:
        document: dict[str, Any] = json.load(answer)
    return document


async def test_following_a_growing_team_broadcast_gives_the_team_standings_live(
    tracker_server: RunningTracker, tmp_path: Path
) -> None:
    tid = "team-broadcast"
    trf = _played_games(read_file(str(TEAM_RR / "team-rr-9001.trf")))
    games = [e for e in trf.events if isinstance(e, ResultRecorded)]
    last = max(e.round for e in games)
    live = tmp_path / "games.pgn"
    follower = Follower(
        FileSource(live), tid, WebsocketTracker(tracker_server.ws_url, tracker_server.token), confirm=AT_ONCE
    )
    try:
        for r in range(1, last + 1):  # the broadcast's file after each round
            upto = dataclasses.replace(trf, events=tuple(e for e in games if e.round <= r))
            live.write_text(_team_pgn(upto), encoding="utf-8")
            polled = await follower.poll()
            assert sum(isinstance(e, ResultRecorded) for e in polled.acked) == sum(e.round == r for e in games), r
            assert polled.rejected == () and polled.unmatched == (), r
            document = _standings(tracker_server, tid)
            expected = standings(state_from(parse_pgn(live.read_text(encoding="utf-8"), "games.pgn")))
            assert expected.teams is not None
            assert document["teams"] == json.loads(json.dumps(team_rows_json(expected.teams))), r
    finally:
        await follower.aclose()
    assert document["teams"][0]["match_points"] > 0
