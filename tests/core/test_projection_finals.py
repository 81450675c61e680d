"""The tie-break finals the projection ranks every scenario by, written in plain loops for the compiled build,
against the statements they replace: DE's places by :func:`resolve`, SB and KS by their sums."""

from __future__ import annotations

import random

from tracker.core.line import qualifies
from tracker.core.order import TieBreak
from tracker.core.tiebreaks import de, ks, sb
from tracker.core.tiebreaks.rule import Final, Frame


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
