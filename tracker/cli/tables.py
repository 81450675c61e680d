"""Standings as terminal tables (rich), and what the table marks beside its values."""

from __future__ import annotations

from typing import Final

from rich.console import Console
from rich.table import Table

from tracker.cli.words import number, place, say
from tracker.core.crosstable import Tournament
from tracker.core.phrases import phrase, plural
from tracker.core.standings import Standings
from tracker.core.tiebreaks import parse_tiebreak, rule_of
from tracker.core.tiebreaks.de import unsettled
from tracker.i18n import Catalogue, language

TITLE: Final = plural(
    "cli.table.title",
    "{name} — after {n} game ({status}, {basis}, C.07 {rules})",
    "{name} — after {n} games ({status}, {basis}, C.07 {rules})",
)
STATUS: Final = {True: phrase("cli.table.provisional", "provisional"), False: phrase("cli.table.final", "final")}
BASIS: Final = {
    "percentage": phrase("cli.table.basis.percentage", "percentage basis"),
    "max-games": phrase("cli.table.basis.max_games", "max-games basis"),
    "games": phrase("cli.table.basis.games", "games basis"),
    "rounds": phrase("cli.table.basis.rounds", "rounds basis"),
}
#: The columns' headings: rank, start number, player, points (the tie-breaks' codes are written as they are), games.
RANK: Final = phrase("cli.table.rank", "Rk")
NUMBER: Final = phrase("cli.table.number", "No")
PLAYER: Final = phrase("cli.table.player", "Player")
POINTS: Final = phrase("cli.table.points", "Pts")
GAMES: Final = phrase("cli.table.games", "G")
WITHDRAWN: Final = phrase("cli.table.withdrawn", "{name} (withdrawn)")
PLACE_NOTE: Final = phrase(
    "cli.table.place", "{code}: the place among the players tied on everything before it (1st best)"
)
PLACE_NOTE_PROVISIONAL: Final = phrase(
    "cli.table.place.provisional",
    "{code}: the place among the players tied on everything before it (1st best) "
    "(* the tied players have not all met yet: provisional)",
)


def provisional_places(t: Tournament, s: Standings) -> dict[str, set[int]]:
    """Per code decided inside the tied groups (DE): who is in a group whose players have not all met yet.

    Such a value is provisional: the games still to play between them can change it (C.07 §6 compares
    the games between the tied players; see :mod:`tracker.core.tiebreaks.de`).
    """
    found: dict[str, set[int]] = {}
    for k, code in enumerate(s.codes):
        if not rule_of(parse_tiebreak(code)).grouped:
            continue
        groups: dict[tuple[object, ...], list[int]] = {}
        placed: set[int] = set()  # "—" (no separation) is never marked, as on the pages
        for row in s.rows:
            groups.setdefault((row.points, *row.tiebreaks[:k]), []).append(row.start_no)
            if row.tiebreaks[k]:
                placed.add(row.start_no)
        found[code] = {
            start_no
            for members in groups.values()
            if len(members) > 1 and unsettled(t, [t.index[m] for m in members])
            for start_no in members
            if start_no in placed
        }
    return found


def provisional_notes(t: Tournament, s: Standings) -> list[str]:
    """One sentence per grouped code with provisional values (``tracker standings --format json``'s notes)."""
    notes = []
    for code, players in provisional_places(t, s).items():
        if players:
            names = ", ".join(row.name for row in s.rows if row.start_no in players)
            notes.append(
                f"{code} is provisional for {names}: the players tied before it have not all met yet, "
                "and the games still to play between them can change it"
            )
    return notes


def print_table(s: Standings, console: Console, state: Tournament | None = None, lang: Catalogue | None = None) -> None:
    """Print the standings in ``lang`` (English by default); a DE value is a place among the tied (``1st``), ``*``
    while they have not all met; names and codes as they are."""
    lang = lang or language("en")
    status, basis = say(STATUS[s.provisional](), lang), say(BASIS[s.basis](), lang)
    games = sum(r.games for r in s.rows) // 2
    table = Table(title=say(TITLE(name=s.name, n=games, status=status, basis=basis, rules=s.rules), lang))
    table.add_column(say(RANK(), lang), justify="right")
    table.add_column(say(NUMBER(), lang), justify="right")
    table.add_column(say(PLAYER(), lang))
    table.add_column(say(POINTS(), lang), justify="right", style="bold")
    grouped = [rule_of(parse_tiebreak(code)).grouped for code in s.codes]
    marked = provisional_places(state, s) if state is not None else {}
    for code in s.codes:
        table.add_column(code, justify="right")
    table.add_column(say(GAMES(), lang), justify="right")
    for row in s.rows:
        name = say(WITHDRAWN(name=row.name), lang) if row.withdrawn else row.name
        cells = []
        for code, value, in_group in zip(s.codes, row.tiebreaks, grouped, strict=True):
            star = "*" if row.start_no in marked.get(code, ()) else ""
            cells.append(place(int(value), lang) + star if in_group else number(value, lang))
        table.add_row(str(row.rank), str(row.start_no), name, number(row.points, lang), *cells, str(row.games))
    console.print(table)
    for code, in_group in zip(s.codes, grouped, strict=True):
        if in_group:
            note = PLACE_NOTE_PROVISIONAL if marked.get(code) else PLACE_NOTE
            console.print(say(note(code=code), lang))
