"""Standings as terminal tables (rich), and what the table marks beside its values."""

from __future__ import annotations

from fractions import Fraction

from rich.console import Console
from rich.table import Table

from tracker.core.crosstable import Tournament
from tracker.core.standings import Standings, format_points
from tracker.core.tiebreaks import parse_tiebreak, rule_of
from tracker.core.tiebreaks.de import place_words, unsettled


def _num(value: object) -> str:
    return format_points(value) if isinstance(value, Fraction) else str(value)


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


def print_table(s: Standings, console: Console, state: Tournament | None = None) -> None:
    """Print the standings; a DE value is a place among the tied (``1st``), ``*`` while they have not all met."""
    status = "provisional" if s.provisional else "final"
    table = Table(
        title=f"{s.name} — after {sum(r.games for r in s.rows) // 2} games ({status}, {s.basis} basis, C.07 {s.rules})"
    )
    table.add_column("Rk", justify="right")
    table.add_column("No", justify="right")
    table.add_column("Player")
    table.add_column("Pts", justify="right", style="bold")
    grouped = [rule_of(parse_tiebreak(code)).grouped for code in s.codes]
    marked = provisional_places(state, s) if state is not None else {}
    for code in s.codes:
        table.add_column(code, justify="right")
    table.add_column("G", justify="right")
    for row in s.rows:
        name = row.name + (" (withdrawn)" if row.withdrawn else "")
        cells = []
        for code, value, place in zip(s.codes, row.tiebreaks, grouped, strict=True):
            star = "*" if row.start_no in marked.get(code, ()) else ""
            cells.append(place_words(int(value)) + star if place else _num(value))
        table.add_row(str(row.rank), str(row.start_no), name, _num(row.points), *cells, str(row.games))
    console.print(table)
    for code, place in zip(s.codes, grouped, strict=True):
        if place:
            star = " (* the tied players have not all met yet: provisional)" if marked.get(code) else ""
            console.print(f"{code}: the place among the players tied on everything before it (1st best){star}")
