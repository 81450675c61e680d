"""``tracker standings FILE --project``: the arbiter projection as terminal tables."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from tracker.core.crosstable import Tournament
from tracker.core.projection import Projection, project
from tracker.core.standings import format_points

_STATUS_MARK = {"clinched": "[green]✔[/]", "eliminated": "[red]✘[/]", "open": "[yellow]?[/]"}
_RESULT_WORDS = {"1-0": "1–0", "1/2-1/2": "½–½", "0-1": "0–1", "+-": "+/−", "-+": "−/+", "--": "−/−"}


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
    for pl in p.players:
        opponents = " ".join(f"{o.start_no}{_STATUS_MARK[o.status]}" for o in pl.opponents)
        table.add_row(
            str(pl.start_no),
            names[pl.start_no],
            f"{format_points(pl.points_min)}–{format_points(pl.points_max)}",
            f"{format_points(pl.ks_min)}–{format_points(pl.ks_max)}",
            f"{pl.rank_best}–{pl.rank_worst}",
            opponents,
        )
    console.print(table)
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
