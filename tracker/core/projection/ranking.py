"""Ranking a complete crosstable as :func:`tracker.core.standings.standings` does, on integer arrays."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from tracker.core.tiebreaks import qualifies

if TYPE_CHECKING:  # the model imports nothing from here; only the annotation needs it
    from tracker.core.projection.model import Model

# -- ranking a complete crosstable ----------------------------------------------


def ranks(
    n: int, columns: Sequence[Sequence[int] | None], cols: list[list[int]], de_weight: list[list[int]]
) -> list[int]:
    """Ranks (1-based, shared) as :func:`tracker.core.standings.standings` gives them.

    ``columns`` follows the tie-break order (``None`` for DE); higher is
    better.  ``cols[j][i]`` is what ``i`` scored against ``j``.
    """
    groups: list[list[int]] = [list(range(n))]
    for column in columns:
        refined: list[list[int]] = []
        for group in groups:
            if len(group) == 1:
                refined.append(group)
                continue
            if len(group) == 2:  # the usual tie, decided without sorting
                i, j = group
                if column is None:
                    vi, vj = cols[j][i] * de_weight[i][j], cols[i][j] * de_weight[j][i]
                else:
                    vi, vj = column[i], column[j]
                if vi == vj:
                    refined.append(group)
                else:
                    refined.extend(([i], [j]) if vi > vj else ([j], [i]))
                continue
            values = _de_values(group, cols, de_weight) if column is None else column
            _split_into(refined, group, values)
        groups = refined
        if len(groups) == n:
            break
    ranks = [0] * n
    rank = 1
    for group in groups:
        for i in group:
            ranks[i] = rank
        rank += len(group)
    return ranks


def _split_into(out: list[list[int]], group: list[int], values: Sequence[int] | dict[int, int]) -> None:
    ordered = sorted(group, key=values.__getitem__, reverse=True)
    current = [ordered[0]]
    value = values[ordered[0]]
    for i in ordered[1:]:
        v = values[i]
        if v == value:
            current.append(i)
        else:
            out.append(current)
            current = [i]
            value = v
    out.append(current)


def _de_values(group: list[int], cols: list[list[int]], de_weight: list[list[int]]) -> dict[int, int]:
    """Minus the DE place inside ``group`` (0 for all when it stays tied), as ``direct_encounter``."""
    places: dict[int, int] = {}
    _de_resolve(group, 1, places, cols, de_weight)
    if len(set(places.values())) == 1:
        return dict.fromkeys(group, 0)
    return {i: -place for i, place in places.items()}


def _de_resolve(
    group: list[int], base: int, places: dict[int, int], cols: list[list[int]], de_weight: list[list[int]]
) -> None:
    scores = {i: sum(cols[j][i] * de_weight[i][j] for j in group) for i in group}
    parts: list[list[int]] = []
    _split_into(parts, group, scores)
    if len(parts) == 1:
        for i in group:
            places[i] = base
        return
    offset = base
    for part in parts:
        if len(part) == 1:
            places[part[0]] = offset
        else:
            _de_resolve(part, offset, places, cols, de_weight)
        offset += len(part)


def koya(m: Model, score: Sequence[int], points: Sequence[Sequence[int]], limit: int) -> list[int]:
    """Every player's KS (limit ``limit``) on a complete crosstable: points against opponents on the final line."""
    threshold = m.thresholds[limit]
    on = [qualifies(s, threshold) for s in score]
    return [sum(p for p, q in zip(row, on, strict=True) if q) for row in points]


def criteria(
    m: Model,
    score: list[int],
    wins: list[int],
    points: Sequence[Sequence[int]],
    ks: Callable[[int], list[int]],
) -> list[list[int] | None]:
    """The columns ``m.order`` ranks a complete crosstable by (``None`` for DE, which :func:`ranks` resolves).

    ``ks(limit)`` gives the KS column of a limit (callers memoise it).
    """
    adjusted = [s - tr for s, tr in zip(score, m.trailing, strict=True)]
    columns: list[list[int] | None] = []
    for kind, limit in m.order:
        if kind == "PTS":
            columns.append(score)
        elif kind == "SB":
            columns.append([sum(p * a for p, a in zip(row, adjusted, strict=True)) for row in points])
        elif kind == "WON":
            columns.append(wins)
        elif kind == "KS":
            columns.append(ks(limit))
        elif kind in m.static:
            columns.append(m.static[kind])
        else:
            columns.append(None)
    return columns
