"""Koya for teams (C.07 §9.2 on a team score, §14.5 limits): ``KS``, ``KS:MP``, ``KS:GP``, ``KS:MP/L+1`` ….

The score a team made against the teams that reached 50% of the maximum: an opponent qualifies when its
total ≥ ½ × a win × G (+ ½ point per limit step), where a win is 2 match points (the ``362`` win) or the
board count × a game win for game points, and G the matches a team can play: once every match is in, the
rounds less the bye rounds of an odd round robin and the teams never paired (as the FIDE TEC server
counts); before that, the opponent's completed matches (the ``percentage`` basis of the individual KS).
Forfeited matches count; byes never add (no opponent).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Final, cast

from tracker.core.teams.tiebreaks.rule import Score, TeamRule, TeamTieBreak
from tracker.core.teams.view import TeamView

_CODE: Final = re.compile(r"KS(?::(MP|GP))?(?:/L([+-][0-9]{1,2}))?")


def parse(text: str, primary: Score) -> TeamTieBreak | None:
    match = _CODE.fullmatch(text)
    if match is None:
        return None
    given, limit = match.groups()
    score: Score = cast(Score, given) if given is not None else primary
    return TeamTieBreak("KS", text, (score,), limit=int(limit) if limit else 0)


def match_count(v: TeamView) -> int:
    """G once every match is in: the rounds less an odd round robin's byes, less the teams never paired."""
    games = v.rounds
    if v.rounds % v.n == 0:
        games -= v.rounds // v.n
    return games - sum(1 for sides in v.sides if not any(s.is_match for s in sides.values()))


def line(v: TeamView, tb: TeamTieBreak, games: int) -> Fraction:
    score = tb.scores[0]
    win = v.setup.scoring.win if score == "MP" else v.game_win * v.boards
    return Fraction(1, 2) * win * games + Fraction(tb.limit, 2)


def column(v: TeamView, tb: TeamTieBreak) -> list[Fraction]:
    score = tb.scores[0]
    if v.complete:
        final = line(v, tb, match_count(v))
        lines = [final] * v.n
    else:
        lines = [line(v, tb, sum(1 for s in v.sides[o].values() if s.is_match and s.complete)) for o in range(v.n)]
    qualified = [v.score(o, score) >= lines[o] for o in range(v.n)]
    return [
        sum(
            (s.mp if score == "MP" else s.gp for s in v.sides[i].values() if s.is_match and qualified[s.opponent]),
            Fraction(0),
        )
        for i in range(v.n)
    ]


RULE = TeamRule(kind="KS", listed=6, parse=parse, column=column)
