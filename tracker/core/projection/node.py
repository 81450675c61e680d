"""One node of the search: the undecided games decided so far, and sound bounds over its completions.

How this works
--------------

A :class:`Node` holds, for the games decided so far (in place: :meth:`Node.apply`
and :meth:`Node.undo`), intervals of what the others can still give: each
player's final score (``s_lo``/``s_hi``), the points between each pair
(``p_lo``/``p_hi``) and the wins (``w_lo``/``w_hi``); the tie-break rules read
them through :attr:`Node.view` (a :class:`~tracker.core.tiebreaks.rule.Span`).

Bounds on one player's objective come in two strengths:

* :meth:`Node.bounds`, cheap (O(n) plus the tie-break differences), from the
  intervals alone.  **Rank**: ``j`` is certainly ahead of ``i`` when even
  ``j``'s lowest score beats ``i``'s highest, certainly not ahead when the
  reverse holds; two players whose scores are settled and equal go through
  the tie-break order (each criterion's :attr:`~tracker.core.tiebreaks.rule.Rule.difference`
  as an interval; DE ranked in every group the rivals still open can form
  while those are few and the games inside them decided, bounded over all of
  them otherwise; the verdicts of a listed group are remembered).
  **KS**: the points certainly scored against opponents certainly on the
  line, and the most that can be scored against those who can still be.
  **Lead** (the best score of the others minus the player's own): from the
  lows and highs.
* :meth:`Node.tighten`, from the points relaxation (:mod:`~tracker.core.projection.flow`),
  for the rank once the player's own score is settled (the search settles it
  first): the rivals who must end above it (best rank) or cannot all reach it
  (worst rank) *together*, for the lowest lead, whether the others can
  all stay below a score, and for KS, the opponents who cannot all end on
  the player's side of the line at once (:func:`~tracker.core.projection.flow.koya_relaxed`).
  For the ranks and the lead it also returns a *guide*: an outcome per
  undecided game from the relaxation's split, which the search tries first.
"""

from __future__ import annotations

from typing import Final as Constant
from typing import Literal

from tracker.core.line import qualifies
from tracker.core.projection.flow import (
    Flow,
    KoyaLeast,
    KoyaMost,
    Relaxed,
    charged,
    fewest,
    koya_relaxed,
    relax,
)
from tracker.core.projection.model import Model
from tracker.core.tiebreaks.rule import LEVEL, OPEN, Rule, Span

Objective = Literal["rank_best", "rank_worst", "ks_min", "ks_max", "lead_min", "lead_max", "lead_zero"]
#: Option of a game: units to white, units to black, a win for white, a win for black.
Opt = tuple[int, int, int, int]
_FAR: Constant = 1 << 60
#: Possible members of a tied group up to which every group they can form is ranked exactly (Node.ties).
_LISTED: Constant = 3
#: Verdicts of listed groups a node remembers (they repeat down a subtree: the games between the members stay decided).
_REMEMBERED: Constant = 20_000
#: A rival level with the player on a kind decided inside groups, in every group (the next criterion decides).
_TIED: Constant = 2


class Node:
    """The search's state over one model (see the module docstring); mutated in place, not thread-safe."""

    def __init__(self, m: Model) -> None:
        n = m.n
        self.m = m
        self.n = n
        self.games = m.undecided
        self.k = len(self.games)
        self.ends = [(g.white, g.black) for g in self.games]
        self.opts: list[tuple[Opt, ...]] = [
            tuple((o.white, o.black, o.white_won, o.black_won) for o in g.options) for g in self.games
        ]
        # per game: lowest and highest units for white and black, most wins for each
        self.span = [
            (
                min(o[0] for o in opts),
                max(o[0] for o in opts),
                min(o[1] for o in opts),
                max(o[1] for o in opts),
                max(o[2] for o in opts),
                max(o[3] for o in opts),
            )
            for opts in self.opts
        ]
        self.relaxed: list[Relaxed] = [relax(e, o) for e, o in zip(self.ends, self.opts, strict=True)]
        self.s_lo = list(m.score)
        self.s_hi = list(m.score)
        self.p_lo = [row.copy() for row in m.points]
        self.p_hi = [row.copy() for row in m.points]
        self.w_lo = list(m.wins)
        self.w_hi = list(m.wins)
        self.open = [0] * n
        self.of_player: list[list[int]] = [[] for _ in range(n)]
        for g, ((a, b), (la, ha, lb, hb, xa, xb)) in enumerate(zip(self.ends, self.span, strict=True)):
            self.s_lo[a] += la
            self.s_hi[a] += ha
            self.s_lo[b] += lb
            self.s_hi[b] += hb
            self.p_lo[a][b] += la
            self.p_hi[a][b] += ha
            self.p_lo[b][a] += lb
            self.p_hi[b][a] += hb
            self.w_hi[a] += xa
            self.w_hi[b] += xb
            self.open[a] += 1
            self.open[b] += 1
            self.of_player[a].append(g)
            self.of_player[b].append(g)
        self.assign = [-1] * self.k
        self.free = self.k
        self.thr0 = m.thresholds[0]
        self.order = m.order
        #: the criteria after the score (the first), which the ties read at every node
        self.after_score = m.order[1:]
        #: the rules' view of the node: the same lists, mutated in place by apply and undo
        self.view = Span(m.frame, self.s_lo, self.s_hi, self.p_lo, self.p_hi, self.w_lo, self.w_hi)
        #: :meth:`_listed`'s verdicts by what they read: the groups, and the points between their members
        self._verdicts: dict[tuple[object, ...], dict[int, int]] = {}

    # -- moves ---------------------------------------------------------------------

    def apply(self, g: int, o: int) -> None:
        """Decide undecided game ``g`` with outcome ``o`` (it must be undecided)."""
        a, b = self.ends[g]
        ua, ub, wa, wb = self.opts[g][o]
        la, ha, lb, hb, xa, xb = self.span[g]
        self.s_lo[a] += ua - la
        self.s_hi[a] += ua - ha
        self.s_lo[b] += ub - lb
        self.s_hi[b] += ub - hb
        self.p_lo[a][b] += ua - la
        self.p_hi[a][b] += ua - ha
        self.p_lo[b][a] += ub - lb
        self.p_hi[b][a] += ub - hb
        self.w_lo[a] += wa
        self.w_hi[a] += wa - xa
        self.w_lo[b] += wb
        self.w_hi[b] += wb - xb
        self.open[a] -= 1
        self.open[b] -= 1
        self.assign[g] = o
        self.free -= 1

    def undo(self, g: int) -> None:
        """Make decided game ``g`` undecided again."""
        o = self.assign[g]
        a, b = self.ends[g]
        ua, ub, wa, wb = self.opts[g][o]
        la, ha, lb, hb, xa, xb = self.span[g]
        self.s_lo[a] -= ua - la
        self.s_hi[a] -= ua - ha
        self.s_lo[b] -= ub - lb
        self.s_hi[b] -= ub - hb
        self.p_lo[a][b] -= ua - la
        self.p_hi[a][b] -= ua - ha
        self.p_lo[b][a] -= ub - lb
        self.p_hi[b][a] -= ub - hb
        self.w_lo[a] -= wa
        self.w_hi[a] -= wa - xa
        self.w_lo[b] -= wb
        self.w_hi[b] -= wb - xb
        self.open[a] += 1
        self.open[b] += 1
        self.assign[g] = -1
        self.free += 1

    def own_outcome(self, g: int, i: int, best: bool) -> int:
        """The outcome of ``g`` (a game of ``i``) that gives ``i`` the most units (``best``) or the fewest."""
        side = 0 if self.ends[g][0] == i else 1
        units = [opt[side] for opt in self.opts[g]]
        return units.index(max(units) if best else min(units))

    # -- cheap bounds ----------------------------------------------------------------

    def rank_bounds(self, i: int, weight: list[int] | None, side: dict[int, int] | None = None) -> tuple[int, int]:
        """(best, worst) rank of ``i`` over the completions of the node.

        Adds to ``weight`` the players whose games can still change the
        answer; fills ``side`` (when ``i``'s score is settled) with the
        :meth:`ties` of every rival who can still finish level with ``i``.
        """
        n = self.n
        s_lo, s_hi = self.s_lo, self.s_hi
        lo_i, hi_i = s_lo[i], s_hi[i]
        ahead = behind = 0
        if lo_i != hi_i:
            for j in range(n):
                if j == i:
                    continue
                if s_lo[j] > hi_i:
                    ahead += 1
                elif s_hi[j] < lo_i:
                    behind += 1
                elif weight is not None:
                    weight[j] += 4
                    weight[i] += 4
            return 1 + ahead, n - behind
        score = lo_i
        level: list[int] = []  # rivals who can finish on i's score
        for j in range(n):
            if j == i:
                continue
            if s_lo[j] > score:
                ahead += 1
            elif s_hi[j] < score:
                behind += 1
            else:
                level.append(j)
        if level:
            found = self.ties(i, level, weight)
            for j in level:
                c = found[j]
                if c > 0 and s_lo[j] == score:
                    ahead += 1
                elif c < 0 and s_hi[j] == score:
                    behind += 1
                elif weight is not None and s_lo[j] != s_hi[j]:
                    # fail first: a rival already at i's score at one end of their interval decides at once
                    weight[j] += 12 if s_lo[j] == score or s_hi[j] == score else 4
                    weight[i] += 4
            if side is not None:
                side.update(found)
        return 1 + ahead, n - behind

    def ties(self, i: int, level: list[int], weight: list[int] | None) -> dict[int, int]:
        """For each rival of ``level`` (who can finish on ``i``'s settled score): 1 if ahead of ``i`` should they finish
        level, -1 if not, 0 if that is still open.

        Each criterion after the score in turn: a rule with a column compares
        the interval of each difference (:attr:`Rule.difference`); a rule
        decided inside groups ranks every group the rivals still open could
        form, when there are few (:meth:`_listed`: a rival's verdict can depend
        on who else finishes level, which no bound on one pair sees), and
        otherwise compares its first split over all of them
        (:attr:`Rule.group_difference`).  Equal on everything: a shared rank,
        not ahead.
        """
        s_lo, s_hi = self.s_lo, self.s_hi
        side: dict[int, int] = {}
        group = level
        unknown: list[int] = []  # open on some criterion: may still be in i's group at a later one
        for tb, rule in self.after_score:  # the first criterion is the score: level by assumption
            if not group:
                break
            kept: list[int] = []
            if rule.final_places is not None:
                assert rule.group_difference is not None  # the model admits projectable rules only
                sure: list[int] = []
                maybe: list[int] = unknown.copy()
                for y in group:
                    if s_lo[y] == s_hi[y]:
                        sure.append(y)
                    else:
                        maybe.append(y)
                listed = self._listed(rule, i, group, sure, maybe)
                if listed is not None:
                    for j in group:
                        verdict = listed[j]
                        if verdict == _TIED:
                            kept.append(j)
                        else:
                            side[j] = verdict
                            if verdict == 0:
                                unknown.append(j)
                else:
                    verdicts = rule.group_difference(self.view, i, group, sure, maybe)
                    for k in range(len(group)):
                        j = group[k]
                        verdict = verdicts[k]
                        if verdict == LEVEL:
                            kept.append(j)
                        else:  # AHEAD 1, BEHIND -1, OPEN 0: the side itself
                            side[j] = verdict
                            if verdict == OPEN:
                                unknown.append(j)
            else:
                assert rule.difference is not None  # the model admits projectable rules only
                for j in group:
                    lo, hi = rule.difference(self.view, tb, j, i, weight)
                    if lo > 0:
                        side[j] = 1
                    elif hi < 0:
                        side[j] = -1
                    elif lo == hi == 0:
                        kept.append(j)
                    else:
                        side[j] = 0
                        unknown.append(j)
            group = kept
        for j in group:
            side[j] = -1  # equal on everything: a shared rank, not ahead
        return side

    def _listed(self, rule: Rule, i: int, group: list[int], sure: list[int], maybe: list[int]) -> dict[int, int] | None:
        """Each rival of ``group``'s verdict on a kind decided inside groups, over every group ``i`` can be tied in.

        The groups are ``i``, every rival of ``sure`` and any of ``maybe``; each
        is ranked exactly (:attr:`Rule.final_places`) when every game between
        its possible members is decided.  A verdict is 1 (ahead of ``i`` in
        every such group holding the rival), -1 (behind in every one),
        ``_TIED`` (level in every one: the next criterion decides) or 0
        (it depends on the group).  ``None`` when there are too many groups to
        list or a game between possible members is open.
        """
        if len(maybe) > _LISTED:
            return None
        assert rule.final_places is not None
        members = [i, *sure, *maybe]
        p_lo, p_hi = self.p_lo, self.p_hi
        points: list[int] = []  # what the ranking of any of these groups reads
        for x in members:
            row_lo, row_hi = p_lo[x], p_hi[x]
            for y in members:
                if row_lo[y] != row_hi[y]:
                    return None
                points.append(row_lo[y])
        key = (rule.kind, i, *group, -1, *sure, -1, *maybe, -1, *points)
        verdicts = self._verdicts.get(key)
        if verdicts is not None:
            return verdicts
        if len(self._verdicts) >= _REMEMBERED:
            self._verdicts.clear()
        verdicts = self._verdicts[key] = {}
        settled = self.view.settled()
        for mask in range(1 << len(maybe)):
            places = rule.final_places(settled, [i, *sure, *(y for b, y in enumerate(maybe) if mask >> b & 1)])
            mine = places[i]
            for j in group:
                place = places.get(j)
                if place is None:
                    continue
                verdict = 1 if place < mine else -1 if place > mine else _TIED
                known = verdicts.get(j, verdict)
                verdicts[j] = verdict if known == verdict else 0
        return verdicts

    def ks_bounds(self, i: int, weight: list[int] | None) -> tuple[int, int]:
        """(lowest, highest) plain KS of ``i`` over the completions of the node."""
        thr = self.thr0
        lo = hi = 0
        s_lo, s_hi = self.s_lo, self.s_hi
        row_lo, row_hi = self.p_lo[i], self.p_hi[i]
        for k in range(self.n):
            if row_hi[k] == 0:
                continue
            if qualifies(s_lo[k], thr):
                lo += row_lo[k]
                hi += row_hi[k]
            elif qualifies(s_hi[k], thr):
                hi += row_hi[k]
                if weight is not None:
                    weight[k] += 2
            if weight is not None and row_lo[k] != row_hi[k]:
                weight[k] += 1
                weight[i] += 1
        return lo, hi

    def lead_bounds(self, i: int, weight: list[int] | None) -> tuple[int, int]:
        """(lowest, highest) lead over ``i`` (best score of the others minus ``i``'s)."""
        s_lo, s_hi = self.s_lo, self.s_hi
        top_lo = max(s_lo[j] for j in range(self.n) if j != i)
        top_hi = max(s_hi[j] for j in range(self.n) if j != i)
        if weight is not None:
            weight[i] += 4
            for j in range(self.n):
                if j != i and s_hi[j] >= top_lo and s_lo[j] != s_hi[j]:
                    weight[j] += 2
        return top_lo - s_hi[i], top_hi - s_lo[i]

    def bounds(
        self, objective: Objective, i: int, weight: list[int] | None = None, side: dict[int, int] | None = None
    ) -> tuple[int, int]:
        """(optimistic, pessimistic) bound of the minimised quantity ``sign × objective``.

        ``weight`` and ``side`` as :meth:`rank_bounds` fills them.
        """
        if objective == "rank_best":
            return self.rank_bounds(i, weight, side)
        if objective == "rank_worst":
            best, worst = self.rank_bounds(i, weight, side)
            return -worst, -best
        if objective == "ks_min" or objective == "ks_max":
            lo, hi = self.ks_bounds(i, weight)
            return (lo, hi) if objective == "ks_min" else (-hi, -lo)
        lo, hi = self.lead_bounds(i, weight)
        if objective == "lead_min":
            return lo, hi
        if objective == "lead_max":
            return -hi, -lo
        return (0 if lo <= 0 <= hi else min(abs(lo), abs(hi))), max(abs(lo), abs(hi))

    # -- the relaxation ------------------------------------------------------------------

    def tighten(
        self, objective: Objective, i: int, bound: int, beat: int, side: dict[int, int]
    ) -> tuple[int, Guide | None]:
        """A sound optimistic bound of ``sign × objective`` from the points relaxation, and a guide.

        ``bound`` is the cheap one (:meth:`bounds`), ``side`` the ties it
        found; ``beat`` the value to improve on (the incumbent: the lowest-lead
        test asks only whether it can be beaten).  Returns ``(bound, guide)``,
        the bound unchanged (and no guide) for objectives the relaxation does
        not cover or while ``i``'s own score is open.
        """
        s_lo, s_hi = self.s_lo, self.s_hi
        if objective == "ks_min" or objective == "ks_max":
            # the opponents who may or may not end on the line cannot all go the player's way at once
            thr, row = self.thr0, self.p_lo[i] if objective == "ks_min" else self.p_hi[i]
            costs = {
                k: row[k] for k in range(self.n) if row[k] and qualifies(s_hi[k], thr) and not qualifies(s_lo[k], thr)
            }
            if not costs or self.free == 0:
                return bound, None
            games = [self.relaxed[g] for g in range(self.k) if self.assign[g] == -1]
            return bound + koya_relaxed(games, s_lo, s_hi, costs, (thr + 1) // 2, objective == "ks_min"), None
        if s_lo[i] != s_hi[i] or self.free == 0:
            return bound, None
        score = s_lo[i]
        n = self.n
        free = [g for g in range(self.k) if self.assign[g] == -1]
        games = [self.relaxed[g] for g in free]
        room = [s_hi[j] - s_lo[j] for j in range(n)]
        if objective == "rank_best":
            # not ahead of i: at most i's score, or below it for a rival who would be ahead on the tie-breaks;
            # the units that do not fit go to rivals above their cap
            caps = self.caps(i, side)
            if not caps:
                return bound, None
            held = {}
            for j, cap in caps.items():
                held[j] = s_hi[j] - cap
                room[j] = cap - s_lo[j]
            flow = Flow(games, [r.least for r in games], room, n)
            tight = bound + fewest(flow.short, list(held.values()))
            if flow.short:  # the guide: lift the rivals held most
                for j in sorted(held, key=held.__getitem__, reverse=True):
                    if not flow.short:
                        break
                    flow.lift(j, held[j])
            return tight, Guide(self, free, flow)
        if objective == "rank_worst":
            # ahead of i: at least i's score, or above it for a rival who would be behind on the tie-breaks
            needs = self.needs(i, side)
            if not needs:
                return bound, None
            need = [0] * n
            for j, level in needs.items():
                need[j] = level - s_lo[j]
            most = [r.most for r in games]
            flow = Flow(games, most, need, n)
            wanted = [level - s_lo[j] for j, level in needs.items()]
            unmet = sum(wanted) - (sum(most) - flow.short)
            return bound + fewest(unmet, wanted), Guide(self, free, flow)
        if objective == "lead_min":
            # can every other player stay at or below i's score + beat - 1?
            top = score + beat - 1
            for j in range(n):
                if j != i:
                    if s_lo[j] > top:
                        return max(bound, beat), None
                    room[j] = min(room[j], top - s_lo[j])
            flow = Flow(games, [r.least for r in games], room, n)
            return (max(bound, beat) if flow.short else bound), Guide(self, free, flow)
        return bound, None

    def koya_most(self, i: int, limit: int) -> tuple[int, dict[int, int] | None, int]:
        """A sound upper bound of ``i``'s plain KS over the completions of the node, a guide towards it, the
        search nodes spent (:class:`~tracker.core.projection.flow.KoyaMost`, within ``limit`` of them).

        Under 1-½-0 scoring the bound is the highest KS itself when the search ran to its end, and the
        guide's scenario reaches it; otherwise the guide is a start.
        """
        n = self.n
        thr = self.thr0
        line = (thr + 1) // 2
        s_lo, s_hi, row = self.s_lo, self.s_hi, self.p_hi[i]
        sure = 0
        need = [0] * n
        weight = [0] * n
        candidates: list[int] = []
        for k in range(n):
            if k == i or row[k] == 0:
                continue
            if qualifies(s_lo[k], thr):
                sure += row[k]
            elif qualifies(s_hi[k], thr):
                need[k] = line - s_lo[k]
                weight[k] = row[k]
                candidates.append(k)
        free = [g for g in range(self.k) if self.assign[g] == -1]
        games = [self.relaxed[g] for g in free]
        supply = [r.most for r in games]
        owed: list[int] = []  # the games (flow indices) whose units to the opponent are charged to i
        for e in range(len(free)):
            a, b = self.ends[free[e]]
            against = (a == i and need[b] > 0) or (b == i and need[a] > 0)
            if against and charged(self.opts[free[e]], 0 if a == i else 1):
                owed.append(e)
                supply[e] = 0
        if not candidates:
            return sure, None, 0
        cheap = Flow(games, supply, [0] * n, n)
        full = cheap.copy()
        for e in owed:
            full.add(e, games[e].most)
        search = KoyaMost(need, weight, limit)
        bound = search.search(cheap, full, sorted(candidates, key=lambda k: -weight[k]))
        # the best set's flow: its needs through the free games first, then the charged ones (the fewest charged)
        room = [0] * n
        for k in search.best_set:
            room[k] = need[k]
        flow = Flow(games, supply, room, n)
        for e in owed:
            flow.add(e, games[e].most)
        guide: dict[int, int] = {}
        for e in range(len(free)):
            g = free[e]
            a, b = self.ends[g]
            la, _, lb, _, _, _ = self.span[g]
            want_a, want_b = flow.xa[e] + la, flow.xb[e] + lb
            mine = 0 if a == i else 1 if b == i else -1
            pick, best = -1, -1
            for o, opt in enumerate(self.opts[g]):
                if opt[0] >= want_a and opt[1] >= want_b:
                    # i's own games: the most for i; others: the first that meets both needs
                    value = opt[mine] if mine >= 0 else 0
                    if value > best:
                        pick, best = o, value
            guide[g] = pick if pick >= 0 else self.closest(g, flow.xa[e], flow.xb[e])
        return sure + bound, guide, search.nodes

    def koya_least(self, i: int, limit: int) -> tuple[int, dict[int, int] | None, int]:
        """A sound lower bound of ``i``'s plain KS over the completions of the node, a guide towards it, the
        search nodes spent (:class:`~tracker.core.projection.flow.KoyaLeast`, within ``limit`` of them).

        Under 1-½-0 scoring the bound is the lowest KS itself when the search ran to its end, and the
        guide's scenario reaches it.
        """
        n = self.n
        thr = self.thr0
        line = (thr + 1) // 2
        s_lo, s_hi, row = self.s_lo, self.s_hi, self.p_lo[i]
        total = 0
        weight = [0] * n
        cap = [0] * n
        lift = [0] * n
        candidates: list[int] = []
        for k in range(n):
            if k == i or not qualifies(s_hi[k], thr):
                continue
            total += row[k]
            if row[k] > 0 and not qualifies(s_lo[k], thr):
                weight[k] = row[k]
                cap[k] = line - 1 - s_lo[k]
                lift[k] = s_hi[k] - line + 1
                candidates.append(k)
        if not candidates:
            return total, None, 0
        free = [g for g in range(self.k) if self.assign[g] == -1]
        games = [self.relaxed[g] for g in free]
        supply = [r.least for r in games]
        room = [s_hi[j] - s_lo[j] for j in range(n)]
        search = KoyaLeast(games, supply, room, cap, lift, limit)
        saved = search.search(sorted(candidates, key=lambda k: -weight[k]), weight)
        held = set(search.best_set)
        room = room.copy()
        for k in held:
            room[k] = cap[k]
        flow = Flow(games, supply, room, n)
        guide: dict[int, int] = {}
        for e in range(len(free)):
            g = free[e]
            a, b = self.ends[g]
            other = b if a == i else a if b == i else -1
            if other >= 0 and other not in held:  # i loses to everyone who may reach the line
                guide[g] = self.own_outcome(g, i, False)
            else:
                guide[g] = self.closest(g, flow.xa[e], flow.xb[e])
        return total - saved, guide, search.nodes

    def starts(self, objective: Objective, i: int, side: dict[int, int]) -> list[dict[int, int]]:
        """Scenarios to start a rank query from (``i``'s score settled): the rivals on the right side of ``i``'s
        score where the tie-breaks ask for it, and strictly on the right side."""
        score = self.s_lo[i]
        s_lo, s_hi = self.s_lo, self.s_hi
        if objective == "rank_best":
            strict = {j: score - 1 for j in range(self.n) if j != i and s_lo[j] < score <= s_hi[j]}
            return [self.levelled(i, self.caps(i, side), True), self.levelled(i, strict, True)]
        # the rivals' needs first, then what is left over to anyone
        strict = {j: score + 1 for j in range(self.n) if j != i and s_lo[j] <= score < s_hi[j]}
        return [self.levelled(i, self.needs(i, side), False), self.levelled(i, strict, False)]

    def caps(self, i: int, side: dict[int, int]) -> dict[int, int]:
        """The score each rival must stay at or below not to be ahead of ``i``, where their games can pass it."""
        score = self.s_lo[i]
        caps = {}
        for j in range(self.n):
            if j == i:
                continue
            cap = score - 1 if side.get(j) == 1 else score
            if self.s_lo[j] <= cap < self.s_hi[j]:
                caps[j] = cap
        return caps

    def needs(self, i: int, side: dict[int, int]) -> dict[int, int]:
        """The score each rival must reach to be ahead of ``i``, where their games can get them there."""
        score = self.s_lo[i]
        needs = {}
        for j in range(self.n):
            if j == i:
                continue
            level = score + 1 if side.get(j) == -1 else score
            if self.s_lo[j] < level <= self.s_hi[j]:
                needs[j] = level
        return needs

    def levelled(self, i: int, levels: dict[int, int], best: bool) -> dict[int, int]:
        """A guide that keeps each rival ``j`` of ``levels`` at most (``best``) or at least at score ``levels[j]``.

        For the best rank, where the units do not fit under the caps, the
        rivals held back most are lifted to their highest score.  ``i``'s own
        score must be settled.
        """
        n = self.n
        s_lo, s_hi = self.s_lo, self.s_hi
        free = [g for g in range(self.k) if self.assign[g] == -1]
        games = [self.relaxed[g] for g in free]
        if best:
            room = [s_hi[j] - s_lo[j] for j in range(n)]
            held = {}
            for j, cap in levels.items():
                held[j] = room[j] - max(0, min(room[j], cap - s_lo[j]))
                room[j] -= held[j]
            flow = Flow(games, [r.least for r in games], room, n)
            if flow.short:
                for j in sorted(levels, key=lambda j: -held[j]):
                    if not flow.short:
                        break
                    flow.lift(j, held[j])
        else:
            need = [0] * n
            for j, level in levels.items():
                need[j] = max(0, min(level, s_hi[j]) - s_lo[j])
            flow = Flow(games, [r.least for r in games], need, n)
            self._spread(flow)
        return self._guide(free, flow)

    def _spread(self, flow: Flow) -> None:
        """Route what a demand flow left over to anyone (the demands stay met: a path never lowers an intake).

        The games' own caps bound what a player can take, so the room given is simply all they could.
        """
        for j in range(self.n):
            flow.lift(j, self.s_hi[j] - self.s_lo[j])

    def _guide(self, free: list[int], flow: Flow) -> dict[int, int]:
        """Per free game, the outcome closest to the flow's split."""
        return Guide(self, free, flow).outcomes()

    def closest(self, g: int, to_white: int, to_black: int) -> int:
        """The outcome of game ``g`` closest to ``to_white``/``to_black`` units above the lows (the first on a tie)."""
        la, _, lb, _, _, _ = self.span[g]
        want_a, want_b = to_white + la, to_black + lb
        best, best_d = 0, 1 << 30
        for o, opt in enumerate(self.opts[g]):
            d = abs(opt[0] - want_a) + abs(opt[1] - want_b)
            if d < best_d:
                best, best_d = o, d
        return best


class Guide:
    """The relaxation's split of the free games of a node, read as outcomes."""

    __slots__ = ("flow", "free", "node")

    def __init__(self, node: Node, free: list[int], flow: Flow) -> None:
        self.node = node
        self.free = free
        self.flow = flow

    def pick(self, g: int) -> int:
        """The outcome of free game ``g`` closest to the split."""
        e = self.free.index(g)
        return self.node.closest(g, self.flow.xa[e], self.flow.xb[e])

    def outcomes(self) -> dict[int, int]:
        """Every free game's closest outcome."""
        xa, xb, closest = self.flow.xa, self.flow.xb, self.node.closest
        return {g: closest(g, xa[e], xb[e]) for e, g in enumerate(self.free)}
