"""Sonneborn-Berger for teams (C.07 §13.2, as the FIDE TEC server reads it): ``SB``, ``SB:MP``, ``SB:GP``,
``ESB`` and the four extended forms ``EMMSB``, ``EMGSB``, ``EGMSB``, ``EGGSB``.

The sum, over a team's matches, of the opponent's total score times the score the team made in that match.
Which two scores: ``SB:MP`` match points both (= ``EMMSB``), ``SB:GP`` game points both (= ``EGGSB``),
``SB`` the primary score both; ``ESB`` the opponent's primary score times one's own secondary score
(``EMGSB`` when match points are primary); ``EXYSB``: the opponent's ``X``, one's own ``Y``.

In a round robin every match counts, forfeited ones too (C.07 §15.2; the TEC server's default for a
round robin); a team bye adds nothing.  The opponent's total leaves out the points of its byes after its
last round that was not voluntarily unplayed (C.07 §16, the server's adjusted score).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Final, cast

from tracker.core.teams.tiebreaks.rule import Score, TeamRule, TeamTieBreak, other
from tracker.core.teams.view import TeamView

_CODE: Final = re.compile(r"(SB|ESB)(?::(MP|GP))?|E([MG])([MG])SB")


def parse(text: str, primary: Score) -> TeamTieBreak | None:
    match = _CODE.fullmatch(text)
    if match is None:
        return None
    name, given, opp, own = match.groups()
    if opp is not None:
        scores: tuple[Score, Score] = (cast(Score, opp + "P"), cast(Score, own + "P"))
    else:
        base: Score = cast(Score, given) if given is not None else primary
        scores = (base, base) if name == "SB" else (base, other(base))
    return TeamTieBreak("SB", text, scores)


def adjusted(v: TeamView, i: int, score: Score) -> Fraction:
    """Team ``i``'s total ``score`` as an opponent's: byes after its last not voluntarily unplayed round left out."""
    sides = v.sides[i]
    last = max((r for r, s in sides.items() if not s.voluntarily_unplayed), default=0)
    return sum((s.mp if score == "MP" else s.gp for r, s in sides.items() if s.is_match or r <= last), Fraction(0))


def column(v: TeamView, tb: TeamTieBreak) -> list[Fraction]:
    opp_score, own_score = tb.scores
    totals = [adjusted(v, i, opp_score) for i in range(v.n)]
    return [
        sum(
            (totals[s.opponent] * (s.mp if own_score == "MP" else s.gp) for s in v.sides[i].values() if s.is_match),
            Fraction(0),
        )
        for i in range(v.n)
    ]


RULE = TeamRule(kind="SB", listed=5, parse=parse, column=column)
