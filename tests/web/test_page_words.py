"""What the public pages say, in a real Chromium (issue 28, items 6 and 8; fixtures from test_browser.py).

Reproductions: "why is A above B?" said "(higher is better)" for TPN; DE was written "1/2 ✓" (1 point
from 2 games) where the CLI wrote a place, and separated tied players who had not all met without saying
it was provisional; chances printed 0.0% for players the exact stakes had eliminated; a cue queued for 5 s
lagged one result when results came 3–4 s apart; an overlay with ``&delay=N`` was blank for N seconds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import RunningTracker, data_file
from tests.web import test_browser
from tests.web.test_browser import Pages, arbiter_of, standings_of, wait_seq
from tracker.core.events import Event, Player, ResultRecorded, TournamentOpened
from tracker.formats.files import read_file

pytestmark = pytest.mark.browser

browser = test_browser.browser
pages = test_browser.pages

TF = read_file(str(data_file("sinquefield-cup-2021.trf")))
TID = TF.opened.tournament


def sinquefield(until: int, extra: int = 0) -> list[Event]:
    """The opening, rounds 1 to ``until`` and the first ``extra`` games of the next round."""
    later = [e for e in TF.events if getattr(e, "round", 0) == until + 1][:extra]
    return [TF.opened, *(e for e in TF.events if getattr(e, "round", 0) <= until), *later]


def test_why_a_above_b_says_lower_is_better_for_tpn(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    tracker = tracker_factory()
    players = tuple(Player(start_no=k, name=f"Player{k}, A") for k in range(1, 5))
    opened = TournamentOpened(id="o", tournament="tpn-cup", name="TPN Cup", players=players, tiebreaks=("PTS", "TPN"))
    with arbiter_of(tracker) as arbiter:
        seq = arbiter.submit_all([opened, ResultRecorded("g", "tpn-cup", 1, 1, 4, "1/2-1/2")])
    page = pages.open(f"{tracker.http_url}/t/tpn-cup")
    wait_seq(page, seq)
    page.select_option("#why-a", "4")
    page.select_option("#why-b", "1")
    page.wait_for_function("() => document.getElementById('why-answer').dataset.criterion === 'TPN'")
    decisive = page.locator("#why-answer li.decides").inner_text()
    assert "Pairing number (TPN)" in decisive and "lower is better" in decisive, decisive
    assert "higher" not in decisive


def test_de_is_a_place_everywhere_and_provisional_while_the_tied_players_have_not_all_met(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    tracker = tracker_factory()
    with arbiter_of(tracker) as arbiter:
        seq = arbiter.submit_all(sinquefield(8))
    page = pages.open(f"{tracker.http_url}/t/{TID}")
    wait_seq(page, seq)
    rows = {r["start_no"]: r for r in standings_of(tracker, TID)["standings"]}
    # after round 8 Caruana (1), Dominguez (2) and So (6) are tied on 5; Dominguez and So meet in round 9
    cells = {n: page.locator(f'#standings tr[data-start="{n}"] td[data-code="DE"]') for n in (1, 2, 6)}
    words = {1: "1st", 2: "2nd", 3: "3rd"}
    for n, cell in cells.items():
        assert cell.locator(".v").inner_text() == words[int(rows[n]["tiebreaks"]["DE"])] + "*"
        assert cell.get_attribute("data-provisional") == "true"
        assert "Dominguez Perez–So still to play" in (cell.get_attribute("title") or "")
    shankland = page.locator('#standings tr[data-start="5"] td[data-code="DE"]')  # a tie whose players all met
    assert shankland.locator(".v").inner_text() == "1st" and shankland.get_attribute("data-provisional") == "false"
    assert "* while two of them have still to meet" in page.locator("#legend").inner_text()
    page.select_option("#why-a", "2")
    page.select_option("#why-b", "1")
    page.wait_for_function("() => document.getElementById('why-answer').dataset.criterion === 'DE'")
    decisive = page.locator("#why-answer li.decides").inner_text()
    assert "1st*" in decisive and "2nd*" in decisive and "provisional" in decisive, decisive


def test_a_delayed_overlay_shows_the_title_and_its_delay_at_once(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    tracker = tracker_factory()
    with arbiter_of(tracker) as arbiter:
        seq = arbiter.submit_all(sinquefield(2))
    overlay = pages.open(f"{tracker.http_url}/overlay/{TID}?delay=30")  # the tournament is younger than 30 s
    overlay.wait_for_function("() => document.getElementById('title').textContent === 'Sinquefield Cup 2021'")
    assert "delayed by 30 s" in overlay.locator("#progress").inner_text()
    assert overlay.locator("#rows .row").count() == 0, "nothing of the last 30 s is shown"
    # once the standings are older than the delay, a newly opened delayed overlay has them at once
    short = pages.open(f"{tracker.http_url}/overlay/{TID}?delay=1")
    wait_seq(short, seq, timeout=30_000)  # generous: the delay, then the snapshot as it was a second ago
    assert short.locator("#rows .row").count() == 10
    assert "delayed by 1 s" in short.locator("#progress").inner_text()


def test_chances_say_out_where_the_exact_stakes_say_eliminated(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    tracker = tracker_factory()
    last = [e for e in TF.events if getattr(e, "round", 0) == 9]
    with arbiter_of(tracker) as arbiter:  # So–Vachier-Lagrave decided: Vachier-Lagrave has clinched 1st
        seq = arbiter.submit_all([*sinquefield(8), *last[:4]])
    page = pages.open(f"{tracker.http_url}/t/{TID}", width=1280, height=1000)
    wait_seq(page, seq)
    page.wait_for_selector(f'#stakes[data-seq="{seq}"] .chances tbody tr', timeout=60_000)
    firsts = page.eval_on_selector_all(
        "#stakes .chances tbody tr", "rs => rs.map(r => [Number(r.dataset.start), r.cells[1].textContent])"
    )
    shown = dict(firsts)
    assert shown[9] == "100%"
    assert all(text == "out" for n, text in shown.items() if n != 9), shown
    overlay = pages.open(f"{tracker.http_url}/overlay/{TID}?mode=chances")
    overlay.wait_for_selector("#stakes-box .chance-list li", timeout=60_000)
    items = overlay.eval_on_selector_all("#stakes-box .chance-list li .num", "ns => ns.map(n => n.textContent)")
    assert items[0] == "100%" and all(text == "out" for text in items[1:]), items


CUE_SCRIPT = """async () => {
  const { mountOverlayStakes } = await import('/static/stakes.js');
  window.cue = mountOverlayStakes({ mode: 'table', cues: '1', board: 1 });
}"""


def test_cues_keep_up_with_results_a_few_seconds_apart(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    tracker = tracker_factory()
    page = pages.open()
    page.clock.install()
    page.goto(f"{tracker.http_url}/overlay/nobody")
    page.evaluate(CUE_SCRIPT)

    def cue(seq: int, kind: str, text: str) -> None:
        message: dict[str, Any] = {"type": "cue", "tournament": "x", "seq": seq, "kind": kind, "players": [1]}
        page.evaluate("m => window.cue(m)", {**message, "line": None, "text": text})

    shown: list[str] = []

    def on_screen() -> str:
        text: str = page.evaluate(
            "() => { const c = [...document.querySelectorAll('#cue')].pop();"
            " return c && !c.hidden ? c.dataset.seq : ''; }"
        )
        return text

    cue(5, "leader", "A leads")
    page.clock.run_for(200)
    shown.append(on_screen())
    page.clock.run_for(3300)  # the next result 3.5 s later
    cue(6, "leader", "B leads")
    page.clock.run_for(200)
    shown.append(on_screen())
    assert shown == ["5", "6"], "the newer update's cue is on screen within a moment, not 1.5 s later"
    page.clock.run_for(5000)
    assert on_screen() == "", "and it stays its time, then goes"
    cue(7, "clinched", "C clinches")
    cue(7, "overtake", "D passes E")
    page.clock.run_for(200)
    first = on_screen()
    page.clock.run_for(3000)
    assert (first, on_screen()) == ("7", "7"), "cues of one update still stay their full time"
