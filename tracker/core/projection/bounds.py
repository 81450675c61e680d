"""Sound bounds from score intervals, for more undecided games than the exact search takes.

A game's per-outcome bounds differ from the overall ones only for the two
players of the game and for the few players whose comparisons with them
flip, so :func:`bounds_given` returns just those entries (a
:class:`Patched` view of the overall bounds): the whole result stays
O(games × affected players) instead of O(games × n), which on a 500-player
round robin (124,750 games) is the difference between seconds and gigabytes.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

from tracker.core.line import qualifies
from tracker.core.projection.model import Game, Model, Option

# -- bounds: score intervals ----------------------------------------------------

Range = tuple[list[int], list[int]]
"""(lows, highs) per player: KS in ``[:n]``, rank in ``[n:]``."""


@dataclass(slots=True)
class Intervals:
    """Score and pairwise-points intervals; the bounds derived from them."""

    s_min: list[int]
    s_max: list[int]
    p_min: list[list[int]]
    p_max: list[list[int]]
    threshold: int
    ks_min: list[int] = field(default_factory=list)
    ks_max: list[int] = field(default_factory=list)
    ahead: list[int] = field(default_factory=list)  # players certainly ahead on points
    behind: list[int] = field(default_factory=list)  # players certainly behind
    by_min: list[int] = field(default_factory=list)  # players in increasing s_min
    mins: list[int] = field(default_factory=list)  # their s_min (for bisection)
    by_max: list[int] = field(default_factory=list)  # players in increasing s_max
    maxes: list[int] = field(default_factory=list)

    def clinched(self, j: int) -> bool:
        return qualifies(self.s_min[j], self.threshold)

    def alive(self, j: int) -> bool:
        return qualifies(self.s_max[j], self.threshold)


def intervals(m: Model) -> Intervals:
    s_min, s_max = list(m.score), list(m.score)
    p_min = [row.copy() for row in m.points]
    p_max = [row.copy() for row in m.points]
    for g in m.undecided:
        w, b = g.white, g.black
        lw, hw = min(o.white for o in g.options), max(o.white for o in g.options)
        lb, hb = min(o.black for o in g.options), max(o.black for o in g.options)
        s_min[w] += lw
        s_max[w] += hw
        s_min[b] += lb
        s_max[b] += hb
        p_min[w][b] += lw
        p_max[w][b] += hw
        p_min[b][w] += lb
        p_max[b][w] += hb
    iv = Intervals(s_min, s_max, p_min, p_max, m.thresholds[0])
    n = m.n
    clinched = [iv.clinched(j) for j in range(n)]
    alive = [iv.alive(j) for j in range(n)]
    iv.ks_min = [sum(p for p, c in zip(row, clinched, strict=True) if c) for row in p_min]
    iv.ks_max = [sum(p for p, a in zip(row, alive, strict=True) if a) for row in p_max]
    iv.by_min = sorted(range(n), key=s_min.__getitem__)
    iv.mins = [s_min[i] for i in iv.by_min]
    iv.by_max = sorted(range(n), key=s_max.__getitem__)
    iv.maxes = [s_max[i] for i in iv.by_max]
    iv.ahead = [n - bisect_right(iv.mins, hi) for hi in s_max]
    iv.behind = [bisect_left(iv.maxes, lo) for lo in s_min]
    return iv


def bounds(iv: Intervals) -> Range:
    n = len(iv.s_min)
    return (
        iv.ks_min + [1 + a for a in iv.ahead],
        iv.ks_max + [n - b for b in iv.behind],
    )


class Patched(Sequence[int]):
    """``base`` with the entries of ``patch`` (index → value) replaced; shares ``base``."""

    __slots__ = ("base", "patch")

    def __init__(self, base: list[int], patch: dict[int, int]) -> None:
        self.base = base
        self.patch = patch

    def __getitem__(self, i: int) -> int:  # type: ignore[override]  # indices only, no slices
        return self.patch.get(i, self.base[i])

    def __len__(self) -> int:
        return len(self.base)


def bounds_given(iv: Intervals, overall: Range, g: Game, o: Option) -> tuple[Patched, Patched]:
    """The bounds with ``g``'s outcome fixed to ``o``: ``overall`` (= ``bounds(iv)``) patched where it differs.

    The patches hold the game's two players and every player whose KS or
    rank bound moves; a player absent from them keeps the overall bound.
    Costs O(log n + the players affected), O(n) when the game decides a
    player's qualification.
    """
    n = len(iv.s_min)
    a, b = g.white, g.black
    lo_a, hi_a = min(x.white for x in g.options), max(x.white for x in g.options)
    lo_b, hi_b = min(x.black for x in g.options), max(x.black for x in g.options)
    s_min = {a: iv.s_min[a] - lo_a + o.white, b: iv.s_min[b] - lo_b + o.black}
    s_max = {a: iv.s_max[a] - hi_a + o.white, b: iv.s_max[b] - hi_b + o.black}
    thr = iv.threshold
    clinched = {p: qualifies(s_min[p], thr) for p in (a, b)}
    alive = {p: qualifies(s_max[p], thr) for p in (a, b)}
    ks_min: dict[int, int] = {}
    ks_max: dict[int, int] = {}
    ahead: dict[int, int] = {}
    behind: dict[int, int] = {}
    for p in (a, b):
        # every other player's KS against p moves only when p's status does
        if (change := clinched[p] - iv.clinched(p)) != 0:
            for i in range(n):
                if i != a and i != b and iv.p_min[i][p]:
                    ks_min[i] = ks_min.get(i, iv.ks_min[i]) + change * iv.p_min[i][p]
        if (change := alive[p] - iv.alive(p)) != 0:
            for i in range(n):
                if i != a and i != b and iv.p_max[i][p]:
                    ks_max[i] = ks_max.get(i, iv.ks_max[i]) + change * iv.p_max[i][p]
        # p's minimum only rises, its maximum only falls: p newly passes the players with
        # iv.s_min[p] <= s_max[i] < s_min[p], and newly trails those with s_max[p] < s_min[i] <= iv.s_max[p]
        for k in range(bisect_left(iv.maxes, iv.s_min[p]), bisect_left(iv.maxes, s_min[p])):
            i = iv.by_max[k]
            if i != a and i != b:
                ahead[i] = ahead.get(i, iv.ahead[i]) + 1
        for k in range(bisect_right(iv.mins, s_max[p]), bisect_right(iv.mins, iv.s_max[p])):
            i = iv.by_min[k]
            if i != a and i != b:
                behind[i] = behind.get(i, iv.behind[i]) + 1
    for p, q, lo_p, hi_p, u_p in ((a, b, lo_a, hi_a, o.white), (b, a, lo_b, hi_b, o.black)):
        # p's points against q are now fixed; q's status may have changed
        ks_min[p] = iv.ks_min[p] + clinched[q] * (iv.p_min[p][q] - lo_p + u_p) - iv.clinched(q) * iv.p_min[p][q]
        ks_max[p] = iv.ks_max[p] + alive[q] * (iv.p_max[p][q] - hi_p + u_p) - iv.alive(q) * iv.p_max[p][q]
        # the others certainly ahead of / behind p, then q against p's new interval
        ahead[p] = (
            n
            - bisect_right(iv.mins, s_max[p])
            - (iv.s_min[a] > s_max[p])
            - (iv.s_min[b] > s_max[p])
            + (s_min[q] > s_max[p])
        )
        behind[p] = (
            bisect_left(iv.maxes, s_min[p])
            - (iv.s_max[a] < s_min[p])
            - (iv.s_max[b] < s_min[p])
            + (s_max[q] < s_min[p])
        )
    low, high = overall
    low_patch = ks_min | {n + i: 1 + x for i, x in ahead.items()}
    high_patch = ks_max | {n + i: n - x for i, x in behind.items()}
    return Patched(low, low_patch), Patched(high, high_patch)
