"""The team view of a crosstable: :func:`team_view` (matches, match points, game points, board points).

How a round of a team becomes a match (as the FIDE TEC tie-break server reads a team TRF):

* The team's **boards** in a round are its players with something recorded in that round, in the team's
  board order, those with a zero bye and no opponent (absent) last; the first ``boards`` of them count.
* The **opponent** is the team of its players' opponents (a match is between two teams).  A round in which
  none of its players has an opponent is the team's **bye**: its game points are its players' bye points;
  its match points are those of the bye's kind (zero bye: ``unplayed``; half: a draw; full: a win;
  pairing-allocated: ``pab``).
* The **first-named** team is the one whose player has, on the first board with a game, the colour the
  event's colour sequence gives that board (TRF ``352``, default ``W B W B …``).
* **Game points** are the points of the team's boards (forfeits as the individual scoring counts them);
  **match points** come from comparing the two sides' game points once every board of the match is in:
  more is a win; equal and both above 0 a draw; otherwise (0–0) a loss for both.  A loss with no board
  played at the board (a match forfeited whole) scores ``unplayed``.
* A side is **voluntarily unplayed** (TEC's VUR) when no board was played at the board and it did not win.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Final, Literal

from tracker.core.crosstable import BYE, Entry, Tournament
from tracker.core.teams.setup import MatchScoring, TeamSetup

#: :attr:`Side.opponent` of a team bye.
NO_TEAM: Final = -1

Outcome = Literal["W", "D", "L", "Z"]


@dataclass(frozen=True, slots=True)
class BoardGame:
    """One board of a match, from the first-named team's side: its player, the other's, the TRF codes."""

    board: int
    first: int
    second: int
    first_white: bool
    first_code: str
    second_code: str


@dataclass(frozen=True, slots=True)
class Side:
    """What one team did in one round: a match against ``opponent`` (a team index) or a bye (:data:`NO_TEAM`).

    ``boards`` are the game points per board (1-based board ``k`` at index ``k − 1``); ``gp`` their sum;
    ``mp`` the match points (0 until ``complete``: every board of the match is in); ``outcome`` the
    match's ``W``/``D``/``L`` or ``Z`` (lost with nothing played); ``played`` whether a board was played at
    the board (a pairing-allocated bye counts as played, as in C.07).
    """

    round: int
    opponent: int
    first: bool
    boards: tuple[Fraction, ...]
    gp: Fraction
    mp: Fraction
    outcome: Outcome
    played: bool
    complete: bool

    @property
    def is_match(self) -> bool:
        return self.opponent != NO_TEAM

    @property
    def voluntarily_unplayed(self) -> bool:
        return not self.played and self.outcome != "W"


@dataclass(frozen=True, slots=True)
class Match:
    """A match of a round: ``first`` (named first) against ``second`` (team indices), board by board."""

    round: int
    first: int
    second: int
    boards: tuple[BoardGame, ...]
    first_gp: Fraction
    second_gp: Fraction
    complete: bool


@dataclass(frozen=True, slots=True)
class TeamView:
    """The team crosstable: per team (by index, the setup's order) a side per round it has one.

    ``boards`` is the board count; ``board_points[i][k]`` team ``i``'s game points on board ``k + 1`` over
    the event (byes included); ``game_win`` the points of a won game; ``complete`` whether every team has
    a complete side in every round of the team round robin.
    """

    setup: TeamSetup
    n: int
    boards: int
    rounds: int
    cycles: int
    sides: tuple[dict[int, Side], ...]
    mp: tuple[Fraction, ...]
    gp: tuple[Fraction, ...]
    board_points: tuple[tuple[Fraction, ...], ...]
    matches: tuple[Match, ...]
    game_win: Fraction
    complete: bool

    def score(self, i: int, kind: str) -> Fraction:
        """Team ``i``'s match points (``"MP"``) or game points (``"GP"``)."""
        return self.mp[i] if kind == "MP" else self.gp[i]


@lru_cache(maxsize=4096)
def _fraction(units: int, denominator: int) -> Fraction:
    """``units/denominator``, made once: the view sums integer units and makes each value once."""
    return Fraction(units, denominator)


def team_view(t: Tournament, setup: TeamSetup) -> TeamView:
    """The team view of crosstable ``t`` (see the module docstring); a pure function of both.

    Players of ``t`` that are in no team of ``setup`` are left out; a round in which a team's players
    face more than one team is read as a match against the team of its first board's opponent (the
    TRF reader refuses such files).
    """
    n = len(setup.teams)
    team_of: dict[int, int] = {}
    position: dict[int, int] = {}
    for k, team in enumerate(setup.teams):
        for place, start_no in enumerate(team.players):
            i = t.index.get(start_no)
            if i is not None:
                team_of[i] = k
                position[i] = place
    members = [[t.index[s] for s in team.players if s in t.index] for team in setup.teams]
    last_round = max((r for entries in t.entries for r in entries), default=0)
    # the boards of each team and round, in order
    lineup: dict[tuple[int, int], list[int]] = {}
    for k in range(n):
        for r in range(1, last_round + 1):
            present = [i for i in members[k] if r in t.entries[i]]
            if present:
                present.sort(key=lambda i: (_absent(t.entries[i][r]), position[i]))
                lineup[(k, r)] = present
    # without 352 the board count is the most board games a team played in one round (an absent player's
    # zero bye is no board)
    boards = setup.boards or max(
        (sum(1 for i in v if t.entries[i][r].is_game) for (_, r), v in lineup.items()), default=0
    )
    needed = [min(boards, len(m)) for m in members]
    sides: list[dict[int, Side]] = [{} for _ in range(n)]
    matches: list[Match] = []
    den = t.units.denominator
    units: dict[tuple[int, int], tuple[int, ...]] = {}  # each side's board points, in the crosstable's units
    for (k, r), players in sorted(lineup.items(), key=lambda item: (item[0][1], item[0][0])):
        if r in sides[k]:
            continue
        on_board = players[:boards]
        opponent = _opponent_team(t, on_board, r, team_of)
        if opponent is None:
            units[(k, r)] = _board_points(t, on_board, r, boards)
            sides[k][r] = _bye(t, setup, r, on_board, units[(k, r)], complete=len(on_board) >= needed[k])
            continue
        other = lineup.get((opponent, r), [])[:boards]
        complete = len(on_board) >= needed[k] and len(other) >= needed[opponent]
        a_points = units[(k, r)] = _board_points(t, on_board, r, boards)
        b_points = units[(opponent, r)] = _board_points(t, other, r, boards)
        first = _first_named(t, setup, on_board, r, boards)
        played = any(t.entries[i][r].played and t.entries[i][r].is_game for i in on_board)
        a_out, b_out = _outcomes(sum(a_points), sum(b_points), played)
        scoring = setup.scoring
        sides[k][r] = _side(r, opponent, first, a_points, den, a_out, played, complete, scoring)
        sides[opponent][r] = _side(r, k, not first, b_points, den, b_out, played, complete, scoring)
        first_team, second_team = (k, opponent) if first else (opponent, k)
        first_players = on_board if first else other
        matches.append(
            Match(
                round=r,
                first=first_team,
                second=second_team,
                boards=_board_games(t, first_players, r),
                first_gp=sides[first_team][r].gp,
                second_gp=sides[second_team][r].gp,
                complete=complete,
            )
        )
    mp = tuple(sum((s.mp for s in sides[k].values()), Fraction(0)) for k in range(n))
    gp = tuple(_fraction(sum(sum(units[(k, r)]) for r in sides[k]), den) for k in range(n))
    board_points = tuple(
        tuple(_fraction(sum(units[(k, r)][b] for r in sides[k]), den) for b in range(boards)) for k in range(n)
    )
    rounds = setup.team_rounds()
    complete_event = all(all(r in sides[k] and sides[k][r].complete for r in range(1, rounds + 1)) for k in range(n))
    return TeamView(
        setup=setup,
        n=n,
        boards=boards,
        rounds=rounds,
        cycles=setup.cycles,
        sides=tuple(sides),
        mp=mp,
        gp=gp,
        board_points=board_points,
        matches=tuple(matches),
        game_win=Fraction(t.units.win, t.units.denominator),
        complete=complete_event,
    )


def _absent(e: Entry) -> bool:
    """A zero bye with no opponent: the player did not sit at a board (listed after those who did)."""
    return e.opponent == BYE and e.code in ("Z", " ", "-")


def _opponent_team(t: Tournament, players: list[int], r: int, team_of: dict[int, int]) -> int | None:
    for i in players:
        e = t.entries[i][r]
        if e.is_game and e.opponent in team_of:
            return team_of[e.opponent]
    return None


def _board_points(t: Tournament, players: list[int], r: int, boards: int) -> tuple[int, ...]:
    points = [t.entries[i][r].units for i in players]
    return tuple(points + [0] * (boards - len(points)))


def _first_named(t: Tournament, setup: TeamSetup, players: list[int], r: int, boards: int) -> bool:
    """Whether the team of ``players`` (its boards in order) is named first in its match of round ``r``."""
    for board, i in enumerate(players, start=1):
        e = t.entries[i][r]
        if e.is_game:
            return ("W" if e.white else "B") == setup.colour(board, boards)
    return True


def _outcomes(a: int, b: int, played: bool) -> tuple[Outcome, Outcome]:
    loss: Outcome = "L" if played else "Z"
    if a > b:
        return "W", loss
    if a < b:
        return loss, "W"
    if a > 0 and b > 0:
        return "D", "D"
    return loss, loss


def _side(
    r: int,
    opponent: int,
    first: bool,
    points: tuple[int, ...],
    den: int,
    outcome: Outcome,
    played: bool,
    complete: bool,
    scoring: MatchScoring,
) -> Side:
    value = {"W": scoring.win, "D": scoring.draw, "L": scoring.loss, "Z": scoring.unplayed}[outcome]
    return Side(
        round=r,
        opponent=opponent,
        first=first,
        boards=tuple(_fraction(u, den) for u in points),
        gp=_fraction(sum(points), den),
        mp=value if complete else Fraction(0),
        outcome=outcome,
        played=played,
        complete=complete,
    )


_BYE_OUTCOME: Final[dict[str, Outcome]] = {"F": "W", "H": "D", "U": "W"}


def _bye(
    t: Tournament, setup: TeamSetup, r: int, players: list[int], points: tuple[int, ...], *, complete: bool
) -> Side:
    """A team's bye: its boards' bye points (``points``, in units); the match points of the first board's kind."""
    den = t.units.denominator
    code = t.entries[players[0]][r].code.upper()
    scoring = setup.scoring
    outcome: Outcome = _BYE_OUTCOME.get(code, "Z")
    mp = {"F": scoring.win, "H": scoring.draw, "U": scoring.pab_points}.get(code, scoring.unplayed)
    return Side(
        round=r,
        opponent=NO_TEAM,
        first=True,
        boards=tuple(_fraction(u, den) for u in points),
        gp=_fraction(sum(points), den),
        mp=mp if complete else Fraction(0),
        outcome=outcome if code != "H" else "D",
        played=code == "U",
        complete=complete,
    )


def _board_games(t: Tournament, players: list[int], r: int) -> tuple[BoardGame, ...]:
    games = []
    for board, i in enumerate(players, start=1):
        e = t.entries[i][r]
        if not e.is_game:
            continue
        o = t.entries[e.opponent][r]
        games.append(BoardGame(board, t.start_nos[i], t.start_nos[e.opponent], e.white, e.code, o.code))
    return tuple(games)


__all__ = ["NO_TEAM", "BoardGame", "Match", "Side", "TeamView", "team_view"]
