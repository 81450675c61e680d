"""``tracker standings FILE --project``: the arbiter projection as terminal tables."""

from __future__ import annotations

from fractions import Fraction

from rich.console import Console
from rich.table import Table

from tracker.core.crosstable import Tournament
from tracker.core.projection import Projection, project

_STATUS_MARK = {"clinched": "[green]✔[/]", "eliminated": "[red]✘[/]", "open": "[yellow]?[/]"}
_RESULT_WORDS = {"1-0": "1–0", "1/2-1/2": "½–½", "0-1": "0–1", "+-": "+/−", "-+": "−/+", "--": "−/−"}


def _pts(value: Fraction) -> str:
    whole, rest = divmod(value, 1)
    if rest == 0:
        return str(int(whole))
    if rest == Fraction(1, 2):
        return f"{int(whole)}½" if whole else "½"
    return f"{float(value):g}"


def print_projection(t: Tournament, console: Console) -> Projection:
    """Print what the remaining games decide; return the projection printed."""
    p = project(t)
    names = {pl.start_no: pl.name for pl in t.opened.players}
    kind = "exact over all outcomes" if p.exact else "sound bounds (too many games left for an exact answer)"
    if p.remaining == 0:
        console.print("[bold]Projection:[/] no games remain; every value above is final.")
        return p
    console.print(f"[bold]Projection[/] — {p.remaining} games remain; {kind}; final 50% line: {_pts(p.line)} points")
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
            f"{_pts(pl.points_min)}–{_pts(pl.points_max)}",
            f"{_pts(pl.ks_min)}–{_pts(pl.ks_max)}",
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
            ks = ", ".join(f"{s}: {_pts(lo)}–{_pts(hi)}" for s, (lo, hi) in sorted(outcome.ks.items())) or "—"
            ranks = ", ".join(f"{s}: {lo}–{hi}" for s, (lo, hi) in sorted(outcome.ranks.items())) or "—"
            games.add_row(
                str(g.round or "?") if k == 0 else "", label if k == 0 else "", _RESULT_WORDS[outcome.result], ks, ranks
            )
    console.print(games)
    return p
