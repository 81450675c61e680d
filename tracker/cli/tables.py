"""Standings as terminal tables (rich)."""

from __future__ import annotations

from fractions import Fraction

from rich.console import Console
from rich.table import Table

from tracker.core.standings import Standings, format_points


def _num(value: object) -> str:
    return format_points(value) if isinstance(value, Fraction) else str(value)


def print_table(s: Standings, console: Console) -> None:
    status = "provisional" if s.provisional else "final"
    table = Table(
        title=f"{s.name} — after {sum(r.games for r in s.rows) // 2} games ({status}, {s.basis} basis, C.07 {s.rules})"
    )
    table.add_column("Rk", justify="right")
    table.add_column("No", justify="right")
    table.add_column("Player")
    table.add_column("Pts", justify="right", style="bold")
    for code in s.codes:
        table.add_column(code, justify="right")
    table.add_column("G", justify="right")
    for row in s.rows:
        name = row.name + (" (withdrawn)" if row.withdrawn else "")
        table.add_row(
            str(row.rank), str(row.start_no), name, _num(row.points), *(_num(v) for v in row.tiebreaks), str(row.games)
        )
    console.print(table)
