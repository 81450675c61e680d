"""``TPN``: the team's pairing number (its place in the file's team order), lower first."""

from __future__ import annotations

from fractions import Fraction

from tracker.core.teams.tiebreaks.rule import TeamRule, TeamTieBreak, fixed
from tracker.core.teams.view import TeamView


def column(v: TeamView, tb: TeamTieBreak) -> list[Fraction]:
    return [Fraction(team.number) for team in v.setup.teams]


RULE = TeamRule(kind="TPN", listed=20, parse=fixed("TPN"), lower_first=True, column=column)
