"""Team events: teams of players in board order, their matches, match and game points, the team tie-breaks.

How this works
--------------

A team event is an individual crosstable one level up (DESIGN §3).  Every board
game is a game of the event's :class:`~tracker.core.crosstable.Tournament`, as
the result events tracker has always had; a :class:`~tracker.core.teams.setup.TeamSetup`
says which players form each team, in board order, how many boards a match has,
the boards' colour sequence (TRF ``352``) and the match scoring (TRF ``362``).

:func:`~tracker.core.teams.view.team_view` derives the **team view** from both:
per team and round the match (which team is named first, the boards in order,
the game points of each side, the match points they make) or the team's bye.
It is a pure function of the crosstable, O(entries): the team standings
(:func:`~tracker.core.teams.standings.team_standings`) call it, so match and
game points follow every board result the crosstable takes in (incrementally
kept sums are the individual crosstable's; a team event has at most a few
hundred board games, and the view is rebuilt in well under a millisecond per
team).

The team tie-breaks (FIDE C.07, 2026, Articles 11–13, as the FIDE TEC
tie-break server names and computes them) are one rule per kind in their own
table, :mod:`tracker.core.teams.tiebreaks`, read through the team view — apart
from the individual table, whose rules read a player crosstable.
"""

from __future__ import annotations

from tracker.core.teams.setup import MatchScoring, Team, TeamSetup
from tracker.core.teams.view import BoardGame, Match, Side, TeamView, team_view

__all__ = ["BoardGame", "Match", "MatchScoring", "Side", "Team", "TeamSetup", "TeamView", "team_view"]
