"""A team match entered on the arbiter page, in a real Chromium (see test_browser.py), in English and German.

team-rr-9001 (four teams of four boards, three rounds) with rounds 1–2 in: the arbiter picks round 3 and the two
teams of a match, and the card lists its boards with the players and colours the file itself has for that
match (the first-named team White on boards 1 and 3); one click per board records a result; the other match
is forfeited whole with one action (every board gets the forfeit its colours give).  The results reach the
standings as the team rows show them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TOKEN, RunningTracker, data_file
from tests.web import test_browser
from tests.web.english import english_left
from tests.web.test_browser import Pages, arbiter_of, settle, standings_of, wait_seq
from tests.web.test_stakes_pages import images
from tracker.core.events import Event, ResultRecorded
from tracker.formats.files import read_file

pytestmark = pytest.mark.browser
browser = test_browser.browser
pages = test_browser.pages


def _file() -> tuple[str, list[Event], list[ResultRecorded], list[str]]:
    tf = read_file(str(data_file("team-rr/team-rr-9001.trf")))
    last = [e for e in tf.events if isinstance(e, ResultRecorded) and e.round == 3]
    played = [e for e in tf.events if e not in last]
    names = [p.name for p in tf.opened.players] + [t.name for t in tf.opened.teams.teams]  # type: ignore[union-attr]
    return tf.opened.tournament, [tf.opened, *played], last, names


def _sign_in(dash: Any) -> None:
    dash.wait_for_selector("#gate", state="visible")
    dash.fill("#token", TOKEN)
    dash.click("#gate-form button[type=submit]")


def _pick(dash: Any, first: str, second: str) -> None:
    dash.select_option("#match-round", "3")
    dash.select_option("#match-first", first)
    dash.select_option("#match-second", second)


def _result(tracker: RunningTracker, tid: str, white: int, black: int) -> str | None:
    """The result recorded in round 3 between ``white`` and ``black`` (as White's and Black's codes)."""
    rows = {r["start_no"]: r for r in standings_of(tracker, tid)["standings"]}
    mine = [x for x in rows[white]["results"] if x[0] == 3 and x[1] == black and x[2] == "w"]
    theirs = [x for x in rows[black]["results"] if x[0] == 3 and x[1] == white and x[2] == "b"]
    return f"{mine[0][3]}/{theirs[0][3]}" if mine and theirs else None


@pytest.mark.parametrize(("lang", "heading"), [("en", "Enter a match"), ("de", "Einen Wettkampf eingeben")])
def test_a_match_board_by_board_and_a_match_forfeited_whole(
    tracker_factory: Callable[..., RunningTracker], pages: Pages, tmp_path: Path, lang: str, heading: str
) -> None:
    tracker = tracker_factory()
    tid, played, last, names = _file()
    with arbiter_of(tracker) as arbiter:
        seq = arbiter.submit_all(played)
    dash = pages.open(f"{tracker.http_url}/arbiter/{tid}?lang={lang}", width=1280, height=1400)
    _sign_in(dash)
    wait_seq(dash, seq)
    dash.wait_for_selector("#match:not([hidden]) #match-boards tbody tr")
    assert dash.locator("#match-h").text_content() == heading
    # Brasil (2) named first against Armenia (1): the boards as the file has them, White first
    _pick(dash, "2", "1")
    boards = [
        (r.get_attribute("data-white"), r.get_attribute("data-black"))
        for r in dash.locator("#match-boards tbody tr").all()
    ]
    in_file = {(e.white, e.black) for e in last}
    assert [(int(w or 0), int(b or 0)) for w, b in boards] == [(5, 1), (2, 6), (7, 3), (4, 8)]
    assert all((int(w or 0), int(b or 0)) in in_file for w, b in boards)
    if lang == "de":
        text = dash.locator("#match").inner_text()
        assert english_left(text, "de", names) == [], text
    for board, result in ((1, "0-1"), (2, "1/2-1/2"), (3, "1/2-1/2"), (4, "1-0")):
        row = dash.locator(f'#match-boards tbody tr[data-board="{board}"]')
        row.locator(f'button[data-result="{result}"]').click()
        row.locator(".recorded").wait_for()
    assert [_result(tracker, tid, w, b) for w, b in ((5, 1), (2, 6), (7, 3), (4, 8))] == ["0/1", "=/=", "=/=", "1/0"]
    if lang == "en":  # the README's picture when TRACKER_SCREENSHOTS=docs/img
        _pick(dash, "4", "3")
        settle(dash)
        dash.locator("#match").screenshot(path=str(images(tmp_path) / "arbiter-match.png"))
    # Deutschland (4) named first against Česko (3), forfeited whole: Česko wins every board
    _pick(dash, "4", "3")
    dash.locator('#match-boards button.forfeit[data-winner="second"]').click()
    dash.wait_for_function("() => document.querySelectorAll('#match-boards tbody .recorded').length === 4")
    assert [_result(tracker, tid, w, b) for w, b in ((13, 9), (10, 14), (15, 11), (12, 16))] == [
        "-/+",
        "+/-",
        "-/+",
        "+/-",
    ]
    teams = {row["team"]: row for row in standings_of(tracker, tid)["teams"]}
    before = {row["team"]: row for row in _teams_before(played)}
    assert teams[3]["match_points"] - before[3]["match_points"] == 2  # Česko won the match
    assert teams[3]["game_points"] - before[3]["game_points"] == 4
    assert teams[4]["match_points"] == before[4]["match_points"]
    assert dash.locator("#match-boards button.forfeit[disabled]").count() == 3  # nothing left to forfeit


def _teams_before(played: list[Event]) -> list[dict[str, Any]]:
    import json

    from tracker.core.apply import fold
    from tracker.core.standings import standings
    from tracker.protocol import standings_payload

    state = fold(played)
    return json.loads(json.dumps(standings_payload(standings(state))))["teams"]  # type: ignore[no-any-return]
