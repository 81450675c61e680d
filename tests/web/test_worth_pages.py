"""What results are worth on the pages (issue 39), in a real Chromium (see test_browser.py): the spectator
page's card (rating change, performance, the norm line) and the norm each outcome decides, in English and
German; the overlay's ``cols=rating,perf``.

A 10-player round robin: an IM rated 2480 (the one player with a norm to play for) against nine GMs of 2600
from four federations, seven rounds in, the IM on 3½: a GM norm needs 4½ of 9 (Ra 2600, dp 0), so a win in
round 8 secures it and the norm line says 1 is needed from the last 2 games.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from tests.builders import berger, fold_all
from tests.conftest import TOKEN, RunningTracker
from tests.web import test_browser
from tests.web.test_browser import Pages, arbiter_of, settle, wait_seq
from tests.web.test_live_pages import send_board
from tests.web.test_stakes_pages import images
from tracker.core.events import BoardUpdated, Evaluation, Event, GameResult, Player, ResultRecorded, TournamentOpened
from tracker.core.standings import standings
from tracker.core.worth.live import LIVE_BUDGET
from tracker.core.worth.prizes import money, money_at_stake, paid
from tracker.core.worth.rating import one_decimal, rating_changes

pytestmark = pytest.mark.browser

browser = test_browser.browser
pages = test_browser.pages

TID = "norm-cup"
FEDS = ("NOR", "IND", "CHN", "FRA")
MINE = ["W", "D", "D", "L", "W", "D", "L"]  # the IM's first seven games: 3½


def _events(prizes: tuple[Decimal, ...] = ()) -> list[Event]:
    players = (
        Player(start_no=1, name="Norman, Ada", rating=2480, title="IM", federation="USA"),
        *(
            Player(start_no=k, name=f"Grandmaster{k}, A", rating=2600, title="GM", federation=FEDS[k % 4])
            for k in range(2, 11)
        ),
    )
    rounds = berger(10)
    events: list[Event] = [
        TournamentOpened(
            id=f"{TID}/open", tournament=TID, name="Norm Cup", players=players,
            schedule=tuple(tuple(r.pairs) for r in rounds), prizes=prizes, sharing="hort",
        )
    ]  # fmt: skip
    mine = iter(MINE)
    for r in rounds[:7]:
        for w, b in r.pairs:
            result: GameResult = "1/2-1/2"
            if 1 in (w, b):
                x = next(mine)
                result = "1/2-1/2" if x == "D" else ("1-0" if (x == "W") == (w == 1) else "0-1")
            events.append(ResultRecorded(f"{TID}/{r.number}/{w}-{b}", TID, r.number, w, b, result))
    return events


DECLARED = (Decimal(1000), Decimal(600), Decimal(400))
PRIZES = tuple(Fraction(p) for p in DECLARED)


def _with_prizes(tracker: RunningTracker) -> tuple[list[Event], int]:
    """The norm cup with 1000/600/400 declared (Hort) submitted to ``tracker``: its events and the last seq."""
    events = _events(DECLARED)
    with arbiter_of(tracker) as arbiter:
        return events, arbiter.submit_all(events)


def _written(x: Fraction) -> str:
    """An amount as the pages write it in English (no decimals for a whole one)."""
    return str(int(x)) if x.denominator == 1 else f"{float(x):.2f}"


def _worth_card(page: Any, seq: int) -> Any:
    page.wait_for_selector(f'#worth[data-seq="{seq}"]:not([hidden])', timeout=60_000)
    return page.locator('#worth tbody tr[data-start="1"]')


@pytest.mark.parametrize(
    ("lang", "needs", "secures", "decimal"),
    [
        ("en", "Norman needs 1 from the last 2 games for a GM norm", "Norman secures a GM norm", "."),
        ("de", "Norman braucht 1 aus den letzten 2 Partien für eine GM-Norm", "Norman sichert sich eine GM-Norm", ","),
    ],
)
def test_the_spectator_page_shows_the_rating_change_performance_and_norm_line(
    tracker_factory: Callable[..., RunningTracker],
    pages: Pages,
    tmp_path: Path,
    lang: str,
    needs: str,
    secures: str,
    decimal: str,
) -> None:
    tracker = tracker_factory()
    events = _events()
    with arbiter_of(tracker) as arbiter:
        seq = arbiter.submit_all(events)
    change = next(c for c in rating_changes(fold_all(events)) if c.start_no == 1)
    page = pages.open(f"{tracker.http_url}/t/{TID}?lang={lang}", width=1280, height=1400)
    wait_seq(page, seq)
    row = _worth_card(page, seq)
    value = one_decimal(change.change)
    shown = ("+" if value > 0 else "−") + f"{abs(value):.1f}".replace(".", decimal)
    assert row.locator(".rating-change").inner_text() == shown
    assert row.locator(".performance").inner_text() == str(change.performance)
    assert row.locator('.norm.possible[data-title="GM"]').inner_text() == needs
    # the GMs have no norm to play for and are rated: their rows show the rating change, no norm
    assert page.locator('#worth tbody tr[data-start="2"] .norms').inner_text() == "–"
    # round 8: the IM's game; a win secures the norm, a loss or a draw decides nothing about it
    page.wait_for_selector(f'#stakes[data-seq="{seq}"]:not([hidden])', timeout=60_000)
    game = page.locator('#stakes .stake-game[data-white="1"], #stakes .stake-game[data-black="1"]').first
    white = game.get_attribute("data-white") == "1"
    win = game.locator(f'li[data-result="{"1-0" if white else "0-1"}"]')
    assert win.locator(".stake.norm.secured").inner_text() == secures
    assert game.locator(f'li[data-result="{"0-1" if white else "1-0"}"] .stake.norm').count() == 0
    assert game.locator('li[data-result="1/2-1/2"] .stake.norm').count() == 0
    if lang == "en":  # the README's picture when TRACKER_SCREENSHOTS=docs/img
        settle(page)
        page.locator("#worth").screenshot(path=str(images(tmp_path) / "worth.png"))


def test_the_overlay_shows_the_rating_change_and_performance_columns(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    tracker = tracker_factory()
    events = _events()
    with arbiter_of(tracker) as arbiter:
        seq = arbiter.submit_all(events)
    changes = {c.start_no: c for c in rating_changes(fold_all(events))}
    warnings: list[str] = []
    overlay = pages.open(width=1280, height=720)
    overlay.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    overlay.goto(f"{tracker.http_url}/overlay/{TID}?top=10&cols=points,rating,perf")
    overlay.wait_for_function(
        "() => [...document.querySelectorAll('#rows .row .col-tb .v')].some((v) => v.textContent !== '–')",
        timeout=60_000,
    )
    assert [c.text_content() for c in overlay.locator("#columns .cell").all()][2:] == ["Pts", "Rating ±", "Perf."]
    for start_no, c in changes.items():
        cells = overlay.locator(f'#rows .row[data-start="{start_no}"] .col-tb .v')
        value = one_decimal(c.change)
        sign = "+" if value > 0 else ("−" if value < 0 else "")
        assert [x.inner_text() for x in cells.all()] == [f"{sign}{abs(value):.1f}", str(c.performance)], start_no
    assert not warnings, warnings
    assert seq > 0


def test_the_live_table_shows_the_rating_change_if_the_games_ended_now(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    """Round 8's board with the IM winning (+3.2): the "if the games ended now" table gives the IM the rating
    change with that win counted, the official card the change without it."""
    tracker = tracker_factory()
    events = _events()
    rounds = berger(10)
    white, black = next(p for p in rounds[7].pairs if 1 in p)
    winning = "1-0" if white == 1 else "0-1"
    with arbiter_of(tracker) as arbiter:
        seq = arbiter.submit_all(events)
        cp = 320 if white == 1 else -320
        send_board(
            arbiter, BoardUpdated("b1", TID, 8, white, black, ply=41, last_move="Rxe5", evaluation=Evaluation(cp=cp))
        )
    official = next(c for c in rating_changes(fold_all(events)) if c.start_no == 1)
    won = ResultRecorded("won", TID, 8, white, black, winning)
    as_it_stands = next(c for c in rating_changes(fold_all([*_events(), won])) if c.start_no == 1)
    assert as_it_stands.change > official.change
    page = pages.open(f"{tracker.http_url}/t/{TID}", width=1280, height=1600)
    wait_seq(page, seq)
    _worth_card(page, seq)
    cell = page.locator('#live-table tbody tr[data-start="1"] .rating-change.as-it-stands')
    cell.wait_for(timeout=60_000)
    assert cell.inner_text() == f"+{one_decimal(as_it_stands.change):.1f}"
    assert (
        page.locator('#worth tbody tr[data-start="1"] .rating-change').inner_text()
        == f"+{one_decimal(official.change):.1f}"
    )
    # a player not in a game in progress: the official change, not marked as it stands
    other = next(no for no in range(2, 11) if no not in (white, black))
    assert page.locator(f'#live-table tbody tr[data-start="{other}"] .rating-change.as-it-stands').count() == 0


def test_with_prizes_declared_the_pages_show_each_players_money_and_what_a_game_puts_at_stake(
    tracker_factory: Callable[..., RunningTracker], pages: Pages, tmp_path: Path
) -> None:
    """1000/600/400 declared, shared Hort: the card's prize column is each player's least–most money (the prize
    search's), and an outcome of a round-8 game says its players' money then, in French."""
    tracker = tracker_factory()
    events, seq = _with_prizes(tracker)
    t = fold_all(events)
    expected = {m.start_no: m for m in money(t, standings(t), PRIZES, "hort", budget=LIVE_BUDGET)}
    at_stake = money_at_stake(t, PRIZES, "hort", budget=LIVE_BUDGET)
    page = pages.open(f"{tracker.http_url}/t/{TID}?lang=fr", width=1280, height=1600)
    wait_seq(page, seq)
    _worth_card(page, seq)

    def written(x: Fraction) -> str:  # in French: a decimal comma
        return _written(x).replace(".", ",")

    shown = 0
    for start_no, m in expected.items():
        if m.most == 0 and start_no != 1:
            continue  # no prize within reach, no rating row needed: the row may be absent
        cell = page.locator(f'#worth tbody tr[data-start="{start_no}"] .prize')
        want = written(m.least) if m.least == m.most else f"{written(m.least)}–{written(m.most)}"
        assert cell.inner_text().replace("≈", "") == want, start_no
        shown += 1
    assert shown >= 3
    page.wait_for_selector(f'#stakes[data-seq="{seq}"]:not([hidden])', timeout=60_000)
    (key, by_result), *_ = at_stake.items()
    _, white, black = key
    for result, stakes_ in by_result.items():
        item = page.locator(
            f'#stakes .stake-game[data-white="{white}"][data-black="{black}"] li[data-result="{result}"]'
        )
        for x in stakes_:
            want = written(x.least) if x.least == x.most else f"{written(x.least)}–{written(x.most)}"
            assert item.locator(f'.stake.money[data-start="{x.start_no}"]').inner_text().endswith(f"prix {want}")
    settle(page)
    page.locator("#worth").screenshot(path=str(images(tmp_path) / "worth-prizes-fr.png"))


def test_the_arbiter_page_shows_the_prizes_while_games_remain_and_the_split_to_pay_at_the_end(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    """1000/600/400 declared, Hort: the arbiter's prizes card says each player's least–most money, then, once the
    last two rounds are in, the split to pay (the final split of tracker.core.worth.prizes.paid) and its total."""
    tracker = tracker_factory()
    events, seq = _with_prizes(tracker)
    t = fold_all(events)
    open_money = {m.start_no: m for m in money(t, standings(t), PRIZES, "hort", budget=LIVE_BUDGET)}
    with arbiter_of(tracker) as arbiter:
        dash = pages.open(f"{tracker.http_url}/arbiter/{TID}", width=1280, height=1600)
        dash.wait_for_selector("#gate", state="visible")
        dash.fill("#token", TOKEN)
        dash.click("#gate-form button[type=submit]")
        wait_seq(dash, seq)
        dash.wait_for_selector(f'#prizes[data-seq="{seq}"]:not([hidden])', timeout=60_000)
        assert "1000 · 600 · 400 — Hort" in dash.locator("#prizes-meta").inner_text()
        for start_no, m in open_money.items():
            if m.most == 0:
                assert dash.locator(f'#prizes-table tr[data-start="{start_no}"]').count() == 0
                continue
            cell = dash.locator(f'#prizes-table tr[data-start="{start_no}"] .prize').inner_text().replace("≈", "")
            assert cell == (f"{m.least}" if m.least == m.most else f"{m.least}–{m.most}"), start_no
        rng = random.Random(8)
        rest = [
            ResultRecorded(f"{TID}/{r.number}/{w}-{b}", TID, r.number, w, b, rng.choice(["1-0", "0-1", "1/2-1/2"]))
            for r in berger(10)[7:]
            for w, b in r.pairs
        ]
        seq = arbiter.submit_all(rest)
    done = fold_all([*events, *rest])
    final = {no: v for no, v in paid(standings(done), PRIZES, "hort").items() if v > 0}
    dash.wait_for_selector(f'#prizes[data-seq="{seq}"]:not([hidden])', timeout=60_000)
    shown = {
        int(row.get_attribute("data-start") or 0): row.locator(".prize").inner_text()
        for row in dash.locator("#prizes-table tbody tr").all()
    }

    assert shown == {no: _written(v) for no, v in final.items()}
    assert "the split to pay, 2000 in all" in dash.locator("#prizes-meta").inner_text()
