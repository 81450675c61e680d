"""Who is ahead in a team match being played, from the live boards, on the spectator page (Chromium).

team-rr-9001 with all of round 3 in but Deutschland–Česko: two of its boards in progress, one winning for each
side, one for Česko only on the second; the match card says the score if the games ended now, as
tracker.core.live.as_it_stands has the match, and not for a match already complete.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.conftest import RunningTracker, data_file
from tests.web import test_browser
from tests.web.test_browser import Pages, arbiter_of, fmt, wait_seq
from tests.web.test_live_pages import send_board
from tracker.core.apply import fold
from tracker.core.boards import BoardSet
from tracker.core.events import BoardUpdated, Evaluation, Event, ResultRecorded, Teams
from tracker.core.live import as_it_stands
from tracker.core.teams.setup import setup_of
from tracker.core.teams.stakes import live_team_stakes
from tracker.formats.files import read_file
from tracker.protocol import standings_payload

pytestmark = pytest.mark.browser
browser = test_browser.browser
pages = test_browser.pages

MATCH = {(13, 9), (10, 14), (15, 11), (12, 16)}  # Deutschland (4) – Česko (3), round 3


def test_a_match_card_says_who_is_ahead_as_the_games_in_progress_stand(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    tracker = tracker_factory()
    tf = read_file(str(data_file("team-rr/team-rr-9001.trf")))
    held = [e for e in tf.events if isinstance(e, ResultRecorded) and e.round == 3 and (e.white, e.black) in MATCH]
    played: list[Event] = [tf.opened, *(e for e in tf.events if e not in held)]
    tid = tf.opened.tournament
    boards = [
        BoardUpdated("b1", tid, 3, 13, 9, ply=41, last_move="Rxe5", evaluation=Evaluation(cp=450)),  # Deutschland
        BoardUpdated("b2", tid, 3, 10, 14, ply=38, last_move="Qd2", evaluation=Evaluation(cp=500)),  # Česko
        BoardUpdated("b3", tid, 3, 15, 11, ply=30, last_move="Nf3", evaluation=Evaluation(cp=-600)),  # Česko
    ]
    with arbiter_of(tracker) as arbiter:
        seq = arbiter.submit_all(played)
        page = pages.open(f"{tracker.http_url}/t/{tid}", width=1280, height=1600)
        wait_seq(page, seq)
        for board in boards:
            send_board(arbiter, board)
    state = fold(played)
    assert state is not None
    kept = BoardSet()
    for board in boards:
        kept.put(state, board)
    now = standings_payload(as_it_stands(state, kept).standings)
    rounds = {r["round"]: r for r in now["matches"]}
    match = next(m for m in rounds[3]["matches"] if m["first"]["team"] == 4)
    expected = f"{fmt(match['first']['game_points'])}–{fmt(match['second']['game_points'])}"
    assert match["first"]["game_points"] == 1 and match["second"]["game_points"] == 2  # a win each, one more Česko
    card = page.locator('#teams .match-round[data-round="3"] .match-card[data-first="4"][data-second="3"]')
    # the live message comes at most once a second: the card follows each, up to the three boards'
    page.wait_for_function(
        """([sel, want]) => document.querySelector(sel)?.innerText === want""",
        arg=[
            '#teams .match-round[data-round="3"] .match-card[data-first="4"][data-second="3"] .as-it-stands',
            f"as it stands {expected}",
        ],
        timeout=60_000,
    )
    assert card.locator(".match-score").inner_text() == "0–0"  # the official score: nothing in yet
    # the other match of round 3 is complete: no estimate
    other = page.locator('#teams .match-round[data-round="3"] .match-card.complete')
    assert other.count() == 1 and other.locator(".as-it-stands").count() == 0


def test_the_spectator_page_says_what_each_board_of_the_last_round_decides_for_the_teams(
    tracker_factory: Callable[..., RunningTracker], pages: Pages
) -> None:
    """team-rr-9004 (ten teams) before its last round: every board whose result decides 1st or the medals is
    listed with the sentences of tracker.core.teams.stakes for each result."""
    tracker = tracker_factory()
    tf = read_file(str(data_file("team-rr/team-rr-9004.trf")))
    last = max(getattr(e, "round", 0) for e in tf.events)
    played: list[Event] = [tf.opened, *(e for e in tf.events if getattr(e, "round", 0) < last)]
    tid = tf.opened.tournament
    with arbiter_of(tracker) as arbiter:
        seq = arbiter.submit_all(played)
    state = fold(played)
    assert state is not None and isinstance(tf.opened.teams, Teams)
    found = live_team_stakes(state, setup_of(tf.opened.teams))
    assert found
    expected = {
        (d.game.white, d.game.black): {
            result: [s.text for s in stakes] for result, _, stakes, _ in d.outcomes if stakes
        }
        for d in found
        if any(o[2] for o in d.outcomes)
    }
    page = pages.open(f"{tracker.http_url}/t/{tid}", width=1280, height=1600)
    wait_seq(page, seq)
    page.wait_for_selector(f'#teams .team-stakes[data-seq="{seq}"]', timeout=60_000)
    shown: dict[tuple[int, int], dict[str, list[str]]] = {}
    for item in page.locator("#teams .team-stakes .stake-game").all():
        key = (int(item.get_attribute("data-white") or 0), int(item.get_attribute("data-black") or 0))
        shown[key] = {
            li.get_attribute("data-result") or "": li.locator(".stake").all_inner_texts()
            for li in item.locator(".stake-outcomes > li").all()
        }
    assert shown == expected
