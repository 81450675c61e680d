"""A team event's standings as a terminal table, printed above the players' table."""

from __future__ import annotations

from typing import Final

from rich.console import Console
from rich.table import Table

from tracker.cli.projection import (
    BOUNDS,
    COLUMNS,
    EXACT,
    GAME_COLUMNS,
    NONE_LEFT,
    PROJECTION,
    SCENARIOS,
    scenario_marks,
    starred,
)
from tracker.cli.tables import RANK, STATUS, Grid
from tracker.cli.words import number, place, say
from tracker.core.phrases import phrase, plural
from tracker.core.teams.chances import TEAM_MODEL, TeamChancesResult
from tracker.core.teams.projection import TeamProjection
from tracker.core.teams.standings import TeamStandings
from tracker.core.teams.tiebreaks import parse_team_tiebreak, primary_of, team_rule_of
from tracker.i18n import Catalogue, language
from tracker.protocol.shapes import scenario_json

TEAM_TITLE: Final = phrase("cli.table.teams.title", "{name} — teams, {boards} boards ({status})")
TEAM_NUMBER: Final = phrase("cli.table.teams.number", "No")
TEAM: Final = phrase("cli.table.teams.team", "Team")
MATCH_POINTS: Final = phrase("cli.table.teams.mp", "MP")
GAME_POINTS: Final = phrase("cli.table.teams.gp", "GP")


def print_team_table(s: TeamStandings, name: str, console: Console, lang: Catalogue | None = None) -> None:
    """Print the team standings in ``lang`` (English by default): rank, number, team, match and game points,
    then every code of the team order but the two scores; a value decided inside tied groups is a place."""
    lang = lang or language("en")
    status = say(STATUS[s.provisional](), lang)
    table = Table(title=say(TEAM_TITLE(name=name, boards=s.boards, status=status), lang))
    table.add_column(say(RANK(), lang), justify="right")
    table.add_column(say(TEAM_NUMBER(), lang), justify="right")
    table.add_column(say(TEAM(), lang))
    table.add_column(say(MATCH_POINTS(), lang), justify="right", style="bold")
    table.add_column(say(GAME_POINTS(), lang), justify="right")
    primary = primary_of(list(s.codes))
    shown = [(k, code) for k, code in enumerate(s.codes) if code not in ("MPTS", "GPTS")]
    grouped = {code: team_rule_of(parse_team_tiebreak(code, primary)).grouped for _, code in shown}
    for _, code in shown:
        table.add_column(code, justify="right")
    for row in s.rows:
        cells = [
            (place(int(row.tiebreaks[k]), lang) if grouped[code] else number(row.tiebreaks[k], lang))
            for k, code in shown
        ]
        table.add_row(
            str(row.rank),
            str(row.team),
            row.name,
            number(row.match_points, lang),
            number(row.game_points, lang),
            *cells,
        )
    console.print(table)


def team_lines_json(p: TeamProjection, lines: tuple[int, ...]) -> list[dict[str, object]]:
    """Each team line (1st, the medals) and every team's state on it from its rank range: ``clinched`` (its
    worst rank is within), ``eliminated`` (its best is not), else ``open`` — with the scenario that puts it
    in (its best rank's) and the one that keeps it out (its worst rank's); exact when both extremes are."""
    out: list[dict[str, object]] = []
    for places in lines:
        teams: list[dict[str, object]] = []
        for r in p.teams:
            best, worst = r.reached["rank_best"], r.reached["rank_worst"]
            state = "clinched" if r.rank_worst <= places else "eliminated" if r.rank_best > places else "open"
            entry: dict[str, object] = {"team": r.team, "state": state, "exact": best.exact and worst.exact}
            if state == "open":
                entry["scenarios"] = {"in": scenario_json(best.scenario), "out": scenario_json(worst.scenario)}
            teams.append(entry)
        out.append({"places": places, "name": "1st" if places == 1 else f"top {places}", "teams": teams})
    return out


def team_chances_json(c: TeamChancesResult) -> dict[str, object]:
    """The team chances (an estimate, kept apart): per team the chance of 1st and of each line."""
    return {
        "estimate": True,
        "model": TEAM_MODEL.format(rate=c.draw_rate, runs=c.runs),
        "seed": c.seed,
        "runs": c.runs,
        "lines": list(c.lines),
        "teams": [
            {"team": x.team, "first": round(x.first, 4), "lines": [round(v, 4) for v in x.lines]} for x in c.teams
        ],
    }


def team_projection_json(
    p: TeamProjection, lines: tuple[int, ...] = (), chances: TeamChancesResult | None = None
) -> dict[str, object]:
    """``--project --format json`` for a team event: each team's rank range with a scenario per extreme
    (board games by start number), the pending board games (:mod:`tracker.core.teams.projection`), each
    line's states (:func:`team_lines_json`) and the chances (an estimate, :mod:`tracker.core.teams.chances`)."""
    document: dict[str, object] = {
        "exact": p.exact,
        "rank_key": list(p.key),
        "remaining": p.remaining,
        "teams": [
            {
                "team": r.team,
                "name": r.name,
                "rank_best": r.rank_best,
                "rank_worst": r.rank_worst,
                "exact": r.exact,
                "scenarios": {name: scenario_json(reached.scenario) for name, reached in r.reached.items()},
                "attained": {name: reached.attained for name, reached in r.reached.items()},
            }
            for r in p.teams
        ],
        "games": [
            {
                "round": g.round,
                "board": g.board,
                "white": g.white,
                "black": g.black,
                "white_team": g.white_team,
                "black_team": g.black_team,
            }
            for g in p.games
        ],
    }
    if lines:
        document["lines"] = team_lines_json(p, lines)
    if chances is not None:
        document["chances"] = team_chances_json(chances)
    return document


TEAM_PROJECTION_REMAIN: Final = plural(
    "cli.projection.teams.remain",
    "— {n} board game remains; {kind}; teams ranked on {key}",
    "— {n} board games remain; {kind}; teams ranked on {key}",
)
TEAM_PROJECTION_TITLE: Final = phrase(
    "cli.projection.teams",
    "Final rank range of each team (best: every deeper tie broken its way; worst: against it)",
)
TEAM_GAMES_TITLE: Final = phrase("cli.projection.teams.games", "Pending board games, in the scenarios' order")
BOARD: Final = phrase("cli.projection.board", "Bd")


def print_team_projection(p: TeamProjection, names: dict[int, str], console: Console, lang: Catalogue) -> None:
    """Print ``p`` (:func:`~tracker.core.teams.projection.project_teams`) in ``lang``: each team's rank range
    with a scenario per extreme (one mark per pending board game), then those games in that order."""
    if p.remaining == 0:
        console.print(f"[bold]{say(PROJECTION(), lang)}:[/] {say(NONE_LEFT(), lang)}")
        return
    kind = say(EXACT() if p.exact else BOUNDS(), lang)
    remain = say(TEAM_PROJECTION_REMAIN(n=p.remaining, kind=kind, key=", ".join(p.key)), lang)
    console.print(f"[bold]{say(PROJECTION(), lang)}[/] {remain}")
    rank, by = COLUMNS[4], COLUMNS[6]
    headers = [say(c(), lang) for c in (TEAM_NUMBER, TEAM, rank, by)]
    table = Grid(say(TEAM_PROJECTION_TITLE(), lang), headers, [True, False, True, False])
    for r in p.teams:
        best, worst = r.reached["rank_best"], r.reached["rank_worst"]
        table.add_row(
            str(r.team),
            r.name,
            f"{starred(str(r.rank_best), best.exact)}–{starred(str(r.rank_worst), worst.exact)}",
            f"{scenario_marks(best.scenario)} / {scenario_marks(worst.scenario)}",
        )
    table.print(console)
    console.print(say(SCENARIOS(), lang))
    columns = [say(c(), lang) for c in (GAME_COLUMNS[0], BOARD, GAME_COLUMNS[1])]
    games = Grid(say(TEAM_GAMES_TITLE(), lang), columns, [True, True, False])
    for g in p.games:
        games.add_row(str(g.round), str(g.board), f"{names[g.white]} – {names[g.black]}")
    games.print(console)
