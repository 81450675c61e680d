"""The pages people look at, in a real browser: overlay, spectator page, arbiter dashboard.

Playwright drives Debian's Chromium (``/usr/bin/chromium``; never a
downloaded browser) against a real ``tracker up`` process.  Events go in
over the websocket as an arbiter client would send them, and every check
waits for a DOM state (``data-seq`` on ``<html>``, an element, a text) with
a timeout — no fixed sleeps.

Without Chromium the tests are skipped, unless ``TRACKER_REQUIRE_BROWSER=1``
(CI) makes a missing browser a failure.  The screenshot test writes to a
scratch directory; ``make screenshots`` (``TRACKER_SCREENSHOTS=docs/img``)
writes the README's pictures.
"""

from __future__ import annotations

import json
import os
import re
import socket
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import ClientConnection, connect

from tests.conftest import REPO, TOKEN, RunningTracker, data_file
from tracker.core.events import Event, Player, ResultRecorded, TournamentOpened, encode_event
from tracker.formats import TournamentFile
from tracker.formats.files import read_file
from tracker.protocol import js_number, standings_digest

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TIMEOUT = 30_000  # ms, for any DOM state the pages must reach (generous: a busy machine; what is waited for is named)
SHARED_FILES = ["fide-tec-exercise16-rr6.trf", "sinquefield-cup-2021.trf"]
XSS_NAME = "<img src=x onerror=alert(1)>"
SYMBOLS = {"1": "1", "=": "½", "0": "0", "+": "+", "-": "−", "W": "1", "D": "½", "L": "0"}

Page = Any  # playwright.sync_api.Page, imported lazily so that a missing Playwright can skip


def _missing(reason: str) -> None:
    if os.environ.get("TRACKER_REQUIRE_BROWSER") == "1":
        pytest.fail(f"TRACKER_REQUIRE_BROWSER=1 but {reason}; install it with: apt-get install -y chromium")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium for the module (contexts keep the tests apart)."""
    if not Path(CHROMIUM).exists():
        _missing(f"{CHROMIUM} is missing")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed")
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


class Pages:
    """Opens pages for one test; records dialogs and script errors of all of them.

    The pages of a test share one browser context (one per ``bypass_csp``), each with its own viewport: a
    context costs Chromium about a second of CPU to make (six overlays in six contexts took 9.9 s of its CPU,
    in one context 4.0 s), and the pages keep nothing in it that another could see (no cookies or local
    storage; ``sessionStorage`` is per page).  Each test gets fresh contexts, closed at its end.
    """

    def __init__(self, browser: Any) -> None:
        self.browser = browser
        self.contexts: dict[bool, Any] = {}
        self.others: list[Any] = []  # contexts a test made itself (another locale), closed with the rest
        self.dialogs: list[str] = []
        self.errors: list[str] = []

    def open(self, url: str | None = None, *, width: int = 1280, height: int = 900, bypass_csp: bool = False) -> Page:
        context = self.contexts.get(bypass_csp)
        if context is None:
            context = self.contexts[bypass_csp] = self.browser.new_context(bypass_csp=bypass_csp)
            context.set_default_timeout(TIMEOUT)
        page = context.new_page()
        page.set_viewport_size({"width": width, "height": height})
        page.on("dialog", self._dialog)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        if url is not None:
            page.goto(url)
        return page

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def close(self) -> None:
        for context in [*self.contexts.values(), *self.others]:
            context.close()


@pytest.fixture
def pages(browser: Any) -> Iterator[Pages]:
    opened = Pages(browser)
    yield opened
    opened.close()
    assert opened.errors == [], f"script errors in the pages: {opened.errors}"
    assert opened.dialogs == [], f"a page opened a dialog (a script ran): {opened.dialogs}"


# -- talking to the tracker -------------------------------------------------------


class Arbiter:
    """A websocket arbiter client: submit one event, wait for its ack, return the seq."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws

    def submit(self, event: Event) -> int:
        body = json.loads(encode_event(event))
        self.ws.send(json.dumps({"type": "submit", "token": TOKEN, "event": body}))
        while True:
            reply = json.loads(self.ws.recv(timeout=60))  # generous: a busy machine
            if reply.get("type") in ("ack", "rejected") and reply.get("id") == event.id:
                assert reply["type"] == "ack", f"{event.id} was rejected: {reply}"
                return int(reply["seq"])

    def submit_all(self, events: list[Event]) -> int:
        seq = 0
        for event in events:
            seq = self.submit(event)
        return seq


@contextmanager
def arbiter_of(tracker: RunningTracker) -> Iterator[Arbiter]:
    with connect(tracker.ws_url, max_size=2**24, open_timeout=10) as ws:
        yield Arbiter(ws)


def events_of(tf: TournamentFile) -> list[Event]:
    return [tf.opened, *tf.events]


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def standings_of(tracker: RunningTracker, tid: str) -> dict[str, Any]:
    data: dict[str, Any] = get_json(f"{tracker.http_url}/api/tournaments/{tid}/standings")
    return data


def fmt(value: float) -> str:
    """The pages' number format: 2.5 → "2½", 0.25 → "¼", 3.0 → "3"."""
    whole, rest = divmod(abs(value), 1)
    sign = "−" if value < 0 else ""
    glyph = {0.25: "¼", 0.5: "½", 0.75: "¾"}.get(round(rest, 2))
    if rest == 0:
        return f"{sign}{int(whole)}"
    if glyph:
        return f"{sign}{int(whole) if whole else ''}{glyph}"
    return f"{sign}{abs(value):.2f}".rstrip("0")


def wait_seq(page: Page, seq: int, timeout: float = TIMEOUT) -> None:
    page.wait_for_function("s => Number(document.documentElement.dataset.seq) >= s", arg=seq, timeout=timeout)


def feed_log(page: Page) -> list[list[Any]]:
    log: list[list[Any]] = page.evaluate("window.trackerFeed.log")
    return log


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def overlay_rows(page: Page) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = page.evaluate(
        """() => [...document.querySelectorAll('#rows .row')].map(r => ({
            start: Number(r.dataset.start),
            rank: r.querySelector('.rank').textContent,
            name: r.querySelector('.name .n').textContent,
            values: [...r.querySelectorAll('.v')].map(v => v.textContent),
        }))"""
    )
    return rows


def expected_overlay(standings: dict[str, Any], cols: list[str], top: int) -> list[dict[str, Any]]:
    def value(row: dict[str, Any], col: str) -> str:
        if col == "points":
            return fmt(row["points"])
        if col == "games":
            return str(row["games"])
        return fmt(row["tiebreaks"][col])

    return [
        {
            "start": row["start_no"],
            "rank": str(row["rank"]),
            "name": row["name"],
            "values": [value(row, c) for c in cols],
        }
        for row in standings["standings"][:top]
    ]


def points_per_code(opened: TournamentOpened) -> dict[str, float]:
    s = opened.scoring

    def f(value: Decimal | None, default: Decimal) -> float:
        return float(default if value is None else value)

    return {
        "1": float(s.win), "W": float(s.win), "=": float(s.draw), "D": float(s.draw),
        "0": float(s.loss), "L": float(s.loss), "+": f(s.forfeit_win, s.win), "-": float(s.forfeit_loss),
    }  # fmt: skip


def cell_text(row: dict[str, Any], opponent: int) -> str:
    return " ".join(SYMBOLS[code] for _, opp, _, code in row["results"] if opp == opponent)


# -- overlay ------------------------------------------------------------------------

# counts rows that start a slide: the FLIP step sets translateY, then clears it to animate
COUNT_SLIDES = """() => {
    window.slides = 0;
    new MutationObserver(changes => changes.forEach(c => {
        if ((c.oldValue || '').includes('translateY')) window.slides += 1;
    })).observe(document.getElementById('rows'),
                {attributes: true, subtree: true, attributeOldValue: true, attributeFilter: ['style']});
}"""


def test_overlay_shows_each_update_after_its_ack_and_ends_on_the_final_standings(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    tracker = tracker_factory()
    tf = read_file(str(data_file("sinquefield-cup-2021.trf")))
    tid = tf.opened.tournament
    cols = ["points", "KS", "SB", "games"]
    # opened before the tournament exists, as a streamer sets up the browser source
    overlay = pages.open(f"{tracker.http_url}/overlay/{tid}?cols={','.join(cols)}&top=10")
    small = pages.open(f"{tracker.http_url}/overlay/{tid}?top=3&theme=light&scale=1.5&cols=ks,WON")
    wait_seq(overlay, 0)
    wait_seq(small, 0)
    overlay.evaluate(COUNT_SLIDES)

    with arbiter_of(tracker) as arbiter:
        for number, event in enumerate(events_of(tf)):
            seq = arbiter.submit(event)
            wait_seq(overlay, seq)  # each acknowledged update is on screen (how soon is make bench's)
            if number == 5:
                assert overlay.locator("#rows .prov").count() > 0, "provisional KS values must be marked"
                assert overlay.get_attribute("html", "data-provisional") == "true"
    wait_seq(small, seq)

    final = standings_of(tracker, tid)
    assert final["seq"] == seq and not final["provisional"]
    assert overlay_rows(overlay) == expected_overlay(final, cols, 10)
    assert overlay.locator("#rows .prov").count() == 0, "final values are not provisional"
    assert overlay.evaluate("window.slides") > 0, "rows slide to their new rank (FLIP)"
    assert [kind for kind, _ in feed_log(overlay)] == ["snapshot"] + ["update"] * seq
    assert [s for _, s in feed_log(overlay)] == list(range(seq + 1)), "every update shown, in order"

    assert overlay_rows(small) == expected_overlay(final, ["KS", "WON"], 3)
    assert small.evaluate("document.documentElement.classList.contains('theme-light')")
    assert small.evaluate("getComputedStyle(document.documentElement).fontSize") == "24px"
    assert overlay.evaluate("getComputedStyle(document.body).backgroundColor") == "rgba(0, 0, 0, 0)"


def test_overlay_reports_bad_parameters_once_ignores_them_and_can_hide_the_connection_badge_on_air(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    tracker = tracker_factory()
    tid, seq = sinquefield_after(tracker, 6)
    warnings: list[str] = []
    overlay = pages.open()
    overlay.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    overlay.goto(
        f"{tracker.http_url}/overlay/{tid}?cols=points,XX,SB&top=abc&theme=purple&status=dot&legend=order&bogus=1"
    )
    wait_seq(overlay, seq)
    standings = standings_of(tracker, tid)
    # the bad column is left out (no column of dashes), top=abc falls back to 10 rows, the theme to dark
    assert overlay_rows(overlay) == expected_overlay(standings, ["points", "SB"], 10)
    assert overlay.evaluate("document.documentElement.classList.contains('theme-dark')")
    assert overlay.locator("#columns .cell.num").all_text_contents() == ["Pts", "SB"]
    # each bad parameter said once, by name
    with arbiter_of(tracker) as arbiter:  # another update re-renders: nothing is reported twice
        later = [e for e in read_file(str(data_file("sinquefield-cup-2021.trf"))).events if getattr(e, "round", 0) == 7]
        wait_seq(overlay, arbiter.submit(later[0]))
    for needle in ("cols=XX", "top=abc", "theme=purple", "bogus=1"):
        assert sum(needle.split("=")[0] in w and needle.split("=")[1] in w for w in warnings) == 1, (needle, warnings)
    assert len(warnings) == 4, warnings
    # the ranking order as a legend
    assert overlay.locator("#foot .order").inner_text() == "Ranked by " + " › ".join(["Pts", *standings["codes"]])
    # on air: no badge while live, and only a small dot (no red text) while the connection is down
    assert overlay.locator("#status").inner_text() == ""
    assert not overlay.locator("#status").is_visible()
    tracker.stop()
    overlay.wait_for_function("() => document.documentElement.dataset.status === 'reconnecting'")
    assert overlay.locator("#status").inner_text() == ""
    box = overlay.locator("#status").bounding_box()
    assert box is not None and box["width"] < 12 and box["height"] < 12, box
    assert overlay.locator("#status").get_attribute("title") == "connection: reconnecting…"


def proxied_overlay(
    pages: Pages,
    tracker: RunningTracker,
    tid: str,
    edit: Callable[[dict[str, Any], str | bytes], str | bytes | None],
) -> tuple[Any, list[dict[str, Any]]]:
    """An overlay page whose websocket goes through a proxy in the test: what the page sends is recorded
    (returned), what the server sends passes through ``edit(decoded, raw)`` (``None``: dropped)."""
    sent: list[dict[str, Any]] = []

    def route(ws: Any) -> None:
        server = ws.connect_to_server()

        def from_page(message: str | bytes) -> None:
            sent.append(json.loads(message))
            server.send(message)

        def from_server(message: str | bytes) -> None:
            forwarded = edit(json.loads(message), message)
            if forwarded is not None:
                ws.send(forwarded)

        ws.on_message(from_page)
        server.on_message(from_server)

    overlay = pages.open()
    overlay.route_web_socket(re.compile(r"/ws$"), route)
    overlay.goto(f"{tracker.http_url}/overlay/{tid}")
    return overlay, sent


def test_overlay_fills_a_gap_by_resubscribing_with_since(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    tracker = tracker_factory()
    tf = read_file(str(data_file("fide-tec-exercise16-rr6.trf")))
    tid = tf.opened.tournament
    dropped: list[int] = []

    def drop_seq_5(m: dict[str, Any], message: str | bytes) -> str | bytes | None:
        if m.get("type") == "update" and m.get("seq") == 5 and not dropped:
            dropped.append(5)  # lost on the way: the page must notice seq 6 does not follow 4
            return None
        return message

    overlay, sent = proxied_overlay(pages, tracker, tid, drop_seq_5)
    wait_seq(overlay, 0)
    with arbiter_of(tracker) as arbiter:
        seq = arbiter.submit_all(events_of(tf))
    wait_seq(overlay, seq)
    assert dropped == [5]
    assert {"type": "subscribe", "tournament": tid, "updates": "delta", "since": 4} in sent
    assert [s for _, s in feed_log(overlay)] == list(range(seq + 1)), "the gap was filled, nothing skipped"
    assert overlay_rows(overlay) == expected_overlay(standings_of(tracker, tid), ["points", "KS"], 10)


def test_the_pages_digest_is_pythons_on_every_delta_of_a_whole_tournament(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    tracker = tracker_factory()
    tf = read_file(str(data_file("sinquefield-cup-2021.trf")))
    tid = tf.opened.tournament
    frames: list[dict[str, Any]] = []

    def keep(m: dict[str, Any], message: str | bytes) -> str | bytes:
        frames.append(m)
        return message

    overlay, _ = proxied_overlay(pages, tracker, tid, keep)
    spectator = pages.open(f"{tracker.http_url}/t/{tid}")
    wait_seq(overlay, 0)
    wait_seq(spectator, 0)
    with arbiter_of(tracker) as arbiter:
        seq = arbiter.submit_all(events_of(tf))
    wait_seq(overlay, seq)
    wait_seq(spectator, seq)
    deltas = [f for f in frames if f["type"] == "update"]
    assert len(deltas) == seq and all(f.get("delta") is True for f in deltas), "the page asks for deltas"
    # every delta's digest (Python's) was checked by the page against its own: none failed
    for page in (overlay, spectator):
        assert page.evaluate("window.trackerFeed.resyncs") == 0
        assert [kind for kind, _ in feed_log(page)] == ["snapshot"] + ["update"] * seq
    final = standings_of(tracker, tid)
    assert overlay.evaluate("window.trackerFeed.digest()") == standings_digest(final) == deltas[-1]["digest"]
    assert overlay_rows(overlay) == expected_overlay(final, ["points", "KS"], 10)
    # and the numbers themselves: JavaScript's String() is what js_number writes, on awkward doubles too
    values = [2.0, 0.5, 1 / 3, 23.75, 1e21, 1e-7, 0.000001, 123456789012345680000.0, -1.5e-10, 2**53 + 0.0]
    assert overlay.evaluate("vs => vs.map(String)", values) == [js_number(v) for v in values]


def test_a_delta_whose_digest_does_not_match_makes_the_page_start_over_from_a_snapshot(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    tracker = tracker_factory()
    tf = read_file(str(data_file("fide-tec-exercise16-rr6.trf")))
    tid = tf.opened.tournament
    spoiled: list[int] = []

    def spoil_seq_5(m: dict[str, Any], message: str | bytes) -> str | bytes:
        if m.get("type") == "update" and m.get("seq") == 5 and not spoiled:
            spoiled.append(5)
            m["digest"] = (m["digest"] + 1) % 2**32  # a delta applied wrong would look like this
            return json.dumps(m)
        return message

    overlay, sent = proxied_overlay(pages, tracker, tid, spoil_seq_5)
    wait_seq(overlay, 0)
    with arbiter_of(tracker) as arbiter:
        seq = arbiter.submit_all(events_of(tf))
    wait_seq(overlay, seq)
    assert spoiled == [5] and overlay.evaluate("window.trackerFeed.resyncs") == 1
    assert sent[-1] == {"type": "subscribe", "tournament": tid, "updates": "delta"}, "resubscribed without since"
    kinds = [kind for kind, _ in feed_log(overlay)]
    assert "resync" in kinds and kinds[kinds.index("resync") + 1] == "snapshot"
    assert overlay.evaluate("window.trackerFeed.digest()") == standings_digest(standings_of(tracker, tid))
    assert overlay_rows(overlay) == expected_overlay(standings_of(tracker, tid), ["points", "KS"], 10)


def test_overlay_reconnects_after_a_server_restart_and_resumes(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    port = free_port()
    first = tracker_factory("--port", str(port))
    tf = read_file(str(data_file("fide-tec-exercise16-rr6.trf")))
    tid = tf.opened.tournament
    events = events_of(tf)
    with arbiter_of(first) as arbiter:
        before = arbiter.submit_all(events[:8])
    overlay = pages.open(f"{first.http_url}/overlay/{tid}")
    wait_seq(overlay, before)

    first.stop()
    overlay.wait_for_function("() => document.documentElement.dataset.status === 'reconnecting'")
    assert overlay.locator("#status").inner_text() == "reconnecting…"

    second = tracker_factory("--port", str(port), data_dir=first.data_dir)
    with arbiter_of(second) as arbiter:
        seq = arbiter.submit_all(events[8:])
    wait_seq(overlay, seq, timeout=60_000)  # backoff: the next attempt may be a few seconds away
    overlay.wait_for_function("() => document.documentElement.dataset.status === 'live'")
    log = feed_log(overlay)
    assert [s for _, s in log] == list(range(log[0][1], seq + 1)), f"resumed with since, no gap: {log}"
    assert overlay_rows(overlay) == expected_overlay(standings_of(second, tid), ["points", "KS"], 10)


# -- spectator page ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        *(data_file(name) for name in SHARED_FILES),
        REPO / "tests" / "data" / "double.trf",
        REPO / "tests" / "data" / "three-one-zero.trf",
    ],
    ids=lambda p: Path(p).stem,
)
def test_spectator_crosstable_and_koya_breakdown_match_the_standings(
    path: Path, tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    tracker = tracker_factory()
    tf = read_file(str(path))
    tid = tf.opened.tournament
    with arbiter_of(tracker) as arbiter:
        seq = arbiter.submit_all(events_of(tf))
    page = pages.open(f"{tracker.http_url}/t/{tid}")
    wait_seq(page, seq)
    final = standings_of(tracker, tid)
    rows = {row["start_no"]: row for row in final["standings"]}
    codes = final["codes"]

    shown = page.evaluate(
        """() => [...document.querySelectorAll('#standings tbody tr')].map(tr => [
            Number(tr.dataset.start), tr.querySelector('.player button').textContent,
            tr.querySelector('.pts').textContent,
            ...[...tr.querySelectorAll('td[data-code] .v')].map(v =>
                v.parentElement.dataset.code === 'DE' ? Number(v.dataset.value) : v.textContent)])"""
    )
    # DE is shown as what it means (see the explained-columns test); data-value keeps the server's place
    assert shown == [
        [
            r["start_no"],
            r["name"],
            fmt(r["points"]),
            *(r["tiebreaks"][c] if c == "DE" else fmt(r["tiebreaks"][c]) for c in codes),
        ]
        for r in final["standings"]
    ]

    cells = page.evaluate(
        """() => [...document.querySelectorAll('#crosstable td.cell')].map(td =>
            [Number(td.dataset.row), Number(td.dataset.col), td.textContent])"""
    )
    order = [r["start_no"] for r in final["standings"]]
    assert cells == [[a, b, cell_text(rows[a], b)] for a in order for b in order if a != b]
    if tf.opened.format == "double":
        assert all(len(text.split()) == 2 for _, _, text in cells), "two games per cell in a double round robin"

    points = points_per_code(tf.opened)
    for start_no, row in rows.items():
        page.click(f'#standings tr[data-start="{start_no}"] .player button')
        page.wait_for_function(
            "name => document.getElementById('koya').open"
            " && document.getElementById('koya-h').textContent.endsWith(name)",
            arg=row["name"],
        )
        breakdown = page.evaluate(
            """() => [...document.querySelectorAll('#koya-body .breakdown tbody tr')].map(tr =>
                [Number(tr.dataset.start), tr.dataset.qualified === 'true', tr.querySelector('.scored').textContent])"""
        )
        against: dict[int, float] = {}
        for _, opp, _, code in row["results"]:
            if opp:
                against[opp] = against.get(opp, 0.0) + points[code]
        assert sorted(breakdown) == sorted([opp, rows[opp]["qualified"], fmt(p)] for opp, p in against.items())
        ks = row["tiebreaks"]["KS"]
        assert sum(p for opp, p in against.items() if rows[opp]["qualified"]) == ks
        assert page.locator("#koya-body .total").inner_text() == fmt(ks)  # the server's value, not a sum made here
        page.keyboard.press("Escape")
        page.wait_for_function("() => !document.getElementById('koya').open")

    if path.name == "sinquefield-cup-2021.trf":
        # readable on a phone: nothing wider than the screen; wide tables scroll inside their card
        page.set_viewport_size({"width": 390, "height": 844})
        page.wait_for_function("() => document.documentElement.scrollWidth <= 390")
        assert page.locator("#standings").is_visible()
        page.click('#standings tr[data-start="1"] .player button')
        box = page.locator("#koya").bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390


def test_spectator_columns_explain_themselves_and_de_is_the_place_among_the_tied_players(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    tracker = tracker_factory()
    tid, seq = sinquefield_after(tracker, 9)
    page = pages.open(f"{tracker.http_url}/t/{tid}")
    wait_seq(page, seq)
    final = standings_of(tracker, tid)
    # every tie-break column has a title saying what it counts and which way is better, and a legend line
    for code in final["codes"]:
        title = page.get_attribute(f'#standings th[data-code="{code}"]', "title") or ""
        assert "better" in title and len(title) > 30, (code, title)
        legend = page.locator(f'#columns-legend dd[data-code="{code}"]').inner_text()
        assert "better" in legend, (code, legend)
    assert page.locator("#columns-legend dd[data-order]").inner_text().startswith("Pts › " + " › ".join(final["codes"]))
    # DE: the place among the players tied on points, as the CLI and tracker check write it (issue 28, item 6);
    # the title gives the points scored against them
    points = points_per_code(read_file(str(data_file("sinquefield-cup-2021.trf"))).opened)
    rows = {r["start_no"]: r for r in final["standings"]}
    checked = 0
    for row in final["standings"]:
        cell = page.locator(f'#standings tr[data-start="{row["start_no"]}"] td[data-code="DE"]')
        place = row["tiebreaks"]["DE"]
        if not place:
            assert cell.locator(".v").inner_text() == "—"
            continue
        tied = [r for r in final["standings"] if r["points"] == row["points"] and r["start_no"] != row["start_no"]]
        games = [(opp, code) for _, opp, _, code in row["results"] if opp in {t["start_no"] for t in tied}]
        assert cell.locator(".v").inner_text() == {1: "1st", 2: "2nd", 3: "3rd"}.get(int(place), f"{int(place)}th")
        scored = fmt(sum(points[c] for _, c in games))
        assert f"{scored} point" in (cell.get_attribute("title") or "") and "Direct encounter" in (
            cell.get_attribute("title") or ""
        )
        assert rows[row["start_no"]]["tiebreaks"]["DE"] == float(cell.locator(".v").get_attribute("data-value") or 0)
        checked += 1
    assert checked >= 2, "the cut after round 9 has players tied on points"
    # settled values and locked ranks: the event is over, everything is final
    assert page.locator("#standings td.pts[data-settled=true]").count() == len(rows)


def test_why_is_a_above_b_names_the_first_criterion_that_separates_a_real_tie(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    tracker = tracker_factory()
    tid, seq = sinquefield_after(tracker, 6)
    page = pages.open(f"{tracker.http_url}/t/{tid}")
    wait_seq(page, seq)
    standings = standings_of(tracker, tid)
    codes = standings["codes"]
    tied = [
        (a, b)
        for a in standings["standings"]
        for b in standings["standings"]
        if a["rank"] < b["rank"] and a["points"] == b["points"]
    ]
    assert tied, "the cut after round 6 has players tied on points"
    upper, lower = tied[0]
    decides = next(c for c in codes if upper["tiebreaks"][c] != lower["tiebreaks"][c])
    page.select_option("#why-a", str(lower["start_no"]))  # asked the other way round
    page.select_option("#why-b", str(upper["start_no"]))
    page.wait_for_function(
        "n => document.getElementById('why-answer').dataset.upper === String(n)", arg=upper["start_no"]
    )
    answer = page.locator("#why-answer")
    assert answer.get_attribute("data-criterion") == decides
    text = answer.inner_text()
    assert f"{upper['name']} (rank {upper['rank']}) is above {lower['name']}" in text
    decisive = page.locator("#why-answer li.decides").inner_text()
    assert decides in decisive or "Direct encounter" in decisive
    if decides != "DE":
        assert fmt(upper["tiebreaks"][decides]) in decisive and fmt(lower["tiebreaks"][decides]) in decisive
    if decides.startswith("KS"):
        assert "Counting for" in text
    # provisional: a player with games to play has points that are not settled yet
    assert page.locator("#standings td.pts[data-settled=false]").count() > 0


def test_what_changed_is_filled_from_the_recent_history_on_a_late_opened_page_and_after_a_reconnect(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    port = free_port()
    first = tracker_factory("--port", str(port))
    tid, seq = sinquefield_after(first, 8)
    page = pages.open(f"{first.http_url}/t/{tid}")  # opened late: 8 rounds are already in
    wait_seq(page, seq)
    page.wait_for_function("s => document.documentElement.dataset.backfilled === String(s)", arg=seq)
    items = page.evaluate(
        "() => [...document.querySelectorAll('#feed li:not(.note)')]"
        ".map(li => [Number(li.dataset.seq), li.textContent])"
    )
    assert len(items) >= 20, "the recent history, not only 'Standings after 40 games'"
    assert [s for s, _ in items] == sorted({s for s, _ in items}, reverse=True), "newest first, each once"
    assert items[0][0] == seq and "(round 8)" in items[0][1]
    # a restart the page cannot resume from (the new gateway keeps no history): the feed is kept
    first.stop()
    page.wait_for_function("() => document.documentElement.dataset.status === 'reconnecting'")
    second = tracker_factory("--port", str(port), data_dir=first.data_dir)
    game = ResultRecorded(id="late-r9", tournament=tid, round=9, white=3, black=9, result="1/2-1/2")
    with arbiter_of(second) as arbiter:
        after = arbiter.submit(game)
    wait_seq(page, after, timeout=60_000)
    texts = page.evaluate("() => [...document.querySelectorAll('#feed li')].map(li => li.textContent)")
    assert any("(round 8)" in t for t in texts), "what was shown before the reconnect stays"
    assert page.locator(f'#feed li[data-seq="{seq}"]:not(.note)').count() == 1


# -- arbiter dashboard ------------------------------------------------------------------------


def test_arbiter_submits_and_corrects_a_result_and_spectators_see_both(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    tracker = tracker_factory()
    tf = read_file(str(data_file("fide-tec-exercise16-rr6.trf"))).until_round(2)
    tid = tf.opened.tournament
    with arbiter_of(tracker) as arbiter_ws:
        seq = arbiter_ws.submit_all(events_of(tf))

    spectator = pages.open(f"{tracker.http_url}/t/{tid}")
    wait_seq(spectator, seq)
    dash = pages.open(f"{tracker.http_url}/arbiter/{tid}")
    # the gate opens once the page's language has loaded (a top-level await, after the load event)
    dash.wait_for_selector("#gate", state="visible")
    dash.fill("#token", TOKEN)
    dash.click("#gate-form button[type=submit]")
    wait_seq(dash, seq)
    assert TOKEN not in dash.url and TOKEN not in dash.content(), "the token is never in the URL or the page"
    assert dash.evaluate("sessionStorage.getItem('tracker-arbiter-token')") == TOKEN
    dash.wait_for_selector("#proj-players tbody tr")  # the projection arrives for arbiters
    assert dash.locator("#proj-players tbody tr").count() == 6

    # Round 3, Charline (3) – Alyx (1): entered wrongly as 1-0 first
    dash.select_option("#round", "3")
    dash.select_option("#white", "3")
    dash.select_option("#black", "1")
    dash.select_option("#result", "1-0")
    dash.click("#send")
    wait_seq(spectator, seq + 1)
    assert spectator.locator('#crosstable td[data-row="3"][data-col="1"]').inner_text() == "1"
    assert spectator.locator('#crosstable td[data-row="1"][data-col="3"]').inner_text() == "0"
    assert "Charline–Alyx 1–0" in spectator.locator("#feed li").first.inner_text()
    dash.wait_for_selector("#accepted li")
    # round 3 is being played: its other games are not "missing" (issue 28, item 4)
    assert dash.locator('#warnings li[data-kind="missing"]').count() == 0

    # the same result entered twice: warned before sending, rejected, and flagged (the form has moved on
    # to the next game of the round, issue 28 item 3: the arbiter picks the game again)
    dash.wait_for_function("() => document.getElementById('black').value !== '1'")
    dash.select_option("#white", "3")
    dash.select_option("#black", "1")
    dash.select_option("#result", "1-0")
    assert "duplicate" in dash.locator("#precheck").inner_text()
    dash.click("#send")
    dash.wait_for_selector('#warnings li[data-kind="duplicate"][data-code="duplicate-result"]')
    assert dash.locator('#rejected li[data-code="duplicate-result"]').count() == 0, "a duplicate is listed once"

    # the correction, from the round's list of recorded games
    dash.click('#round-games tr[data-white="3"][data-black="1"] button:text("Correct")')
    assert dash.locator("input[name=action][value=correct]").is_checked()
    dash.select_option("#result", "0-1")
    dash.click("#send")
    wait_seq(spectator, seq + 2)
    assert spectator.locator('#crosstable td[data-row="3"][data-col="1"]').inner_text() == "0"
    assert spectator.locator('#crosstable td[data-row="1"][data-col="3"]').inner_text() == "1"
    final = standings_of(tracker, tid)
    alyx = next(r for r in final["standings"] if r["start_no"] == 1)
    assert spectator.locator('#standings tr[data-start="1"] .pts').inner_text() == fmt(alyx["points"])
    assert "Charline–Alyx" in spectator.locator("#feed li").first.inner_text()

    # and a void empties the cell again
    dash.click('#round-games tr[data-white="3"][data-black="1"] button:text("Void")')
    dash.click("#send")
    wait_seq(spectator, seq + 3)
    assert spectator.locator('#crosstable td[data-row="3"][data-col="1"]').inner_text() == ""
    # the spectator can see the update before the dashboard has rendered its own ack: wait for it
    dash.wait_for_function("() => document.querySelectorAll('#accepted li[data-id]').length >= 3")
    assert dash.locator("#accepted li[data-id]").count() == 3, "this device's three entries, each once"


def open_dashboard(pages: Pages, tracker: RunningTracker, tid: str, seq: int) -> Page:
    """An arbiter dashboard signed in and showing ``seq``."""
    dash = pages.open(f"{tracker.http_url}/arbiter/{tid}")
    dash.fill("#token", TOKEN)
    dash.click("#gate-form button[type=submit]")
    wait_seq(dash, seq)
    return dash


def sinquefield_after(tracker: RunningTracker, rounds: int) -> tuple[str, int]:
    """The Sinquefield Cup 2021 up to ``rounds`` in ``tracker``: its id and seq."""
    tf = read_file(str(data_file("sinquefield-cup-2021.trf"))).until_round(rounds)
    with arbiter_of(tracker) as arbiter:
        seq = arbiter.submit_all(events_of(tf))
    return tf.opened.tournament, seq


def test_arbiter_enters_the_last_round_with_one_click_per_game_and_can_undo(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    tracker = tracker_factory()
    tid, seq = sinquefield_after(tracker, 8)
    dash = open_dashboard(pages, tracker, tid, seq)
    # round 9's five scheduled games are rows, in board order; nothing of round 8 is offered
    dash.wait_for_selector('[data-pending="9:3-9"]')
    rows = dash.eval_on_selector_all(
        '#pending .pending-round[data-round="9"] [data-pending]', "rs => rs.map(r => r.dataset.pending)"
    )
    assert rows == ["9:3-9", "9:4-1", "9:5-8", "9:6-2", "9:7-10"]
    assert dash.locator('[data-pending^="8:"]').count() == 0
    # the form starts on a game of the open round, not on "1 – 2"
    assert (dash.input_value("#round"), dash.input_value("#white"), dash.input_value("#black")) == ("9", "3", "9")

    # one click: Mamedyarov–Vachier-Lagrave ½–½ is recorded
    dash.click('[data-pending="9:3-9"] [data-result="1/2-1/2"]')
    wait_seq(dash, seq + 1)
    row = standings_of(tracker, tid)["standings"]
    mvl = next(r for r in row if r["start_no"] == 9)
    assert [9, 3, "b", "="] in [list(x) for x in mvl["results"]]
    dash.wait_for_selector('[data-pending="9:3-9"].done [data-undo]')
    # undo within the few seconds: the game is voided and offered again
    dash.click('[data-pending="9:3-9"] [data-undo]')
    wait_seq(dash, seq + 2)
    dash.wait_for_selector('[data-pending="9:3-9"]:not(.done) [data-result="1-0"]')
    assert not any(
        x[0] == 9 for x in next(r for r in standings_of(tracker, tid)["standings"] if r["start_no"] == 9)["results"]
    )

    # keyboard: focus a row, "1" records White's win and moves to the next row
    dash.focus('[data-pending="9:4-1"]')
    dash.keyboard.press("1")
    wait_seq(dash, seq + 3)
    dash.wait_for_function("() => document.activeElement.dataset.pending === '9:5-8'")
    dash.keyboard.press("=")
    wait_seq(dash, seq + 4)
    # a forfeit from the row's menu
    dash.select_option('[data-pending="9:6-2"] select[data-forfeit]', "-+")
    wait_seq(dash, seq + 5)
    results = {
        (r["start_no"], x[1]): x[3] for r in standings_of(tracker, tid)["standings"] for x in r["results"] if x[0] == 9
    }
    assert (results[(4, 1)], results[(5, 8)], results[(6, 2)]) == ("1", "=", "-")
    # once the undo time is over, entered games leave the list; the later rounds' rows are there too
    dash.wait_for_function("() => !document.querySelector('[data-pending=\"9:4-1\"]')", timeout=60_000)
    assert dash.locator('#pending [data-pending="9:7-10"] [data-result]').count() == 3


def test_a_bye_for_a_scheduled_player_is_refused_and_every_arbiter_device_sees_it_after_a_reload(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    tracker = tracker_factory()
    tid, seq = sinquefield_after(tracker, 8)
    dash = open_dashboard(pages, tracker, tid, seq)
    second = open_dashboard(pages, tracker, tid, seq)  # another arbiter device, open all along
    dash.wait_for_selector('[data-pending="9:7-10"]')

    # Svidler (7) has a round-9 game against Xiong (10): the form warns, the server refuses and names the game
    dash.click("label:has(> input[name=action][value=bye])")
    dash.select_option("#round", "9")
    dash.select_option("#player", "7")
    assert "scheduled game" in dash.locator("#precheck").inner_text()
    dash.click("#send")
    item = dash.wait_for_selector('#rejected li[data-code="scheduled-game"]')
    assert item is not None
    reason = item.inner_text()
    assert "scheduled game 7–10 in round 9" in reason and "Svidler" in reason
    assert "(" not in reason.split("—", 1)[1].split("(a forfeit")[0], f"plain words: {reason}"
    assert dash.locator('[data-pending="9:7-10"] [data-result]').count() == 3, "the game is still to be entered"
    # the same game entered twice: one warning, not also a rejection
    game = ResultRecorded(id="again", tournament=tid, round=8, white=1, black=7, result="1-0")
    with arbiter_of(tracker) as arbiter:
        arbiter.ws.send(json.dumps({"type": "submit", "token": TOKEN, "event": json.loads(encode_event(game))}))
        assert json.loads(arbiter.ws.recv(timeout=60))["type"] == "rejected"

    def shows_both(page: Page) -> None:
        page.wait_for_selector('#rejected li[data-code="scheduled-game"]')
        page.wait_for_selector('#warnings li[data-kind="duplicate"]')
        assert page.locator('#rejected li[data-code="scheduled-game"]').count() == 1
        assert page.locator('#rejected li[data-code="duplicate-result"]').count() == 0
        assert page.locator('#warnings li[data-kind="duplicate"]').count() == 1

    shows_both(second)
    dash.reload()  # same tab: the token is still in the session
    shows_both(dash)
    third = open_dashboard(pages, tracker, tid, seq)  # a device that was never open before
    shows_both(third)


def test_arbiter_dashboard_refuses_a_wrong_token(tracker_factory: Callable[..., RunningTracker], pages: Pages) -> None:
    tracker = tracker_factory()
    dash = pages.open(f"{tracker.http_url}/arbiter/some-cup")
    dash.fill("#token", "not-the-token")
    dash.click("#gate-form button[type=submit]")
    dash.wait_for_function("() => document.getElementById('gate-msg').textContent.includes('refused')")
    assert dash.locator("#gate").is_visible()
    assert dash.evaluate("sessionStorage.getItem('tracker-arbiter-token')") is None


# -- names are text ---------------------------------------------------------------------------


def test_markup_in_names_is_shown_as_text_on_every_page(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    """Names and the event name come back as text; no element or script is made from them.

    The pages carry a Content-Security-Policy that would block inline
    handlers anyway; the browser ignores it here (``bypass_csp``) so that the
    test proves the rendering itself, not the safety net.
    """
    tracker = tracker_factory()
    tid = "xss-cup"
    event_name = "<script>alert('event')</script> Cup"
    names = [XSS_NAME, 'Bob "><svg onload=alert(2)>', "Carol & <b>Dave</b>", "Eve"]
    opened = TournamentOpened(
        id="xss-open",
        tournament=tid,
        name=event_name,
        players=tuple(Player(start_no=i + 1, name=name) for i, name in enumerate(names)),
    )
    game = ResultRecorded(id="xss-r1", tournament=tid, round=1, white=1, black=2, result="1-0")
    spectator = pages.open(
        f"{tracker.http_url}/t/{tid}", bypass_csp=True
    )  # before the game: its summary goes to the feed
    wait_seq(spectator, 0)
    with arbiter_of(tracker) as arbiter:
        seq = arbiter.submit_all([opened, game])

    def shows_text_only(page: Page) -> None:
        wait_seq(page, seq)
        text = page.evaluate("document.body.textContent")
        assert XSS_NAME in text, "the name appears literally"
        assert page.locator("img, svg, script:not([src]), b").count() == 0, "no element was made from a name"
        assert page.evaluate("document.querySelectorAll('[onerror], [onload]').length") == 0

    overlay = pages.open(f"{tracker.http_url}/overlay/{tid}", bypass_csp=True)
    shows_text_only(overlay)
    assert overlay.locator("#title").inner_text() == event_name

    shows_text_only(spectator)
    assert spectator.title() == f"{event_name} — standings"
    assert XSS_NAME in spectator.locator("#feed").inner_text()
    spectator.click('#standings tr[data-start="2"] .player button')
    spectator.wait_for_function("() => document.getElementById('koya').open")
    assert spectator.locator("#koya-body .opp-name").inner_text() == XSS_NAME

    dash = pages.open(f"{tracker.http_url}/arbiter/{tid}", bypass_csp=True)
    dash.fill("#token", TOKEN)
    dash.click("#gate-form button[type=submit]")
    shows_text_only(dash)
    dash.select_option("#round", "1")
    dash.select_option("#white", "1")
    dash.select_option("#black", "2")
    dash.click("#send")  # a duplicate: its warning names the players
    dash.wait_for_selector('#warnings li[data-code="duplicate-result"]')
    assert XSS_NAME in dash.locator('#warnings li[data-kind="duplicate"]').first.inner_text()
    shows_text_only(dash)

    index = pages.open(f"{tracker.http_url}/", bypass_csp=True)
    index.wait_for_selector(f'#tournaments li[data-id="{tid}"]')
    assert index.locator(f'#tournaments li[data-id="{tid}"] .tname').inner_text() == event_name
    assert index.locator("img, script:not([src])").count() == 0
    assert index.locator(f'#tournaments li[data-id="{tid}"] a').evaluate_all("as => as.map(a => a.pathname)") == [
        f"/t/{tid}",
        f"/overlay/{tid}",
        f"/arbiter/{tid}",
    ]


# -- screenshots for the README ------------------------------------------------------------------

STREAM_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><style>
  html, body { margin: 0; width: 1280px; height: 720px; overflow: hidden; font-family: sans-serif; }
  body { background: radial-gradient(ellipse at 70% 40%, #3b4a63 0%, #1b2333 55%, #0d121c 100%); position: relative; }
  .board { position: absolute; left: 600px; top: 70px; width: 560px; height: 560px;
           box-shadow: 0 20px 60px rgba(0,0,0,.6); border: 10px solid #5a3b22; border-radius: 4px;
           display: grid; grid-template-columns: repeat(8, 1fr); }
  .board span { display: flex; align-items: center; justify-content: center; font-size: 52px;
                line-height: 1; color: #111; text-shadow: 0 1px 0 rgba(255,255,255,.4); background: #f0d9b5; }
  .board span.dark { background: #b58863; }
  .board span.w { color: #fff; text-shadow: 0 0 2px #000, 0 0 1px #000; }
  .cam { position: absolute; width: 250px; height: 150px; border-radius: 8px; right: 40px;
         background: linear-gradient(135deg, #556070, #2a303b); box-shadow: 0 8px 24px rgba(0,0,0,.5); }
  .lower { position: absolute; left: 0; right: 0; bottom: 0; height: 64px; display: flex; align-items: center;
           padding: 0 28px; gap: 18px; color: #fff; font-size: 22px; font-weight: 700;
           background: linear-gradient(90deg, rgba(10,14,22,.95), rgba(10,14,22,.55)); }
  .lower em { font-style: normal; color: #f2c94c; }
  iframe { position: absolute; left: 24px; top: 24px; width: 540px; height: 560px; border: 0; }
</style></head><body>
<div class="board">BOARD</div>
<div class="lower"><em>LIVE</em> Round 6 · board 1 — Caruana vs Vachier-Lagrave</div>
<iframe src="OVERLAY" title="overlay"></iframe>
</body></html>
"""

# a middlegame position, rank 8 to rank 1 ("." is an empty square; upper case is White)
POSITION = ["r..q.rk.", "pp..bppp", "..n.pn..", "...p....", "...P....", "..NBPN..", "PP...PPP", "R..Q.RK."]
GLYPHS = {"k": "♚", "q": "♛", "r": "♜", "b": "♝", "n": "♞", "p": "♟"}


def stream_page(tmp: Path, overlay_url: str) -> Path:
    squares = "".join(
        f'<span class="{"dark" if (row + column) % 2 else "light"} {"w" if c.isupper() else "b"}">'
        f"{GLYPHS.get(c.lower(), '')}</span>"
        for row, rank in enumerate(POSITION)
        for column, c in enumerate(rank)
    )
    page = tmp / "stream.html"
    page.write_text(STREAM_PAGE.replace("BOARD", squares).replace("OVERLAY", overlay_url), encoding="utf-8")
    return page


def settle(page: Any) -> None:
    """Wait until no CSS animation or transition runs (for a still picture)."""
    page.wait_for_function("() => document.getAnimations().every(a => a.playState !== 'running')")


def test_screenshots_of_the_pages_for_the_readme(
    tracker_factory: Callable[..., RunningTracker], pages: Pages, tmp_path: Path
) -> None:
    tracker = tracker_factory()
    tf = read_file(str(data_file("sinquefield-cup-2021.trf")))
    tid = tf.opened.tournament
    # after round 6 and two games of round 7: provisional values, a round with missing results
    events = [e for e in tf.events if getattr(e, "round", 0) <= 6]
    events += [e for e in tf.events if getattr(e, "round", 0) == 7][:2]
    spectator = pages.open(f"{tracker.http_url}/t/{tid}", width=1280, height=1000)
    wait_seq(spectator, 0)
    with arbiter_of(tracker) as arbiter:
        seq = arbiter.submit_all([tf.opened, *events])
    img = Path(os.environ.get("TRACKER_SCREENSHOTS") or tmp_path / "img")
    img.mkdir(parents=True, exist_ok=True)

    stream = pages.open(width=1280, height=720)
    overlay_url = f"{tracker.http_url}/overlay/{tid}?cols=points,KS,SB,games&top=10"
    stream.goto(stream_page(tmp_path, overlay_url).as_uri())
    stream.frame_locator("iframe").locator("#rows .row").first.wait_for()
    overlay = next(f for f in stream.frames if f.url.startswith(tracker.http_url))
    overlay.wait_for_function("s => Number(document.documentElement.dataset.seq) >= s", arg=seq)
    settle(overlay)
    stream.screenshot(path=str(img / "overlay.png"))

    wait_seq(spectator, seq)
    settle(spectator)
    spectator.screenshot(path=str(img / "spectator.png"), full_page=True)

    dash = pages.open(f"{tracker.http_url}/arbiter/{tid}", width=1280, height=1000)
    dash.fill("#token", TOKEN)
    dash.click("#gate-form button[type=submit]")
    wait_seq(dash, seq)
    round7 = [e for e in events if getattr(e, "round", 0) == 7]
    first = round7[0]
    assert isinstance(first, ResultRecorded)
    dash.select_option("#round", "7")
    dash.select_option("#white", str(first.white))
    dash.select_option("#black", str(first.black))
    dash.click("#send")
    dash.wait_for_selector('#warnings li[data-code="duplicate-result"]')
    dash.wait_for_selector("#proj-players tbody tr")
    dash.wait_for_function(
        "s => !document.getElementById('proj-meta').textContent.includes('updating') &&"
        " document.getElementById('proj-meta').textContent.includes('seq ' + s)",
        arg=seq,
    )
    dash.wait_for_selector("#send:not([disabled])")
    settle(dash)
    dash.screenshot(path=str(img / "arbiter.png"), full_page=True)
    for name in ("overlay.png", "spectator.png", "arbiter.png"):
        assert (img / name).stat().st_size > 10_000


def test_arbiter_projection_shows_how_a_player_can_still_finish_first(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    tracker = tracker_factory()
    tf = read_file(str(data_file("sinquefield-cup-2021.trf"))).until_round(8)  # round 9's five games are open
    tid = tf.opened.tournament
    with arbiter_of(tracker) as arbiter_ws:
        seq = arbiter_ws.submit_all(events_of(tf))
    dash = pages.open(f"{tracker.http_url}/arbiter/{tid}")
    dash.fill("#token", TOKEN)
    dash.click("#gate-form button[type=submit]")
    wait_seq(dash, seq)
    dash.wait_for_selector("#proj-players details.how-finish")
    found = dash.evaluate(
        """() => [...document.querySelectorAll('#proj-players details.how-finish')].map(d => ({
            summary: d.querySelector('summary').textContent,
            best: d.querySelectorAll('[data-extreme="rank_best"] li').length,
        }))"""
    )
    first = [f for f in found if f["summary"].endswith("can still finish 1st")]
    assert first, found  # somebody not leading can still win the event
    assert all(f["best"] == 5 for f in found), found  # a scenario is a result for each of the five open games
