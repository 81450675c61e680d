"""The arbiter page's prizes card with prize categories (issue 39), in a real Chromium (see test_browser.py).

A 6-player round robin declaring 1000/500 by place (Hort) and a U2000 category of 300/150 in
``tournament_opened``, one round left: the card lists the category, each player's least–most and the list the
most comes from; once the last round is in, the split to pay (tracker.core.worth.prizes.awarded's) with the
list paying each.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction

import pytest

from tests.builders import berger, fold_all
from tests.conftest import TOKEN, RunningTracker
from tests.web import test_browser
from tests.web.test_browser import Pages, arbiter_of, wait_seq
from tracker.core.events import Event, GameResult, Player, PrizeCategory, ResultRecorded, TournamentOpened
from tracker.core.standings import standings
from tracker.core.worth.categories import declared
from tracker.core.worth.live import LIVE_BUDGET
from tracker.core.worth.prizes import awarded, money

pytestmark = pytest.mark.browser

browser = test_browser.browser
pages = test_browser.pages

TID = "cat-cup"
PRIZES = (Fraction(1000), Fraction(500))


def _events() -> list[Event]:
    players = tuple(Player(start_no=k, name=f"Player{k}, A", rating=1900 if k % 2 else 2100) for k in range(1, 7))
    rounds = berger(6)
    events: list[Event] = [
        TournamentOpened(
            id=f"{TID}/open", tournament=TID, name="Category Cup", players=players,
            schedule=tuple(tuple(r.pairs) for r in rounds), prizes=(Decimal(1000), Decimal(500)), sharing="hort",
            categories=(PrizeCategory("U2000", "rating<2000", (Decimal(300), Decimal(150))),),
        )
    ]  # fmt: skip
    for r in rounds:
        for w, b in r.pairs:
            result: GameResult = "1-0" if w < b else "1/2-1/2"
            events.append(ResultRecorded(f"{TID}/{r.number}/{w}-{b}", TID, r.number, w, b, result))
    return events


def _shown(x: Fraction) -> str:
    return str(int(x)) if x.denominator == 1 else f"{float(x):.2f}"


def test_the_arbiter_prizes_card_shows_the_categories_and_the_list_paying_each_player(
    tracker_factory: Callable[[], RunningTracker], pages: Pages
) -> None:
    tracker = tracker_factory()
    events = _events()
    first, last = events[: 1 + 4 * 3], events[1 + 4 * 3 :]
    t = fold_all(first)
    cats = declared(t.opened)  # type: ignore[arg-type]
    open_money = {m.start_no: m for m in money(t, standings(t), PRIZES, "hort", budget=LIVE_BUDGET, categories=cats)}
    with arbiter_of(tracker) as arbiter:
        seq = arbiter.submit_all(first)
        dash = pages.open(f"{tracker.http_url}/arbiter/{TID}", width=1280, height=1600)
        dash.wait_for_selector("#gate", state="visible")
        dash.fill("#token", TOKEN)
        dash.click("#gate-form button[type=submit]")
        wait_seq(dash, seq)
        dash.wait_for_selector(f'#prizes[data-seq="{seq}"]:not([hidden])', timeout=60_000)
        meta = dash.locator("#prizes-meta").inner_text()
        assert "1000 · 500 — Hort" in meta and "U2000 (rating<2000): 300 · 150" in meta
        for start_no, m in open_money.items():
            row = dash.locator(f'#prizes-table tr[data-start="{start_no}"]')
            if m.most == 0:
                assert row.count() == 0
                continue
            cell = row.locator(".prize").inner_text().replace("≈", "")
            assert cell == (_shown(m.least) if m.least == m.most else f"{_shown(m.least)}–{_shown(m.most)}")
            assert row.locator(".from").inner_text() == ("place" if m.most_from == "place" else m.most_from)
        seq = arbiter.submit_all(last)
    final = {no: v for no, v in awarded(standings(fold_all(events)), PRIZES, "hort", cats).items() if v[0] > 0}
    dash.wait_for_selector(f'#prizes[data-seq="{seq}"]:not([hidden])', timeout=60_000)
    shown = {
        int(row.get_attribute("data-start") or 0): (
            row.locator(".prize").inner_text(),
            row.locator(".from").inner_text(),
        )
        for row in dash.locator("#prizes-table tbody tr").all()
    }
    assert shown == {no: (_shown(v), str(name)) for no, (v, name) in final.items()}
    assert set(name for _, name in final.values()) == {"place", "U2000"}
