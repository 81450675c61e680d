"""What a team event is, beside its players' crosstable: :class:`TeamSetup`."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Final

from tracker.core import events

#: The team order when a team event names none: match points, game points, extended direct encounter,
#: Sonneborn-Berger on match points (the opening event's default too).
DEFAULT_TEAM_TIEBREAKS: Final[tuple[str, ...]] = events.DEFAULT_TEAM_TIEBREAKS


@dataclass(frozen=True, slots=True)
class Team:
    """One team: its number (1-based, the file's team order), its name, its players' start numbers in board order.

    Players after the event's board count are reserves; a reserve who plays takes the board of their place
    among the team's players in that round (see :mod:`tracker.core.teams.view`).
    """

    number: int
    name: str
    players: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class MatchScoring:
    """Match points per match outcome (TRF26 ``362``; default 2-1-0).

    ``unplayed`` is what a team gets for a match it loses with no board played at the board (a match
    forfeited whole) and for a zero-point team bye (``362`` code ``A``; default 0); ``pab`` is the
    pairing-allocated team bye (``362`` code ``P``; default as a draw, as the FIDE TEC server reads it).
    """

    win: Fraction = Fraction(2)
    draw: Fraction = Fraction(1)
    loss: Fraction = Fraction(0)
    unplayed: Fraction = Fraction(0)
    pab: Fraction | None = None

    @property
    def pab_points(self) -> Fraction:
        return self.draw if self.pab is None else self.pab


@dataclass(frozen=True, slots=True)
class TeamSetup:
    """The teams of an event and how their matches are made and scored.

    ``boards`` is the number of boards in a match (``0``: the largest line-up found in any match);
    ``colours`` the colour of the first-named team on each board, repeated (``352``; empty: ``WBWB…``);
    ``rounds`` and ``cycles`` the team round robin's (``0`` rounds: what the round robin needs);
    ``tiebreaks`` the team order (FIDE TEC codes, e.g. ``MPTS,GPTS,EDE,SB:MP``).
    """

    teams: tuple[Team, ...]
    boards: int = 0
    colours: str = ""
    scoring: MatchScoring = field(default_factory=MatchScoring)
    rounds: int = 0
    cycles: int = 1
    tiebreaks: tuple[str, ...] = DEFAULT_TEAM_TIEBREAKS

    def team_rounds(self) -> int:
        """The rounds of the team round robin: as given, else ``n − 1`` per cycle (``n`` for an odd ``n``)."""
        if self.rounds:
            return self.rounds
        n = len(self.teams)
        return (n - 1 if n % 2 == 0 else n) * self.cycles

    def colour(self, board: int, boards: int) -> str:
        """``"W"`` or ``"B"``: the first-named team's colour on ``board`` (1-based) of a ``boards``-board match."""
        sequence = self.colours.upper() or "WB" * ((boards + 1) // 2)
        return sequence[(board - 1) % len(sequence)]


def setup_of(teams: events.Teams) -> TeamSetup:
    """The team setup an opening event declares (:attr:`~tracker.core.events.TournamentOpened.teams`)."""
    s = teams.scoring
    return TeamSetup(
        teams=tuple(Team(t.number, t.name, t.players) for t in teams.teams),
        boards=teams.boards,
        colours=teams.colours,
        scoring=MatchScoring(
            win=Fraction(s.win),
            draw=Fraction(s.draw),
            loss=Fraction(s.loss),
            unplayed=Fraction(s.unplayed),
            pab=None if s.pab is None else Fraction(s.pab),
        ),
        rounds=teams.rounds,
        cycles=teams.cycles,
        tiebreaks=teams.tiebreaks,
    )


def teams_of(setup: TeamSetup) -> events.Teams:
    """The opening event's :class:`~tracker.core.events.Teams` for ``setup`` (:func:`setup_of` undoes it)."""
    s = setup.scoring

    def dec(x: Fraction) -> Decimal:
        return Decimal(x.numerator) / Decimal(x.denominator)

    return events.Teams(
        teams=tuple(events.TeamEntry(t.number, t.name, t.players) for t in setup.teams),
        boards=setup.boards,
        colours=setup.colours,
        scoring=events.MatchScoring(
            win=dec(s.win),
            draw=dec(s.draw),
            loss=dec(s.loss),
            unplayed=dec(s.unplayed),
            pab=None if s.pab is None else dec(s.pab),
        ),
        rounds=setup.rounds,
        cycles=setup.cycles,
        tiebreaks=setup.tiebreaks,
    )


__all__ = ["DEFAULT_TEAM_TIEBREAKS", "MatchScoring", "Team", "TeamSetup", "setup_of", "teams_of"]
