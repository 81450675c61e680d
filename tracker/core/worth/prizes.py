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

Categories
----------

Beside the place prizes, prizes per category (:mod:`tracker.core.worth.categories`: a rating band, women,
juniors), one prize per player, the most valuable one (docs/ratings.md gives the sources):

1. **Who takes which prize** follows the standings' order (rank, then start number): every prize of every
   list (the places, then the categories as declared) with money in it, from the highest amount declared down
   (equal amounts: the place prize first, then the categories in their declared order), goes to the first
   player in that order it admits who has no prize yet.  A prize nobody left can take is not paid.
2. **Sharing** then applies within each list among the players it is paid to, as for places without
   categories: the players of a category share its prizes by their places among its takers; every player
   who takes no category prize stays in the place list (its places past the last prize pay 0), so a points
   group reaching past the last place prize shares it with them, as without categories.

Without categories this is the place split above.  The search's cut is weaker with categories but still
valid: a player's place among a list's takers is at least the number of players the list admits who are
certainly ahead on points, less the prizes of the other lists (each of those players takes a prize before
them, in that list or another), so the most is at most the best of the lists' prizes at those places; the
least is at least the smaller of the place prize at the last place they can reach and the smallest prize of
a category that admits them (a category's takers hold its paid places).
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
from tracker.core.projection.ranking import ranks, standing
from tracker.core.standings import Standings
from tracker.core.tiebreaks.rule import Final as Complete
from tracker.core.worth.categories import PLACE, Category

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
    #: with categories declared: the prize list the least (``least_from``) and most (``most_from``) money comes
    #: from, :data:`~tracker.core.worth.categories.PLACE` or a category's name (``None``: no money)
    categories: bool = False
    least_from: str | None = None
    most_from: str | None = None


class _Table:
    """Prizes per place padded with 0 to ``n`` places, and the mean of each run of places ``a … e``, as integers
    in units of ``1/scale`` (exact: ``scale`` is twice the prizes' common denominator times lcm(1 … n), so every
    prize is a multiple of 2·lcm(1 … n), every share an even number and every half of one whole; integers keep
    the search fast)."""

    def __init__(self, prizes: Sequence[Fraction], n: int, scale: int | None = None) -> None:
        self.n = n
        self.scale = scale or 2 * lcm(1, *range(1, n + 1)) * lcm(1, *(p.denominator for p in prizes))
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


class _Lists:
    """The place prizes and the categories' as :class:`_Table` values on one scale, each category's admitted
    players by index (``start_nos``' order), and every paid prize in the order it is handed out
    (module docstring, *Categories*: the highest amount first, the places before the categories)."""

    def __init__(
        self, prizes: Sequence[Fraction], categories: Sequence[Category], start_nos: Sequence[int], n: int
    ) -> None:
        fractions = [*prizes, *(p for c in categories for p in c.prizes)]
        scale = 2 * lcm(1, *range(1, n + 1)) * lcm(1, *(p.denominator for p in fractions))
        self.tables = [_Table(prizes, n, scale), *(_Table(c.prizes, n, scale) for c in categories)]
        self.names = [PLACE, *(c.name for c in categories)]
        self.admitted: list[list[bool] | None] = [None, *([s in c.eligible for s in start_nos] for c in categories)]
        slots = [(-t.place[q], k, q) for k, t in enumerate(self.tables) for q in range(n) if t.place[q] > 0]
        slots.sort()
        self.slots = [k for _, k, _ in slots]
        self.paid = [sum(1 for k in self.slots if k == x) for x in range(len(self.tables))]

    def allocate(
        self, sharing: Sharing, order: Sequence[int], rank: Sequence[int], points: Sequence[object]
    ) -> tuple[list[int], list[int]]:
        """Every player's money (in ``1/scale``, by index) and the list they are paid from (0: the places, ``k``:
        the ``k``-th category), for players in the final ``order`` (indices, the standings' order) with their
        ``rank`` and ``points`` (by index): the module docstring's *Categories*."""
        n = len(order)
        taken = [0] * n
        done = [False] * n
        for k in self.slots:
            admitted = self.admitted[k]
            for p in order:
                if not done[p] and (admitted is None or admitted[p]):
                    done[p] = True
                    taken[p] = k
                    break
        units = [0] * n
        for k, table in enumerate(self.tables):
            members = [p for p in order if taken[p] == k]
            q = 0
            while q < len(members):  # one points group of the list's members
                e = q
                while e + 1 < len(members) and points[members[e + 1]] == points[members[q]]:
                    e += 1
                t = q
                while t <= e:  # one tie on every criterion inside it
                    u = t
                    while u + 1 <= e and rank[members[u + 1]] == rank[members[t]]:
                        u += 1
                    value = table.pay(sharing, t, u - t + 1, q, e - q + 1)
                    for x in range(t, u + 1):
                        units[members[x]] = value
                    t = u + 1
                q = e + 1
        return units, taken

    def named(self, units: int, k: int) -> str | None:
        return self.names[k] if units > 0 else None


def awarded(
    s: Standings, prizes: Sequence[Fraction], sharing: Sharing, categories: Sequence[Category] = ()
) -> dict[int, tuple[Fraction, str | None]]:
    """The money per start number by the standings ``s`` as they are (the final split once every game is in) and
    the list it is paid from (:data:`~tracker.core.worth.categories.PLACE`, a category's name; ``None``: no money)."""
    check_prizes(prizes)
    for c in categories:
        check_prizes(c.prizes)
    rows = s.rows
    lists = _Lists(prizes, categories, [r.start_no for r in rows], len(rows))
    units, taken = lists.allocate(sharing, range(len(rows)), [r.rank for r in rows], [r.points for r in rows])
    table = lists.tables[0]
    return {r.start_no: (table.money(units[p]), lists.named(units[p], taken[p])) for p, r in enumerate(rows)}


def paid(
    s: Standings, prizes: Sequence[Fraction], sharing: Sharing, categories: Sequence[Category] = ()
) -> dict[int, Fraction]:
    """The money per start number by the standings ``s`` as they are (the final split once every game is in)."""
    return {start_no: money for start_no, (money, _) in awarded(s, prizes, sharing, categories).items()}


def money(
    t: Tournament,
    s: Standings,
    prizes: Sequence[Fraction],
    sharing: Sharing,
    *,
    budget: int = BUDGET,
    categories: Sequence[Category] = (),
) -> tuple[Money, ...]:
    """Every player's :class:`Money` (in ``s``'s row order): paid when ``t`` is complete, else the least and most,
    with the place prizes and the ``categories``' (module docstring).

    Raises :class:`ValueError` for prizes not in non-increasing order, and
    :class:`~tracker.core.errors.ProjectionUnavailable` for a tie-break order the projection cannot rank by.
    """
    check_prizes(prizes)
    for c in categories:
        check_prizes(c.prizes)
    with_categories = bool(categories)
    if t.complete:
        now = awarded(s, prizes, sharing, categories)
        return tuple(
            Money(
                r.start_no,
                True,
                now[r.start_no][0],
                now[r.start_no][0],
                True,
                categories=with_categories,
                least_from=now[r.start_no][1],
                most_from=now[r.start_no][1],
            )
            for r in s.rows
        )
    m = model_of(t)
    lists = _Lists(prizes, categories, t.start_nos, m.n)
    table = lists.tables[0]
    found = []
    for row in s.rows:
        i = t.index[row.start_no]
        low = _Search(m, t, lists, sharing, i, most=False, budget=budget).run()
        high = _Search(m, t, lists, sharing, i, most=True, budget=budget).run()
        found.append(
            Money(
                row.start_no,
                False,
                table.money(low[0]),
                table.money(high[0]),
                low[1] and high[1],
                low[2],
                high[2],
                with_categories,
                low[3],
                high[3],
            )
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
    t: Tournament,
    prizes: Sequence[Fraction],
    sharing: Sharing,
    *,
    budget: int = BUDGET,
    categories: Sequence[Category] = (),
) -> dict[GameKey, dict[GameResult, tuple[MoneyStake, ...]]]:
    """The money at stake in each game of the round being played (the first round with a game undecided; a
    tournament without a schedule: its first n/2 undecided games): per outcome, the least and most money of
    each of the game's two players given that result, for the players whose money the result changes.

    A player whose least and most are the same whatever the result (no prize within reach, or one already
    certain) is left out; a game that changes nobody's money is absent.  Raises as :func:`money` does.
    """
    check_prizes(prizes)
    for c in categories:
        check_prizes(c.prizes)
    if t.complete or not (prizes or any(c.prizes for c in categories)):
        return {}
    m = model_of(t)
    undecided = list(m.undecided)
    if not undecided:
        return {}
    scheduled = [g.round for g in undecided if g.round is not None]
    games = [g for g in undecided if g.round == min(scheduled)] if scheduled else undecided[: m.n // 2]
    lists = _Lists(prizes, categories, t.start_nos, m.n)
    table = lists.tables[0]
    found: dict[GameKey, dict[GameResult, tuple[MoneyStake, ...]]] = {}
    for g in games:
        per: dict[GameResult, list[MoneyStake]] = {}
        for i in (g.white, g.black):
            outcomes = []
            for k, o in enumerate(g.options):
                low = _Search(m, t, lists, sharing, i, most=False, budget=budget, fixed=(g, k)).run()
                high = _Search(m, t, lists, sharing, i, most=True, budget=budget, fixed=(g, k)).run()
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


def leaf_awarded(
    m: Model,
    lists: _Lists,
    start_nos: Sequence[int],
    sharing: Sharing,
    score: list[int],
    points: list[list[int]],
    wins: list[int],
    i: int,
) -> tuple[int, int]:
    """Player ``i``'s money (in ``1/scale``) and the list paying it, with categories, on a complete crosstable."""
    rank = ranks(Complete(m.frame, score, wins, points), m.order)
    order = sorted(range(m.n), key=lambda j: (rank[j], start_nos[j]))
    units, taken = lists.allocate(sharing, order, rank, score)
    return units[i], taken[i]


class _Search:
    """One branch and bound: the least (``most`` false) or the most money of player ``i`` (module docstring)."""

    def __init__(
        self,
        m: Model,
        t: Tournament,
        lists: _Lists,
        sharing: Sharing,
        i: int,
        *,
        most: bool,
        budget: int,
        fixed: tuple[Game, int] | None = None,
    ) -> None:
        self.m, self.t, self.table, self.sharing, self.i, self.most = m, t, lists.tables[0], sharing, i, most
        self.lists = lists
        self.categories = len(lists.tables) > 1
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
        self.best_from: str | None = None
        self.best_picks: list[int] = []
        self.exact = True

    def run(self) -> tuple[int, bool, tuple[ScenarioGame, ...], str | None]:
        self.root = self._bound(0)
        self._descend(0)
        assert self.best is not None
        return self.best, self.exact, self._scenario(), self.best_from

    def _leaf(self) -> tuple[int, str | None]:
        if not self.categories:
            value = leaf_money(self.m, self.table, self.sharing, self.score, self.points, self.wins, self.i)
            return value, PLACE if value > 0 else None
        value, k = leaf_awarded(
            self.m, self.lists, self.t.start_nos, self.sharing, self.score, self.points, self.wins, self.i
        )
        return value, self.lists.named(value, k)

    def _bound(self, d: int) -> int:
        if self.categories:
            return self._category_bound(d)
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

    def _category_bound(self, d: int) -> int:
        """The module docstring's weaker cut with categories: the most is at most the best prize of a list at the
        place among its takers the player certainly cannot beat (in the places, those ahead whom no category
        admits all stay ahead); the least at least the place money as without categories (others leaving for a
        category only move the player up), or the smallest paid prize of a category admitting them."""
        n, i, score, gain, lists = self.m.n, self.i, self.score, self.gain[d], self.lists
        lo_i, hi_i = score[i], score[i] + gain[i]
        total = len(lists.slots)
        categories = lists.admitted[1:]
        if self.most:
            best = 0
            for k, table in enumerate(lists.tables):
                admitted = lists.admitted[k]
                if admitted is None:  # the places: a player ahead whom no category admits cannot leave them
                    stay = leave = 0
                    for j in range(n):
                        if j != i and score[j] > hi_i:
                            if any(c is not None and c[j] for c in categories):
                                leave += 1
                            else:
                                stay += 1
                    place = stay + max(0, leave - (total - lists.paid[0]))
                elif not admitted[i]:
                    continue
                else:
                    ahead = sum(1 for j in range(n) if j != i and score[j] > hi_i and admitted[j])
                    place = max(0, ahead - (total - lists.paid[k]))
                best = max(best, table.place[place] if place < n else 0)
            return best
        behind = not_ahead = 0
        for j in range(n):
            if j != i:
                hi = score[j] + gain[j]
                if hi < lo_i:
                    behind += 1
                if hi <= lo_i:
                    not_ahead += 1
        # in the places, as without categories: the player's tie ends by place n - 1 - behind and their points
        # group starts by n - 1 - not_ahead (players leaving for a category only move them up)
        last = n - 1 - behind
        by_place = self.table.place[last]
        shared = self.table.mean[n - 1 - not_ahead][last]
        sharing = self.sharing
        least = by_place if sharing == "none" else shared if sharing == "average" else (by_place + shared) // 2
        for k, table in enumerate(lists.tables):
            admitted = lists.admitted[k]
            if k and admitted is not None and admitted[i] and lists.paid[k]:
                least = min(least, table.place[lists.paid[k] - 1])
        return least

    def _better(self, value: int) -> bool:
        return self.best is None or (value > self.best if self.most else value < self.best)

    def _descend(self, d: int) -> bool:
        """Search below depth ``d``; true once the search is over (the root's bound is reached, or the budget)."""
        self.nodes += 1
        if d == len(self.games):
            value, named = self._leaf()
            if self._better(value):
                self.best, self.best_picks, self.best_from = value, list(self.picks), named
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


__all__ = [
    "BUDGET",
    "SHARINGS",
    "Money",
    "MoneyStake",
    "Sharing",
    "awarded",
    "check_prizes",
    "money",
    "money_at_stake",
    "paid",
]
