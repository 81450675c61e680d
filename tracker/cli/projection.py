"""``tracker standings FILE --project``: the arbiter projection as terminal tables."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from tracker.core.crosstable import Tournament
from tracker.core.projection import Projection, Scenario, project
from tracker.core.standings import format_points

_STATUS_MARK = {"clinched": "[green]✔[/]", "eliminated": "[red]✘[/]", "open": "[yellow]?[/]"}
_RESULT_WORDS = {"1-0": "1–0", "1/2-1/2": "½–½", "0-1": "0–1", "+-": "+/−", "-+": "−/+", "--": "−/−"}
#: One character per game of a scenario: White wins, draw, Black wins, forfeits.
_RESULT_MARK = {"1-0": "1", "1/2-1/2": "=", "0-1": "0", "+-": "+", "-+": "-", "--": "x"}
_LINE_MARK = {"clinched": "[green]✔[/]", "eliminated": "[red]✘[/]", "open": "[yellow]?[/]", "unknown": "[dim]…[/]"}


def scenario_marks(scenario: Scenario | None) -> str:
    """A scenario as one character per remaining game, in the games table's order (``1`` ``=`` ``0``)."""
    return "—" if scenario is None else "".join(_RESULT_MARK[g.result] for g in scenario)


def _value(text: str, exact: bool) -> str:
    return text if exact else f"{text}*"


def print_projection(t: Tournament, console: Console) -> Projection:
    """Print what the remaining games decide; return the projection printed."""
    p = project(t)
    names = {pl.start_no: pl.name for pl in t.opened.players}
    kind = "exact over all outcomes" if p.exact else "sound bounds (too many games left for an exact answer)"
    if p.remaining == 0:
        console.print("[bold]Projection:[/] no games remain; every value above is final.")
        return p
    console.print(
        f"[bold]Projection[/] — {p.remaining} games remain; {kind}; final 50% line: {format_points(p.line)} points"
    )
    table = Table(title="Final Koya range, rank range and opponents' qualification (✔ clinched, ✘ eliminated, ? open)")
    table.add_column("No", justify="right")
    table.add_column("Player")
    table.add_column("Pts now→final", justify="right")
    table.add_column("KS range", justify="right")
    table.add_column("Rank range", justify="right")
    table.add_column("Opponents")
    table.add_column("Best rank by / worst by")
    for pl in p.players:
        opponents = " ".join(f"{o.start_no}{_STATUS_MARK[o.status]}" for o in pl.opponents)
        r = pl.reached
        table.add_row(
            str(pl.start_no),
            names[pl.start_no],
            f"{format_points(pl.points_min)}–{format_points(pl.points_max)}",
            f"{_value(format_points(pl.ks_min), r['ks_min'].exact)}–"
            f"{_value(format_points(pl.ks_max), r['ks_max'].exact)}",
            f"{_value(str(pl.rank_best), r['rank_best'].exact)}–{_value(str(pl.rank_worst), r['rank_worst'].exact)}",
            opponents,
            f"{scenario_marks(r['rank_best'].scenario)} / {scenario_marks(r['rank_worst'].scenario)}",
        )
    console.print(table)
    console.print(
        "Scenarios: one mark per game of the table below, in its order (1 White wins, = draw, 0 Black wins); "
        "* marks a bound no scenario found reaches."
    )
    if p.lines or p.playoff:
        _print_lines(p, names, console)
    games = Table(title="What each pending game decides (players whose KS or rank depends on it)")
    games.add_column("Rd", justify="right")
    games.add_column("Game")
    games.add_column("Outcome")
    games.add_column("KS ranges")
    games.add_column("Rank ranges")
    for g in p.games:
        label = f"{names[g.white]} – {names[g.black]}"
        for k, outcome in enumerate(g.outcomes):
            ks = (
                ", ".join(f"{s}: {format_points(lo)}–{format_points(hi)}" for s, (lo, hi) in sorted(outcome.ks.items()))
                or "—"
            )
            ranks = ", ".join(f"{s}: {lo}–{hi}" for s, (lo, hi) in sorted(outcome.ranks.items())) or "—"
            games.add_row(
                str(g.round or "?") if k == 0 else "", label if k == 0 else "", _RESULT_WORDS[outcome.result], ks, ranks
            )
    console.print(games)
    return p


def _print_lines(p: Projection, names: dict[int, str], console: Console) -> None:
    """Per player and declared line: ✔ clinched, ✘ eliminated, ? open (with a scenario inside / outside)."""
    lines = Table(
        title="Lines (✔ clinched, ✘ eliminated, ? open: a scenario inside / outside"
        + ("; line 1 and the play-off are judged on points)" if p.playoff else ")")
    )
    lines.add_column("No", justify="right")
    lines.add_column("Player")
    for _, name in p.lines:
        lines.add_column(name)
    if p.playoff:
        lines.add_column("Play-off for 1st")
    for pl in p.players:
        cells = [str(pl.start_no), names[pl.start_no]]
        for line in pl.lines:
            cell = _LINE_MARK[line.status]
            if line.status in ("open", "unknown"):
                cell += f" {scenario_marks(line.inside)} / {scenario_marks(line.outside)}"
            if line.playoff is not None:
                cell += f" (play-off {scenario_marks(line.playoff)})"
            cells.append(cell)
        if pl.playoff is not None:
            po = pl.playoff
            cell = _STATUS_MARK[po.status] + (f" {scenario_marks(po.scenario)}" if po.status == "open" else "")
            cells.append(cell + (" (at least tied 1st)" if po.secured else ""))
        lines.add_row(*cells)
    console.print(lines)
