"""What a projection says: per player, per opponent and per remaining game."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from tracker.core.events import GameResult

Status = Literal["clinched", "eliminated", "open"]
#: A line's status for a player; ``unknown`` only when the search ran out of budget before deciding.
LineStatus = Literal["clinched", "eliminated", "open", "unknown"]
ExtremeName = Literal["rank_best", "rank_worst", "ks_min", "ks_max"]
EXTREMES: tuple[ExtremeName, ...] = ("rank_best", "rank_worst", "ks_min", "ks_max")


@dataclass(frozen=True, slots=True)
class ScenarioGame:
    """One remaining game of a scenario, with the result the scenario gives it (start numbers)."""

    round: int | None
    white: int
    black: int
    result: GameResult


#: A result for every remaining game, in :attr:`Projection.games` order.
Scenario = tuple[ScenarioGame, ...]


@dataclass(frozen=True, slots=True)
class Reached:
    """How one extreme is known.

    ``scenario`` completes the crosstable so that the player's rank (or KS,
    in points) is ``attained``.  ``exact``: ``attained`` is the extreme
    itself; otherwise the reported value is a proven bound no outcome goes
    beyond, and ``attained`` the closest any scenario found came to it.
    """

    exact: bool
    attained: int | Fraction
    scenario: Scenario


@dataclass(frozen=True, slots=True)
class LineProjection:
    """One declared line for one player.

    ``clinched``: inside in every outcome; ``eliminated``: in none; ``open``:
    ``inside`` and ``outside`` are scenarios of each.  With a play-off for
    1st, line 1 is judged on points: inside = alone on the most points,
    ``playoff`` a scenario where the player ties for the most points (then
    neither inside nor outside: the play-off decides).  ``unknown`` when the
    search budget ran out first (``inside``/``outside`` then say what was found).
    """

    places: int
    name: str
    status: LineStatus
    inside: Scenario | None
    outside: Scenario | None
    playoff: Scenario | None = None


@dataclass(frozen=True, slots=True)
class PlayoffProjection:
    """Membership of the play-off for 1st (a tie on the most points, when the tournament declares one).

    ``status``: ``clinched`` when the player ties for first in every outcome,
    ``eliminated`` when never, ``open`` otherwise with ``scenario`` one where
    they do.  ``secured``: the player ends at least tied first in every
    outcome (the title or the play-off).
    """

    status: Status
    scenario: Scenario | None
    secured: bool
    exact: bool


# -- the result ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OpponentStatus:
    """An opponent's qualification against the final line (limit 0)."""

    start_no: int
    status: Status


@dataclass(frozen=True, slots=True)
class PlayerProjection:
    """One player's final ranges over all outcomes of the remaining games.

    ``ks_min``/``ks_max`` are plain Koya (limit 0) in points; ``rank_best``
    ≤ ``rank_worst`` (1 is first; shared ranks as in the standings);
    ``points_min``/``points_max`` the final score's range (always exact);
    ``qualification`` this player's own status against the final line;
    ``opponents`` every other player's status, by start number;
    ``reached`` for each extreme the scenario behind it (and whether the
    value is exact or a bound); ``lines`` per declared line; ``playoff``
    when the tournament decides a tie for 1st by a play-off.
    """

    start_no: int
    ks_min: Fraction
    ks_max: Fraction
    rank_best: int
    rank_worst: int
    points_min: Fraction
    points_max: Fraction
    qualification: Status
    opponents: tuple[OpponentStatus, ...]
    reached: dict[ExtremeName, Reached]
    lines: tuple[LineProjection, ...] = ()
    playoff: PlayoffProjection | None = None


@dataclass(frozen=True, slots=True)
class OutcomeEffect:
    """What one outcome of a remaining game leaves possible.

    ``ks`` maps the start number of every player whose final KS range is not
    the same under all outcomes of this game to their range (min, max) under
    *this* outcome; ``ranks`` does the same for the rank range (best, worst).
    A player absent from both is not affected by this game.  The same
    players appear under each outcome of a game, so the outcomes can be
    compared side by side.  A forfeit (a withdrawn player's game) is the
    only outcome of its game and affects no one.
    """

    result: GameResult
    ks: dict[int, tuple[Fraction, Fraction]]
    ranks: dict[int, tuple[int, int]]


@dataclass(frozen=True, slots=True)
class GameProjection:
    """A remaining game (start numbers) and each of its outcomes' effect."""

    round: int | None
    white: int
    black: int
    outcomes: tuple[OutcomeEffect, ...]
    exact: bool = True


@dataclass(frozen=True, slots=True)
class Projection:
    """The projection of a tournament's final standings after event ``seq``.

    ``exact`` is true when every player's range (rank, KS, lines, play-off)
    is exactly the min/max over all outcomes of the remaining games, false
    when some are sound bounds (always containing the truth, possibly
    wider; each :class:`Reached` says which).  Each game's own ``exact``
    says the same of its per-outcome effects.  ``remaining`` counts the
    games still without a result (forfeits of withdrawn players included);
    ``line`` is the final 50% line in points (limit 0).  ``players`` are
    ordered by start number; ``games`` by round, then White's start number.
    """

    tournament: str
    seq: int
    exact: bool
    remaining: int
    line: Fraction
    players: tuple[PlayerProjection, ...]
    games: tuple[GameProjection, ...]
    lines: tuple[tuple[int, str], ...] = ()
    playoff: bool = False

    def player(self, start_no: int) -> PlayerProjection:
        """The projection of ``start_no``; raises :class:`KeyError` if absent."""
        for p in self.players:
            if p.start_no == start_no:
                return p
        raise KeyError(start_no)
