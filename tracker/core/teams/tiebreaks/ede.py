"""``EDE``: extended direct encounter (C.07 §13.3), and its forms ``EDEC``, ``EDET``, ``EDEB``, ``EDEBT``,
``EDEBB`` (§13.3.2), and ``DE`` (the primary score only), as the FIDE TEC server computes them.

Inside each group of teams tied on the criteria before it, direct encounter (C.07 §6) is applied on the
primary score — each team's points against the others still tied with it, two meetings of a double round
robin averaged — and applied again inside the groups it leaves tied, until it separates no more; then the
same on the secondary score; then on the primary again, and so on, until neither separates any group.  The
longer forms then apply, to a group of exactly two teams still tied, the board count of their matches
against each other (``C``), the top board, then the next (``T``), or all boards but the bottom one, then
but the two bottom ones (``B``).  In a round robin forfeited matches count as played (§15.2).

The value is the team's rank inside its group (1 best), or 0 where the group was not separated (a team
tied with nobody included), lower first: the numbers the TEC server prints.

The passes run over all groups at once, as the server runs them: the secondary score is tried when the
primary separated nothing in any group.  Only the longer forms can see that difference.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Final, cast

from tracker.core.teams.tiebreaks.rule import Score, TeamRule, TeamTieBreak, groups_of, other, place_values
from tracker.core.teams.view import TeamView

_CODE: Final = re.compile(r"(DE|EDE|EDEC|EDET|EDEB|EDEBT|EDEBB)(?::(MP|GP))?")
#: the stages of each form; ``T`` stands for one stage per board, ``B`` for one per board but the last
_STAGES: Final = {"DE": "P", "EDE": "PS", "EDEC": "PSC", "EDET": "PST", "EDEB": "PSB", "EDEBT": "PSCT", "EDEBB": "PSCB"}
#: the TEC server's bound on the passes
_PASSES: Final = 30


def parse(text: str, primary: Score) -> TeamTieBreak | None:
    match = _CODE.fullmatch(text)
    if match is None:
        return None
    name, given = match.groups()
    base: Score = cast(Score, given) if given is not None else primary
    return TeamTieBreak("EDE", text, (base, other(base)), stages=_STAGES[name])


def _stages(tb: TeamTieBreak, boards: int) -> str:
    return tb.stages.replace("T", "T" * boards).replace("B", "B" * max(boards - 1, 0))


def _weights(stages: str, at: int, boards: int) -> list[int]:
    stage = stages[at]
    pos = stages[:at].count(stage)
    if stage == "C":
        return list(range(1, boards + 1))
    if stage == "T":
        return [1 if b == pos else 0 for b in range(boards)]
    return [1 if b < boards - 1 - pos else 0 for b in range(boards)]


def _against(v: TeamView, i: int, run: set[int], points: dict[tuple[int, int], Fraction]) -> Fraction:
    """``i``'s points against the other teams of ``run``, the meetings with one team averaged."""
    met: dict[int, list[Fraction]] = {}
    for r, s in v.sides[i].items():
        if s.is_match and s.opponent in run:
            met.setdefault(s.opponent, []).append(points[(i, r)])
    return sum((sum(p, Fraction(0)) / len(p) for p in met.values()), Fraction(0))


def _encounter(v: TeamView, run: list[int], val: list[int], points: dict[tuple[int, int], Fraction]) -> int:
    """Rank ``run`` (teams with the same ``val``) by their points against each other; the splits made."""
    members = set(run)
    scored = {i: _against(v, i, members, points) for i in run}
    ordered = sorted(run, key=lambda i: (-scored[i], i))
    start = val[ordered[0]]
    changes = 0
    current = start
    for k, i in enumerate(ordered):
        if k and scored[i] != scored[ordered[k - 1]]:
            current = start + k
            changes += 1
        val[i] = current
    return changes


def places(v: TeamView, tb: TeamTieBreak, ranks: list[int]) -> list[Fraction]:
    stages = _stages(tb, v.boards)
    val = list(ranks)
    by_score = {
        score: {(i, r): (s.mp if score == "MP" else s.gp) for i in range(v.n) for r, s in v.sides[i].items()}
        for score in ("MP", "GP")
    }
    swap = 0
    separated = [True] * len(stages)
    more = [True] * v.n
    passes = 0
    going = True
    while going:
        going = False
        passes += 1
        changes = 0
        for run in groups_of(val):
            if not more[run[0]]:
                continue
            if len(run) == 1:
                more[run[0]] = False
                continue
            stage = stages[swap]
            made = 0
            if stage in "PS":
                score = tb.scores[0] if stage == "P" else tb.scores[1]
                made = _encounter(v, run, val, by_score[score])
            elif len(run) == 2:  # the board stages apply to two teams only, and count no split (as the server)
                w = _weights(stages, swap, v.boards)
                weighted = {
                    (i, r): sum((w[b] * p for b, p in enumerate(s.boards)), Fraction(0))
                    for i in run
                    for r, s in v.sides[i].items()
                }
                _encounter(v, run, val, weighted)
            going_here = bool(made) and passes < _PASSES
            for i in run:
                more[i] = going_here
            going = going or going_here
            changes += made
        separated[swap] = changes > 0
        if changes == 0:
            swap = (swap + 1) % len(stages)
            more = [True] * v.n
        else:
            separated = [True] * len(stages)
        going = going or (any(separated) and passes < _PASSES)
    groups = groups_of(ranks)
    inside = {i: val[i] - ranks[i] + 1 for i in range(v.n)}
    return place_values(groups, inside, v.n)


RULE = TeamRule(kind="EDE", listed=3, parse=parse, lower_first=True, places=places)
