"""Sound bounds from score intervals, for more undecided games than the exact search takes."""

from __future__ import annotations

from dataclasses import dataclass, field

from tracker.core.projection.exact import Range
from tracker.core.projection.model import Game, Model, Option
from tracker.core.tiebreaks import qualifies

# -- bounds: score intervals ----------------------------------------------------


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
    iv.ahead = [sum(1 for lo in s_min if lo > hi) for hi in s_max]
    iv.behind = [sum(1 for hi in s_max if hi < lo) for lo in s_min]
    return iv


def bounds(iv: Intervals) -> Range:
    n = len(iv.s_min)
    return (
        iv.ks_min + [1 + a for a in iv.ahead],
        iv.ks_max + [n - b for b in iv.behind],
    )


def bounds_given(iv: Intervals, g: Game, o: Option) -> Range:
    """The bounds with ``g``'s outcome fixed to ``o``, in O(n) from ``iv``."""
    n = len(iv.s_min)
    a, b = g.white, g.black
    lo_a, hi_a = min(x.white for x in g.options), max(x.white for x in g.options)
    lo_b, hi_b = min(x.black for x in g.options), max(x.black for x in g.options)
    s_min = {a: iv.s_min[a] - lo_a + o.white, b: iv.s_min[b] - lo_b + o.black}
    s_max = {a: iv.s_max[a] - hi_a + o.white, b: iv.s_max[b] - hi_b + o.black}
    thr = iv.threshold
    clinched = {p: qualifies(s_min[p], thr) for p in (a, b)}
    alive = {p: qualifies(s_max[p], thr) for p in (a, b)}
    ks_min, ks_max = iv.ks_min.copy(), iv.ks_max.copy()
    ahead, behind = iv.ahead.copy(), iv.behind.copy()
    for i in range(n):
        if i in (a, b):
            continue
        for p in (a, b):
            ks_min[i] += (clinched[p] - iv.clinched(p)) * iv.p_min[i][p]
            ks_max[i] += (alive[p] - iv.alive(p)) * iv.p_max[i][p]
            ahead[i] += (s_min[p] > iv.s_max[i]) - (iv.s_min[p] > iv.s_max[i])
            behind[i] += (s_max[p] < iv.s_min[i]) - (iv.s_max[p] < iv.s_min[i])
    for p, q, lo_p, hi_p, u_p in ((a, b, lo_a, hi_a, o.white), (b, a, lo_b, hi_b, o.black)):
        # p's points against q are now fixed; q's status may have changed
        ks_min[p] += clinched[q] * (iv.p_min[p][q] - lo_p + u_p) - iv.clinched(q) * iv.p_min[p][q]
        ks_max[p] += alive[q] * (iv.p_max[p][q] - hi_p + u_p) - iv.alive(q) * iv.p_max[p][q]
        others = [j for j in range(n) if j not in (a, b)]
        ahead[p] = sum(1 for j in others if iv.s_min[j] > s_max[p]) + (s_min[q] > s_max[p])
        behind[p] = sum(1 for j in others if iv.s_max[j] < s_min[p]) + (s_max[q] < s_min[p])
    return ks_min + [1 + x for x in ahead], ks_max + [n - x for x in behind]
