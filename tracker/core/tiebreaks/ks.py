"""``KS``, ``KS/L±n``: Koya (C.07 §9.2) with the limit modifier (§14.5).

Points scored against the opponents whose score is at least 50% of the
maximum, the line moved by ``n`` half-win steps (``KS/L+1``: ½ a win
higher, which is what "strictly more than 50%" means under 1-½-0).  The
line itself is :func:`tracker.core.line.koya_threshold` and the test
:func:`~tracker.core.line.qualifies`; which ``G`` applies while games are
still to be played is the crosstable's.  Forfeits are games (§15.2): a
forfeit win against a qualifier adds the win points.  Byes have no opponent
and never add.  The crosstable keeps one running sum per limit the order uses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final as Constant

from tracker.core.crosstable import Tournament
from tracker.core.errors import EventRejected
from tracker.core.line import qualifies
from tracker.core.order import TieBreak
from tracker.core.phrases import Said, phrase, plural
from tracker.core.tiebreaks.rule import Column, Final, Rule, Span

_LIMIT: Constant = re.compile(r"^KS/L([+-]?)(\d{1,2})$")
NO_SIGN: Constant = phrase(
    "rejected.no_sign",
    "tie-break code {code} has no sign: write KS/L+{digits} to raise the 50% line by {digits} × half a win "
    "(KS/L+1 = 50% + ½ point under 1-½-0 scoring) or KS/L-{digits} to lower it; "
    "tracker refuses KS/L{digits} because the FIDE TEC tie-break server reads it as a {digits}% line",
)


def parse(code: str) -> TieBreak | None:
    """``KS`` or ``KS/L±n``; raises :class:`EventRejected` (``unknown-tiebreak``) for a limit without a sign.

    TRF26 and C.07 §14.5 write ``KS/L+1``; the FIDE TEC server reads the
    unsigned ``KS/L1`` as a percentage line, so tracker refuses to guess.
    """
    if code == "KS":
        return TieBreak("KS", "KS")
    match = _LIMIT.match(code)
    if match is None:
        return None
    sign, digits = match.groups()
    if not sign:
        raise EventRejected(NO_SIGN(code=repr(code), digits=digits), code="unknown-tiebreak")
    limit = -int(digits) if sign == "-" else int(digits)
    if limit == 0:
        return TieBreak("KS", "KS")
    return TieBreak(f"KS/L{limit:+d}", "KS", limit)


def column(t: Tournament, tb: TieBreak) -> Column:
    return Column(t.ks[tb.limit], t.units.denominator)


def final(f: Final, tb: TieBreak) -> Sequence[int]:
    """Every player's KS on a complete crosstable: the points against opponents on the final line."""
    key = ("KS", tb.limit)
    found = f.memo.get(key)
    if found is None:
        # plain loops: the projection ranks every scenario it evaluates (compiled, a loop beats a generator)
        threshold = f.frame.thresholds[tb.limit]
        on: list[int] = [k for k, s in enumerate(f.score) if qualifies(s, threshold)]
        sums: list[int] = []
        for row in f.points:
            total = 0
            for k in on:
                total += row[k]
            sums.append(total)
        found = f.memo[key] = sums
    return found


def difference(s: Span, tb: TieBreak, j: int, i: int, weight: list[int] | None) -> tuple[int, int]:
    """``KS_j − KS_i`` over the opponents certainly on the line, and possibly on it (either way)."""
    thr = s.frame.thresholds[tb.limit]
    s_lo, s_hi = s.s_lo, s.s_hi
    pj_lo, pj_hi, pi_lo, pi_hi = s.p_lo[j], s.p_hi[j], s.p_lo[i], s.p_hi[i]
    lo = hi = 0
    for k in range(s.frame.n):
        d_lo, d_hi = pj_lo[k] - pi_hi[k], pj_hi[k] - pi_lo[k]
        if d_lo == d_hi == 0:
            continue
        if qualifies(s_lo[k], thr):
            lo += d_lo
            hi += d_hi
        elif qualifies(s_hi[k], thr):
            lo += min(0, d_lo)
            hi += max(0, d_hi)
            if weight is not None:
                weight[k] += 1
        if weight is not None and d_lo != d_hi:
            weight[k] += 1
    return lo, hi


WHAT: Constant = phrase(
    "tiebreak.KS.what",
    "points scored against the opponents on or above the 50% line (click a player for the breakdown)",
)
#: KS/L±n: ``limit`` is the signed number of half-point steps (``+1``), ``n`` its size.
WHAT_LIMIT: Constant = plural(
    "tiebreak.KS.what.limit",
    "points scored against the opponents on or above the 50% line moved by {limit} half-point step "
    "(click a player for the breakdown)",
    "points scored against the opponents on or above the 50% line moved by {limit} half-point steps "
    "(click a player for the breakdown)",
)


def _what(tb: TieBreak) -> Said:
    return WHAT_LIMIT(limit=f"{tb.limit:+d}", n=abs(tb.limit)) if tb.limit else WHAT()


RULE = Rule(
    kind="KS",
    name=phrase("tiebreak.KS.name", "Koya"),
    what=_what,
    better=phrase("tiebreak.KS.better", "higher is better"),
    listed=4,
    syntax="KS, KS/L±n",
    parse=parse,
    column=column,
    final=final,
    difference=difference,
)
