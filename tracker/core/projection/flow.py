"""The points relaxation: which final scores the undecided games can give at once, as a maximum flow.

How this works
--------------

Score intervals treat every player alone: two rivals who meet are both
"possibly above" a player although at most one of them can win their game.
The relaxation keeps the games.  Each undecided game ``e`` between ``a`` and
``b`` gives each side at least its lowest outcome (already in the interval
lows ``s_lo``) and, on top, *extra* units: at most ``cap_a``/``cap_b`` to
each side, at least ``least`` and at most ``most`` to the two together
(the lowest and highest total of an outcome, less the two lows).  Under
1-½-0 scoring every split of ``least == most`` units is an outcome; under
3-1-0 the split is a relaxation (a draw gives 2, a win 3), which is what
keeps every bound here sound.

* **Caps** (nobody above a score): route ``least`` units of every game to
  its players with player ``j`` taking at most ``room[j]`` more.  The units
  that cannot be routed (the flow's shortfall ``D``) must go to players
  above their caps; uncapping ``j`` lets the flow grow by at most
  ``raise[j]``, so at least :func:`fewest` ``(D, raises)`` players exceed.
* **Demands** (players reaching a score): route at most ``most`` units of
  every game with player ``j`` taking at most ``need[j]``.  If the flow
  falls ``D`` short of the total need, dropping ``j`` lowers the need by
  ``need[j]`` and the flow by no more: at least ``fewest(D, needs)`` of
  them fall short.

:class:`Flow` is an augmenting-path maximum flow on the bipartite graph
games → players (a few dozen units: one unit per path, breadth first).  Its
split of each game is also a guide for the search (which outcome to try
first) and a start for a scenario.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Relaxed:
    """One undecided game as the relaxation sees it (see the module docstring)."""

    a: int
    b: int
    cap_a: int
    cap_b: int
    least: int
    most: int


def relax(ends: tuple[int, int], options: Sequence[tuple[int, int, int, int]]) -> Relaxed:
    """The relaxed game between ``ends`` with ``options`` (units to each side, then wins to each side)."""
    lo_a = min(o[0] for o in options)
    lo_b = min(o[1] for o in options)
    totals = [o[0] + o[1] - lo_a - lo_b for o in options]
    return Relaxed(
        ends[0],
        ends[1],
        max(o[0] for o in options) - lo_a,
        max(o[1] for o in options) - lo_b,
        min(totals),
        max(totals),
    )


class Flow:
    """A maximum flow of the games' units to the players (see the module docstring); :meth:`lift` adds room.

    ``supply[e]`` units of game ``e`` go to its players, player ``j`` taking
    at most ``room[j]`` (the list is kept and consumed: it holds what is
    left).  ``short`` is what could not be routed; ``xa``/``xb`` each game's
    split.
    """

    __slots__ = ("_at", "_n", "_residual", "games", "room", "short", "xa", "xb")

    def __init__(self, games: list[Relaxed], supply: list[int], room: list[int], n: int) -> None:
        k = len(games)
        self.games = games
        self.room = room
        xa = self.xa = [0] * k
        xb = self.xb = [0] * k
        self._n = n
        #: each player's games, for the augmenting paths: built only once a unit is short (:meth:`_games_of`)
        self._at: list[list[int]] | None = None
        residual: list[list[int]] = []
        self._residual = residual
        for e in range(k):  # plain loops: a flow per node (compiled, a loop beats an iterator)
            g = games[e]
            a, b = g.a, g.b
            r = supply[e]
            if not r:
                continue
            room_a, room_b = room[a], room[b]
            if room_a >= room_b:  # the side with more room first
                t = _least(r, g.cap_a, room_a)
                xa[e] += t
                room[a] = room_a - t
                r -= t
                if r:
                    t = _least(r, g.cap_b, room_b)
                    xb[e] += t
                    room[b] = room_b - t
                    r -= t
            else:
                t = _least(r, g.cap_b, room_b)
                xb[e] += t
                room[b] = room_b - t
                r -= t
                if r:
                    t = _least(r, g.cap_a, room_a)
                    xa[e] += t
                    room[a] = room_a - t
                    r -= t
            if r:
                residual.append([e, r])
        self.short = 0
        self._route()

    def _route(self) -> None:
        if not self._residual:
            self.short = 0
            return
        dead = [False] * self._n
        short = 0
        for item in self._residual:
            e, r = item
            while r and self._augment(e, dead):
                r -= 1
            item[1] = r
            short += r
        self._residual = [item for item in self._residual if item[1]]
        self.short = short

    def copy(self) -> Flow:
        """An independent copy (the same games), to lift without touching this one."""
        other = Flow([], [], [], self._n)  # empty, then this one's state (a native class has no bare __new__)
        other.games = self.games
        other.room = self.room.copy()
        other.xa = self.xa.copy()
        other.xb = self.xb.copy()
        other._n = self._n
        other._at = self._at
        other._residual = [[item[0], item[1]] for item in self._residual]
        other.short = self.short
        return other

    def add(self, e: int, units: int) -> None:
        """Offer ``units`` more of game ``e`` (beyond its supply) and route what can be."""
        if units > 0:
            self._residual.append([e, units])
            self._route()

    def lift(self, j: int, extra: int) -> None:
        """Give player ``j`` ``extra`` more room and route what is still short."""
        self.room[j] += extra
        if self.short:
            self._route()

    def _games_of(self) -> list[list[int]]:
        """Each player's games (indices into :attr:`games`, in order)."""
        at = self._at
        if at is None:
            at = self._at = [[] for _ in range(self._n)]
            games = self.games
            for e in range(len(games)):
                g = games[e]
                at[g.a].append(e)
                at[g.b].append(e)
        return at

    def _augment(self, e: int, dead: list[bool]) -> bool:
        """Route one more unit of game ``e``, moving units of other games along a path to a player with room.

        A search that fails marks every player it reached ``dead``: no later
        path of the same routing can reach room through them (an augmenting
        path that avoids them changes no residual edge leaving them).
        """
        games, xa, xb, room, at = self.games, self.xa, self.xb, self.room, self._games_of()
        g = games[e]
        parent: dict[int, tuple[int, int]] = {}  # player → (previous player or -1, game moved)
        queue = []
        if xa[e] < g.cap_a and not dead[g.a]:
            parent[g.a] = (-1, e)
            queue.append(g.a)
        if xb[e] < g.cap_b and not dead[g.b] and g.b not in parent:
            parent[g.b] = (-1, e)
            queue.append(g.b)
        head = 0
        while head < len(queue):
            u = queue[head]
            head += 1
            if room[u] > 0:
                # unwind: each step moves one unit of a game from the previous player to this one
                room[u] -= 1
                v = u
                while True:
                    prev, via = parent[v]
                    h = games[via]
                    if h.a == v:
                        xa[via] += 1
                        if prev != -1:
                            xb[via] -= 1
                    else:
                        xb[via] += 1
                        if prev != -1:
                            xa[via] -= 1
                    if prev == -1:
                        return True
                    v = prev
            for f in at[u]:
                h = games[f]
                if h.a == u:
                    if xa[f] > 0 and xb[f] < h.cap_b and not dead[h.b] and h.b not in parent:
                        parent[h.b] = (u, f)
                        queue.append(h.b)
                elif xb[f] > 0 and xa[f] < h.cap_a and not dead[h.a] and h.a not in parent:
                    parent[h.a] = (u, f)
                    queue.append(h.a)
        for u in queue:
            dead[u] = True
        return False


def _least(x: int, y: int, z: int) -> int:
    """``min(x, y, z)`` without the builtin's tuple (compiled)."""
    if y < x:
        x = y
    return z if z < x else x


def fewest(short: int, gains: Sequence[int]) -> int:
    """The fewest of ``gains`` that add up to at least ``short`` (every one of them, plus one, if they cannot)."""
    if short <= 0:
        return 0
    for count, gain in enumerate(sorted(gains, reverse=True), start=1):
        if gain <= 0:
            break
        short -= gain
        if short <= 0:
            return count
    return len(gains) + 1


def koya_relaxed(
    games: list[Relaxed],
    s_lo: list[int],
    s_hi: list[int],
    costs: dict[int, int],
    line: int,
    lowest: bool,
) -> int:
    """The least a player's Koya must move from its cheap bound, over the completions the relaxation allows.

    ``costs`` are the opponents on the line in some completions but not in
    all, each with what it moves (the points certainly scored against them
    for the lowest KS, the points possibly scored for the highest); ``line``
    is the lowest score on the line.  **Lowest**: every costed opponent
    below the line (``line - 1``) while the others take what they can; the
    units that do not fit lift some of them onto it, at least ``short`` in
    all (their room above the cap), so the KS rises by at least the
    cheapest such set (:func:`cheapest`).  **Highest**: every costed
    opponent onto the line; the needs the flow cannot meet leave some below
    it, together at least the unmet units (their needs), so the KS falls by
    at least the cheapest such set.
    """
    n = len(s_lo)
    items: list[tuple[int, int]] = []
    if lowest:
        room = [s_hi[j] - s_lo[j] for j in range(n)]
        for j, cost in costs.items():
            room[j] = line - 1 - s_lo[j]
            items.append((cost, s_hi[j] - (line - 1)))
        short = Flow(games, [g.least for g in games], room, n).short
    else:
        need = [0] * n
        for j, cost in costs.items():
            need[j] = line - s_lo[j]
            items.append((cost, need[j]))
        most = [g.most for g in games]
        short = sum(need) - (sum(most) - Flow(games, most, need, n).short)
    return cheapest(short, items)


def cheapest(short: int, items: Sequence[tuple[int, int]]) -> int:
    """A lower bound of the least total cost of ``items`` (cost, size) whose sizes add up to at least ``short``.

    The fractional relaxation (cheapest per unit first, a fraction of the
    last), rounded up; every item's cost when all of them together fall short.
    """
    if short <= 0:
        return 0
    total = 0
    for cost, size in sorted(items, key=lambda item: item[0] / item[1]):
        if size >= short:
            return total + -(-cost * short // size)
        total += cost
        short -= size
    return total


class KoyaMost:
    """The highest Koya over which opponents end on the line: a branch and bound over sets of them.

    A player's Koya is the sum, over the opponents on the line, of what the
    player scored against them.  For a set ``Q`` of *candidates* (opponents
    who may or may not reach the line, ``need[k]`` units short of it, worth
    ``weight[k]``: the most the player can score against them) all on the
    line, the Koya is at most ``weight(Q)`` less what the player must give
    them in their own games (*charged* games: each unit ``k`` takes there is
    a unit the player does not score, :func:`charged`).  Every other game
    routes its units for free, so a flow that meets ``Q``'s needs through
    the free games alone (``F0``) leaves at least ``need(Q) − F0(Q)`` units
    to come from charged games: ``V(Q) = weight(Q) − need(Q) + F0(Q)``, and
    ``Q`` is possible only if the flow with the charged games too meets every
    need.  Any outcome with the opponents ``Q`` on the line (and maybe more)
    gives at most ``V(Q)``, so the highest Koya is at most ``max V(Q)`` over
    the possible ``Q`` — and equal to it under 1-½-0 scoring, where every
    split of a game's units is an outcome (the flow of the best ``Q`` is then
    a scenario that reaches it).

    ``F0`` is a polymatroid rank (the most a flow brings to a set of sinks
    is submodular in the set), so the cost ``need − F0`` is supermodular:
    what a candidate adds to a set is at most what it adds to any subset.
    A node of the search (candidates in, out, open) is therefore bounded by
    its own value plus each open candidate's gain over the node's set (none
    when adding it alone is impossible or gains nothing: such a candidate is
    left out, which loses no better set).  Branching on the largest gain,
    in first.  Each node costs two flows per open candidate (copies, lifted), counted as that many nodes.
    """

    __slots__ = ("best", "best_set", "limit", "need", "nodes", "open_bound", "weight")

    def __init__(self, need: list[int], weight: list[int], limit: int) -> None:
        self.need = need
        self.weight = weight
        self.limit = limit
        self.nodes = 0
        self.best = 0
        self.best_set: list[int] = []
        #: the highest bound of a subtree left unsearched when the budget ran out (-1: none)
        self.open_bound = -1

    def search(self, free: Flow, full: Flow, candidates: list[int]) -> int:
        """The highest ``V(Q)`` (a sound bound of the Koya over the candidates; :attr:`best_set` reaches it, exact
        when no budget ran out: :attr:`open_bound` is then -1).

        ``free`` and ``full`` are the flows of the empty set (no room for anyone) without and with the charged
        games' units.
        """
        self._node(free, full, candidates, [], 0, 1 << 60, None)
        return max(self.best, self.open_bound)

    def _gains(self, free: Flow, full: Flow, open_: list[int]) -> list[tuple[int, int, Flow, Flow]]:
        need = self.need
        gains: list[tuple[int, int, Flow, Flow]] = []
        for x in open_:
            with_charged = full.copy()
            before = with_charged.short
            with_charged.lift(x, need[x])
            if before - with_charged.short < need[x]:
                continue  # x cannot reach the line beside the set: every set holding the node's does without it
            alone = free.copy()
            before = alone.short
            alone.lift(x, need[x])
            gain = self.weight[x] - need[x] + before - alone.short
            if gain > 0:
                gains.append((gain, x, alone, with_charged))
        return gains

    def _node(
        self,
        free: Flow,
        full: Flow,
        open_: list[int],
        chosen: list[int],
        value: int,
        bound: int,
        known: list[tuple[int, int, Flow, Flow]] | None,
    ) -> None:
        if value > self.best:
            self.best = value
            self.best_set = chosen.copy()
        if bound <= self.best:
            return
        self.nodes += 1 + 2 * len(open_)  # a node is two flows per open candidate: each costs what a search node does
        if self.nodes > self.limit:
            if bound > self.open_bound:
                self.open_bound = bound
            return
        gains = known if known is not None else self._gains(free, full, open_)
        total = value
        for gain, _, _, _ in gains:
            total += gain
        if total < bound:
            bound = total
        if bound <= self.best or not gains:
            return
        top = 0
        for k in range(1, len(gains)):
            if gains[k][0] > gains[top][0]:
                top = k
        gain, x, alone, with_charged = gains[top]
        rest = [g for k, g in enumerate(gains) if k != top]
        chosen.append(x)
        self._node(alone, with_charged, [g[1] for g in rest], chosen, value + gain, bound, None)
        chosen.pop()
        # without x: the others' gains over the same set are unchanged
        self._node(free, full, [g[1] for g in rest], chosen, value, bound - gain, rest)


def charged(options: Sequence[tuple[int, int, int, int]], side: int) -> bool:
    """Whether every unit the opponent (the other side than ``side``) takes in this game above their lowest costs
    the player on ``side`` at least a unit below their highest (true of 1-½-0, 3-1-0 and the like)."""
    other = 1 - side
    top = max(o[side] for o in options)
    low = min(o[other] for o in options)
    return all(top - o[side] >= o[other] - low for o in options)


class KoyaLeast:
    """The lowest Koya over which opponents stay below the line: a branch and bound over sets of them.

    The player scores at least ``weight[k]`` (their lowest) against every
    opponent who may reach the line; a set ``R`` of *candidates* (opponents
    who may stay below it, at most ``cap[k]`` units above their lows) held
    below the line at once saves ``weight(R)``.  ``R`` is possible only if
    the games' least units can all be routed with each of ``R`` under their
    cap (the others take what their games give).  The lowest Koya is at
    least the total less the heaviest possible ``R`` — and equal to it under
    1-½-0, where the flow of that ``R`` is a scenario (the player losing to
    everyone else) that reaches it.

    A node (candidates in, open) is bounded by the weight of all of them less
    what the flow's shortfall with all of them capped costs at least: freeing
    one lets the flow grow by at most ``lift[k]``
    (:func:`cheapest`).  Branching on the heaviest open candidate, in first.
    """

    __slots__ = ("best", "best_set", "cap", "games", "lift", "limit", "n", "nodes", "open_bound", "room", "supply")

    def __init__(
        self,
        games: list[Relaxed],
        supply: list[int],
        room: list[int],
        cap: list[int],
        lift: list[int],
        limit: int,
    ) -> None:
        self.games = games
        self.supply = supply
        self.room = room
        self.cap = cap
        self.lift = lift
        self.n = len(room)
        self.limit = limit
        self.nodes = 0
        self.best = -1
        self.best_set: list[int] = []
        #: the highest bound of a subtree left unsearched when the budget ran out (-1: none)
        self.open_bound = -1

    def search(self, candidates: list[int], weight: list[int]) -> int:
        """The heaviest possible set's weight, or a sound bound of it if the budget ran out (:attr:`open_bound`
        then not -1); :attr:`best_set` is the heaviest found."""
        self._node([], 0, candidates, weight, 1 << 60)
        return max(self.best, self.open_bound)

    def _short(self, capped: list[int]) -> int:
        room = self.room.copy()
        for k in capped:
            room[k] = self.cap[k]
        return Flow(self.games, self.supply, room, self.n).short

    def _node(self, chosen: list[int], value: int, open_: list[int], weight: list[int], bound: int) -> None:
        if bound <= self.best:
            return
        self.nodes += 2  # two flows (this node's and its first child's): each costs what a search node does
        if self.nodes > self.limit:
            if bound > self.open_bound:
                self.open_bound = bound
            return
        total = value
        for x in open_:
            total += weight[x]
        short = self._short([*chosen, *open_])
        if short == 0:  # all of them at once
            if total > self.best:
                self.best = total
                self.best_set = [*chosen, *open_]
            return
        tight = total - cheapest(short, [(weight[x], self.lift[x]) for x in open_])
        if tight < bound:
            bound = tight
        if bound <= self.best:
            return
        if value > self.best:
            self.best = value
            self.best_set = chosen.copy()
        top = 0
        for k in range(1, len(open_)):
            if weight[open_[k]] > weight[open_[top]]:
                top = k
        x = open_[top]
        rest = [y for y in open_ if y != x]
        chosen.append(x)
        if self._short(chosen) == 0:
            self._node(chosen, value + weight[x], rest, weight, bound)
        chosen.pop()
        self._node(chosen, value, rest, weight, bound)
