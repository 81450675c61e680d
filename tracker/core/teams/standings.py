"""Team standings: the teams ordered by the team tie-break order, with shared ranks (1, 1, 3 …).

Each criterion splits the groups still tied after the ones before it; a kind decided inside such groups
(``EDE``, ``TBR``, ``BBE``) is given the ranks so far.  Teams equal on every criterion share a rank and are
listed by team number — the FIDE TEC server's ranks.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from tracker.core.crosstable import Tournament
from tracker.core.teams.setup import TeamSetup
from tracker.core.teams.tiebreaks import parse_team_tiebreaks, team_rule_of
from tracker.core.teams.view import TeamView, team_view


@dataclass(frozen=True, slots=True)
class TeamRow:
    """One team's line: ``team`` its number in the file's team order; ``tiebreaks`` aligned with the codes."""

    rank: int
    team: int
    name: str
    match_points: Fraction
    game_points: Fraction
    tiebreaks: tuple[Fraction, ...]


@dataclass(frozen=True, slots=True)
class TeamStandings:
    """The team table; ``provisional`` until every match of the team round robin is in."""

    codes: tuple[str, ...]
    rows: tuple[TeamRow, ...]
    provisional: bool
    boards: int
    view: TeamView


def _ranks(keys: list[tuple[Fraction, ...]]) -> list[int]:
    """Competition ranks of ``keys`` (higher first)."""
    ordered = sorted(keys, reverse=True)
    first: dict[tuple[Fraction, ...], int] = {}
    for position, key in enumerate(ordered, start=1):
        first.setdefault(key, position)
    return [first[k] for k in keys]


def team_standings(t: Tournament, setup: TeamSetup, codes: tuple[str, ...] | None = None) -> TeamStandings:
    """The team standings of crosstable ``t`` by ``codes`` (default: the setup's order).

    Raises :class:`~tracker.core.errors.EventRejected` (``unknown-tiebreak``) for a code of no team rule.
    """
    order = parse_team_tiebreaks(codes if codes is not None else setup.tiebreaks)
    view = team_view(t, setup)
    n = view.n
    keys: list[tuple[Fraction, ...]] = [() for _ in range(n)]
    values: list[list[Fraction]] = []
    for tb in order:
        rule = team_rule_of(tb)
        if rule.places is not None:
            column = rule.places(view, tb, _ranks(keys))
        else:
            assert rule.column is not None  # a rule has one of the two
            column = rule.column(view, tb)
        values.append(column)
        sign = -1 if rule.lower_first else 1
        keys = [(*keys[i], sign * column[i]) for i in range(n)]
    ranks = _ranks(keys)
    listed = sorted(range(n), key=lambda i: (ranks[i], setup.teams[i].number))
    rows = tuple(
        TeamRow(
            rank=ranks[i],
            team=setup.teams[i].number,
            name=setup.teams[i].name,
            match_points=view.mp[i],
            game_points=view.gp[i],
            tiebreaks=tuple(column[i] for column in values),
        )
        for i in listed
    )
    return TeamStandings(
        codes=tuple(tb.code for tb in order), rows=rows, provisional=not view.complete, boards=view.boards, view=view
    )


__all__ = ["TeamRow", "TeamStandings", "team_standings"]
