"""Spoiler delays on the pages, in a real Chromium: nothing a delayed page shows runs ahead of its delay.

Reproduction (issue 27, item 2): with ``/t/ID?delay=30`` the websocket was held back, but the page's
backfill read ``/recent`` undelayed and put a result in "What changed" 6.2 s before the delayed table had it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from tests.conftest import RunningTracker, data_file
from tests.web import test_browser
from tests.web.test_browser import Pages, arbiter_of
from tracker.formats.files import read_file

pytestmark = pytest.mark.browser

browser = test_browser.browser
pages = test_browser.pages
DELAY = 4.0


def shown(page: object) -> tuple[int, list[int]]:
    """(the seq the page's table shows, the seqs of the feed's items)."""
    seq, feed = page.evaluate(  # type: ignore[attr-defined]
        """() => [Number(document.documentElement.dataset.seq || -1),
                  [...document.querySelectorAll('#feed li:not(.note)')].map(li => Number(li.dataset.seq))]"""
    )
    return int(seq), [int(s) for s in feed]


def test_a_delayed_spectator_page_never_shows_a_result_before_its_delay(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    tracker = tracker_factory()
    tf = read_file(str(data_file("sinquefield-cup-2021.trf")))
    tid = tf.opened.tournament
    events = [tf.opened, *tf.events]
    with arbiter_of(tracker) as arbiter:
        early = arbiter.submit_all(events[:21])  # four rounds, long enough ago below
        time.sleep(DELAY + 0.5)
        recent = arbiter.submit_all(events[21:23])  # two results just before the page opens
        recent_at = time.monotonic()  # they are due on the page DELAY after this (opening it may take a while)
        page = pages.open(f"{tracker.http_url}/t/{tid}?delay={DELAY:g}")
        late = arbiter.submit(events[23])  # and one while it is open
        published_at = time.monotonic()
        while time.monotonic() < published_at + DELAY + 3:
            table, feed = shown(page)
            assert all(seq <= max(table, early) for seq in feed), f"the feed ran ahead of the table: {table} {feed}"
            if time.monotonic() < recent_at + DELAY - 0.5:
                assert table <= early and max(feed, default=0) <= early, "a result within the delay was shown"
            if time.monotonic() < published_at + DELAY - 0.5:
                assert table < late and late not in feed
            time.sleep(0.1)
        table, feed = shown(page)
        assert table == late and {recent, late} <= set(feed), "once the delay is over, the page has caught up"
