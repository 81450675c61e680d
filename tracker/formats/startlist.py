"""A start list without a pairing program: players from a CSV or a plain text file (``tracker new``).

Two shapes are read, both in the order of the pairing numbers (the first
player is number 1: draw the numbers first, as C.05 asks):

* **CSV** (the file name ends in ``.csv``): a header row naming the columns,
  in any order and case: ``name`` (required), ``rating``, ``fide_id`` (also
  ``fide id``, ``id``), ``federation`` (``fed``), ``title``, ``sex``,
  ``birth``, ``k`` (the K factor of the rating change, :func:`start_list_k`;
  written as tracker's ``XXK`` records); separated by commas, semicolons or tabs.
* **Text** (anything else): one player per line, the name as it should
  appear (``Surname, Given``), then optionally the rating and the FIDE id as
  trailing numbers (``Carlsen, Magnus 2830 1503014``); a number of up to four
  digits is the rating, a longer one the FIDE id.  Blank lines and lines
  starting with ``#`` are skipped.

:func:`parse_startlist` returns the players with start numbers 1, 2, …; it
raises :class:`~tracker.core.errors.FormatError` (file, line, problem) for a
file that is not a start list: no players, a name longer than TRF's 33
columns, a rating that is not a number from 0 to 4000, a FIDE id that is not
digits, the same player twice (the same name, or the same FIDE id: both line
numbers are said), a line that does not split into the expected columns (a
CSV row with more cells than the header, a text line whose name still holds
a separator such as ``Roe, Rick;1800``).

A **team** start list gives each player's team: a ``team`` column (``club``)
in a CSV, or in text a heading line ending with a colon (``Armenia:``) above
the team's players.  A team's players are in board order (its reserves
last); :func:`start_list_teams` reads the teams and
:func:`berger_team_tournament` makes the team round robin (FIDE's Berger
tables over the teams; board ``k`` of one line-up against board ``k`` of the
other, the first-named team's colours ``W B W B …``).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping
from typing import Final

from tracker.core.errors import EventRejected, FormatError
from tracker.core.events import (
    DEFAULT_TIEBREAKS,
    ByeRecorded,
    Event,
    Player,
    Rules,
    TeamEntry,
    Teams,
    TournamentOpened,
)
from tracker.core.schedule import rounds_needed
from tracker.core.tiebreaks import parse_tiebreaks
from tracker.core.worth.rating import xxk_records
from tracker.formats.base import TournamentFile, bye_id, check_characters, checked_file, slug
from tracker.formats.berger import berger_schedule

#: TRF's name columns (15–47).
NAME_WIDTH: Final = 33
_MAX_PLAYERS: Final = 500
_HEADERS: Final[dict[str, str]] = {
    "name": "name",
    "player": "name",
    "rating": "rating",
    "elo": "rating",
    "fide_id": "fide_id",
    "fide id": "fide_id",
    "fideid": "fide_id",
    "id": "fide_id",
    "federation": "federation",
    "fed": "federation",
    "title": "title",
    "sex": "sex",
    "birth": "birth",
    "born": "birth",
    "k": "k",
    "k_factor": "k",
    "kfactor": "k",
    "team": "team",
    "club": "team",
}
#: TRF ``013``'s team-name columns (5–36).
TEAM_NAME_WIDTH: Final = 32
_TRAILING_NUMBER: Final = re.compile(r"\s+([0-9]+)\s*$")
#: What no name holds: another file's column separators (a text line that did not split into its columns).
_SEPARATOR: Final = re.compile(r"[;\t|]")


def parse_startlist(text: str, path: str) -> tuple[Player, ...]:
    """The players of a start list (see the module docstring), numbered 1, 2, … in file order."""
    check_characters(text, path)
    text = text.removeprefix("\ufeff")
    fields = _csv_rows(text, path) if path.lower().endswith(".csv") else _text_rows(text, path)
    players: list[Player] = []
    ids: dict[str, int] = {}
    names: dict[str, int] = {}
    for line, row in fields:
        if len(players) == _MAX_PLAYERS:
            raise FormatError(path, line, f"more than {_MAX_PLAYERS} players")
        player = _player(len(players) + 1, row, line, path)
        if player.fide_id:
            other = ids.setdefault(player.fide_id, line)
            if other != line:
                raise FormatError(
                    path,
                    line,
                    f"FIDE id {player.fide_id} is already on line {other}: "
                    f"the same player twice (lines {other} and {line})",
                )
        other = names.setdefault(player.name.casefold(), line)
        if other != line:
            raise FormatError(
                path,
                line,
                f"{player.name!r} is already on line {other}: the same player twice (lines {other} and {line})",
            )
        players.append(player)
    if len(players) < 2:
        raise FormatError(path, 0, f"a round robin needs at least 2 players; the file lists {len(players)}")
    return tuple(players)


def start_list_k(text: str, path: str) -> dict[int, int]:
    """The K factor per start number from a CSV start list's optional ``k`` column (blank: none given).

    Raises :class:`FormatError` for a K that is not a whole number from 1 to 100.  A text start list has no K.
    """
    if not path.lower().endswith(".csv"):
        return {}
    ks: dict[int, int] = {}
    check_characters(text, path)
    for start_no, (line, row) in enumerate(_csv_rows(text.removeprefix("\ufeff"), path), start=1):
        given = row.get("k", "")
        if not given:
            continue
        if not given.isdigit() or not 1 <= int(given) <= 100:
            raise FormatError(path, line, f"the K factor {given!r} is not a whole number from 1 to 100")
        ks[start_no] = int(given)
    return ks


def start_list_teams(text: str, path: str) -> tuple[TeamEntry, ...] | None:
    """The teams of a team start list (see the module docstring), numbered in order of first appearance, each
    with its players' start numbers in board order; ``None`` when no player has a team.

    Raises :class:`FormatError` for a player without a team in a list whose others have one, a team name
    longer than TRF's 32 columns, or fewer than two teams.
    """
    check_characters(text, path)
    text = text.removeprefix("\ufeff")
    rows = _csv_rows(text, path) if path.lower().endswith(".csv") else _text_rows(text, path)
    named = [(line, row) for line, row in rows if row.get("team")]
    if not named:
        return None
    members: dict[str, list[int]] = {}
    spelled: dict[str, str] = {}
    for start_no, (line, row) in enumerate(rows, start=1):
        team = " ".join(row.get("team", "").split())
        if not team:
            raise FormatError(path, line, f"a player without a team, but line {named[0][0]} names one")
        if len(team) > TEAM_NAME_WIDTH:
            raise FormatError(path, line, f"the team name {team!r} is longer than TRF's {TEAM_NAME_WIDTH} columns")
        members.setdefault(spelled.setdefault(team.casefold(), team), []).append(start_no)
    if len(members) < 2:
        raise FormatError(path, 0, f"a team round robin needs at least 2 teams; the file names {len(members)}")
    return tuple(
        TeamEntry(number=k, name=name, players=tuple(players)) for k, (name, players) in enumerate(members.items(), 1)
    )


def _csv_rows(text: str, path: str) -> list[tuple[int, dict[str, str]]]:
    lines = text.splitlines()
    first = next((k for k, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return []
    delimiter = max(",;\t", key=lines[first].count)
    reader = csv.reader(lines[first:], delimiter=delimiter)
    header = [_HEADERS.get(cell.strip().lower().replace("-", "_"), "") for cell in next(reader)]
    if "name" not in header:
        raise FormatError(path, first + 1, "the CSV header names no 'name' column (name, rating, fide_id, …)")
    rows = []
    for k, cells in enumerate(reader, start=first + 2):
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) > len(header) and any(cell.strip() for cell in cells[len(header) :]):
            raise FormatError(
                path, k, f"{len(cells)} columns where the header names {len(header)} (separated by {delimiter!r})"
            )
        rows.append((k, {key: cell.strip() for key, cell in zip(header, cells, strict=False) if key}))
    return rows


def _text_rows(text: str, path: str) -> list[tuple[int, dict[str, str]]]:
    rows = []
    team = ""
    for k, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith(":"):  # a team's heading: the players below it are its line-up
            team = " ".join(line[:-1].split())
            if not team:
                raise FormatError(path, k, "a team heading without a name (write 'Team name:')")
            continue
        row: dict[str, str] = {"team": team} if team else {}
        while (match := _TRAILING_NUMBER.search(line)) is not None and len(row.keys() - {"team"}) < 2:
            number = match.group(1)
            key = "rating" if len(number) <= 4 else "fide_id"
            if key in row:
                break
            row[key] = number
            line = line[: match.start()].rstrip()
        if _SEPARATOR.search(line):
            raise FormatError(
                path,
                k,
                f"{line!r} does not split into a name, a rating and a FIDE id (separate them with spaces, "
                "e.g. 'Carlsen, Magnus 2830 1503014', or use a .csv file)",
            )
        row["name"] = line
        rows.append((k, row))
    return rows


def _player(start_no: int, row: dict[str, str], line: int, path: str) -> Player:
    name = " ".join(row.get("name", "").split())
    if not name:
        raise FormatError(path, line, "a player without a name")
    if _SEPARATOR.search(name):
        raise FormatError(path, line, f"{name!r} does not split into the expected columns: a separator in a name")
    if len(name) > NAME_WIDTH:
        raise FormatError(path, line, f"the name {name!r} is longer than TRF's {NAME_WIDTH} columns")
    rating_text = row.get("rating", "")
    if rating_text and (not rating_text.isdigit() or int(rating_text) > 4000):
        raise FormatError(path, line, f"the rating {rating_text!r} is not a number from 0 to 4000")
    fide_id = row.get("fide_id", "")
    if fide_id and (not fide_id.isdigit() or len(fide_id) > 11):
        raise FormatError(path, line, f"the FIDE id {fide_id!r} is not a number of at most 11 digits")
    for key, width in (("federation", 3), ("title", 3), ("sex", 1), ("birth", 10)):
        if len(row.get(key, "")) > width:
            raise FormatError(path, line, f"the {key} {row[key]!r} is longer than TRF's {width} columns")
    return Player(
        start_no=start_no,
        name=name,
        rating=int(rating_text) if rating_text else 0,
        title=row.get("title", ""),
        federation=row.get("federation", "").upper(),
        fide_id=fide_id,
        sex=row.get("sex", "").lower(),
        birth=row.get("birth", ""),
    )


def berger_tournament(
    players: tuple[Player, ...],
    name: str,
    *,
    cycles: int = 1,
    tiebreaks: tuple[str, ...] = DEFAULT_TIEBREAKS,
    rules: Rules = "2026",
    start_date: str = "",
    path: str = "start list",
    ks: Mapping[int, int] | None = None,
) -> TournamentFile:
    """A round robin of ``players`` (in pairing-number order) with FIDE's Berger tables as its schedule.

    The opening event carries the schedule (every round's pairings, White
    first), the format, the rounds, the tie-breaks and the edition, and as
    records ``192`` (``FIDE_ROUNDROBIN`` / ``FIDE_DOUBLEROUNDROBIN``) and,
    when given, ``042`` (the start date, which also says the edition to a
    reader); the events are the free rounds of an odd field, each a zero bye
    (TRF ``0000 - Z``, as the free round of a round robin is written).  The id
    is a slug of ``name``.  Raises :class:`FormatError` for an order with an
    unknown tie-break code or a tournament the core would not open.
    """
    try:
        parse_tiebreaks(tiebreaks, rules)
    except EventRejected as exc:
        raise FormatError(path, 0, exc.reason) from None
    table = berger_schedule(len(players), cycles)
    tid = slug(name)
    records = _records(cycles, start_date, ks)
    opened = TournamentOpened(
        id=f"{tid}/opened",
        tournament=tid,
        name=name,
        players=players,
        format="double" if cycles == 2 else "single",
        rounds=len(table),
        tiebreaks=tiebreaks,
        schedule=tuple(r.pairs for r in table),
        records=tuple(records),
        rules=rules,
    )
    byes: list[Event] = [
        ByeRecorded(id=bye_id(tid, r.number, r.free), tournament=tid, round=r.number, player=r.free, kind="zero")
        for r in table
        if r.free is not None
    ]
    tf, _ = checked_file(path, opened, byes, {})
    return tf


def _records(cycles: int, start_date: str, ks: Mapping[int, int] | None, teams: tuple[str, ...] = ()) -> list[str]:
    """A new round robin's records: ``192`` (the format), the team records, ``042`` when dated, and the start
    list's K factors (tracker's ``XXK``, for the rating change)."""
    records = ["192 FIDE_DOUBLEROUNDROBIN" if cycles == 2 else "192 FIDE_ROUNDROBIN", *teams]
    if start_date:
        records.append(f"042 {start_date}")
    return records + xxk_records(ks or {})


def berger_team_tournament(
    players: tuple[Player, ...],
    teams: tuple[TeamEntry, ...],
    name: str,
    *,
    boards: int = 0,
    cycles: int = 1,
    rules: Rules = "2026",
    start_date: str = "",
    path: str = "start list",
    ks: Mapping[int, int] | None = None,
) -> TournamentFile:
    """A team round robin of ``teams`` (their players in board order) by FIDE's Berger tables over the teams.

    ``boards`` is the line-up of a match (default: the smallest team); in each match board ``k`` of the
    first-named team (Berger's White) plays board ``k`` of the other, with White on the odd boards (``352``
    ``WBWB…``).  The schedule is those line-ups; a reserve who plays instead is the arbiter's entry (the
    core takes a board of the two teams' match).  An odd number of teams gives each round's free team a zero
    bye on its boards.  The records are ``013`` (the teams), ``352``, a ``092``/``192`` naming the format, and
    ``042`` when dated.  Raises :class:`FormatError` for a team shorter than ``boards`` or an event the core
    would not open.
    """
    boards = boards or min(len(t.players) for t in teams)
    for t in teams:
        if len(t.players) < boards:
            raise FormatError(path, 0, f"team {t.name!r} has {len(t.players)} players for {boards} boards")
    colours = ("WB" * boards)[:boards]
    table = berger_schedule(len(teams), cycles)
    schedule = []
    for r in table:
        pairs = []
        for a, b in r.pairs:
            first, second = teams[a - 1].players, teams[b - 1].players
            for k in range(boards):
                pairs.append((first[k], second[k]) if colours[k] == "W" else (second[k], first[k]))
        schedule.append(tuple(pairs))
    tid = slug(name)
    team_records = [f"013 {t.name:<{TEAM_NAME_WIDTH}}" + "".join(f"{p:>4} " for p in t.players).rstrip() for t in teams]
    records = _records(cycles, start_date, ks, (*team_records, f"352 {colours}"))
    opened = TournamentOpened(
        id=f"{tid}/opened",
        tournament=tid,
        name=name,
        players=players,
        format="double" if cycles == 2 else "single",
        # the players do not play a round robin of players, but the core counts rounds as for one (as a team
        # TRF is read); the team round robin's own rounds are the teams'
        rounds=max(len(table), rounds_needed(len(players), cycles)),
        schedule=tuple(schedule),
        records=tuple(records),
        rules=rules,
        teams=Teams(teams=teams, boards=boards, colours=colours, rounds=len(table), cycles=cycles),
    )
    byes: list[Event] = [
        ByeRecorded(id=bye_id(tid, r.number, p), tournament=tid, round=r.number, player=p, kind="zero")
        for r in table
        if r.free is not None
        for p in teams[r.free - 1].players[:boards]
    ]
    tf, _ = checked_file(path, opened, byes, {})
    return tf


__all__ = [
    "NAME_WIDTH",
    "TEAM_NAME_WIDTH",
    "berger_team_tournament",
    "berger_tournament",
    "parse_startlist",
    "start_list_k",
    "start_list_teams",
]
