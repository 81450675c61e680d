"""A team event's PGN (``WhiteTeam``/``BlackTeam`` on every game) read as a team event (issue 35).

The reference is the same games read from the team TRF they came from: a broadcast PGN of a team round robin
gives the teams (board order included) and the team standings the TRF gives.  PGN has no forfeits and no byes,
so both sides read the TRF's games with forfeits played out as wins and without its byes.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import msgspec
import pytest

from tests.formats.test_pgn import game
from tracker.core.errors import FormatError
from tracker.core.events import ResultRecorded, Teams
from tracker.core.standings import standings
from tracker.core.teams.standings import team_standings
from tracker.formats import TournamentFile, state_from
from tracker.formats.files import read_file
from tracker.formats.pgn import parse_pgn
from tracker.formats.trf.read import team_setup_of

TEAM_RR = Path(__file__).resolve().parents[1] / "data" / "team-rr"
PLAYED = {"1-0": "1-0", "0-1": "0-1", "1/2-1/2": "1/2-1/2", "+-": "1-0", "-+": "0-1"}


def _played_games(tf: TournamentFile) -> TournamentFile:
    """``tf`` with its forfeits played out (``+-`` as ``1-0``) and without its byes and double forfeits."""
    events = tuple(
        msgspec.structs.replace(e, result=PLAYED[e.result])
        for e in tf.events
        if isinstance(e, ResultRecorded) and e.result in PLAYED
    )
    return dataclasses.replace(tf, events=events)


def _team_pgn(tf: TournamentFile, *, unfinished_round: int = 0) -> str:
    """The games of a team file as a broadcast gives them: ``Round "r.m"`` (match ``m``), ``Board``, team tags;
    ``unfinished_round``'s games as ``*``; games listed last round first."""
    setup = team_setup_of(tf)
    assert setup is not None
    names = {p.start_no: p.name for p in tf.opened.players}
    team_of = {p: t.name for t in setup.teams for p in t.players}
    board_of = {p: k for t in setup.teams for k, p in enumerate(t.players, start=1)}
    texts = []
    for e in tf.events:
        assert isinstance(e, ResultRecorded)
        result = "*" if e.round == unfinished_round else e.result
        tags = {"Board": str(board_of[e.white]), "WhiteTeam": team_of[e.white], "BlackTeam": team_of[e.black]}
        match = 1 + min(board_of[e.white], board_of[e.black]) % 2  # any sub-number: the Board tag says the board
        texts.append(game(names[e.white], names[e.black], result, f"{e.round}.{match}", tf.opened.name, **tags))
    return "".join(reversed(texts))


@pytest.mark.parametrize("name", ["team-rr-9001.trf", "team-rr-9004.trf", "team-rr-9006.trf"])
def test_a_team_broadcasts_pgn_gives_the_teams_and_team_standings_of_its_trf(name: str) -> None:
    trf = _played_games(read_file(str(TEAM_RR / name)))
    pgn = parse_pgn(_team_pgn(trf), name.replace(".trf", ".pgn"))
    assert isinstance(pgn.opened.teams, Teams)
    trf_setup, pgn_setup = team_setup_of(trf), team_setup_of(pgn)
    assert trf_setup is not None and pgn_setup is not None
    trf_names = {p.start_no: p.name for p in trf.opened.players}
    pgn_names = {p.start_no: p.name for p in pgn.opened.players}
    line_ups = {t.name: [trf_names[p] for p in t.players] for t in trf_setup.teams}
    assert {t.name: [pgn_names[p] for p in t.players] for t in pgn_setup.teams} == line_ups
    assert pgn_setup.team_rounds() == trf_setup.team_rounds()
    codes = tuple(c for c in trf_setup.tiebreaks if c != "TPN")  # TPN is the team's number: PGN numbers by name
    by_trf = team_standings(state_from(trf), trf_setup, codes)
    by_pgn = team_standings(state_from(pgn), pgn_setup, codes)
    rows = {r.name: (r.rank, r.match_points, r.game_points, r.tiebreaks) for r in by_trf.rows}
    assert {r.name: (r.rank, r.match_points, r.game_points, r.tiebreaks) for r in by_pgn.rows} == rows
    assert by_pgn.provisional == by_trf.provisional
    # the live standings (what `tracker up` and `tracker follow` publish) carry the teams too
    live = standings(state_from(pgn))
    assert live.teams is not None and [r.name for r in live.teams.rows] == [r.name for r in by_pgn.rows]


def test_unfinished_boards_are_the_schedule_and_record_nothing() -> None:
    trf = _played_games(read_file(str(TEAM_RR / "team-rr-9001.trf")))
    last = max(e.round for e in trf.events if isinstance(e, ResultRecorded))
    pgn = parse_pgn(_team_pgn(trf, unfinished_round=last), "cup.pgn")
    assert all(isinstance(e, ResultRecorded) and e.round < last for e in pgn.events)
    assert pgn.opened.schedule is not None and len(pgn.opened.schedule) == last
    names = {p.start_no: p.name for p in pgn.opened.players}
    paired = {(names[w], names[b]) for w, b in pgn.opened.schedule[last - 1]}
    trf_names = {p.start_no: p.name for p in trf.opened.players}
    expected = {
        (trf_names[e.white], trf_names[e.black])
        for e in trf.events
        if isinstance(e, ResultRecorded) and e.round == last
    }
    assert paired == expected
    s = standings(state_from(pgn))
    assert s.teams is not None and s.teams.provisional


def test_board_order_without_a_board_tag_is_the_round_tags_second_number() -> None:
    text = "".join(
        [
            game("Ann", "Bob", "1-0", "1.2", WhiteTeam="Alpha", BlackTeam="Beta"),
            game("Bea", "Abe", "0-1", "1.1", WhiteTeam="Beta", BlackTeam="Alpha"),
        ]
    )
    pgn = parse_pgn(text, "cup.pgn")
    setup = team_setup_of(pgn)
    assert setup is not None
    names = {p.start_no: p.name for p in pgn.opened.players}
    assert [(t.name, [names[p] for p in t.players]) for t in setup.teams] == [
        ("Alpha", ["Abe", "Ann"]),
        ("Beta", ["Bea", "Bob"]),
    ]


@pytest.mark.parametrize(
    ("games", "line", "words"),
    [
        (
            [("Ann", "Bob", {"WhiteTeam": "Alpha", "BlackTeam": "Beta"}), ("Ann", "Cy", {"WhiteTeam": "Gamma"})],
            2,
            "without a BlackTeam tag",
        ),
        (
            [("Ann", "Bob", {"WhiteTeam": "Alpha", "BlackTeam": "Beta"}), ("Cy", "Dee", {})],
            2,
            "without a WhiteTeam tag",
        ),
        ([("Ann", "Bob", {"WhiteTeam": "Alpha", "BlackTeam": "alpha"})], 1, "both of Alpha"),
        (
            [
                ("Ann", "Bob", {"WhiteTeam": "Alpha", "BlackTeam": "Beta"}),
                ("Ann", "Cy", {"WhiteTeam": "Gamma", "BlackTeam": "Beta"}),
            ],
            2,
            "Ann plays for Gamma here but for Alpha on line 1",
        ),
        ([("Ann", "Bob", {"WhiteTeam": "A" * 201, "BlackTeam": "Beta"})], 1, "team name longer than 200"),
    ],
)
def test_team_tags_that_do_not_make_teams_are_refused_with_their_line(
    games: list[tuple[str, str, dict[str, str]]], line: int, words: str
) -> None:
    texts = [game(white, black, "1-0", str(k), **tags) for k, (white, black, tags) in enumerate(games, start=1)]
    starts = [1 + sum(t.count("\n") for t in texts[:k]) for k in range(len(texts))]
    with pytest.raises(FormatError) as caught:
        parse_pgn("".join(texts), "cup.pgn")
    assert words in str(caught.value)
    assert caught.value.line == starts[line - 1]


def test_a_pgn_without_team_tags_stays_an_individual_event() -> None:
    pgn = parse_pgn(game("Ann", "Bob", "1-0") + game("Bob", "Cy", "0-1", "2"), "open.pgn")
    assert pgn.opened.teams is msgspec.UNSET and team_setup_of(pgn) is None


def test_a_followed_team_broadcast_takes_the_games_of_rounds_its_first_read_had_not_paired() -> None:
    """``tracker follow`` opens the event from the PGN as it first reads it (round 1 only).  The schedule is what
    that read pairs, so the later rounds' boards must still be accepted: they were refused as unscheduled."""
    from tracker.core.apply import Batch

    trf = _played_games(read_file(str(TEAM_RR / "team-rr-9001.trf")))
    whole = parse_pgn(_team_pgn(trf), "cup.pgn")
    round_one = tuple(e for e in trf.events if isinstance(e, ResultRecorded) and e.round == 1)
    opening = parse_pgn(_team_pgn(dataclasses.replace(trf, events=round_one)), "cup.pgn")
    assert {p.name for p in opening.opened.players} == {p.name for p in whole.opened.players}
    assert opening.opened.schedule is not None and len(opening.opened.schedule) == 1
    batch = Batch()
    batch.fold(opening.opened)
    for event in whole.events:  # every round's games, as the follower submits them
        batch.fold(event)
    state = batch.finish()
    setup, reference = team_setup_of(opening), team_setup_of(whole)
    assert state is not None and setup is not None and reference is not None
    assert team_standings(state, setup).rows == team_standings(state_from(whole), reference).rows
