"""A team event live on the spectator page and the overlay, in a real Chromium (see test_browser.py).

One tracker serves the module: team-rr-9001 (four teams of four boards) replayed into it but for the last board
result of the last round.  The spectator page must show the team table in the payload's order with its values
and each match card's score, the board still to play pending, and both must follow the last board result as it
comes in; in German no English word of the catalogue is left on the page; the overlay shows the team table on
its own (no parameter) and the players' table with ``view=players``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunningTracker, data_file, start_tracker
from tests.web import test_browser
from tests.web.english import PAGE_WORDS_JS, english_left
from tests.web.test_browser import Pages, arbiter_of, fmt, get_json, standings_of, wait_seq
from tracker.core.events import Event, Teams
from tracker.formats.files import read_file

pytestmark = pytest.mark.browser
browser = test_browser.browser
pages = test_browser.pages


@dataclass
class Team:
    tracker: RunningTracker
    tid: str
    seq: int
    last: Event  # the board result held back
    names: list[str]


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    tracker = start_tracker(tmp_path_factory.mktemp("teams") / "data")
    try:
        tf = read_file(str(data_file("team-rr/team-rr-9001.trf")))
        everything: list[Event] = [tf.opened, *tf.events]
        *played, last = everything
        with arbiter_of(tracker) as arbiter:
            seq = arbiter.submit_all(played)
        opened = tf.opened
        assert isinstance(opened.teams, Teams)
        names = [p.name for p in opened.players] + [t.name for t in opened.teams.teams] + [opened.name]
        yield Team(tracker, opened.tournament, seq, last, names)
    finally:
        tracker.stop()


def number_format(team: Team, code: str) -> Any:
    """The pages' number format in language ``code`` (its catalogue says glyphs, 2½, or a decimal sign, 2,5)."""
    catalogue = get_json(f"{team.tracker.http_url}/static/i18n/{code}.json")
    if catalogue["points"] == "glyphs":
        return fmt
    return lambda value: f"{round(value, 3):g}".replace(".", catalogue["decimal"])


def shown_teams(page: Any) -> list[list[str]]:
    rows: list[list[str]] = page.evaluate(
        """() => [...document.querySelectorAll('#teams .team-standings tbody tr')].map(
            r => [...r.querySelectorAll('td')].map(td => td.textContent))"""
    )
    return rows


def expected_teams(payload: dict[str, Any], fmt: Any = fmt) -> list[list[str]]:
    codes = [c for c in payload["teams"][0]["tiebreaks"] if c not in ("MPTS", "GPTS")]
    return [
        [
            str(r["rank"]),
            r["name"],
            fmt(r["match_points"]),
            fmt(r["game_points"]),
            *(fmt(r["tiebreaks"][c]) for c in codes),
        ]
        for r in payload["teams"]
    ]


def shown_matches(page: Any) -> list[tuple[int, str, str, str, int]]:
    cards: list[list[Any]] = page.evaluate(
        """() => [...document.querySelectorAll('#teams .match-round')].flatMap(round =>
            [...round.querySelectorAll('.match-card:not(.bye)')].map(card => [
                Number(round.dataset.round), card.querySelector('.first').textContent,
                card.querySelector('.match-score').textContent, card.querySelector('.second').textContent,
                card.querySelectorAll('li[data-result=""]').length]))"""
    )
    return sorted((r, a, score, b, pending) for r, a, score, b, pending in cards)


def expected_matches(payload: dict[str, Any], fmt: Any = fmt) -> list[tuple[int, str, str, str, int]]:
    return sorted(
        (
            entry["round"],
            m["first"]["name"],
            f"{fmt(m['first']['game_points'])}–{fmt(m['second']['game_points'])}",
            m["second"]["name"],
            sum(b["result"] is None for b in m["boards"]),
        )
        for entry in payload["matches"]
        for m in entry["matches"]
        if m["second"] is not None
    )


def spectator(pages: Pages, team: Team, query: str = "") -> Any:
    page = pages.open(f"{team.tracker.http_url}/t/{team.tid}{query}", width=1280, height=1400)
    wait_seq(page, team.seq)
    page.wait_for_selector("#teams:not([hidden]) .team-standings tbody tr")
    return page


def test_the_spectator_page_shows_the_team_table_and_match_cards_and_follows_a_board_result(
    pages: Pages, team: Team, tmp_path: Path
) -> None:
    page = spectator(pages, team, "?lang=en")
    payload = standings_of(team.tracker, team.tid)
    assert payload["seq"] == team.seq
    assert shown_teams(page) == expected_teams(payload)
    assert shown_matches(page) == expected_matches(payload)
    assert sum(card[4] for card in shown_matches(page)) == 1  # the board held back is pending
    heads = page.locator("#teams .team-standings thead th").all_text_contents()
    assert heads[:4] == ["Rk", "Team", "MP", "GP"]
    meta = page.locator("#meta").text_content() or ""
    assert meta.startswith(f"{len(payload['teams'])} teams · round 3 · {payload['games_played']} board games played"), (
        meta
    )
    img = Path(os.environ.get("TRACKER_SCREENSHOTS") or tmp_path / "img")  # the README's picture (make screenshots)
    img.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(img / "teams.png"), full_page=True)
    assert (img / "teams.png").stat().st_size > 10_000

    with arbiter_of(team.tracker) as arbiter:
        seq = arbiter.submit(team.last)
    wait_seq(page, seq)
    after = standings_of(team.tracker, team.tid)
    assert after["seq"] == seq
    assert shown_teams(page) == expected_teams(after)
    assert shown_matches(page) == expected_matches(after)
    assert sum(card[4] for card in shown_matches(page)) == 0
    assert after["teams"] != payload["teams"] or after["matches"] != payload["matches"]
    team.seq = seq


def test_the_team_part_in_german_leaves_no_english_word(pages: Pages, team: Team) -> None:
    page = spectator(pages, team, "?lang=de")
    payload = standings_of(team.tracker, team.tid)
    assert page.evaluate("document.documentElement.lang") == "de"
    german = number_format(team, "de")
    assert shown_teams(page) == expected_teams(payload, german)
    assert shown_matches(page) == expected_matches(payload, german)
    page.wait_for_selector("#feed li")
    words: str = page.evaluate(PAGE_WORDS_JS)
    assert "Mannschaften" in words
    left = english_left(words, "de", team.names)
    assert left == [], f"English left on the German team page: {left}"


def test_the_overlay_shows_the_team_table_of_a_team_event_and_its_players_on_request(pages: Pages, team: Team) -> None:
    base = f"{team.tracker.http_url}/overlay/{team.tid}"
    payload = standings_of(team.tracker, team.tid)
    overlay = pages.open(f"{base}?lang=fr", width=1280, height=800)
    wait_seq(overlay, payload["seq"])
    overlay.wait_for_selector("#rows .row[data-team]")
    rows = overlay.evaluate(
        """() => [...document.querySelectorAll('#rows .row')].map(r => [
            r.querySelector('.rank').textContent, r.querySelector('.name .n').textContent,
            ...[...r.querySelectorAll('.v')].map(v => v.textContent)])"""
    )
    assert rows == expected_teams(payload, number_format(team, "fr"))
    left = english_left(overlay.evaluate(PAGE_WORDS_JS), "fr", team.names)
    assert left == [], f"English left on the French team overlay: {left}"
    players = pages.open(f"{base}?view=players", width=1280, height=800)
    wait_seq(players, payload["seq"])
    players.wait_for_selector("#rows .row[data-start]")
    assert players.locator("#rows .row[data-team]").count() == 0


KIND_NAMES = {"MPTS": "Match points", "GPTS": "Game points", "EDE": "Direct encounter", "SB": "Sonneborn-Berger"}


def _team_value(row: dict[str, Any], code: str) -> float:
    return {"MPTS": row["match_points"], "GPTS": row["game_points"]}.get(code.upper(), row["tiebreaks"].get(code))


def test_why_one_team_is_above_another_names_the_first_criterion_that_separates_them(pages: Pages, team: Team) -> None:
    """Every pair of teams: the answer's deciding line is the first criterion of the team order on which the
    payload's two rows differ, with both values; the lines before it are the criteria they are equal on."""
    page = spectator(pages, team, "?lang=en")
    payload = standings_of(team.tracker, team.tid)
    rows = payload["teams"]
    order = list(rows[0]["tiebreaks"])
    assert order[0] == "MPTS"
    page.wait_for_selector("#team-why-answer")
    for a in rows:
        for b in rows:
            if a["team"] >= b["team"]:
                continue
            page.select_option("#team-why-a", str(a["team"]))
            page.select_option("#team-why-b", str(b["team"]))
            upper, lower = (a, b) if a["rank"] <= b["rank"] else (b, a)
            answer = page.locator("#team-why-answer")
            lines = answer.locator("li").all_text_contents()
            differ = [c for c in order if _team_value(upper, c) != _team_value(lower, c)]
            if upper["rank"] == lower["rank"]:
                assert answer.get_attribute("data-criterion") == ""
                continue
            code = differ[0]
            assert answer.get_attribute("data-criterion") == code, (upper["name"], lower["name"])
            name = KIND_NAMES[code.split(":")[0].upper()]
            better = "lower is better" if code.upper().startswith("EDE") else "higher is better"
            assert lines[-1] == (
                f"{name} ({code}) decides: {upper['name']} {fmt(_team_value(upper, code))}, "
                f"{lower['name']} {fmt(_team_value(lower, code))}; {better}."
            )
            assert len(lines) == order.index(code) + 1
            assert answer.locator("li.decides").count() == 1
            head = answer.locator(".why-head").inner_text()
            assert head == f"{upper['name']} (rank {upper['rank']}) is above {lower['name']} (rank {lower['rank']})."


def test_each_team_column_says_which_way_is_better(pages: Pages, team: Team) -> None:
    """EDE is a place among the tied teams (lower first, as the FIDE TEC server prints it): its header says lower
    is better; match points, game points and Sonneborn-Berger say higher."""
    page = spectator(pages, team, "?lang=en")
    titles = {
        th.get_attribute("data-code"): th.get_attribute("title")
        for th in page.locator("#teams .team-standings thead th[data-code]").all()
    }
    assert titles["EDE"] is not None and titles["EDE"].endswith("lower is better."), titles
    assert titles["SB:MP"] is not None and titles["SB:MP"].endswith("higher is better."), titles


def test_the_overlay_shows_a_teams_match_as_a_lower_third(pages: Pages, team: Team) -> None:
    """mode=match&team=K: team K's match of the latest round, its score and every board as the payload has it."""
    payload = standings_of(team.tracker, team.tid)
    latest = payload["matches"][-1]
    match = next(m for m in latest["matches"] if m["second"] is not None)
    k = match["second"]["team"]
    overlay = pages.open(f"{team.tracker.http_url}/overlay/{team.tid}?mode=match&team={k}", width=1280, height=720)
    wait_seq(overlay, payload["seq"])
    third = overlay.locator("#match-third:not([hidden])")
    third.wait_for()
    assert overlay.locator("#board").is_hidden()
    assert third.get_attribute("data-round") == str(latest["round"])
    assert (third.get_attribute("data-first"), third.get_attribute("data-second")) == (
        str(match["first"]["team"]),
        str(k),
    )
    assert third.locator(".team-name.first").inner_text() == match["first"]["name"]
    assert third.locator(".team-name.second").inner_text() == match["second"]["name"]
    score = f"{fmt(match['first']['game_points'])}–{fmt(match['second']['game_points'])}"
    assert third.locator(".match-score").inner_text() == score
    names = {r["start_no"]: r["name"] for r in payload["standings"]}
    symbols = {"1-0": "1–0", "1/2-1/2": "½–½", "0-1": "0–1", "+-": "+/−", "-+": "−/+", "--": "−/−", None: "·"}
    shown = [
        (li.locator(".white").inner_text(), li.locator(".result").inner_text(), li.locator(".black").inner_text())
        for li in third.locator(".match-boards li").all()
    ]
    assert shown == [(names[b["white"]], symbols[b["result"]], names[b["black"]]) for b in match["boards"]]
    img = Path(os.environ.get("TRACKER_SCREENSHOTS") or "/nonexistent")
    if img.is_dir():  # the README's picture (make screenshots)
        overlay.screenshot(path=str(img / "match-third.png"))
