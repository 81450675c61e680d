"""What a projection says: per player, per opponent and per remaining game."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from tracker.core.events import GameResult

Status = Literal["clinched", "eliminated", "open"]


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
    ``opponents`` every other player's status, by start number.
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


@dataclass(frozen=True, slots=True)
class Projection:
    """The projection of a tournament's final standings after event ``seq``.

    ``exact`` is true when every range is exactly the min/max over all
    outcomes of the remaining games, false when they are sound bounds
    (always containing the truth, possibly wider).  ``remaining`` counts the
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

    def player(self, start_no: int) -> PlayerProjection:
        """The projection of ``start_no``; raises :class:`KeyError` if absent."""
        for p in self.players:
            if p.start_no == start_no:
                return p
        raise KeyError(start_no)
