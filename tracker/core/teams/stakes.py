"""What each board of the last round decides for the teams, in sentences (the stakes message of a team event).

How this works
--------------

:func:`~tracker.core.teams.projection.board_stakes` gives, per pending board game and result, the teams whose
best or worst final rank changes (each is the team projection with that game fixed).  Here those ranges are
read against the team lines: 1st, and the medals (top 3) when more than four teams play.  A team whose best
rank was within a line and is not after the result *can no longer finish* there; one whose worst rank was
outside it and is within after the result *clinches* it — "if board 3 of Germany–Estonia is drawn, the USA
can no longer finish 1st".  The team projection's rank is the one its module defines (teams equal on the
score key may end anywhere among them), so each sentence is exact for that reading when its search was.

Live, the stakes are computed for the last round only: then every projection is one match per component
(milliseconds; a 10-team, 4-board round: 60 projections in about 0.1 s); with more rounds to play a single
board rarely moves a range and the projections cost seconds each round (two rounds before the end of the same
event: 8 s), so :func:`live_team_stakes` answers ``None`` and the pages say nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from tracker.core.crosstable import Tournament
from tracker.core.errors import ProjectionUnavailable
from tracker.core.events import GameResult
from tracker.core.phrases import Said, phrase, render
from tracker.core.teams.projection import PendingBoard, board_stakes, pending_boards, project_teams
from tracker.core.teams.setup import TeamSetup

TEAM_CLINCHES: Final = phrase("teams.stakes.clinches", "{team} clinches {line:line}")
TEAM_OUT: Final = phrase("teams.stakes.out", "{team} can no longer finish {line:line}")


@dataclass(frozen=True, slots=True)
class TeamLineStake:
    """After this result ``team`` (its number) has ``after`` the line of the first ``places`` places."""

    team: int
    places: int
    after: Literal["clinched", "eliminated"]
    said: Said
    text: str


@dataclass(frozen=True, slots=True)
class BoardDecides:
    """One pending board and, per result, the team lines it decides and the teams' rank ranges it changes."""

    game: PendingBoard
    outcomes: tuple[tuple[GameResult, bool, tuple[TeamLineStake, ...], dict[int, tuple[int, int]]], ...]


def team_lines(setup: TeamSetup) -> tuple[int, ...]:
    """The team lines: 1st, and the medals (top 3) when more than four teams play."""
    return (1, 3) if len(setup.teams) > 4 else (1,)


def decided(t: Tournament, setup: TeamSetup, codes: tuple[str, ...] | None = None) -> tuple[BoardDecides, ...]:
    """Every pending board's results with what each decides (module docstring); boards deciding nothing are
    left out.  Raises :class:`ProjectionUnavailable` when the rounds to come are not paired."""
    base = project_teams(t, setup, codes)
    before = {r.team: (r.rank_best, r.rank_worst) for r in base.teams}
    names = {team.number: team.name for team in setup.teams}
    lines = team_lines(setup)
    found: list[BoardDecides] = []
    for stake in board_stakes(t, setup, codes, base=base):
        outcomes = []
        for o in stake.outcomes:
            said: list[TeamLineStake] = []
            for team, (best, worst) in sorted(o.changes.items()):
                was_best, was_worst = before[team]
                for places in lines:
                    if was_best <= places < best:
                        s = TEAM_OUT(team=names[team], line=places)
                        said.append(TeamLineStake(team, places, "eliminated", s, render(s, str)))
                    elif was_worst > places >= worst:
                        s = TEAM_CLINCHES(team=names[team], line=places)
                        said.append(TeamLineStake(team, places, "clinched", s, render(s, str)))
            outcomes.append((o.result, o.exact, tuple(said), o.changes))
        if any(x[2] or x[3] for x in outcomes):
            found.append(BoardDecides(stake.game, tuple(outcomes)))
    return tuple(found)


def live_team_stakes(t: Tournament, setup: TeamSetup) -> tuple[BoardDecides, ...] | None:
    """:func:`decided` in the last round (every pending board in one round), else ``None`` (the module
    docstring says why); ``None`` too when the rounds to come are not paired."""
    try:
        pending = pending_boards(t, setup)
    except ProjectionUnavailable:
        return None
    if not pending or len({g.round for g in pending}) > 1 or max(g.round for g in pending) < setup.team_rounds():
        return None
    try:
        return decided(t, setup)
    except ProjectionUnavailable:
        return None


__all__ = ["TEAM_CLINCHES", "TEAM_OUT", "BoardDecides", "TeamLineStake", "decided", "live_team_stakes", "team_lines"]
