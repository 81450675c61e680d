"""Ranking a complete crosstable as :func:`tracker.core.standings.standings` does, on integer arrays.

Each criterion of the order splits the groups still tied (PTS first): a
rule with a column (:attr:`~tracker.core.tiebreaks.rule.Rule.final`) by its
values, higher first; a rule decided inside groups (DE) by its places.  A
column is computed only while some group is still tied.
"""

from __future__ import annotations

from collections.abc import Sequence

from tracker.core.order import TieBreak
from tracker.core.tiebreaks.rule import Final, Rule, descending


def ranks(f: Final, order: Sequence[tuple[TieBreak, Rule]]) -> list[int]:
    """Ranks (1-based, shared) of the complete crosstable ``f`` under ``order`` (every rule projectable)."""
    n = f.frame.n
    groups: list[list[int]] = [list(range(n))]
    for tb, rule in order:
        refined: list[list[int]] = []
        if rule.final_places is not None:
            for group in groups:
                if len(group) == 1:
                    refined.append(group)
                else:
                    places = rule.final_places(f, group)
                    _split_into(refined, group, [-places[i] for i in group])
        else:
            assert rule.final is not None  # the model admits projectable rules only
            column = rule.final(f, tb)
            for group in groups:
                if len(group) == 1:
                    refined.append(group)
                elif len(group) == 2:  # the usual tie, decided without sorting
                    i, j = group
                    vi, vj = column[i], column[j]
                    if vi == vj:
                        refined.append(group)
                    else:
                        refined.extend(([i], [j]) if vi > vj else ([j], [i]))
                else:
                    _split_into(refined, group, [column[i] for i in group])
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


def standing(f: Final, order: Sequence[tuple[TieBreak, Rule]], i: int) -> tuple[list[int], list[int]]:
    """The players ranked ahead of ``i`` and those ranked behind, as :func:`ranks` ranks ``f`` (``i``'s rank is one
    more than the first's length).

    Only ``i``'s own group is refined, criterion by criterion: a local
    search that asks about one player needs no other group's tie broken.
    """
    group = list(range(f.frame.n))
    ahead: list[int] = []
    behind: list[int] = []
    for tb, rule in order:
        if len(group) == 1:
            break
        kept: list[int] = []
        if rule.final_places is not None:
            places = rule.final_places(f, group)
            mine = places[i]
            for j in group:
                place = places[j]
                if place < mine:  # a lower place is better
                    ahead.append(j)
                elif place > mine:
                    behind.append(j)
                else:
                    kept.append(j)
        else:
            assert rule.final is not None  # the model admits projectable rules only
            values = rule.final(f, tb)
            mine = values[i]
            for j in group:
                v = values[j]
                if v > mine:
                    ahead.append(j)
                elif v < mine:
                    behind.append(j)
                else:
                    kept.append(j)
        group = kept
    return ahead, behind


def _split_into(out: list[list[int]], group: list[int], values: list[int]) -> None:
    """Append the parts of ``group`` equal on ``values`` (aligned with it), higher values first (a stable sort:
    equal values keep the group's order; an insertion sort, the groups are small)."""
    size = len(group)
    order = descending(values)
    current = [group[order[0]]]
    value = values[order[0]]
    for k in range(1, size):
        v = values[order[k]]
        if v == value:
            current.append(group[order[k]])
        else:
            out.append(current)
            current = [group[order[k]]]
            value = v
    out.append(current)
