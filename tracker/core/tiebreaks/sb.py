"""``SB``: Sonneborn-Berger (C.07 §9.1).

The sum, over a player's games, of the points scored in the game times the
opponent's score.  Forfeits count as games (§15.2, a round robin); byes
have no opponent and add nothing.  An opponent's trailing voluntarily
unplayed rounds (byes after their last game) count 0 in the score used here,
as the FIDE TEC server reads C.07 §16.  Values are in units² (``1/den²``):
the crosstable keeps the sum incrementally.
"""

from __future__ import annotations

from collections.abc import Sequence

from tracker.core.crosstable import Tournament
from tracker.core.order import TieBreak
from tracker.core.phrases import phrase
from tracker.core.tiebreaks.rule import Column, Final, Rule, Span


def column(t: Tournament, tb: TieBreak) -> Column:
    den = t.units.denominator
    return Column(t.sb, den * den)


def final(f: Final, tb: TieBreak) -> Sequence[int]:
    # plain loops: the projection ranks every scenario it evaluates (compiled, a loop beats a generator)
    score, trailing = f.score, f.frame.trailing
    n = len(score)
    adjusted: list[int] = [score[k] - trailing[k] for k in range(n)]
    found: list[int] = []
    for row in f.points:
        total = 0
        for k in range(n):
            total += row[k] * adjusted[k]
        found.append(total)
    return found


def difference(s: Span, tb: TieBreak, j: int, i: int, weight: list[int] | None) -> tuple[int, int]:
    """``Σ_k (P_jk − P_ik) · S_k`` as an interval, with each opponent's adjusted score an interval too."""
    trailing = s.frame.trailing
    s_lo, s_hi = s.s_lo, s.s_hi
    pj_lo, pj_hi, pi_lo, pi_hi = s.p_lo[j], s.p_hi[j], s.p_lo[i], s.p_hi[i]
    lo = hi = 0
    for k in range(s.frame.n):
        a_lo, a_hi = s_lo[k] - trailing[k], s_hi[k] - trailing[k]
        if pj_lo[k] == pj_hi[k] and pi_lo[k] == pi_hi[k]:
            c = pj_lo[k] - pi_lo[k]
            if c == 0:
                continue
            if c > 0:
                lo += c * a_lo
                hi += c * a_hi
            else:
                lo += c * a_hi
                hi += c * a_lo
            if weight is not None and a_lo != a_hi:
                weight[k] += 1
        else:
            lo += pj_lo[k] * a_lo - pi_hi[k] * a_hi
            hi += pj_hi[k] * a_hi - pi_lo[k] * a_lo
            if weight is not None:
                weight[k] += 1
    return lo, hi


RULE = Rule(
    kind="SB",
    name=phrase("tiebreak.SB.name", "Sonneborn-Berger"),
    what=phrase(
        "tiebreak.SB.what", "the sum of the final scores of the opponents beaten, plus half the scores of those drawn"
    ),
    better=phrase("tiebreak.SB.better", "higher is better"),
    listed=3,
    column=column,
    final=final,
    difference=difference,
)
