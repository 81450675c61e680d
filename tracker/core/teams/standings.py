"""Team standings: the teams ordered by the team tie-break order, with shared ranks (1, 1, 3 …).

Each criterion splits the groups still tied after the ones before it; a kind decided inside such groups
(``EDE``, ``TBR``, ``BBE``) is given the ranks so far.  Teams equal on every criterion share a rank and are
listed by team number — the FIDE TEC server's ranks.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from tracker.core.crosstable import Tournament
from tracker.core.teams.setup import TeamSetup
from tracker.core.teams.tiebreaks import parse_team_tiebreaks, team_rule_of
from tracker.core.teams.view import TeamView, team_view


@dataclass(frozen=True, slots=True)
class TeamRow:
    """One team's line: ``team`` its number in the file's team order; ``tiebreaks`` aligned with the codes."""

    rank: int
    team: int
    name: str
    match_points: Fraction
    game_points: Fraction
    tiebreaks: tuple[Fraction, ...]


@dataclass(frozen=True, slots=True)
class TeamStandings:
    """The team table; ``provisional`` until every match of the team round robin is in."""

    codes: tuple[str, ...]
    rows: tuple[TeamRow, ...]
    provisional: bool
    boards: int
    view: TeamView
    #: the next round's matches none of whose boards is in yet, from the schedule (the view has no side for them)
    upcoming: tuple[Upcoming, ...] = ()


@dataclass(frozen=True, slots=True)
class Upcoming:
    """A scheduled match of the round to play with nothing in: its round, the first-named and the other team
    (indices in the setup's order) and its boards ``(board, White's start number, Black's start number)``."""

    round: int
    first: int
    second: int
    boards: tuple[tuple[int, int, int], ...]


def upcoming(t: Tournament, setup: TeamSetup, boards: int) -> tuple[Upcoming, ...]:
    """The matches of the first scheduled round with a game still to play whose two teams have nothing in that
    round, board by board: a player's board is their place in the team, and the first-named team is the one
    with the event's colour for it on the match's first board (TRF ``352``).  Empty without a schedule."""
    if t.schedule is None:
        return ()
    team_of: dict[int, int] = {}
    place: dict[int, int] = {}
    for k, team in enumerate(setup.teams):
        for p, start_no in enumerate(team.players):
            team_of[start_no], place[start_no] = k, p + 1
    numbers = t.start_nos
    for r in sorted(t.schedule):
        open_pairs = [(w, b) for w, b in t.schedule[r] if r not in t.entries[w] and r not in t.entries[b]]
        if not open_pairs:
            continue
        busy = {team_of.get(numbers[i]) for i in range(t.n) if r in t.entries[i]}
        matches: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
        for w, b in open_pairs:
            white, black = numbers[w], numbers[b]
            if white not in team_of or black not in team_of:
                continue
            tw, tb = team_of[white], team_of[black]
            if tw in busy or tb in busy:
                continue  # a match with a board in: the view has it
            matches.setdefault((min(tw, tb), max(tw, tb)), []).append((place[white], white, black))
        found = []
        for games in matches.values():
            games.sort()
            board, white, black = games[0]
            white_first = setup.colour(board, boards or len(games)) == "W"
            first, second = (team_of[white], team_of[black]) if white_first else (team_of[black], team_of[white])
            found.append(Upcoming(r, first, second, tuple(games)))
        return tuple(sorted(found, key=lambda u: (u.first, u.second)))
    return ()


def _ranks(keys: list[tuple[Fraction, ...]]) -> list[int]:
    """Competition ranks of ``keys`` (higher first)."""
    ordered = sorted(keys, reverse=True)
    first: dict[tuple[Fraction, ...], int] = {}
    for position, key in enumerate(ordered, start=1):
        first.setdefault(key, position)
    return [first[k] for k in keys]


def team_standings(t: Tournament, setup: TeamSetup, codes: tuple[str, ...] | None = None) -> TeamStandings:
    """The team standings of crosstable ``t`` by ``codes`` (default: the setup's order).

    Raises :class:`~tracker.core.errors.EventRejected` (``unknown-tiebreak``) for a code of no team rule.
    """
    order = parse_team_tiebreaks(codes if codes is not None else setup.tiebreaks)
    view = team_view(t, setup)
    n = view.n
    keys: list[tuple[Fraction, ...]] = [() for _ in range(n)]
    values: list[list[Fraction]] = []
    for tb in order:
        rule = team_rule_of(tb)
        if rule.places is not None:
            column = rule.places(view, tb, _ranks(keys))
        else:
            assert rule.column is not None  # a rule has one of the two
            column = rule.column(view, tb)
        values.append(column)
        sign = -1 if rule.lower_first else 1
        keys = [(*keys[i], sign * column[i]) for i in range(n)]
    ranks = _ranks(keys)
    listed = sorted(range(n), key=lambda i: (ranks[i], setup.teams[i].number))
    rows = tuple(
        TeamRow(
            rank=ranks[i],
            team=setup.teams[i].number,
            name=setup.teams[i].name,
            match_points=view.mp[i],
            game_points=view.gp[i],
            tiebreaks=tuple(column[i] for column in values),
        )
        for i in listed
    )
    return TeamStandings(
        codes=tuple(tb.code for tb in order),
        rows=rows,
        provisional=not view.complete,
        boards=view.boards,
        view=view,
        upcoming=upcoming(t, setup, view.boards) if not view.complete else (),
    )


__all__ = ["TeamRow", "TeamStandings", "Upcoming", "team_standings", "upcoming"]
