"""Chances from ratings: an estimate, simulated, never an exact answer.

How this works
--------------

Each undecided game is drawn at random with probabilities from the
players' ratings: White's expected score is the Elo expectation
``E = 1 / (1 + 10^((R_black − R_white − white_edge) / 400))``, and the
draw model gives a draw with probability ``D·(1 − |2E − 1|)`` (``D`` the
draw rate between equals, fewer draws the more lopsided the pairing), the
rest split so that the expected score stays ``E``: a win ``E − draw/2``, a
loss ``1 − E − draw/2`` (both ≥ 0 for any ``D`` in [0, 1]).  A player
without a rating gets the average of the rated ones (everyone equal when
nobody is rated).  Forfeits of withdrawn players are certain.

Each run completes the crosstable and ranks it exactly as the standings do
(:func:`~tracker.core.projection.ranking.ranks`, the whole tie-break
order).  Per player the simulation counts, as fractions of the runs:

* ``positions[k]``: finishing with rank ``k + 1``, as the standings write
  it: a group sharing a rank is each at that rank (two sharing 3rd are both
  3rd, nobody 4th), so every player's positions sum to 1 and none falls
  outside the rank range the projection proves; a rank column sums to the
  players ranked there (more than 1 for a shared rank, 0 for the ranks it
  covers after it);
* ``first``: the title.  Without a play-off that is place 1 (a shared 1st
  split equally); with a play-off for 1st, alone on the most points, or
  ``1/k`` of a ``k``-player tie on them (the play-off taken as even), so it
  sums to 1 over the players;
* ``lines``: finishing inside each declared line (rank ≤ places, shared
  ranks inside; line 1 under a play-off is ``first``);
* ``playoff``: tied for the most points (only when the tournament declares
  a play-off for 1st).

A game in progress (``boards``) is drawn from its board's win/draw/loss
instead of the ratings (the live chances of :mod:`tracker.core.live`).

The random numbers come from SplitMix64 (the core imports no ``random``),
one stream per game started from ``seed`` and the game's start numbers: the
same tournament and seed always give the same chances, on every platform,
and a game decided since leaves every other game's draws as they were.
Identical outcome vectors are counted, then ranked and tallied once each.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from tracker.core.crosstable import Tournament
from tracker.core.projection.model import Game, Model, model_of
from tracker.core.projection.ranking import ranks
from tracker.core.projection.stakes import lines_of
from tracker.core.tiebreaks.rule import Final as Completed

#: Runs a simulation makes unless told otherwise (the issue asks for at least 10,000).
RUNS: Final = 10_000
#: Draw rate between equally rated players, and White's edge in rating points.
DRAW_RATE: Final = 0.5
WHITE_EDGE: Final = 0.0
_MASK: Final = (1 << 64) - 1


@dataclass(frozen=True, slots=True)
class PlayerChances:
    """One player's estimated chances (fractions of the runs); ``lines`` aligned with :attr:`Chances.lines`."""

    start_no: int
    first: float
    lines: tuple[float, ...]
    playoff: float | None
    positions: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class Chances:
    """Chances from ratings after event ``seq``: an estimate (see the module docstring), ``runs`` runs of ``seed``."""

    tournament: str
    seq: int
    runs: int
    seed: int
    draw_rate: float
    white_edge: float
    lines: tuple[tuple[int, str], ...]
    playoff: bool
    players: tuple[PlayerChances, ...]


def game_probabilities(
    white: float, black: float, *, draw_rate: float, white_edge: float
) -> tuple[float, float, float]:
    """(White wins, draw, Black wins) for these ratings; see the module docstring for the model."""
    expected = 1.0 / (1.0 + 10.0 ** ((black - white - white_edge) / 400.0))
    draw = draw_rate * (1.0 - abs(2.0 * expected - 1.0))
    win = max(0.0, expected - draw / 2.0)
    return win, draw, max(0.0, 1.0 - win - draw)


def _draws(seed: int, white: int, black: int, runs: int) -> list[float]:
    """``runs`` floats in [0, 1) for one game, from SplitMix64 started at a point of its own.

    The game's stream depends only on the seed and the game (its start numbers), not on which other
    games are still undecided: a game decided since gives the others the same draws.
    """
    state = (seed * 0x9E3779B97F4A7C15 ^ (white << 32 | black) * 0xD1B54A32D192ED03) & _MASK
    out: list[float] = []
    append = out.append
    for _ in range(runs):
        state = (state + 0x9E3779B97F4A7C15) & _MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        append(((z ^ (z >> 31)) >> 11) * _UNIT)
    return out


_UNIT: Final = 1.0 / (1 << 53)

#: (White wins, draw, Black wins) per game in progress, by (white, black) start numbers: a board's estimate.
Boards = Mapping[tuple[int, int], tuple[float, float, float]]


def chances(
    t: Tournament,
    *,
    seed: int,
    runs: int = RUNS,
    draw_rate: float = DRAW_RATE,
    white_edge: float = WHITE_EDGE,
    boards: Boards | None = None,
) -> Chances:
    """Estimate every player's chances by simulating ``runs`` completions of ``t``.

    Each undecided game is drawn from the ratings, or, for a game in ``boards`` (a game in progress),
    from its board's win/draw/loss.  Pure: no clock, no global random state; ``seed`` decides every
    draw, and each game has its own stream (:func:`_draws`), so a game certain on its board gives the
    same chances as its result recorded.  Raises :class:`ValueError` when ``runs`` < 1 or
    ``draw_rate`` is not in [0, 1].  A complete tournament gives its final standings with certainty.
    """
    if runs < 1:
        raise ValueError("a simulation needs at least one run")
    if not 0.0 <= draw_rate <= 1.0:
        raise ValueError("the draw rate is a probability")
    m = model_of(t)
    n = m.n
    rated = [p.rating for p in t.opened.players if p.rating > 0]
    average = sum(rated) / len(rated) if rated else 0.0
    rating = [float(p.rating) if p.rating > 0 else average for p in t.opened.players]
    numbers = t.start_nos
    columns: list[list[int]] = []
    for g in m.undecided:
        known = None if boards is None else boards.get((numbers[g.white], numbers[g.black]))
        if known is not None:
            win, draw, _ = known
        else:
            win, draw, _ = game_probabilities(
                rating[g.white], rating[g.black], draw_rate=draw_rate, white_edge=white_edge
            )
        not_loss = win + draw
        # options are (1-0, ½-½, 0-1) for every undecided game
        columns.append(
            [0 if u < win else 1 if u < not_loss else 2 for u in _draws(seed, numbers[g.white], numbers[g.black], runs)]
        )
    outcomes = Counter(zip(*columns, strict=True)) if columns else Counter({(): runs})
    lines = lines_of(t)
    playoff = t.opened.playoff
    positions = [[0.0] * n for _ in range(n)]
    first = [0.0] * n
    inside = [[0] * len(lines) for _ in range(n)]
    tied = [0] * n
    for key, count in outcomes.items():
        rank, score = _final(m, key)
        sizes: dict[int, int] = {}
        for r in rank:
            sizes[r] = sizes.get(r, 0) + 1
        for i, r in enumerate(rank):  # at the rank itself: spread over the places a shared rank covers, a
            positions[i][r - 1] += count  # player would be put past their worst rank (issue 38)
        top = max(score)
        leaders = [i for i in range(n) if score[i] == top]
        if playoff:
            for i in leaders:
                first[i] += count / len(leaders)
                if len(leaders) > 1:
                    tied[i] += count
        else:
            for i in range(n):
                if rank[i] == 1:
                    first[i] += count / sizes[1]
        for i in range(n):
            for k, (places, _) in enumerate(lines):
                if rank[i] <= places:
                    inside[i][k] += count
    by_start = sorted(range(n), key=lambda i: t.start_nos[i])
    players = tuple(
        PlayerChances(
            start_no=t.start_nos[i],
            first=first[i] / runs,
            lines=tuple(
                first[i] / runs if playoff and places == 1 else inside[i][k] / runs
                for k, (places, _) in enumerate(lines)
            ),
            playoff=tied[i] / runs if playoff else None,
            positions=tuple(p / runs for p in positions[i]),
        )
        for i in by_start
    )
    return Chances(t.id, t.seq, runs, seed, draw_rate, white_edge, lines, playoff, players)


def _final(m: Model, picks: tuple[int, ...]) -> tuple[list[int], list[int]]:
    """(ranks, scores in units) of the crosstable ``picks`` completes (an option index per undecided game)."""
    score = list(m.score)
    wins = list(m.wins)
    points = [row.copy() for row in m.points]
    g: Game
    for g, o in zip(m.undecided, picks, strict=True):
        option = g.options[o]
        score[g.white] += option.white
        score[g.black] += option.black
        wins[g.white] += option.white_won
        wins[g.black] += option.black_won
        points[g.white][g.black] += option.white
        points[g.black][g.white] += option.black
    return ranks(Completed(m.frame, score, wins, points), m.order), score
