"""TRF export of the live state: what a running tracker hands back to arbiter programs reads back identically."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, RunningTracker, data_file, start_tracker
from tracker.client import replay_ws
from tracker.core.crosstable import Tournament
from tracker.core.standings import standings
from tracker.formats import TournamentFile, state_from
from tracker.formats.trf import export_trf, parse_trf
from tracker.protocol import standings_json

FILES = {
    "sinquefield": data_file("sinquefield-cup-2021.trf"),
    "held": data_file("fide-tec-exercise16-rr6.trf"),
    "byes": REPO / "tests" / "data" / "byes.trf",
    "forfeits": REPO / "tests" / "data" / "forfeits.trf",
    "football": REPO / "tests" / "data" / "three-one-zero.trf",
    "double": REPO / "tests" / "data" / "double.trf",
}
PARTIAL = {"sinquefield-r5": ("sinquefield", 5), "held-r3": ("held", 3)}


def read(path: Path, tid: str, after_round: int | None = None) -> TournamentFile:
    tf = parse_trf(path.read_text(encoding="utf-8"), str(path), tid)
    return tf if after_round is None else tf.until_round(after_round)


def http_text(server: RunningTracker, path: str) -> tuple[str, str]:
    with urllib.request.urlopen(server.http_url + path, timeout=10) as response:
        return response.read().decode("utf-8"), response.headers.get("Content-Type", "")


def same_tournament(a: Tournament, b: Tournament) -> None:
    """Equal as the core sees them: opening data, every player's line, the standings."""
    assert (a.name, a.rounds, a.opened.format, a.opened.scoring, a.opened.tiebreaks) == (
        b.name,
        b.rounds,
        b.opened.format,
        b.opened.scoring,
        b.opened.tiebreaks,
    )
    assert a.opened.players == b.opened.players
    assert [a.results_of(i) for i in range(a.n)] == [b.results_of(i) for i in range(b.n)]
    assert standings_json(standings(a))["standings"] == standings_json(standings(b))["standings"]


@pytest.fixture(scope="module")
def tracker_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningTracker]:
    """One ``tracker up`` for the whole module (the tests only read from it after ``live``)."""
    running = start_tracker(tmp_path_factory.mktemp("trf-export") / "data")
    yield running
    running.stop()


@pytest.fixture(scope="module")
def live(tracker_server: RunningTracker) -> dict[str, TournamentFile]:
    """Every reference file (and two of them cut after a round) submitted to one running tracker."""
    submitted: dict[str, TournamentFile] = {}
    for tid, path in FILES.items():
        submitted[tid] = read(path, tid)
    for tid, (base, last) in PARTIAL.items():
        submitted[tid] = read(FILES[base], tid, last)

    async def submit_all() -> None:
        for tf in submitted.values():
            result = await replay_ws(tf, tracker_server.ws_url, tracker_server.token)
            assert not result.rejected and result.acked == 1 + len(tf.events)

    asyncio.run(submit_all())
    return submitted


@pytest.mark.parametrize("tid", [*FILES, *PARTIAL])
def test_live_trf_export_reads_back_as_the_live_state(
    tracker_server: RunningTracker, live: dict[str, TournamentFile], tid: str
) -> None:
    text, content_type = http_text(tracker_server, f"/api/tournaments/{tid}/trf")
    assert content_type.startswith("text/plain")
    lines = text.splitlines()
    rounds = state_from(live[tid]).rounds
    assert f"142 {rounds}" in lines and any(line.startswith("212 PTS") for line in lines)
    back = parse_trf(text, f"{tid}.trf", tid)
    same_tournament(state_from(back), state_from(live[tid]))
    assert export_trf(state_from(back)) == text, "export → read → export is a fixed point"
    with urllib.request.urlopen(f"{tracker_server.http_url}/api/tournaments/{tid}/standings", timeout=10) as r:
        page: dict[str, Any] = json.loads(r.read())
    assert page["standings"] == json.loads(json.dumps(standings_json(standings(state_from(back)))["standings"]))


@pytest.mark.parametrize("tid", [*FILES, *PARTIAL])
def test_offline_trf_export_is_the_same_text_as_the_live_one_and_reads_back_identically(
    tracker_server: RunningTracker, live: dict[str, TournamentFile], tid: str
) -> None:
    base, last = PARTIAL.get(tid, (tid, None))
    command = [sys.executable, "-m", "tracker.cli", "standings", str(FILES[base]), "--format", "trf"]
    if last is not None:
        command += ["--after-round", str(last)]
    offline = subprocess.run(command, check=True, capture_output=True, text=True, timeout=60).stdout
    text, _ = http_text(tracker_server, f"/api/tournaments/{tid}/trf")
    assert offline == text
    same_tournament(state_from(parse_trf(offline, "offline.trf", tid)), state_from(live[tid]))


def test_unknown_tournament_has_no_trf(tracker_server: RunningTracker) -> None:
    with pytest.raises(urllib.error.HTTPError) as exc:
        http_text(tracker_server, "/api/tournaments/nobody/trf")
    exc.value.close()  # an open error response would keep the connection (and the server's shutdown) waiting
    assert exc.value.code == 404
