"""``MPVGP``: the secondary score (C.07 §13.1): game points when match points are primary, match points when
game points are."""

from __future__ import annotations

from fractions import Fraction

from tracker.core.teams.tiebreaks.rule import Score, TeamRule, TeamTieBreak, other
from tracker.core.teams.view import TeamView


def parse(text: str, primary: Score) -> TeamTieBreak | None:
    return TeamTieBreak("MPVGP", "MPVGP", (other(primary),)) if text == "MPVGP" else None


def column(v: TeamView, tb: TeamTieBreak) -> list[Fraction]:
    return [v.score(i, tb.scores[0]) for i in range(v.n)]


RULE = TeamRule(kind="MPVGP", listed=2, parse=parse, column=column)
