"""The arbiter page in Russian, Spanish, German and French, in a real Chromium (issue 31; test_browser's fixtures).

The Sinquefield Cup 2021 is live: rounds 1–7 in, round 8 but its last game, round 9's first two games, Swiercz
withdrawn from round 9, and three submissions the server refused (a bye for a player with a scheduled game, a
result entered twice, a played result against the withdrawn player). In each language the dashboard shows its
one-click rows, the warnings, the refusals (the server's sentences rendered from their phrases), the accepted
updates (their summaries from phrases), the form's checks and the projection, and no word of the English catalogue
is left on it (names and codes aside). The language chosen on the page is kept for the tab: through a reload, not
into a new tab.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import TOKEN, RunningTracker, data_file
from tests.web import test_browser
from tests.web.english import PAGE_WORDS_JS, english_left
from tests.web.test_browser import TIMEOUT, Page, Pages, arbiter_of, wait_seq
from tracker.core.events import ByeRecorded, Event, PlayerWithdrawn, ResultRecorded, encode_event
from tracker.formats.files import read_file

pytestmark = pytest.mark.browser

browser = test_browser.browser
pages = test_browser.pages

TF = read_file(str(data_file("sinquefield-cup-2021.trf")))
TID = TF.opened.tournament
NAMES = [TF.opened.name, *(p.name for p in TF.opened.players)]


def round_of(r: int) -> list[ResultRecorded]:
    return [e for e in TF.events if isinstance(e, ResultRecorded) and e.round == r]


def live_tournament(tracker: RunningTracker) -> int:
    """The cup part-way through round 9 (round 8's last game missing), Swiercz (8) out from round 9; the seq."""
    events: list[Event] = [TF.opened, *(e for e in TF.events if getattr(e, "round", 0) <= 7)]
    events += [*round_of(8)[:-1], *round_of(9)[:2], PlayerWithdrawn("swiercz-out", TID, 8, 9)]
    with arbiter_of(tracker) as arbiter:
        seq = arbiter.submit_all(events)
        again = round_of(7)[0]
        for event in (
            ByeRecorded("bye-7", TID, 9, 7, "half"),  # Svidler has a game in round 9: scheduled-game
            ResultRecorded("twice", TID, 7, again.white, again.black, again.result),  # duplicate-result
            ResultRecorded("played", TID, 9, 5, 8, "1-0"),  # Swiercz withdrew: only the forfeit +/−
        ):
            arbiter.ws.send(json.dumps({"type": "submit", "token": TOKEN, "event": json.loads(encode_event(event))}))
            while json.loads(arbiter.ws.recv(timeout=60)).get("id") != event.id:
                pass
    return seq


def sign_in(page: Page, url: str, seq: int) -> None:
    page.goto(url)
    page.fill("#token", TOKEN)
    page.click("#gate-form button[type=submit]")
    wait_seq(page, seq)


def page_text(page: Page) -> str:
    """What a person reads on the dashboard, every folded part unfolded; the machines' codes left out."""
    page.evaluate(
        """() => {
          for (const d of document.querySelectorAll('details')) d.open = true;
          for (const c of document.querySelectorAll('.code')) c.remove();
        }"""
    )
    text: str = page.evaluate(PAGE_WORDS_JS)
    return text


@pytest.mark.parametrize("code", ["ru", "es", "de", "fr"])
def test_the_arbiter_page_has_no_english_word_left(
    tracker_factory: Callable[..., RunningTracker], pages: Pages, code: str
) -> None:
    tracker = tracker_factory()
    seq = live_tournament(tracker)
    dash = pages.open()
    sign_in(dash, f"{tracker.http_url}/arbiter/{TID}?lang={code}", seq)
    assert dash.evaluate("document.documentElement.lang") == code
    dash.wait_for_selector('#rejected li[data-code="scheduled-game"]')
    dash.wait_for_selector('#rejected li[data-code="withdrawn"]')
    dash.wait_for_selector('#warnings li[data-kind="duplicate"]')
    dash.wait_for_selector('#warnings li[data-kind="missing"][data-round="8"]')
    dash.wait_for_selector("#proj-players details.how-finish")
    dash.wait_for_selector("#proj-games details.pending-game")
    dash.wait_for_selector('[data-pending="9:5-8"][data-withdrawn]', state="attached")  # round 9 is folded
    dash.wait_for_function("() => document.querySelectorAll('#accepted li').length > 5")
    # the form's own check: a bye for Svidler, who has a game in round 9
    dash.click("label:has(> input[name=action][value=bye])")
    dash.select_option("#round", "9")
    dash.select_option("#player", "7")
    dash.wait_for_function("() => document.getElementById('precheck').textContent.length > 20")

    rejected = dash.locator('#rejected li[data-code="scheduled-game"]').inner_text()
    english = "scheduled game 7–10 in round 9"
    assert english not in rejected, f"the server's reason is rendered from its phrase: {rejected}"
    text = page_text(dash)
    assert english_left(text, code, NAMES) == [], text
    assert re.search(r"\d,5\b", dash.locator("#proj-players").inner_text()), "points as the language writes them"


def test_the_language_chosen_is_kept_for_the_tab_not_for_a_new_one(
    tracker_factory: Callable[..., RunningTracker], pages: Pages, browser: Any
) -> None:
    tracker = tracker_factory()
    with arbiter_of(tracker) as arbiter:
        seq = arbiter.submit_all([TF.opened, *round_of(1)])
    context = browser.new_context(locale="es-ES")  # the browser's language: Spanish
    context.set_default_timeout(TIMEOUT)
    pages.others.append(context)
    tab = context.new_page()
    tab.on("pageerror", lambda exc: pages.errors.append(str(exc)))
    tab.goto(f"{tracker.http_url}/arbiter/{TID}")
    tab.fill("#token", "not-the-arbiter-token")  # refused: the gate says so in Spanish
    tab.click("#gate-form button[type=submit]")
    tab.wait_for_function("() => document.getElementById('gate-msg').textContent.length > 0")
    refusal = tab.locator("#gate-msg").inner_text()
    assert english_left(refusal, "es") == [] and "token" in refusal, refusal
    sign_in(tab, f"{tracker.http_url}/arbiter/{TID}", seq)
    assert tab.evaluate("document.documentElement.lang") == "es", "no ?lang=, no choice yet: the browser's"
    assert tab.locator("#entry-h").text_content() == "Registrar un resultado"

    tab.select_option("#lang", "de")  # the picker: the page comes back in German, still signed in
    tab.wait_for_function("() => document.documentElement.lang === 'de'")
    wait_seq(tab, seq)
    assert tab.locator("#entry-h").text_content() == "Ergebnis eintragen" and tab.locator("#dash").is_visible()
    tab.reload()
    tab.wait_for_function("() => document.documentElement.lang === 'de'")
    wait_seq(tab, seq)
    assert tab.input_value("#lang") == "de"

    other = context.new_page()  # a new tab of the same browser: its own session, the browser's language
    other.on("pageerror", lambda exc: pages.errors.append(str(exc)))
    other.goto(f"{tracker.http_url}/arbiter/{TID}")
    other.wait_for_function("() => document.documentElement.lang === 'es'")
    assert other.locator("#gate-h").text_content() == "Acceso del árbitro"

    tab.goto(f"{tracker.http_url}/arbiter/{TID}?lang=fr")  # ?lang= wins, and is kept for the tab
    tab.wait_for_function("() => document.documentElement.lang === 'fr'")
    tab.goto(f"{tracker.http_url}/arbiter/{TID}")
    tab.wait_for_function("() => document.documentElement.lang === 'fr'")
