"""Prize money per place, shared ``none``, ``average`` or ``hort``: paid now, and the least and most still possible.

How this works
--------------

Prizes are declared per place (``1000, 600, 400``: 1st, 2nd, 3rd; every later place 0), non-increasing, one
prize per player.  Who gets what follows the final standings (:mod:`tracker.core.standings`) and the
sharing rule:

``none``
    the tie-breaks decide: the player at place ``p`` gets prize ``p``.  Players equal on every criterion of
    the order (they share a rank) share the prizes of the places they hold equally, as no rule separates
    them.
``average``
    players equal on points share the prizes of the places they hold equally, whatever the tie-breaks.
``hort``
    half of each prize goes by place as under ``none``, the other half is shared equally among those equal
    on points as under ``average``: 1st–2nd equal on points with 1000/600 gives 900 and 700.

All money is exact (:class:`~fractions.Fraction`).  While games remain, :func:`money` finds for each player
the least and the most money over every outcome of the remaining games, each with a scenario that pays it:
a branch and bound over the undecided games of the projection's model
(:func:`tracker.core.projection.model.model_of`, forced forfeits of withdrawn players already in), whose
leaves are ranked by the projection's own ranking of a complete crosstable
(:func:`tracker.core.projection.ranking.standing`, equal to the standings' order).  A node is cut when no
completion can beat the best leaf found: at most ``a`` players are certainly ahead on points, ``e`` certainly
not behind, ``c`` certainly behind, so the player's places lie in ``[a, n − 1 − c]`` and their points group
reaches place ``e`` at least; for non-increasing prizes the money is then at most the prize of place ``a``
(``average``: the mean of places ``a … max(a, e)``) and at least the prize of place ``n − 1 − c`` (``average``:
the mean of places ``n − 1 − f … n − 1 − c``, ``f`` those certainly not ahead).  A search that exceeds its
node budget reports the best money it found, marked not exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import pairwise
from math import lcm
from typing import Final

from tracker.core.crosstable import Tournament
from tracker.core.events import GameResult, PrizeSharing
from tracker.core.phrases import phrase
from tracker.core.projection.model import Game, Model, model_of
from tracker.core.projection.ranking import standing
from tracker.core.standings import Standings
from tracker.core.tiebreaks.rule import Final as Complete

#: The sharing rules (the wire's ``tournament_opened.sharing``).
Sharing = PrizeSharing
SHARINGS: Final[tuple[Sharing, ...]] = ("none", "average", "hort")

#: Nodes one search (a player's least or most money) may expand before it reports what it found, not exact.
BUDGET: Final = 200_000

PRIZES_ORDER: Final = phrase(
    "worth.prizes_order", "prizes are declared per place from the 1st down: {prizes} is not in non-increasing order"
)
PRIZES_NOT_EXACT: Final = phrase(
    "worth.prizes_not_exact",
    "the prize money of {players:players} is the best found in the search's budget, not proven the least or most",
)

#: One remaining game with the result a scenario gives it: (round, white start no, black start no, result).
ScenarioGame = tuple[int | None, int, int, GameResult]


@dataclass(frozen=True, slots=True)
class Money:
    """One player's money: ``final`` when no game remains (``least == most``, the prize paid), else the least and
    the most over the remaining games, each with a scenario (a result for every remaining game) that pays it;
    ``exact`` false when a search ran out of its budget (the values are then the extremes found)."""

    start_no: int
    final: bool
    least: Fraction
    most: Fraction
    exact: bool
    least_scenario: tuple[ScenarioGame, ...] = ()
    most_scenario: tuple[ScenarioGame, ...] = ()


class _Table:
    """Prizes per place padded with 0 to ``n`` places, and the mean of each run of places ``a … e``, as integers
    in units of ``1/scale`` (exact: ``scale`` is twice the prizes' common denominator times lcm(1 … n), so every
    share and every half of one is whole; integers keep the search fast)."""

    def __init__(self, prizes: Sequence[Fraction], n: int) -> None:
        self.n = n
        self.scale = 2 * lcm(1, *range(1, n + 1), *(p.denominator for p in prizes))
        self.place = [int(prizes[p] * self.scale) if p < len(prizes) else 0 for p in range(n)]
        self.mean = [[0] * n for _ in range(n)]
        for a in range(n):
            total = 0
            for e in range(a, n):
                total += self.place[e]
                self.mean[a][e] = total // (e - a + 1)  # exact: see the class docstring

    def pay(self, sharing: Sharing, tie_start: int, tie_size: int, group_start: int, group_size: int) -> int:
        """The money (in ``1/scale``) of a player in a tie on every criterion of ``tie_size`` players from place
        ``tie_start``, in a points group of ``group_size`` from ``group_start`` (0-based places)."""
        by_place = self.mean[tie_start][tie_start + tie_size - 1]
        if sharing == "none":
            return by_place
        shared = self.mean[group_start][group_start + group_size - 1]
        if sharing == "average":
            return shared
        return (by_place + shared) // 2

    def money(self, units: int) -> Fraction:
        return Fraction(units, self.scale)


def check_prizes(prizes: Sequence[Fraction]) -> None:
    """Raise :class:`ValueError` (its text :data:`PRIZES_ORDER` in English) unless ``prizes`` is non-increasing
    and not negative."""
    if any(p < 0 for p in prizes) or any(a < b for a, b in pairwise(prizes)):
        raise ValueError(PRIZES_ORDER.english.format(prizes=", ".join(str(p) for p in prizes)))


def paid(s: Standings, prizes: Sequence[Fraction], sharing: Sharing) -> dict[int, Fraction]:
    """The money per start number by the standings ``s`` as they are (the final split once every game is in)."""
    check_prizes(prizes)
    rows = s.rows
    table = _Table(prizes, len(rows))
    out: dict[int, Fraction] = {}
    for row in rows:
        tie = [p for p, r in enumerate(rows) if r.rank == row.rank]
        group = [p for p, r in enumerate(rows) if r.points == row.points]
        out[row.start_no] = table.money(table.pay(sharing, tie[0], len(tie), group[0], len(group)))
    return out


def money(
    t: Tournament, s: Standings, prizes: Sequence[Fraction], sharing: Sharing, *, budget: int = BUDGET
) -> tuple[Money, ...]:
    """Every player's :class:`Money` (in ``s``'s row order): paid when ``t`` is complete, else the least and most.

    Raises :class:`ValueError` for prizes not in non-increasing order, and
    :class:`~tracker.core.errors.ProjectionUnavailable` for a tie-break order the projection cannot rank by.
    """
    check_prizes(prizes)
    if t.complete:
        now = paid(s, prizes, sharing)
        return tuple(Money(r.start_no, True, now[r.start_no], now[r.start_no], True) for r in s.rows)
    m = model_of(t)
    table = _Table(prizes, m.n)
    found = []
    for row in s.rows:
        i = t.index[row.start_no]
        low = _Search(m, t, table, sharing, i, most=False, budget=budget).run()
        high = _Search(m, t, table, sharing, i, most=True, budget=budget).run()
        found.append(
            Money(row.start_no, False, table.money(low[0]), table.money(high[0]), low[1] and high[1], low[2], high[2])
        )
    return tuple(found)


@dataclass(frozen=True, slots=True)
class MoneyStake:
    """What one outcome of a pending game leaves one of its players: the least and the most money over the
    other remaining games (``exact`` false: a search ran out of its budget)."""

    start_no: int
    least: Fraction
    most: Fraction
    exact: bool


#: A pending game as the stakes name it: (round or ``None``, White's start number, Black's start number).
GameKey = tuple[int | None, int, int]


def money_at_stake(
    t: Tournament, prizes: Sequence[Fraction], sharing: Sharing, *, budget: int = BUDGET
) -> dict[GameKey, dict[GameResult, tuple[MoneyStake, ...]]]:
    """The money at stake in each game of the round being played (the first round with a game undecided; a
    tournament without a schedule: its first n/2 undecided games): per outcome, the least and most money of
    each of the game's two players given that result, for the players whose money the result changes.

    A player whose least and most are the same whatever the result (no prize within reach, or one already
    certain) is left out; a game that changes nobody's money is absent.  Raises as :func:`money` does.
    """
    check_prizes(prizes)
    if t.complete or not prizes:
        return {}
    m = model_of(t)
    undecided = list(m.undecided)
    if not undecided:
        return {}
    scheduled = [g.round for g in undecided if g.round is not None]
    games = [g for g in undecided if g.round == min(scheduled)] if scheduled else undecided[: m.n // 2]
    table = _Table(prizes, m.n)
    found: dict[GameKey, dict[GameResult, tuple[MoneyStake, ...]]] = {}
    for g in games:
        per: dict[GameResult, list[MoneyStake]] = {}
        for i in (g.white, g.black):
            outcomes = []
            for k, o in enumerate(g.options):
                low = _Search(m, t, table, sharing, i, most=False, budget=budget, fixed=(g, k)).run()
                high = _Search(m, t, table, sharing, i, most=True, budget=budget, fixed=(g, k)).run()
                outcomes.append(
                    (
                        o.result,
                        MoneyStake(t.start_nos[i], table.money(low[0]), table.money(high[0]), low[1] and high[1]),
                    )
                )
            if len({(x.least, x.most) for _, x in outcomes}) > 1:
                for result, x in outcomes:
                    per.setdefault(result, []).append(x)
        if per:
            found[(g.round, t.start_nos[g.white], t.start_nos[g.black])] = {r: tuple(x) for r, x in per.items()}
    return found


def leaf_money(
    m: Model, table: _Table, sharing: Sharing, score: list[int], points: list[list[int]], wins: list[int], i: int
) -> int:
    """Player ``i``'s money (in ``1/table.scale``) on a complete crosstable (the model's arrays, every game in)."""
    n = m.n
    mine = score[i]
    above = 0
    equal = 0
    for j in range(n):
        if score[j] > mine:
            above += 1
        elif score[j] == mine:
            equal += 1
    if sharing == "average" or equal == 1:  # alone on their points: no tie-break can move them
        return table.mean[above][above + equal - 1]
    ahead, behind = standing(Complete(m.frame, score, wins, points), m.order, i)
    return table.pay(sharing, len(ahead), n - len(ahead) - len(behind), above, equal)


class _Search:
    """One branch and bound: the least (``most`` false) or the most money of player ``i`` (module docstring)."""

    def __init__(
        self,
        m: Model,
        t: Tournament,
        table: _Table,
        sharing: Sharing,
        i: int,
        *,
        most: bool,
        budget: int,
        fixed: tuple[Game, int] | None = None,
    ) -> None:
        self.m, self.t, self.table, self.sharing, self.i, self.most = m, t, table, sharing, i, most
        self.budget = budget
        self.nodes = 0
        self.fixed = fixed  # one undecided game given one of its outcomes (money_at_stake)
        undecided = [g for g in m.undecided if fixed is None or g is not fixed[0]]
        mine = [g for g in undecided if i in (g.white, g.black)]
        self.games = mine + [g for g in undecided if i not in (g.white, g.black)]
        n = m.n
        # gain[d][j]: the most player j can still score in games d, d + 1, …
        self.gain = [[0] * n for _ in range(len(self.games) + 1)]
        for d in range(len(self.games) - 1, -1, -1):
            row = list(self.gain[d + 1])
            g = self.games[d]
            row[g.white] += max(o.white for o in g.options)
            row[g.black] += max(o.black for o in g.options)
            self.gain[d] = row
        self.score = list(m.score)
        self.wins = list(m.wins)
        self.points = [list(r) for r in m.points]
        if fixed is not None:
            g, k = fixed
            o = g.options[k]
            self.score[g.white] += o.white
            self.score[g.black] += o.black
            self.points[g.white][g.black] += o.white
            self.points[g.black][g.white] += o.black
            self.wins[g.white] += o.white_won
            self.wins[g.black] += o.black_won
        self.picks = [0] * len(self.games)
        self.best: int | None = None
        self.best_picks: list[int] = []
        self.exact = True

    def run(self) -> tuple[int, bool, tuple[ScenarioGame, ...]]:
        self.root = self._bound(0)
        self._descend(0)
        assert self.best is not None
        return self.best, self.exact, self._scenario()

    def _bound(self, d: int) -> int:
        n, i, score, gain = self.m.n, self.i, self.score, self.gain[d]
        lo_i, hi_i = score[i], score[i] + gain[i]
        ahead = not_behind = behind = not_ahead = 0
        for j in range(n):
            if j == i:
                continue
            lo, hi = score[j], score[j] + gain[j]
            if lo > hi_i:
                ahead += 1
            if lo >= hi_i:
                not_behind += 1
            if hi < lo_i:
                behind += 1
            if hi <= lo_i:
                not_ahead += 1
        table, sharing = self.table, self.sharing
        if self.most:
            by_place = table.place[ahead]
            shared = table.mean[ahead][max(ahead, not_behind)]
        else:
            last = n - 1 - behind
            by_place = table.place[last]
            shared = table.mean[n - 1 - not_ahead][last]
        if sharing == "none":
            return by_place
        if sharing == "average":
            return shared
        return (by_place + shared) // 2

    def _better(self, value: int) -> bool:
        return self.best is None or (value > self.best if self.most else value < self.best)

    def _descend(self, d: int) -> bool:
        """Search below depth ``d``; true once the search is over (the root's bound is reached, or the budget)."""
        self.nodes += 1
        if d == len(self.games):
            value = leaf_money(self.m, self.table, self.sharing, self.score, self.points, self.wins, self.i)
            if self._better(value):
                self.best, self.best_picks = value, list(self.picks)
            return value == self.root
        if self.nodes > self.budget and self.best is not None:
            self.exact = False
            return True
        if self.best is not None and not self._better(self._bound(d)):
            return False
        g = self.games[d]
        for k in self._order(d):
            o = g.options[k]
            w, b = g.white, g.black
            self.score[w] += o.white
            self.score[b] += o.black
            self.points[w][b] += o.white
            self.points[b][w] += o.black
            self.wins[w] += o.white_won
            self.wins[b] += o.black_won
            self.picks[d] = k
            over = self._descend(d + 1)
            self.score[w] -= o.white
            self.score[b] -= o.black
            self.points[w][b] -= o.white
            self.points[b][w] -= o.black
            self.wins[w] -= o.white_won
            self.wins[b] -= o.black_won
            if over:
                return True
        return False

    def _order(self, d: int) -> list[int]:
        """The outcomes of game ``d``, the likeliest to pay the extreme first: the player's own result best
        (or worst) first; between others, the points to the one nearer to the player's score fewest (or most)."""
        g, i = self.games[d], self.i
        ks = list(range(len(g.options)))
        if i == g.white:
            ks.sort(key=lambda k: -g.options[k].white)
        elif i == g.black:
            ks.sort(key=lambda k: -g.options[k].black)
        else:
            mine = self.score[i] + self.gain[d][i]
            near_white = abs(self.score[g.white] - mine) <= abs(self.score[g.black] - mine)
            ks.sort(key=lambda k: g.options[k].white if near_white else g.options[k].black)
        return ks if self.most else ks[::-1]

    def _scenario(self) -> tuple[ScenarioGame, ...]:
        t, m = self.t, self.m
        chosen = {id(g): g.options[k].result for g, k in zip(self.games, self.best_picks, strict=True)}
        if self.fixed is not None:
            chosen[id(self.fixed[0])] = self.fixed[0].options[self.fixed[1]].result
        out: list[ScenarioGame] = []
        for g in m.games:
            result = chosen.get(id(g), g.options[0].result)
            out.append((g.round, t.start_nos[g.white], t.start_nos[g.black], result))
        return tuple(out)


__all__ = ["BUDGET", "SHARINGS", "Money", "MoneyStake", "Sharing", "check_prizes", "money", "money_at_stake", "paid"]
