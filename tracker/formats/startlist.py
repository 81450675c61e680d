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
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping
from typing import Final

from tracker.core.errors import EventRejected, FormatError
from tracker.core.events import DEFAULT_TIEBREAKS, ByeRecorded, Event, Player, Rules, TournamentOpened
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
}
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
    for k, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        row: dict[str, str] = {}
        while (match := _TRAILING_NUMBER.search(line)) is not None and len(row) < 2:
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
    records = ["192 FIDE_DOUBLEROUNDROBIN" if cycles == 2 else "192 FIDE_ROUNDROBIN"]
    if start_date:
        records.append(f"042 {start_date}")
    records += xxk_records(ks or {})  # the start list's K factors (tracker's XXK record, for the rating change)
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


__all__ = ["NAME_WIDTH", "berger_tournament", "parse_startlist", "start_list_k"]
