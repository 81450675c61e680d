"""The tie-break finals the projection ranks every scenario by, written in plain loops for the compiled build,
against the statements they replace: DE's places by :func:`resolve`, SB and KS by their sums."""

from __future__ import annotations

import random

from tracker.core.line import qualifies
from tracker.core.order import TieBreak
from tracker.core.tiebreaks import de, ks, sb
from tracker.core.tiebreaks.rule import AHEAD, BEHIND, LEVEL, OPEN, Final, Frame, Span


def _crosstable(rng: random.Random, n: int, double: bool) -> Final:
    points = [[0] * n for _ in range(n)]
    for a in range(n):
        for b in range(a + 1, n):
            if rng.random() < 0.15:
                continue  # not met
            x = sum(rng.choice((0, 1, 2)) for _ in range(2 if double else 1))
            points[a][b], points[b][a] = x, (4 if double else 2) - x
    weight = [[0 if a == b else (1 if double else 2) for b in range(n)] for a in range(n)]
    score = [sum(row) for row in points]
    trailing = [rng.choice((0, 0, 0, 1)) for _ in range(n)]
    frame = Frame(n, list(range(1, n + 1)), [2700] * n, trailing, weight, {0: n - 1, 2: n + 1})
    return Final(frame, score, [0] * n, points)


def test_de_places_are_resolves() -> None:
    rng = random.Random(32)
    for _ in range(4000):
        n = rng.randint(3, 10)
        f = _crosstable(rng, n, rng.random() < 0.3)
        group = rng.sample(range(n), rng.randint(2, n))
        expected = de.resolve(group, de.final_scores(f.points, f.frame.de_weight))
        assert de.final_places(f, group) == expected


def test_de_places_of_a_group_that_stays_tied_are_zero() -> None:
    n = 4
    points = [[0, 1, 1, 1], [1, 0, 1, 1], [1, 1, 0, 1], [1, 1, 1, 0]]  # every game drawn
    frame = Frame(n, [1, 2, 3, 4], [0] * n, [0] * n, [[0 if a == b else 2 for b in range(n)] for a in range(n)], {})
    assert de.final_places(Final(frame, [3] * n, [0] * n, points), [0, 1, 2, 3]) == dict.fromkeys(range(n), 0)


def test_sb_and_ks_finals_are_their_sums() -> None:
    rng = random.Random(33)
    for _ in range(500):
        n = rng.randint(2, 12)
        f = _crosstable(rng, n, False)
        adjusted = [s - t for s, t in zip(f.score, f.frame.trailing, strict=True)]
        assert list(sb.final(f, TieBreak("SB", "SB"))) == [
            sum(p * a for p, a in zip(row, adjusted, strict=True)) for row in f.points
        ]
        for limit, code in ((0, "KS"), (2, "KS/L+2")):
            threshold = f.frame.thresholds[limit]
            on = [qualifies(s, threshold) for s in f.score]
            assert list(ks.final(f, TieBreak(code, "KS", limit))) == [
                sum(p for p, q in zip(row, on, strict=True) if q) for row in f.points
            ]


def _intervals(s: Span, i: int, candidates: list[int], certain: list[int], possible: list[int]) -> list[int]:
    """DE's group bound as first written: the whole interval of every candidate, then its verdict."""
    w, p_lo, p_hi = s.frame.de_weight, s.p_lo, s.p_hi
    found = []
    for j in candidates:
        lo = p_lo[j][i] * w[j][i] - p_hi[i][j] * w[i][j]
        hi = p_hi[j][i] * w[j][i] - p_lo[i][j] * w[i][j]
        inert = lo == hi == 0
        for y in (*certain, *possible):
            if y == j:
                continue
            c_lo = p_lo[j][y] * w[j][y] - p_hi[i][y] * w[i][y]
            c_hi = p_hi[j][y] * w[j][y] - p_lo[i][y] * w[i][y]
            if y in certain:
                lo, hi = lo + c_lo, hi + c_hi
            else:
                lo, hi = lo + min(0, c_lo), hi + max(0, c_hi)
            inert = inert and c_lo == c_hi == 0
        found.append(AHEAD if lo > 0 else BEHIND if hi < 0 else LEVEL if inert else OPEN)
    return found


def test_de_group_verdicts_are_the_whole_intervals() -> None:
    rng = random.Random(34)
    for _ in range(3000):
        n = rng.randint(3, 10)
        f = _crosstable(rng, n, rng.random() < 0.3)
        p_lo = [list(row) for row in f.points]
        p_hi = [list(row) for row in f.points]
        for a in range(n):
            for b in range(a + 1, n):
                if rng.random() < 0.3:  # a game still open between them: anything from nothing to all of it
                    total = p_lo[a][b] + p_lo[b][a] or 2
                    p_lo[a][b] = p_lo[b][a] = 0
                    p_hi[a][b] = p_hi[b][a] = total
        span = Span(f.frame, f.score, f.score, p_lo, p_hi, f.wins, f.wins)
        i, *others = rng.sample(range(n), rng.randint(2, n))
        certain = [y for y in others if rng.random() < 0.4]
        possible = [y for y in others if y not in certain]
        assert de.group_difference(span, i, others, certain, possible) == _intervals(span, i, others, certain, possible)
