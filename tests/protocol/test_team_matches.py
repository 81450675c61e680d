"""The ``"matches"`` of a team event's standings payload, checked against the team TRF files' own results.

The expected matches are read here straight from the files' ``001`` and ``013`` records (a player's board is
their place among the team's players with a game in the round; White's and Black's codes make the result),
not through the reader: the payload must say what the file says, board by board.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import msgspec
import pytest

from tests.builders import game, opened
from tests.conftest import data_file
from tracker.core.apply import fold
from tracker.core.codes import RESULT_OF_CODES, code_units
from tracker.core.events import ResultRecorded
from tracker.core.scoring import units_of
from tracker.core.standings import standings
from tracker.formats import state_from
from tracker.formats.base import TournamentFile
from tracker.formats.trf import parse_trf
from tracker.protocol import standings_payload

DATA = data_file("team-rr/team-rr-9001.trf").parent  # ../shared/data, else the copy in tests/data
FILES = sorted(DATA.glob("team-rr-*.trf"))

#: (round, white, black) → result; per team number: (name, players in board order)
Games = dict[tuple[int, int, int], str]


def read_file(text: str) -> tuple[dict[int, tuple[str, list[int]]], dict[int, dict[int, tuple[int, str, str]]]]:
    """The teams (``013``) and each player's rounds (``001``: round → (opponent or 0, colour, code))."""
    teams: dict[int, tuple[str, list[int]]] = {}
    rounds: dict[int, dict[int, tuple[int, str, str]]] = {}
    for line in text.splitlines():
        if line.startswith("013"):
            players = [int(line[k : k + 5]) for k in range(36, len(line.rstrip()), 5)]
            teams[len(teams) + 1] = (line[4:36].strip(), players)
        elif line.startswith("001"):
            start_no = int(line[4:8])
            mine = rounds[start_no] = {}
            for r, at in enumerate(range(91, len(line.rstrip()), 10), start=1):
                block = line[at : at + 8]
                opponent = block[:4].strip()
                mine[r] = (int(opponent) if opponent.isdigit() else 0, block[5], block[7])
    return teams, rounds


def expected_matches(text: str) -> dict[int, list[dict[str, Any]]]:
    """Per round, every match as the file has it: the two team numbers (either order), boards, game points."""
    teams, rounds = read_file(text)
    team_of = {p: k for k, (_, players) in teams.items() for p in players}
    units = units_of(opened(2).scoring)  # 1-½-0, forfeits as wins and losses: the files' scoring
    out: dict[int, list[dict[str, Any]]] = {}
    last = max(r for mine in rounds.values() for r in mine)
    for r in range(1, last + 1):
        seen: set[int] = set()
        for k, (_, players) in teams.items():
            if k in seen:
                continue
            seated = [p for p in players if rounds[p][r][0]]
            if not seated:
                continue
            other = team_of[rounds[seated[0]][r][0]]
            seen |= {k, other}
            boards = []
            points = {k: Fraction(0), other: Fraction(0)}
            for board, p in enumerate(seated, start=1):
                o, colour, code = rounds[p][r]
                white, black = (p, o) if colour == "w" else (o, p)
                codes = (rounds[white][r][2], rounds[black][r][2])
                boards.append({"board": board, "white": white, "black": black, "result": RESULT_OF_CODES[codes][0]})
                points[k] += Fraction(code_units(units, code), units.denominator)
                points[other] += Fraction(code_units(units, rounds[o][r][2]), units.denominator)
            out.setdefault(r, []).append({"teams": {k, other}, "boards": boards, "points": points})
    return out


def payload_of(tf: TournamentFile) -> dict[str, Any]:
    return dict(standings_payload(standings(state_from(tf))))


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_match_is_the_files_boards_results_and_scores(path: Path) -> None:
    text = path.read_text()
    want = expected_matches(text)
    payload = payload_of(parse_trf(text, path.name))
    rounds = payload["matches"]
    assert isinstance(rounds, list)
    assert [r["round"] for r in rounds] == sorted(want)
    for entry in rounds:
        matches = [m for m in entry["matches"] if m["second"] is not None]
        assert len(matches) == len(want[entry["round"]])
        for m in matches:
            first, second = m["first"], m["second"]
            found = next(w for w in want[entry["round"]] if w["teams"] == {first["team"], second["team"]})
            assert m["complete"] is True
            assert m["boards"] == found["boards"]
            points = found["points"]
            assert isinstance(points, dict)
            assert first["game_points"] == points[first["team"]]
            assert second["game_points"] == points[second["team"]]
            # 2-1-0, and a match lost with no board played at the board scores 0 too
            a, b = points[first["team"]], points[second["team"]]
            assert (first["match_points"], second["match_points"]) == ((2, 0) if a > b else (0, 2) if a < b else (1, 1))
            # the first-named team has White on board 1 (no 352 in these files: W B W B …)
            assert m["boards"][0]["white"] in dict(read_file(text)[0])[first["team"]][1]


def test_a_board_still_to_play_is_null_and_the_match_not_complete() -> None:
    path = DATA / "team-rr-9001.trf"
    text = path.read_text()
    tf = parse_trf(text, path.name)
    last = max(getattr(e, "round", 0) or 0 for e in tf.events)
    games = [e for e in tf.events if isinstance(e, ResultRecorded) and e.round == last]
    # keep only the second event of the last round: a board 2 that came in before board 1 (the replay's order)
    kept = games[0]
    partial = replace(tf, events=tuple(e for e in tf.events if e not in games or e is kept))
    rounds = payload_of(partial)["matches"]
    assert isinstance(rounds, list)
    assert rounds[-1]["round"] == last
    # the match with the board in; the round's other match is listed from the schedule, every board pending
    (match,) = [m for m in rounds[-1]["matches"] if any(b["result"] is not None for b in m["boards"])]
    others = [m for m in rounds[-1]["matches"] if m is not match]
    assert len(others) == 1 and all(b["result"] is None for b in others[0]["boards"]) and not others[0]["complete"]
    assert match["complete"] is False
    assert match["first"]["match_points"] == match["second"]["match_points"] == 0
    full = next(
        m for m in expected_matches(text)[last] if m["teams"] == {match["first"]["team"], match["second"]["team"]}
    )
    done = [b for b in match["boards"] if b["result"] is not None]
    assert [(b["white"], b["black"], b["result"]) for b in done] == [(kept.white, kept.black, kept.result)]
    # every board where the file has it, pending ones with their players and a null result
    assert [(b["board"], b["white"], b["black"]) for b in match["boards"]] == [
        (b["board"], b["white"], b["black"]) for b in full["boards"]
    ]
    assert sum(b["result"] is None for b in match["boards"]) == len(full["boards"]) - 1
    assert done[0]["board"] != 1  # the view alone would have called it board 1
    assert match["first"]["game_points"] + match["second"]["game_points"] == 1


def test_a_match_forfeited_whole_scores_its_forfeits_and_match_points() -> None:
    path = DATA / "team-rr-9001.trf"
    tf = parse_trf(path.read_text(), path.name)
    teams, _ = read_file(path.read_text())
    armenia = set(teams[1][1])
    last = max(getattr(e, "round", 0) or 0 for e in tf.events)
    forfeited = []
    events = []
    for e in tf.events:
        if isinstance(e, ResultRecorded) and e.round == last and {e.white, e.black} & armenia:
            e = msgspec.structs.replace(e, id=f"{e.id}-forfeit", result="-+" if e.white in armenia else "+-")
            forfeited.append(e)
        events.append(e)
    (match,) = [
        m
        for m in payload_of(replace(tf, events=tuple(events)))["matches"][-1]["matches"]
        if 1 in (m["first"]["team"], m["second"]["team"])
    ]
    ours, theirs = (
        (match["first"], match["second"]) if match["first"]["team"] == 1 else (match["second"], match["first"])
    )
    assert match["complete"] is True
    assert sorted((b["white"], b["black"], b["result"]) for b in match["boards"]) == sorted(
        (e.white, e.black, e.result) for e in forfeited
    )
    assert (ours["game_points"], ours["match_points"]) == (0, 0)
    assert (theirs["game_points"], theirs["match_points"]) == (len(forfeited), 2)


def test_a_team_bye_is_an_entry_of_its_own() -> None:
    path = DATA / "team-rr-9006.trf"  # five teams: one has the free round each round, its players zero byes
    text = path.read_text()
    teams, rounds = read_file(text)
    payload = payload_of(parse_trf(text, path.name))
    for entry in payload["matches"]:
        byes = [m for m in entry["matches"] if m["second"] is None]
        resting = [k for k, (_, players) in teams.items() if not any(rounds[p][entry["round"]][0] for p in players)]
        assert [m["first"]["team"] for m in byes] == resting
        for m in byes:
            assert m["boards"] == [] and m["complete"] is True
            assert m["first"]["name"] == teams[m["first"]["team"]][0]
            assert (m["first"]["game_points"], m["first"]["match_points"]) == (0, 0)  # Z: a zero bye scores nothing
    assert len(payload["matches"]) == max(r for mine in rounds.values() for r in mine)  # a double round robin


def test_an_individual_event_has_no_matches() -> None:
    t = fold([opened(4), game(1, 1, 2, "1-0")])
    assert t is not None
    s = standings(t)
    assert "matches" not in standings_payload(s) and "teams" not in standings_payload(s)
