"""Standings as terminal tables (rich), and what the table marks beside its values."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from rich.cells import cell_len
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


# -- big tables -------------------------------------------------------------------
#
# rich lays a table out by measuring and wrapping every cell as a renderable, twice; a projection's
# tables have a row per player (with up to n − 1 opponents in one cell) and three per pending game,
# which for a fresh 200-player round robin is 60,000 rows and took eight times the CPU of the same
# projection as JSON.  :class:`Grid` draws the same box (rich's heavy head) from plain strings, word
# wrapping only the cells that do not fit.

_MARK_STYLES: Final = (
    (re.compile("✔"), "\x1b[32m✔\x1b[0m"),
    (re.compile("✘"), "\x1b[31m✘\x1b[0m"),
    (re.compile(r"(?<=\d)\?"), "\x1b[33m?\x1b[0m"),
    (re.compile("…"), "\x1b[2m…\x1b[0m"),
)


def _width(text: str) -> int:
    return len(text) if text.isascii() else cell_len(text)


def _chop(word: str, width: int) -> list[str]:
    """A word wider than ``width`` cut into pieces of at most ``width`` cells."""
    pieces, piece = [], ""
    for ch in word:
        if piece and _width(piece + ch) > width:
            pieces.append(piece)
            piece = ""
        piece += ch
    return [*pieces, piece]


def wrap(text: str, width: int) -> list[str]:
    """``text`` word-wrapped to lines of at most ``width`` cells (a longer word is cut)."""
    if _width(text) <= width:
        return [text]
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        for piece in _chop(word, width) if _width(word) > width else [word]:
            joined = f"{line} {piece}" if line else piece
            if _width(joined) <= width:
                line = joined
            else:
                lines.append(line)
                line = piece
    return [*lines, line]


@dataclass
class Grid:
    """A table of plain-string cells, printed in rich's heavy-head box; marks (✔ ✘ ?) coloured on a terminal."""

    title: str
    headers: list[str]
    right: list[bool]
    rows: list[list[str]] = field(default_factory=list)

    def add_row(self, *cells: str) -> None:
        self.rows.append(list(cells))

    def widths(self, available: int) -> list[int]:
        """Each column's width: its widest cell, the widest columns narrowed (never below their longest word,
        unless even those do not fit) until the table fits in ``available`` cells."""
        k = len(self.headers)
        natural = [_width(h) for h in self.headers]
        least = [max(map(_width, h.split(" "))) for h in self.headers]
        for row in self.rows:
            for c, cell in enumerate(row):
                w = _width(cell)
                if w > natural[c]:
                    natural[c] = w
                if w > least[c]:
                    least[c] = max(least[c], max(map(_width, cell.split(" "))))
        room = available - 3 * k - 1
        widths = list(natural)
        floors = least if sum(least) <= room else [1] * k
        while sum(widths) > room:
            wide = max((c for c in range(k) if widths[c] > floors[c]), key=lambda c: widths[c], default=None)
            if wide is None:
                break
            others = [widths[c] for c in range(k) if c != wide and widths[c] < widths[wide]]
            # the widest column down to the next widest, its floor, or just what fits (each < its width)
            widths[wide] = max(max(others, default=0), floors[wide], widths[wide] - (sum(widths) - room))
        return widths

    def lines(self, available: int) -> list[str]:
        """The table as text lines (title centred above it), at most ``available`` cells wide."""
        widths = self.widths(available)
        total = sum(widths) + 3 * len(widths) + 1

        def edge(left: str, fill: str, cross: str, right: str) -> str:
            return left + cross.join(fill * (w + 2) for w in widths) + right

        def block(cells: list[str], bar: str) -> list[str]:
            wrapped = [wrap(cell, w) for cell, w in zip(cells, widths, strict=True)]
            height = max(len(w) for w in wrapped)
            out = []
            for i in range(height):
                parts = []
                for c, w in enumerate(widths):
                    text = wrapped[c][i] if i < len(wrapped[c]) else ""
                    pad = " " * (w - _width(text))
                    parts.append(pad + text if self.right[c] else text + pad)
                out.append(f"{bar} " + f" {bar} ".join(parts) + f" {bar}")
            return out

        out = []
        for line in wrap(self.title, total):
            excess = total - _width(line)
            out.append(" " * (excess // 2) + line + " " * (excess - excess // 2))
        out.append(edge("┏", "━", "┳", "┓"))
        out += block(self.headers, "┃")
        out.append(edge("┡", "━", "╇", "┩"))
        for row in self.rows:
            out += block(row, "│")
        out.append(edge("└", "─", "┴", "┘"))
        return out

    def print(self, console: Console) -> None:
        """Write the table to ``console``'s file in one go (rich's console for everything around it)."""
        text = "\n".join(self.lines(console.width)) + "\n"
        if console.color_system is not None and not console.no_color:
            for pattern, styled in _MARK_STYLES:
                text = pattern.sub(styled, text)
        console.file.write(text)
        console.file.flush()
