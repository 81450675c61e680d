"""``tracker standings FILE --project``: the arbiter projection as terminal tables."""

from __future__ import annotations

from typing import Final

from rich.console import Console

from tracker.cli.tables import NUMBER, PLAYER, Grid
from tracker.cli.words import say
from tracker.core.crosstable import Tournament
from tracker.core.phrases import phrase, plural
from tracker.core.projection import Projection, Scenario, project
from tracker.i18n import Catalogue, language

#: Plain marks: :class:`~tracker.cli.tables.Grid` colours them on a terminal.
_STATUS_MARK = {"clinched": "✔", "eliminated": "✘", "open": "?"}
_RESULT_WORDS = {"1-0": "1–0", "1/2-1/2": "½–½", "0-1": "0–1", "+-": "+/−", "-+": "−/+", "--": "−/−"}
#: One character per game of a scenario: White wins, draw, Black wins, forfeits.
_RESULT_MARK = {"1-0": "1", "1/2-1/2": "=", "0-1": "0", "+-": "+", "-+": "-", "--": "x"}
_LINE_MARK = {"clinched": "✔", "eliminated": "✘", "open": "?", "unknown": "…"}


def scenario_marks(scenario: Scenario | None) -> str:
    """A scenario as one character per remaining game, in the games table's order (``1`` ``=`` ``0``)."""
    return "—" if scenario is None else "".join(_RESULT_MARK[g.result] for g in scenario)


def starred(text: str, exact: bool) -> str:
    """``text`` as shown for a bound: starred when no scenario is known to reach it."""
    return text if exact else f"{text}*"


PROJECTION: Final = phrase("cli.projection", "Projection")
NONE_LEFT: Final = phrase("cli.projection.none_left", "no games remain; every value above is final.")
REMAIN: Final = plural(
    "cli.projection.remain",
    "— {n} game remains; {kind}; final 50% line: {line:points} points",
    "— {n} games remain; {kind}; final 50% line: {line:points} points",
)
EXACT: Final = phrase("cli.projection.exact", "exact over all outcomes")
BOUNDS: Final = phrase("cli.projection.bounds", "sound bounds (too many games left for an exact answer)")
PLAYERS_TITLE: Final = phrase(
    "cli.projection.players",
    "Final Koya range, rank range and opponents' qualification (✔ clinched, ✘ eliminated, ? open)",
)
COLUMNS: Final = (
    NUMBER,
    PLAYER,
    phrase("cli.projection.points", "Pts now→final"),
    phrase("cli.projection.ks", "KS range"),
    phrase("cli.projection.rank", "Rank range"),
    phrase("cli.projection.opponents", "Opponents"),
    phrase("cli.projection.by", "Best rank by / worst by"),
)
SCENARIOS: Final = phrase(
    "cli.projection.scenarios",
    "Scenarios: one mark per game of the table below, in its order (1 White wins, = draw, 0 Black wins); "
    "* marks a bound no scenario found reaches.",
)
GAMES_TITLE: Final = phrase(
    "cli.projection.games", "What each pending game decides (players whose KS or rank depends on it)"
)
GAME_COLUMNS: Final = (
    phrase("cli.projection.round", "Rd"),
    phrase("cli.projection.game", "Game"),
    phrase("cli.projection.outcome", "Outcome"),
    phrase("cli.projection.ks_ranges", "KS ranges"),
    phrase("cli.projection.rank_ranges", "Rank ranges"),
)
LINES_TITLE: Final = phrase(
    "cli.projection.lines", "Lines (✔ clinched, ✘ eliminated, ? open: a scenario inside / outside)"
)
LINES_TITLE_PLAYOFF: Final = phrase(
    "cli.projection.lines.playoff",
    "Lines (✔ clinched, ✘ eliminated, ? open: a scenario inside / outside; "
    "line 1 and the play-off are judged on points)",
)
PLAYOFF_COLUMN: Final = phrase("cli.projection.playoff", "Play-off for 1st")
PLAYOFF_CELL: Final = phrase("cli.projection.playoff.cell", "(play-off {marks})")
TIED_FIRST: Final = phrase("cli.projection.tied_first", "(at least tied 1st)")


def print_projection(t: Tournament, console: Console, lang: Catalogue | None = None) -> Projection:
    """Print what the remaining games decide, in ``lang`` (English by default); return the projection printed."""
    lang = lang or language("en")
    pts = lang.points
    p = project(t)
    names = {pl.start_no: pl.name for pl in t.opened.players}
    kind = say(EXACT() if p.exact else BOUNDS(), lang)
    if p.remaining == 0:
        console.print(f"[bold]{say(PROJECTION(), lang)}:[/] {say(NONE_LEFT(), lang)}")
        return p
    remain = say(REMAIN(n=p.remaining, kind=kind, line=float(p.line)), lang)
    console.print(f"[bold]{say(PROJECTION(), lang)}[/] {remain}")
    table = Grid(say(PLAYERS_TITLE(), lang), [say(c(), lang) for c in COLUMNS], [k in (0, 2, 3, 4) for k in range(7)])
    for pl in p.players:
        opponents = " ".join(f"{o.start_no}{_STATUS_MARK[o.status]}" for o in pl.opponents)
        r = pl.reached
        table.add_row(
            str(pl.start_no),
            names[pl.start_no],
            f"{pts(pl.points_min)}–{pts(pl.points_max)}",
            f"{starred(pts(pl.ks_min), r['ks_min'].exact)}–{starred(pts(pl.ks_max), r['ks_max'].exact)}",
            f"{starred(str(pl.rank_best), r['rank_best'].exact)}–{starred(str(pl.rank_worst), r['rank_worst'].exact)}",
            opponents,
            f"{scenario_marks(r['rank_best'].scenario)} / {scenario_marks(r['rank_worst'].scenario)}",
        )
    table.print(console)
    console.print(say(SCENARIOS(), lang))
    if p.lines or p.playoff:
        _print_lines(p, names, console, lang)
    games = Grid(say(GAMES_TITLE(), lang), [say(c(), lang) for c in GAME_COLUMNS], [k == 0 for k in range(5)])
    for g in p.games:
        label = f"{names[g.white]} – {names[g.black]}"
        for k, outcome in enumerate(g.outcomes):
            ks = ", ".join(f"{s}: {pts(lo)}–{pts(hi)}" for s, (lo, hi) in sorted(outcome.ks.items())) or "—"
            ranks = ", ".join(f"{s}: {lo}–{hi}" for s, (lo, hi) in sorted(outcome.ranks.items())) or "—"
            games.add_row(
                str(g.round or "?") if k == 0 else "", label if k == 0 else "", _RESULT_WORDS[outcome.result], ks, ranks
            )
    games.print(console)
    return p


def _print_lines(p: Projection, names: dict[int, str], console: Console, lang: Catalogue) -> None:
    """Per player and declared line: ✔ clinched, ✘ eliminated, ? open (with a scenario inside / outside)."""
    headers = [say(COLUMNS[0](), lang), say(COLUMNS[1](), lang), *(name for _, name in p.lines)]
    if p.playoff:
        headers.append(say(PLAYOFF_COLUMN(), lang))
    lines = Grid(
        say((LINES_TITLE_PLAYOFF if p.playoff else LINES_TITLE)(), lang), headers, [True] + [False] * (len(headers) - 1)
    )
    for pl in p.players:
        cells = [str(pl.start_no), names[pl.start_no]]
        for line in pl.lines:
            cell = _LINE_MARK[line.status]
            if line.status in ("open", "unknown"):
                cell += f" {scenario_marks(line.inside)} / {scenario_marks(line.outside)}"
            if line.playoff is not None:
                cell += " " + say(PLAYOFF_CELL(marks=scenario_marks(line.playoff)), lang)
            cells.append(cell)
        if pl.playoff is not None:
            po = pl.playoff
            cell = _STATUS_MARK[po.status] + (f" {scenario_marks(po.scenario)}" if po.status == "open" else "")
            cells.append(cell + (" " + say(TIED_FIRST(), lang) if po.secured else ""))
        lines.add_row(*cells)
    lines.print(console)
