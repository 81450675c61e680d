"""``MPTS``: match points (C.07 §11; 2-1-0 unless TRF ``362`` says otherwise).  ``PTS`` in a team order is
the primary score (this one unless ``GPTS`` comes before ``MPTS``)."""

from __future__ import annotations

from fractions import Fraction

from tracker.core.teams.tiebreaks.rule import Score, TeamRule, TeamTieBreak
from tracker.core.teams.view import TeamView


def parse(text: str, primary: Score) -> TeamTieBreak | None:
    if text == "MPTS" or (text == "PTS" and primary == "MP"):
        return TeamTieBreak("MPTS", "MPTS", ("MP",))
    return None


def column(v: TeamView, tb: TeamTieBreak) -> list[Fraction]:
    return list(v.mp)


RULE = TeamRule(kind="MPTS", listed=0, parse=parse, column=column)
