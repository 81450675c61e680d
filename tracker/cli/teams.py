"""A team event's standings as a terminal table, printed above the players' table."""

from __future__ import annotations

from typing import Final

from rich.console import Console
from rich.table import Table

from tracker.cli.tables import RANK, STATUS
from tracker.cli.words import number, place, say
from tracker.core.phrases import phrase
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


def team_projection_json(p: TeamProjection) -> dict[str, object]:
    """``--project --format json`` for a team event: each team's rank range with a scenario per extreme
    (board games by start number), and the pending board games (:mod:`tracker.core.teams.projection`)."""
    return {
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
