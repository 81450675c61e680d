"""``tracker standings TEAM-FILE --after-round N --project --format json``: the team projection's shape.

The document keeps its players' and teams' rows; ``projection`` is the team projection (issue 35): every
team's rank range with a scenario per extreme over exactly the pending board games, and those games.
Each scenario, recorded into the cut file, gives the team the rank it is said to reach.
"""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from tracker.cli import main
from tracker.core.events import ResultRecorded
from tracker.core.teams.standings import team_standings
from tracker.formats import state_from
from tracker.formats.files import read_file
from tracker.formats.trf.read import team_setup_of

TEAM_RR = Path(__file__).resolve().parents[1] / "data" / "team-rr"


def _document(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(list(argv)) == 0
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return document


def _positions(
    path: str, after: int, scenario: list[dict[str, Any]], gp_first: bool = False
) -> dict[int, tuple[int, int]]:
    """Per team number (1 + teams above, 1 + teams at least equal) on match then game points (or the reverse)."""
    tf = read_file(path).until_round(after)
    setup = team_setup_of(tf, path)
    assert setup is not None
    extra = [
        ResultRecorded(f"cli{k}", tf.opened.tournament, g["round"], g["white"], g["black"], g["result"])
        for k, g in enumerate(scenario)
    ]
    s = team_standings(state_from(dataclasses.replace(tf, events=(*tf.events, *extra))), setup)
    keys = {r.team: (r.game_points, r.match_points) if gp_first else (r.match_points, r.game_points) for r in s.rows}
    return {
        t: (
            1 + sum(1 for u, other in keys.items() if u != t and other > mine),
            1 + sum(1 for u, other in keys.items() if u != t and other >= mine),
        )
        for t, mine in keys.items()
    }


def test_a_team_file_cut_one_round_before_the_end_projects_its_teams(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(TEAM_RR / "team-rr-9004.trf")
    doc = _document(capsys, "standings", path, "--after-round", "8", "--project", "--format", "json")
    assert doc["teams"] and doc["standings"]  # the rows are still there
    p = doc["projection"]
    assert set(p) == {"exact", "rank_key", "remaining", "teams", "games", "lines", "chances"}
    assert p["exact"] is True and p["rank_key"] == ["MPTS", "GPTS"]
    games = p["games"]
    assert p["remaining"] == len(games) == 20  # five matches of four boards in round 9
    assert all(set(g) == {"round", "board", "white", "black", "white_team", "black_team"} for g in games)
    assert {g["round"] for g in games} == {9}
    pending = sorted((g["round"], g["white"], g["black"]) for g in games)
    assert sorted(t["team"] for t in p["teams"]) == list(range(1, 11))
    names = {t["team"]: t["name"] for t in doc["teams"]}
    for team in p["teams"]:
        assert set(team) == {"team", "name", "rank_best", "rank_worst", "exact", "scenarios", "attained"}
        assert team["name"] == names[team["team"]]
        assert team["exact"] is True
        assert 1 <= team["rank_best"] <= team["rank_worst"] <= 10
        for name, index in (("rank_best", 0), ("rank_worst", 1)):
            scenario = team["scenarios"][name]
            assert all(set(g) == {"round", "white", "black", "result"} for g in scenario)
            assert sorted((g["round"], g["white"], g["black"]) for g in scenario) == pending
            assert _positions(path, 8, scenario)[team["team"]][index] == team[name] == team["attained"][name]


def test_the_team_projection_follows_the_team_order_given(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(TEAM_RR / "team-rr-9001.trf")
    doc = _document(
        capsys, "standings", path, "--after-round", "2", "--tiebreaks", "GPTS,MPTS", "--project", "--format", "json"
    )
    p = doc["projection"]
    assert p["rank_key"] == ["GPTS", "MPTS"] and p["exact"] is True and p["remaining"] == 8
    # one round left: a team more than 4 game points ahead now stays ahead on the key
    now = {t["team"]: Fraction(str(t["game_points"])) for t in doc["teams"]}
    for team in p["teams"]:
        assert team["rank_best"] >= 1 + sum(1 for u, gp in now.items() if gp > now[team["team"]] + 4)
        for name, index in (("rank_best", 0), ("rank_worst", 1)):
            got = _positions(path, 2, team["scenarios"][name], gp_first=True)[team["team"]][index]
            assert got == team[name]


def test_an_individual_file_keeps_its_projection_shape(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.conftest import data_file

    doc = _document(
        capsys,
        "standings",
        str(data_file("sinquefield-cup-2021.trf")),
        "--after-round",
        "8",
        "--project",
        "--format",
        "json",
    )
    assert "players" in doc["projection"] and "teams" not in doc["projection"]


def test_the_text_table_of_a_team_file_projects_its_teams_not_its_players(capsys: pytest.CaptureFixture[str]) -> None:
    """The terminal ``--project`` of a team file printed the individual projection (players' Koya ranges) under
    the team table; it prints each team's rank range, with the JSON's values and scenarios, and the boards."""
    path = str(TEAM_RR / "team-rr-9004.trf")
    doc = _document(capsys, "standings", path, "--after-round", "8", "--project", "--format", "json")
    assert main(["standings", path, "--after-round", "8", "--project"]) == 0
    out = capsys.readouterr().out
    assert "KS range" not in out and "Final Koya range" not in out
    assert "20 board games remain; exact over all outcomes; teams ranked on MPTS, GPTS" in " ".join(out.split())
    marks = {"1-0": "1", "1/2-1/2": "=", "0-1": "0"}
    order = [(g["round"], g["white"], g["black"]) for g in doc["projection"]["games"]]
    rows = {line.split("│")[2].strip(): line for line in out.splitlines() if line.count("│") == 5}
    for team in doc["projection"]["teams"]:
        row = rows[team["name"]]
        assert row.split("│")[3].strip() == f"{team['rank_best']}–{team['rank_worst']}", row
        by = {(g["round"], g["white"], g["black"]): marks[g["result"]] for g in team["scenarios"]["rank_best"]}
        assert row.split("│")[4].split("/")[0].strip() == "".join(by[game] for game in order)
    names = {p["start_no"]: p["name"] for p in doc["standings"]}
    board_lines = [line for line in out.splitlines() if line.count("│") == 4 and " – " in line]
    assert [line.split("│")[3].strip() for line in board_lines] == [f"{names[w]} – {names[b]}" for _, w, b in order]


def test_the_team_lines_and_chances_follow_the_rank_ranges(capsys: pytest.CaptureFixture[str]) -> None:
    """1st and the medals (ten teams): a team's state on each line follows its rank range, an open one with a
    scenario that puts it in and one that keeps it out (recorded into the cut file, each does); the chances
    (an estimate) are 0 where the line is out of reach and 1 where it is clinched, and sum to the places."""
    path = str(TEAM_RR / "team-rr-9004.trf")
    doc = _document(capsys, "standings", path, "--after-round", "8", "--project", "--format", "json")
    p = doc["projection"]
    ranges = {t["team"]: (t["rank_best"], t["rank_worst"]) for t in p["teams"]}
    assert [line["places"] for line in p["lines"]] == [1, 3] and [x["name"] for x in p["lines"]] == ["1st", "top 3"]
    odds = {c["team"]: c for c in p["chances"]["teams"]}
    assert p["chances"]["estimate"] is True and p["chances"]["lines"] == [1, 3]
    opened = 0
    for k, line in enumerate(p["lines"]):
        places = line["places"]
        for entry in line["teams"]:
            best, worst = ranges[entry["team"]]
            want = "clinched" if worst <= places else "eliminated" if best > places else "open"
            assert entry["state"] == want
            chance = odds[entry["team"]]["lines"][k]
            if want == "eliminated":
                assert chance == 0.0
            if want == "clinched":
                assert chance == 1.0
            if want == "open":
                opened += 1
                into = _positions(path, 8, entry["scenarios"]["in"])[entry["team"]]
                out = _positions(path, 8, entry["scenarios"]["out"])[entry["team"]]
                assert into[0] <= places < out[1], (entry, into, out)
        assert abs(sum(c["lines"][k] for c in odds.values()) - places) < 1e-3
    assert opened > 0
