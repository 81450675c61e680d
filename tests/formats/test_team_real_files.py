"""Team round robins from TRF files with ``013`` team records: the FIDE TEC server's values and ranks (issue 35).

``team-rr/`` holds eight generated team round robins (4–12 teams, 4 or 6 boards, one double, forfeited
boards, a whole match forfeited, team byes) and ``tec-values.json`` the values and ranks the FIDE TEC
tie-break server computed for them (``tiebreakchecker.py -p -t ORDER``).  ``tracker standings FILE
--tiebreaks ORDER --format json`` must give the same in its ``"teams"`` rows.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import SHARED_DATA, TEST_DATA, data_file
from tracker.cli import main
from tracker.core.errors import FormatError
from tracker.formats import state_from
from tracker.formats.files import read_file
from tracker.formats.trf import parse_trf
from tracker.formats.trf.read import team_setup_of

TEAM_RR = SHARED_DATA / "team-rr" if (SHARED_DATA / "team-rr").exists() else TEST_DATA / "team-rr"
TEC = json.loads((TEAM_RR / "tec-values.json").read_text(encoding="utf-8"))


def standings_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["standings", *args, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert isinstance(document, dict)
    return document


@pytest.mark.parametrize("name", sorted(TEC))
def test_team_rows_equal_the_tec_servers_values_and_ranks(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    expected = TEC[name]
    order = expected["order"]
    document = standings_json(capsys, str(TEAM_RR / name), "--tiebreaks", ",".join(order))
    teams = document["teams"]
    assert isinstance(teams, list)
    assert sorted(row["team"] for row in teams) == sorted(int(k) for k in expected["teams"])
    for row in teams:
        tec = expected["teams"][str(row["team"])]
        assert row["tiebreaks"] == {code: tec[code] for code in order}, (name, row["name"])
        assert row["rank"] == tec["Rank"], (name, row["name"])
        assert row["match_points"] == row["tiebreaks"].get("MPTS", row["match_points"])
        assert row["game_points"] == row["tiebreaks"].get("GPTS", row["game_points"])
    assert [row["rank"] for row in teams] == sorted(row["rank"] for row in teams)


def test_the_players_rows_are_the_individual_standings_beside_the_teams(capsys: pytest.CaptureFixture[str]) -> None:
    path = TEAM_RR / "team-rr-9001.trf"
    with_teams = standings_json(capsys, str(path), "--tiebreaks", "MPTS,GPTS,EDE")
    plain = standings_json(capsys, str(path))
    assert with_teams["standings"] == plain["standings"]  # the team order leaves the players' order alone
    rows = with_teams["standings"]
    assert isinstance(rows, list) and len(rows) == 16
    assert set(rows[0]["tiebreaks"]) == {"DE", "SB", "KS", "WON"}


def test_a_team_file_names_its_teams_boards_colours_and_the_double_round_robin() -> None:
    tf = read_file(str(TEAM_RR / "team-rr-9006.trf"))
    setup = team_setup_of(tf)
    assert setup is not None
    assert [t.name for t in setup.teams] == ["Armenia", "Brasil", "Česko", "Deutschland", "España"]
    assert setup.teams[0].players == (1, 2, 3, 4)
    assert (setup.boards, setup.colours, setup.cycles, setup.rounds) == (4, "WBWB", 2, 10)
    view = state_from(tf)
    assert view.cycles == 2  # the boards meet twice within the teams' 10 rounds


def test_an_individual_file_has_no_teams() -> None:
    assert team_setup_of(read_file(str(data_file("fide-tec-exercise16-rr6.trf")))) is None


def _team_file(lines: list[str]) -> str:
    return "\n".join(["012 Two teams", "XXR 1", *lines]) + "\n"


PLAYERS = [
    "001    1      A 1                               2000                             1.0    1     3 w 1",
    "001    2      A 2                               2000                             0.5    2     4 b =",
    "001    3      B 1                               2000                             0.0    3     1 b 0",
    "001    4      B 2                               2000                             0.5    4     2 w =",
]


def test_a_player_in_two_teams_is_refused() -> None:
    text = _team_file(
        [
            *PLAYERS,
            "013 A                                  1    2",
            "013 B                                  2    3    4",
        ]
    )
    with pytest.raises(FormatError, match="player 2 is in team 1 and in team 2"):
        parse_trf(text, "two.trf")


def test_teammates_paired_together_are_refused() -> None:
    text = _team_file(
        [*PLAYERS, "013 A                                  1    3", "013 B                                  2    4"]
    )
    with pytest.raises(FormatError, match="of team 1 play each other"):
        parse_trf(text, "mates.trf")


def test_a_bad_team_record_is_refused_on_its_line() -> None:
    text = _team_file([*PLAYERS, "013 A                                  1   x2"])
    with pytest.raises(FormatError) as caught:
        parse_trf(text, "bad.trf")
    assert caught.value.line == 7


def test_the_colour_sequence_and_match_scoring_records_are_read() -> None:
    text = _team_file(
        [
            *PLAYERS,
            "013 A                                  1    2",
            "013 B                                  3    4",
            "352 BW",
            "362 W    3.0  D    1.0  L    0.0",
        ]
    )
    tf = parse_trf(text, "scored.trf")
    setup = team_setup_of(tf)
    assert setup is not None
    assert setup.colours == "BW" and setup.scoring.win == 3
    from tracker.core.teams.standings import team_standings

    table = team_standings(state_from(tf), setup)
    assert [(r.team, r.match_points, r.game_points) for r in table.rows] == [(1, 3, 1.5), (2, 0, 0.5)]
    # 352 BW: the first-named team has Black on board 1; A's player 1 has White there, so B is named first
    match = table.view.matches[0]
    assert (match.first, match.second) == (1, 0)
    assert [(b.board, b.first, b.second, b.first_white) for b in match.boards] == [(1, 3, 1, False), (2, 4, 2, True)]


def test_a_212_naming_team_codes_is_the_team_order_and_the_players_keep_the_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (TEAM_RR / "team-rr-9001.trf").read_text(encoding="utf-8")
    path = tmp_path / "ordered.trf"
    path.write_text(text + "212 MPTS,GPTS,EDE,SB:MP,KS:MP\n", encoding="utf-8")
    document = standings_json(capsys, str(path))
    teams = document["teams"]
    assert isinstance(teams, list)
    tec = TEC["team-rr-9001.trf"]
    assert {row["team"]: (row["rank"], row["tiebreaks"]) for row in teams} == {
        int(k): (v["Rank"], {c: v[c] for c in tec["order"]}) for k, v in tec["teams"].items()
    }
    players = document["standings"]
    assert isinstance(players, list) and set(players[0]["tiebreaks"]) == {"DE", "SB", "KS", "WON"}


def test_310_records_name_the_teams_when_a_file_has_them(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    lines = (TEAM_RR / "team-rr-9001.trf").read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines:
        if line.startswith("013"):
            number = len([x for x in out if x.startswith("310")]) + 1
            players = line[36:]
            out.append(f"310 {number:3d} {line[4:36]}".ljust(73) + players)  # players from column 74
            out.append("013 Stale name".ljust(36) + players)  # 310 replaces 013, as the TEC server reads it
        else:
            out.append(line)
    path = tmp_path / "t310.trf"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    setup = team_setup_of(read_file(str(path)))
    assert setup is not None
    assert [(t.number, t.name, t.players) for t in setup.teams][:2] == [
        (1, "Armenia", (1, 2, 3, 4)),
        (2, "Brasil", (5, 6, 7, 8)),
    ]
    order = TEC["team-rr-9001.trf"]["order"]
    teams = standings_json(capsys, str(path), "--tiebreaks", ",".join(order))["teams"]
    assert isinstance(teams, list)
    assert {row["team"]: row["rank"] for row in teams} == {
        int(k): v["Rank"] for k, v in TEC["team-rr-9001.trf"]["teams"].items()
    }


def test_a_team_file_written_back_reads_as_the_same_teams(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tracker.formats.trf import export_trf

    name = "team-rr-9006.trf"
    order = ",".join(TEC[name]["order"])
    before = standings_json(capsys, str(TEAM_RR / name), "--tiebreaks", order)["teams"]
    path = tmp_path / "again.trf"
    path.write_bytes(export_trf(state_from(read_file(str(TEAM_RR / name)))).encode("utf-8", "surrogateescape"))
    after = standings_json(capsys, str(path), "--tiebreaks", order)["teams"]
    assert isinstance(before, list) and isinstance(after, list)
    assert [(r["team"], r["rank"], r["tiebreaks"]) for r in after] == [
        (r["team"], r["rank"], r["tiebreaks"]) for r in before
    ]
