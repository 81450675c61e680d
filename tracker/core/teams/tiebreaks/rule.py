"""What one team tie-break kind is: the :class:`TeamRule`, and a parsed code, :class:`TeamTieBreak`.

A team code reads one or two **scores**: ``MP`` (match points) or ``GP`` (game points).  A code without
its own (``EDE``, ``ESB``, ``KS``) takes the event's **primary** score — the first of ``MPTS``/``GPTS``
in the order — and its **secondary** score is the other one, as the FIDE TEC server reads C.07 §13.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from tracker.core.teams.view import TeamView

Score = Literal["MP", "GP"]


def other(score: Score) -> Score:
    return "GP" if score == "MP" else "MP"


@dataclass(frozen=True, slots=True)
class TeamTieBreak:
    """A parsed team code: its kind, the code as written back, and what it reads.

    ``scores`` are the scores the kind reads, in its own order (Sonneborn-Berger: the opponent's total,
    then one's own score in the match); ``limit`` a Koya limit in half-points (``KS/L+1``); ``stages``
    what an extended direct encounter applies in turn (``P`` primary, ``S`` secondary, ``C`` board count,
    ``T`` a top board, ``B`` the boards above a bottom one).
    """

    kind: str
    code: str
    scores: tuple[Score, ...] = ()
    limit: int = 0
    stages: str = ""


#: ``column(view, tb)``: every team's value (by index).
TeamColumn = Callable[[TeamView, TeamTieBreak], list[Fraction]]
#: ``places(view, tb, ranks)``: every team's value for a kind decided inside the groups tied on the criteria
#: before it; ``ranks`` are the teams' ranks by those criteria (equal ranks: one group).
TeamPlaces = Callable[[TeamView, TeamTieBreak, list[int]], list[Fraction]]


@dataclass(frozen=True, slots=True)
class TeamRule:
    """Everything one team kind means: how its codes read, which way it sorts, its values.

    ``parse(text, primary)`` reads a code of this kind (upper case) with the event's primary score, or
    returns ``None``; exactly one of ``column`` and ``places`` is given.
    """

    kind: str
    listed: int
    parse: Callable[[str, Score], TeamTieBreak | None]
    lower_first: bool = False
    column: TeamColumn | None = None
    places: TeamPlaces | None = None

    @property
    def grouped(self) -> bool:
        return self.places is not None


def fixed(kind: str, *scores: Score) -> Callable[[str, Score], TeamTieBreak | None]:
    """A parser for a code that is exactly ``kind`` and reads ``scores``."""

    def parse(text: str, primary: Score) -> TeamTieBreak | None:
        return TeamTieBreak(kind, kind, scores) if text == kind else None

    return parse


def place_values(groups: list[list[int]], ranks_in_group: dict[int, int], n: int) -> list[Fraction]:
    """The value the FIDE TEC server shows for a kind decided inside groups: per team its rank inside
    its group (1 best) where the group was split, 0 where it was not (a group of one included)."""
    values = [Fraction(0)] * n
    for group in groups:
        if len({ranks_in_group[i] for i in group}) > 1:
            for i in group:
                values[i] = Fraction(ranks_in_group[i])
    return values


def groups_of(ranks: list[int]) -> list[list[int]]:
    """The teams tied on the criteria so far (equal ranks), each group in team order, groups by rank."""
    found: dict[int, list[int]] = {}
    for i, r in enumerate(ranks):
        found.setdefault(r, []).append(i)
    return [found[r] for r in sorted(found)]


def competition_ranks(values: dict[int, Fraction], lower_first: bool = False) -> dict[int, int]:
    """Ranks 1, 1, 3 … of ``values`` (team → value), higher first unless ``lower_first``."""
    ordered = sorted(values.values(), reverse=not lower_first)
    return {i: ordered.index(v) + 1 for i, v in values.items()}
