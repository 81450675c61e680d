"""The public pages in their viewer's language, in a real Chromium (see test_browser.py): the spectator page, the
overlay and the index page in Russian, Spanish, German and French leave no English word of the English catalogue
on screen (names and codes aside), and the summaries of whole replays rendered in the browser from their phrases
are the server's English sentences byte for byte.

One tracker serves the module: the Sinquefield Cup 2021 before its last round (stakes, three boards in
progress) and, for the summaries, the reference crosstables replayed whole.  The screenshots are the README's
pictures when ``TRACKER_SCREENSHOTS=docs/img`` (``make screenshots``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import connect

from tests.conftest import TOKEN, RunningTracker, data_file, start_tracker
from tests.web import test_browser
from tests.web.english import PAGE_WORDS_JS, english_left
from tests.web.test_browser import Pages, arbiter_of, settle, stream_page, wait_seq
from tests.web.test_live_pages import last_round, send_board
from tracker.core.events import Event
from tracker.formats.files import read_file

pytestmark = pytest.mark.browser

browser = test_browser.browser
pages = test_browser.pages

LANGUAGES = ["ru", "es", "de", "fr"]
REPO = Path(__file__).resolve().parents[2]
#: the replays whose summaries are checked (tests/i18n/data/summaries-v1.json has their v1 sentences)
REPLAYS = ["byes.trf", "double.trf", "forfeits.trf", "three-one-zero.trf", "withdrawal-blank.trf"]
REPLAYS += ["fide-tec-exercise16-rr6.trf"]


class Live:
    """The module's tracker: the Sinquefield Cup 2021 through round 8, three boards of round 9 in progress."""

    def __init__(self, tracker: RunningTracker, tid: str, seq: int, names: list[str]) -> None:
        self.tracker = tracker
        self.tid = tid
        self.seq = seq
        self.names = names
        self.entered: set[str] = set()  # the results of round 9 the tests entered

    def enter(self, events: list[Event]) -> None:
        """Enter the results of ``events`` not entered yet (the tests may run alone or in any subset)."""
        with arbiter_of(self.tracker) as arbiter:
            for event in events:
                if event.id not in self.entered:
                    self.seq = arbiter.submit(event)
                    self.entered.add(event.id)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    tracker = start_tracker(tmp_path_factory.mktemp("i18n") / "data")
    try:
        tid, played, boards = last_round()
        with arbiter_of(tracker) as arbiter:
            seq = arbiter.submit_all(played)
            for board in boards:
                send_board(arbiter, board)
        opened = played[0]
        names = [p.name for p in getattr(opened, "players", [])] + [getattr(opened, "name", "")]
        yield Live(tracker, tid, seq, names)
    finally:
        tracker.stop()


def round_9() -> list[Event]:
    tf = read_file(str(data_file("sinquefield-cup-2021.trf")))
    return [e for e in tf.events if getattr(e, "round", 0) == 9]


def page_words(page: Any) -> str:
    text: str = page.evaluate(PAGE_WORDS_JS)
    return text


def open_spectator(pages: Pages, live: Live, query: str, height: int = 1400) -> Any:
    page = pages.open(f"{live.tracker.http_url}/t/{live.tid}?{query}", width=1280, height=height)
    wait_seq(page, live.seq)
    page.wait_for_selector(f'#stakes[data-seq="{live.seq}"]:not([hidden])', timeout=60_000)
    page.wait_for_selector("#live:not([hidden]) #live-table tbody tr", timeout=60_000)
    page.wait_for_selector("#feed li:not(.note)")  # the backfill: the summaries, from their phrases
    return page


@pytest.mark.parametrize("code", LANGUAGES)
def test_overlay_spectator_and_index_pages_leave_no_english_word_in_each_language(
    pages: Pages, live: Live, code: str
) -> None:
    spectator = open_spectator(pages, live, f"lang={code}")
    assert spectator.evaluate("document.documentElement.lang") == code
    spectator.click("#standings tbody tr:first-child .linkish")  # the Koya breakdown: a dialog of its own words
    spectator.wait_for_selector("#koya[open] .breakdown tbody tr")
    left = english_left(page_words(spectator), code, live.names)
    assert left == [], f"English left on the {code} spectator page: {left}"
    spectator.click("#koya-close")

    base = f"{live.tracker.http_url}/overlay/{live.tid}?lang={code}"
    queries = (
        "&legend=order&cols=points,KS,SB,DE,games",
        "&mode=stakes&board=1",
        "&mode=chances",
        "&mode=live&boards=1",
    )
    for query in queries:
        overlay = pages.open(base + query, width=1280, height=800)
        wait_seq(overlay, live.seq)
        overlay.wait_for_selector("#rows .row")
        if "stakes" in query:
            overlay.wait_for_selector(f'#stakes-box[data-seq="{live.seq}"]:not([hidden])', timeout=60_000)
        if "chances" in query:
            overlay.wait_for_selector("#stakes-box:not([hidden]) .chance-list li", timeout=60_000)
        if "boards" in query:
            overlay.wait_for_selector("#overlay-boards:not([hidden]) .board-line", timeout=60_000)
        assert overlay.evaluate("document.documentElement.lang") == code
        left = english_left(page_words(overlay), code, live.names)
        assert left == [], f"English left on the {code} overlay ({query}): {left}"

    index = pages.open(f"{live.tracker.http_url}/?lang={code}")
    index.wait_for_selector("html[data-loaded] #tournaments li")
    left = english_left(page_words(index), code, live.names)
    assert left == [], f"English left on the {code} index page: {left}"
    assert f"lang={code}" in (index.locator("#tournaments a").first.get_attribute("href") or "")


def test_the_language_comes_from_lang_else_the_browser_else_english_and_a_bad_one_is_said_once(
    browser: Any, pages: Pages, live: Live
) -> None:
    url = f"{live.tracker.http_url}/overlay/{live.tid}"
    context = browser.new_context(locale="de-CH")
    try:
        german = context.new_page()
        german.goto(url)
        wait_seq(german, live.seq)
        assert german.evaluate("document.documentElement.lang") == "de"  # the browser's language
        german.goto(url + "?lang=es-MX")
        wait_seq(german, live.seq)
        assert german.evaluate("document.documentElement.lang") == "es"  # ?lang= first
    finally:
        context.close()
    warnings: list[str] = []
    overlay = pages.open()
    overlay.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    overlay.goto(url + "?lang=xx&legend=order")
    wait_seq(overlay, live.seq)
    assert overlay.evaluate("document.documentElement.lang") == "en"
    assert overlay.locator("#foot .order").inner_text().startswith("Ranked by Pts")
    assert sum("lang" in w and "xx" in w for w in warnings) == 1, warnings
    # the spectator page's picker keeps the choice in the URL
    spectator = open_spectator(pages, live, "lang=fr", height=900)
    spectator.select_option("#lang", "ru")
    spectator.wait_for_url("**lang=ru**")
    wait_seq(spectator, live.seq)
    assert spectator.evaluate("document.documentElement.lang") == "ru"
    assert spectator.locator("#standings-h").inner_text().lower() == "таблица"


# -- the summaries, rendered from their phrases in the browser -----------------------------------


def replay_updates(tracker: RunningTracker, name: str) -> tuple[list[dict[str, Any]], dict[int, str]]:
    """Every update of a whole replay as a delta subscriber gets it, and the players' names."""
    folder = "tests/data" if (REPO / "tests" / "data" / name).exists() else "tracker/data"
    tf = read_file(str(REPO / folder / name) if folder == "tests/data" else str(data_file(name)))
    events: list[Event] = [tf.opened, *tf.events]
    tid = tf.opened.tournament
    updates: list[dict[str, Any]] = []
    with connect(tracker.ws_url, max_size=2**24) as reader, arbiter_of(tracker) as arbiter:
        reader.send(json.dumps({"type": "subscribe", "tournament": tid, "updates": "delta", "token": TOKEN}))
        seq = arbiter.submit_all(events)
        while not updates or updates[-1]["seq"] < seq:
            message = json.loads(reader.recv(timeout=60))
            if message.get("type") == "update":
                updates.append({k: message.get(k) for k in ("seq", "summary", "summary_said")})
    return updates, {p.start_no: p.name for p in tf.opened.players}


def test_summaries_of_whole_replays_rendered_from_their_phrases_in_the_browser_are_the_servers_text(
    pages: Pages, live: Live
) -> None:
    golden = json.loads((REPO / "tests" / "i18n" / "data" / "summaries-v1.json").read_text())
    page = pages.open(f"{live.tracker.http_url}/t/{live.tid}?lang=en", width=800, height=600)
    wait_seq(page, live.seq)
    checked = 0
    for name in REPLAYS:
        updates, players = replay_updates(live.tracker, name)
        rendered: list[str] = page.evaluate(
            """async ([updates, players]) => {
              const url = (m) => performance.getEntriesByType('resource').map((e) => e.name)
                .find((n) => new RegExp(`/static/${m}\\\\.[0-9a-f]+\\\\.js$`).test(n));
              const live = await import(url('live'));
              const names = (n) => live.sentenceName(players[n]);
              return updates.map((u) => live.summaryText(u.summary_said, names, null));
            }""",
            [updates, {str(k): v for k, v in players.items()}],
        )
        assert [u["summary"] for u in updates] == [s for s in golden[name] if s and not s.startswith("rejected:")]
        for update, text in zip(updates, rendered, strict=True):
            assert update["summary_said"], f"{name} seq {update['seq']}: no phrases"
            assert text == update["summary"], f"{name} seq {update['seq']}"
            checked += 1
    assert checked > 60


# -- the README's pictures --------------------------------------------------------------------------


def test_screenshots_of_the_spectator_page_in_russian_and_the_overlay_in_spanish(
    pages: Pages, live: Live, tmp_path: Path
) -> None:
    img = Path(os.environ.get("TRACKER_SCREENSHOTS") or tmp_path / "img")
    img.mkdir(parents=True, exist_ok=True)
    spectator = open_spectator(pages, live, "lang=ru", height=1000)
    settle(spectator)
    spectator.screenshot(path=str(img / "spectator-ru.png"), full_page=True)

    stream = pages.open(width=1280, height=720)
    overlay_url = f"{live.tracker.http_url}/overlay/{live.tid}?lang=es&cols=points,KS,SB,games&top=10&legend=order"
    stream.goto(stream_page(tmp_path, overlay_url).as_uri())
    stream.frame_locator("iframe").locator("#rows .row").first.wait_for()
    overlay = next(f for f in stream.frames if f.url.startswith(live.tracker.http_url))
    overlay.wait_for_function("s => Number(document.documentElement.dataset.seq) >= s", arg=live.seq)
    settle(overlay)
    stream.screenshot(path=str(img / "overlay-es.png"))
    for name in ("spectator-ru.png", "overlay-es.png"):
        assert (img / name).stat().st_size > 10_000


# -- accessibility (last: it enters a result of round 9) ----------------------------------------------


def test_the_pages_are_accessible_a_feed_that_logs_polite_announcements_reduced_motion_and_readable_contrast(
    pages: Pages, live: Live
) -> None:
    spectator = open_spectator(pages, live, "lang=en", height=900)
    feed = spectator.locator("#feed")
    assert feed.get_attribute("role") == "log" and feed.get_attribute("aria-live") == "polite"
    announce = spectator.locator("#announce")
    assert announce.get_attribute("role") == "status" and announce.get_attribute("aria-live") == "polite"
    live.enter(round_9()[:1])
    wait_seq(spectator, live.seq)
    said = announce.inner_text()
    assert said.startswith("Standings updated:") and said.count(".") == 1, said

    worst = spectator.evaluate(CONTRAST_JS, "main, header, footer")
    assert worst["ratio"] >= 4.5, f"text below WCAG AA contrast on the spectator page: {worst}"
    spectator.click("#standings tbody tr:first-child .linkish")
    spectator.wait_for_selector("#koya[open] .breakdown tbody tr")
    worst = spectator.evaluate(CONTRAST_JS, "#koya")
    assert worst["ratio"] >= 4.5, f"text below WCAG AA contrast in the Koya breakdown: {worst}"
    spectator.click("#koya-close")
    query = "legend=order&mode=stakes&board=1"
    overlay = pages.open(f"{live.tracker.http_url}/overlay/{live.tid}?{query}", width=1280, height=800)
    wait_seq(overlay, live.seq)
    overlay.wait_for_selector(f'#stakes-box[data-seq="{live.seq}"]:not([hidden])', timeout=60_000)
    worst = overlay.evaluate(CONTRAST_JS, "#board, #stakes-box")
    assert worst["ratio"] >= 4.5, f"text below WCAG AA contrast on the overlay: {worst}"

    for page in (spectator, overlay):
        page.emulate_media(reduced_motion="reduce")
        durations = page.evaluate(
            """() => [...document.querySelectorAll('*')].flatMap(e => {
                const s = getComputedStyle(e);
                return [...s.animationDuration.split(','), ...s.transitionDuration.split(',')].map(parseFloat);
            })"""
        )
        assert max(durations) < 0.001, "no animation or transition runs when motion is reduced"


#: The lowest WCAG contrast of any visible text in the elements `selector` names, against its first opaque
#: background (the overlay's board has its own; a transparent page sits on black in OBS).
CONTRAST_JS = """(selector) => {
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const over = (top, under) => { const a = top[3] ?? 1; return [0, 1, 2].map((i) => top[i] * a + under[i] * (1 - a)); };
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if ((c[3] ?? 1) > 0) layers.push(c);
      if ((c[3] ?? 1) === 1) break;
    }
    let colour = [0, 0, 0];
    for (const layer of layers.reverse()) colour = over(layer, colour);
    return colour;
  };
  let worst = { ratio: 21 };
  for (const root of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const el = node.parentElement;
      const shown = el.checkVisibility({ opacityProperty: true, visibilityProperty: true });
      if (!node.textContent.trim() || !shown) continue;
      if (el.closest('.sr-only, option')) continue;
      const s = getComputedStyle(el);
      const fg = over(rgb(s.color), background(el));
      const [a, b] = [lum(fg), lum(background(el))].sort((x, y) => y - x);
      const ratio = (a + 0.05) / (b + 0.05);
      const text = node.textContent.trim().slice(0, 40);
      if (ratio < worst.ratio) worst = { ratio, text, cls: el.className, color: s.color };
    }
  }
  return worst;
}"""


def test_a_lower_third_on_the_overlay_is_said_in_the_overlays_language(pages: Pages, live: Live) -> None:
    """Vachier-Lagrave clinches 1st with the fourth result of round 9."""
    overlay = pages.open(f"{live.tracker.http_url}/overlay/{live.tid}?lang=ru&cues=1&top=5", width=1280, height=720)
    wait_seq(overlay, live.seq)
    # a cue is a change between two stakes the server computed: the ones before the results first (run alone, the
    # results came before any and the first stakes computed were already the clinched ones: no cue)
    baseline = pages.open(f"{live.tracker.http_url}/overlay/{live.tid}?mode=stakes&board=1", width=1280, height=720)
    baseline.wait_for_selector(f'#stakes-box[data-seq="{live.seq}"]:not([hidden])', timeout=60_000)
    live.enter(round_9()[:4])
    wait_seq(overlay, live.seq)
    overlay.wait_for_selector('#cue[data-kind="clinched"]:not([hidden])', timeout=60_000)
    text = overlay.locator("#cue").inner_text()
    assert "Vachier-Lagrave" in text and english_left(text, "ru", live.names) == [], text
