"""``DE``: direct encounter (C.07 §6), decided inside each group of players tied on everything before it.

How this works
--------------

:func:`resolve` is the one statement of the rule, used by the live
standings, the projection's ranking and its search alike.  Each member's DE
score is the points scored against the other members, repeated meetings
(double round robin) averaged; players not yet met contribute nothing (a
round robin compares the games that exist, as the FIDE TEC server does).
The members are ordered by that score; sub-groups still tied are decided
again on the games inside them, until nothing changes.  The value is the
place inside the group (1 = best, shared places repeat), and 0 for every
member when the group stays completely tied, or when there is no tie to
break.  Lower is better.  It is the value the FIDE TEC tie-break server
reports for DE, and every interface writes it the same way, as a place
(:func:`place_words`: ``1st``, ``2nd``, ``—`` for 0).

Mid-event the tied players may not all have met yet.  C.07 §6 compares the
games between the tied players; a round robin compares the games that
exist (the FIDE TEC server reads a round robin so; its "could the missing
games change it" test is for Swiss events), so a DE among players with a
game still to play against each other is provisional: :func:`unsettled`
says which groups, and the pages and the CLI mark them.

The projection's search, before the group is known, bounds the first
split by :func:`group_difference`: the members certain to be in the group
count, the possible ones only where they can help either side.

Only the scoring differs between the views: :func:`live_scores` reads the
crosstable's flat pair sums, :func:`final_scores` a complete crosstable's
points and meeting weights.  Both are doubled so that the average of two
meetings stays integral.  Places depend only on the games between the
members, which is what lets the standings cache them per group
(:attr:`~tracker.core.crosstable.Tournament.de_places`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tracker.core.crosstable import Tournament
from tracker.core.phrases import phrase
from tracker.core.tiebreaks.rule import AHEAD, BEHIND, LEVEL, OPEN, Final, Rule, Span, descending

#: ``scores(group)``: each member's DE score inside ``group``, aligned with it.
Scores = Callable[[list[int]], list[int]]


def resolve(group: list[int], scores: Scores) -> dict[int, int]:
    """Places inside ``group`` by direct encounter (1-based, shared places repeat); all 0 when it stays tied."""
    places = dict.fromkeys(group, 0)
    _split(group, 1, places, scores)
    if len(set(places.values())) == 1:
        return dict.fromkeys(group, 0)
    return places


def _split(group: list[int], base: int, places: dict[int, int], scores: Scores) -> None:
    """Give the members of ``group`` their places from ``base`` on, by DE inside ``group``, recursively."""
    values = scores(group)
    if min(values) == max(values):
        for i in group:
            places[i] = base
        return
    offset = base
    for value in sorted(set(values), reverse=True):
        part = [i for i, v in zip(group, values, strict=True) if v == value]  # ties keep the group's order
        if len(part) == 1:
            places[part[0]] = offset
        else:
            _split(part, offset, places, scores)
        offset += len(part)


def live_scores(t: Tournament) -> Scores:
    """DE scores from the crosstable's pair sums (plain loops: they run after every result, per tied group).

    Each member's score sums, over the other members it has met, the units scored against them
    (doubled; averaged over two meetings in a double round robin).  A member who has played fewer
    games than the group has members is scored from its own games (its opponents marked in a table),
    the others by walking the group: O(min(group, games)) per member, so a big tie early in a big
    event (hundreds of players tied after two rounds) costs its games, not the group's square, at
    every level of the recursion.
    """
    n = t.n
    units = t.pair_units
    games = t.pair_games
    entries = t.entries
    mark = bytearray(n)  # the members of the group being scored
    double = t.cycles == 2

    def scores(group: list[int]) -> list[int]:
        size = len(group)
        for i in group:
            mark[i] = 1
        out = []
        for i in group:
            at = i * n
            score = 0
            mine = entries[i]
            if len(mine) < size:
                met = {e.opponent for e in mine.values() if e.opponent >= 0 and mark[e.opponent]}
            else:
                met = {j for j in group if games[at + j]}
            for j in met:
                score += 2 * units[at + j] // games[at + j] if double else 2 * units[at + j]
            out.append(score)
        for i in group:
            mark[i] = 0
        return out

    return scores


def final_scores(points: list[list[int]], de_weight: list[list[int]]) -> Scores:
    """DE scores from a crosstable's points and meeting weights (:class:`~tracker.core.tiebreaks.rule.Frame`)."""

    def scores(group: list[int]) -> list[int]:
        return group_scores(points, de_weight, group)

    return scores


def group_scores(points: list[list[int]], weight: list[list[int]], group: list[int]) -> list[int]:
    """Each member's points against the others of ``group``, weighted per meeting (aligned with ``group``)."""
    # plain loops: the projection ranks groups by the hundred thousand (compiled, a loop beats a generator)
    out: list[int] = []
    for x in group:
        row, w = points[x], weight[x]
        score = 0
        for y in group:
            score += row[y] * w[y]
        out.append(score)
    return out


def group_difference(s: Span, i: int, candidates: list[int], certain: list[int], possible: list[int]) -> list[int]:
    """Per ``j`` of ``candidates``: where ``DE_j − DE_i`` lies at the group's first split, over the groups of ``i``,
    ``j``, the rest of ``certain`` and any of the rest of ``possible``: ahead, behind, level in every share, or open
    (the verdicts of :data:`~tracker.core.tiebreaks.rule.GroupDifference`).

    A member ``y`` adds ``P_jy·w_jy − P_iy·w_iy`` (in :func:`final_scores`'
    doubled units); a possible member only where that can help either side.
    A strictly positive difference places ``j`` ahead in every such group
    (the first split orders by the scores; sub-groups only refine it).
    One call for every candidate: the search asks at every node (plain
    loops, ``i``'s side of each member once; a possible member only lowers
    the low end and raises the high one, so once the interval holds 0 and a
    share is not 0 the verdict is open whatever the rest adds).
    """
    w = s.frame.de_weight
    p_lo, p_hi = s.p_lo, s.p_hi
    wi, pi_lo, pi_hi = w[i], p_lo[i], p_hi[i]
    # i's side of each member: the least and the most i can score against it, weighted
    sure_lo: list[int] = [pi_lo[y] * wi[y] for y in certain]
    sure_hi: list[int] = [pi_hi[y] * wi[y] for y in certain]
    maybe_lo: list[int] = [pi_lo[y] * wi[y] for y in possible]
    maybe_hi: list[int] = [pi_hi[y] * wi[y] for y in possible]
    found: list[int] = []
    for j in candidates:
        wj, pj_lo, pj_hi = w[j], p_lo[j], p_hi[j]
        lo = pj_lo[i] * wj[i] - pi_hi[j] * wi[j]
        hi = pj_hi[i] * wj[i] - pi_lo[j] * wi[j]
        inert = lo == 0 and hi == 0
        for k in range(len(certain)):
            y = certain[k]
            if y == j:
                continue
            c_lo = pj_lo[y] * wj[y] - sure_hi[k]
            c_hi = pj_hi[y] * wj[y] - sure_lo[k]
            lo += c_lo
            hi += c_hi
            if inert and (c_lo != 0 or c_hi != 0):
                inert = False
        verdict = OPEN
        if inert or lo > 0 or hi < 0:  # else open already: the possible members only widen the interval
            for k in range(len(possible)):
                y = possible[k]
                if y == j:
                    continue
                c_lo = pj_lo[y] * wj[y] - maybe_hi[k]
                c_hi = pj_hi[y] * wj[y] - maybe_lo[k]
                if c_lo < 0:
                    lo += c_lo
                if c_hi > 0:
                    hi += c_hi
                if inert and (c_lo != 0 or c_hi != 0):
                    inert = False
                if lo <= 0 <= hi and not inert:
                    break
            verdict = AHEAD if lo > 0 else BEHIND if hi < 0 else LEVEL if inert else OPEN
        found.append(verdict)
    return found


def place_words(place: int) -> str:
    """A DE value as every interface writes it: ``1st``, ``2nd``, ``3rd``, ``11th`` …, ``—`` for 0 (no separation)."""
    if place <= 0:
        return "—"
    suffix = "th" if 10 <= place % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(place % 10, "th")
    return f"{place}{suffix}"


def unsettled(t: Tournament, members: Sequence[int]) -> bool:
    """Whether a DE among ``members`` (player indices, tied before DE) can still change: two of them still have a
    game to play against each other (fewer meetings than the round robin's cycles) and the event is not over."""
    if t.complete:
        return False
    n, games, cycles = t.n, t.pair_games, t.cycles
    return any(games[i * n + j] < cycles for k, i in enumerate(members) for j in members[k + 1 :])


def places(t: Tournament, group: list[int]) -> dict[int, int]:
    return resolve(group, live_scores(t))


def final_places(f: Final, group: list[int]) -> dict[int, int]:
    points, weight = f.points, f.frame.de_weight
    if len(group) == 2:  # the usual tie, and most of the projection's: their own game(s) decide, or it stays tied
        a, b = group
        to_a, to_b = points[a][b] * weight[a][b], points[b][a] * weight[b][a]
        if to_a == to_b:
            return {a: 0, b: 0}
        return {a: 1, b: 2} if to_a > to_b else {a: 2, b: 1}
    # :func:`resolve` over :func:`final_scores`, in plain loops (the projection ranks groups by the hundred thousand)
    places: dict[int, int] = {}
    if _final_split(points, weight, group, 1, places):
        return dict.fromkeys(group, 0)
    return places


def _final_split(
    points: list[list[int]],
    weight: list[list[int]],
    group: list[int],
    base: int,
    places: dict[int, int],
) -> bool:
    """:func:`_split` with :func:`final_scores`' scores; ``True`` when ``group`` stays tied at once (no place given)."""
    size = len(group)
    values = group_scores(points, weight, group)
    lo = hi = values[0]
    for v in values:
        if v < lo:
            lo = v
        elif v > hi:
            hi = v
    if lo == hi:
        for x in group:
            places[x] = base
        return True
    # the members by score, higher first, equal scores in the group's order (an insertion sort: groups are small)
    order = descending(values)
    offset = base
    start = 0
    while start < size:
        v = values[order[start]]
        end = start + 1
        while end < size and values[order[end]] == v:
            end += 1
        if end - start == 1:
            places[group[order[start]]] = offset
        else:
            _final_split(points, weight, [group[order[x]] for x in range(start, end)], offset, places)
        offset += end - start
        start = end
    return False


RULE = Rule(
    kind="DE",
    name=phrase("tiebreak.DE.name", "Direct encounter"),
    what=phrase(
        "tiebreak.DE.what",
        "among players tied on everything before it: their place by the points they scored in their games "
        "against each other, decided again among those still tied (— when there is no tie to break or it stays "
        "tied; * while two of them have still to meet)",
    ),
    better=phrase("tiebreak.DE.better", "1st is best (lower is better)"),
    lower_first=True,
    listed=1,
    places=places,
    final_places=final_places,
    group_difference=group_difference,
)
