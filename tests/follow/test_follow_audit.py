"""``follow`` of a TRF audits the file's own places: "the official standings disagree on …", once per change."""

from __future__ import annotations

import logging
from pathlib import Path

import msgspec
import pytest

from tests.builders import fold_all
from tests.conftest import RunningTracker
from tests.formats.test_check import EXERCISE, _swap_ranks
from tracker.follow import Follower
from tracker.follow.sources import FileSource
from tracker.follow.trackers import WebsocketTracker
from tracker.formats.files import read_file
from tracker.formats.trf import export_trf


async def test_follow_reports_official_places_that_disagree_and_when_they_agree_again(
    tracker_server: RunningTracker, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tf = read_file(str(EXERCISE))
    first = msgspec.structs.replace(tf.opened, tiebreaks=("PTS", "DE", "SB", "KS"))
    good = export_trf(fold_all([first, *tf.events]))  # Alyx 1st, Bruno 2nd (SB), …
    live = tmp_path / "arbiter.trf"
    live.write_text(_swap_ranks(good, 1, 2), encoding="utf-8")
    follower = Follower(FileSource(live), "audit-live", WebsocketTracker(tracker_server.ws_url, tracker_server.token))
    caplog.set_level(logging.INFO, logger="tracker.follow")
    try:
        await follower.poll()
        disagree = [r.getMessage() for r in caplog.records if "official standings disagree on" in r.getMessage()]
        assert len(disagree) == 1
        assert "Alyx (1): place 2" in disagree[0] and "Bruno (2): place 1" in disagree[0]
        caplog.clear()
        live.write_text(_swap_ranks(good, 1, 2) + "\n", encoding="utf-8")  # a new version, the same verdict
        await follower.poll()
        assert not [r for r in caplog.records if "disagree" in r.getMessage()]
        live.write_text(good, encoding="utf-8")
        await follower.poll()
        assert any("official standings agree" in r.getMessage() for r in caplog.records)
    finally:
        await follower.aclose()
