"""Stakes on the spectator page and a producer's cue on the overlay, in a real Chromium (see test_browser.py).

The Sinquefield Cup 2021 before its last round: the pages ask for stakes, the server computes them in its
worker process, and the pages show them; the screenshots are the README's pictures when
``TRACKER_SCREENSHOTS=docs/img`` (``make screenshots``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import RunningTracker, data_file
from tests.web import test_browser
from tests.web.test_browser import Pages, arbiter_of, settle, stream_page, wait_seq
from tracker.core.events import Event, ResultRecorded
from tracker.formats.files import read_file

pytestmark = pytest.mark.browser

# the browser test module's fixtures: one Chromium per module, pages that fail the test on a script error
browser = test_browser.browser
pages = test_browser.pages


def sinquefield() -> tuple[str, list[Event]]:
    tf = read_file(str(data_file("sinquefield-cup-2021.trf")))
    return tf.opened.tournament, [tf.opened, *tf.events]


def images(tmp_path: Path) -> Path:
    img = Path(os.environ.get("TRACKER_SCREENSHOTS") or tmp_path / "img")
    img.mkdir(parents=True, exist_ok=True)
    return img


def test_spectator_page_shows_what_each_remaining_game_decides_and_the_chances_as_an_estimate(
    tracker_factory: Callable[..., RunningTracker], pages: Pages, tmp_path: Path
) -> None:
    tracker = tracker_factory()
    tid, events = sinquefield()
    played = [e for e in events if getattr(e, "round", 0) <= 8]
    played += [e for e in events if getattr(e, "round", 0) == 9][:1]
    with arbiter_of(tracker) as arbiter:
        seq = arbiter.submit_all(played)
    page = pages.open(f"{tracker.http_url}/t/{tid}", width=1280, height=1000)
    wait_seq(page, seq)
    page.wait_for_selector(f'#stakes[data-seq="{seq}"]:not([hidden])')
    games = page.locator("#stakes .stake-game")
    assert games.count() == 4  # round 9 has five games, one is in
    caruana = page.locator('#stakes .stake-game[data-white="4"][data-black="1"]')
    assert "Caruana can no longer finish 1st" in caruana.inner_text()
    assert page.locator("#stakes .badge.exact").count() == 1
    chances = page.locator("#stakes .chances")
    assert "estimate" in chances.locator("h3").inner_text()
    assert chances.locator("tbody tr").count() == 10
    settle(page)
    page.locator("#stakes").screenshot(path=str(images(tmp_path) / "stakes.png"))


def test_overlay_shows_a_cue_as_a_lower_third_when_a_line_is_clinched(
    tracker_factory: Callable[..., RunningTracker], pages: Pages, tmp_path: Path
) -> None:
    tracker = tracker_factory()
    tid, events = sinquefield()
    last_round = [e for e in events if getattr(e, "round", 0) == 9]
    before = [e for e in events if getattr(e, "round", 0) <= 8] + last_round[:3]
    clinch = last_round[3]  # So–Vachier-Lagrave: Vachier-Lagrave clinches 1st
    assert isinstance(clinch, ResultRecorded) and (clinch.white, clinch.black) == (6, 2)
    with arbiter_of(tracker) as arbiter:
        seq = arbiter.submit_all(before)
        stream = pages.open(width=1280, height=720)
        # board 4 (So–Vachier-Lagrave): boards 1–3 are over, and board=N is board N of the round (issue 38)
        overlay_url = f"{tracker.http_url}/overlay/{tid}?top=6&mode=stakes&board=4&cues=1"
        stream.goto(stream_page(tmp_path, overlay_url).as_uri())
        stream.frame_locator("iframe").locator("#rows .row").first.wait_for()
        overlay = next(f for f in stream.frames if f.url.startswith(tracker.http_url))
        overlay.wait_for_selector(f'#stakes-box[data-seq="{seq}"]:not([hidden])')
        assert "What this board decides" in overlay.locator("#stakes-box").inner_text()
        assert overlay.locator("#cue").is_hidden()
        arbiter.submit(clinch)
    overlay.wait_for_selector('#cue[data-kind="clinched"]:not([hidden])', timeout=60_000)
    assert overlay.locator("#cue").inner_text().replace("\n", " ") == "CLINCHED Vachier-Lagrave clinches 1st"
    settle(overlay)
    stream.screenshot(path=str(images(tmp_path) / "cue.png"))
    # the README's stakes URL, a delay added: every parameter is one the overlay knows, nothing is reported
    warnings: list[str] = []
    direct = pages.open()
    direct.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    direct.goto(f"{overlay_url}&delay=1")
    direct.wait_for_selector("#stakes-box:not([hidden])", timeout=60_000)
    assert not warnings, warnings
