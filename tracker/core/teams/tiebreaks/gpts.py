"""``GPTS``: game points, the points of a team's boards (C.07 §11; forfeits as the individual scoring counts
them, byes with their points)."""

from __future__ import annotations

from fractions import Fraction

from tracker.core.teams.tiebreaks.rule import Score, TeamRule, TeamTieBreak
from tracker.core.teams.view import TeamView


def parse(text: str, primary: Score) -> TeamTieBreak | None:
    if text == "GPTS" or (text == "PTS" and primary == "GP"):
        return TeamTieBreak("GPTS", "GPTS", ("GP",))
    return None


def column(v: TeamView, tb: TeamTieBreak) -> list[Fraction]:
    return list(v.gp)


RULE = TeamRule(kind="GPTS", listed=1, parse=parse, column=column)
