"""Team projection: each team's best and worst final rank over the pending board games (issue 35).

What "rank" means
-----------------

A team's *score key* is the leading run of plain scores in the event's team order: its ``MPTS`` and
``GPTS`` codes before the first other code (``MPTS,GPTS,EDE,SB:MP`` → match points, then game points;
``MPTS,EDE,…`` → match points alone).  The deeper team tie-breaks (``EDE``, ``SB``, ``BBE`` …) are
**not** searched: a team tied with others on the key could end anywhere among them.  So, for a final
crosstable, with ``a`` teams strictly above the team on the key and ``e`` others equal to it:

* its **best rank** there is ``a + 1`` (every deeper tie broken its way — also its shared rank on the key);
* its **worst rank** there is ``a + e + 1`` (every deeper tie broken against it).

``rank_best`` is the least ``a + 1`` and ``rank_worst`` the greatest ``a + e + 1`` over every completion
of the pending board games.  Both are exact for that meaning and sound for the full order: the rank
:func:`~tracker.core.teams.standings.team_standings` gives any completion lies between them, since a team
above on the key is above in the full order and a team below on the key is below.

How the search works and why it is exact
----------------------------------------

The pending board games are the schedule's games of the rounds whose two players have nothing recorded
yet; they group into matches (round, two teams).  A match's effect on the standings is only the two
teams' match-point and game-point gains, so each match is reduced to its distinct **outcomes**: the
reachable ``(Δkey first, Δkey second)`` pairs (the key is linear in match and game points, packed into
one integer whose weights exceed every reachable spread), each with one board assignment that makes it.
A 4-board match under 1-½-0 has 9 (game points 0–4 in halves); the board-level product is never
enumerated, only a dynamic programme over the match's boards.

For a team ``X`` the objective — teams above ``X``'s final key ``K`` (best) or teams at least ``K``
(worst) — is monotone in every key: a higher ``K`` never puts a team above ``X``, a higher key of another
team never takes one away.  So of ``X``'s own match outcomes only those no other outcome dominates (better
for ``X`` and worse for its opponent) are tried — under 1-½-0 exactly one: ``X`` wins every board for its
best rank, loses every board for its worst.  With ``X``'s matches fixed, ``K`` is fixed and the objective
is a sum over the other teams, so the matches not involving ``X`` split into connected components (teams
linked by a pending match) solved independently: a depth-first branch and bound over the component's
match outcomes in round order, pruned by the teams certainly above ``K`` whatever their unassigned
matches give (best) or the teams that can still reach ``K`` (worst).  Once the matches still unassigned
are one per team (the last round), each is chosen on its own: its two teams' indicators depend on it
alone.  Every outcome of every match is either searched, dominated or pruned by a sound bound, so a
finished search is exact; its scenario is the board assignment that reached it.

One round before the end every component is one match: a 10-team, 4-board event is ``10 × 2`` queries
of a few dozen evaluations (milliseconds); two rounds before the end, the other teams' first-round
matches are searched and their last-round ones chosen one by one (about a tenth of a second).  Further
from the end a component can be too large; a query that exceeds its node budget reports the interval
bound instead (``1 +`` teams whose least key beats ``X``'s greatest, ``1 +`` teams whose greatest key
reaches ``X``'s least) with a scenario (``attained`` says what it reaches), flagged not exact.

Pending team byes are not projected (as individual byes are not: a free round not yet recorded adds
nothing); a withdrawn player's pending boards are forfeits (one outcome).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import lcm
from typing import Final, Literal

from tracker.core.crosstable import Tournament
from tracker.core.errors import ProjectionUnavailable
from tracker.core.events import GameResult
from tracker.core.projection.model import Option, options_of
from tracker.core.projection.result import Scenario, ScenarioGame
from tracker.core.teams.setup import TeamSetup
from tracker.core.teams.tiebreaks import parse_team_tiebreaks
from tracker.core.teams.view import team_view

#: Search nodes one team extreme may expand before it reports a bound.
QUERY_BUDGET: Final = 50_000

TeamExtreme = Literal["rank_best", "rank_worst"]
TEAM_EXTREMES: Final[tuple[TeamExtreme, ...]] = ("rank_best", "rank_worst")


@dataclass(frozen=True, slots=True)
class PendingBoard:
    """One pending board game: its round, the board (1-based, in the match), the players' start numbers,
    and the match's teams by number (``first`` has White on this board's side of the pairing list)."""

    round: int
    board: int
    white: int
    black: int
    white_team: int
    black_team: int


@dataclass(frozen=True, slots=True)
class TeamReached:
    """How one extreme is known: ``scenario`` (a result for every pending board game, in
    :attr:`TeamProjection.games` order) gives the team rank ``attained``; ``exact``: that is the extreme."""

    exact: bool
    attained: int
    scenario: Scenario


@dataclass(frozen=True, slots=True)
class TeamRankProjection:
    """One team's final rank range (see the module docstring for what a rank is)."""

    team: int
    name: str
    rank_best: int
    rank_worst: int
    reached: dict[TeamExtreme, TeamReached]

    @property
    def exact(self) -> bool:
        return all(r.exact for r in self.reached.values())


@dataclass(frozen=True, slots=True)
class TeamProjection:
    """Every team's range; ``key`` the codes ranked by (the order's leading ``MPTS``/``GPTS``)."""

    exact: bool
    key: tuple[str, ...]
    teams: tuple[TeamRankProjection, ...]
    games: tuple[PendingBoard, ...]

    @property
    def remaining(self) -> int:
        return len(self.games)


@dataclass(frozen=True, slots=True)
class _Match:
    """A pending match: team indices ``a`` < ``b``; ``outcomes`` distinct (Δkey a, Δkey b, board option
    indices by game index)."""

    a: int
    b: int
    outcomes: tuple[tuple[int, int, tuple[tuple[int, int], ...]], ...]

    def delta_range(self, team: int) -> tuple[int, int]:
        values = [o[0] if team == self.a else o[1] for o in self.outcomes]
        return min(values), max(values)


@dataclass(slots=True)
class _Model:
    n: int
    base: list[int]
    matches: list[_Match]
    games: list[PendingBoard]
    options: list[tuple[Option, ...]]
    specs: list[_Spec]
    points: _Points
    wm: int
    wg: int


# -- the model ------------------------------------------------------------------------


def pending_boards(t: Tournament, setup: TeamSetup) -> list[PendingBoard]:
    """The pending board games: the schedule's games whose players both have nothing in that round.

    Raises :class:`ProjectionUnavailable` when the event has pending matches and no schedule of every
    team round (a file or opening event that does not pair the rounds to come).
    """
    team_of = {s: k for k, team in enumerate(setup.teams) for s in team.players}
    place = {s: p for team in setup.teams for p, s in enumerate(team.players)}
    recorded = {r for entries in t.entries for r in entries}
    schedule = t.schedule or {}
    if any(r not in schedule and r not in recorded for r in range(1, setup.team_rounds() + 1)):
        raise ProjectionUnavailable("the team projection needs the board pairings of the rounds to come")
    found: list[tuple[int, int, int, int, int]] = []
    for r in sorted(schedule):
        for iw, ib in sorted(schedule[r]):  # the crosstable's schedule is by player index
            w, b = t.start_nos[iw], t.start_nos[ib]
            if w not in team_of or b not in team_of:
                continue
            if r in t.entries[iw] or r in t.entries[ib]:
                continue
            lower = min(team_of[w], team_of[b])
            first_player = w if team_of[w] == lower else b
            found.append((r, lower, place[first_player], w, b))
    found.sort()
    games: list[PendingBoard] = []
    board = 0
    for k, (r, lower, _, w, b) in enumerate(found):
        board = board + 1 if k and found[k - 1][:2] == (r, lower) else 1
        games.append(PendingBoard(r, board, w, b, setup.teams[team_of[w]].number, setup.teams[team_of[b]].number))
    return games


def _key_weights(codes: Sequence[str], spread: dict[str, int]) -> tuple[tuple[str, ...], dict[str, int]]:
    """The key's codes and each score's integer weight, the last code's 1 and each earlier one's above
    every reachable spread of the codes after it."""
    key: list[str] = []
    for tb in parse_team_tiebreaks(tuple(codes)):
        if tb.kind not in ("MPTS", "GPTS"):
            break
        if tb.kind not in key:
            key.append(tb.kind)
    weights: dict[str, int] = {"MPTS": 0, "GPTS": 0}
    w = 1
    below = 0
    for code in reversed(key):
        weights[code] = w
        below += spread[code] * w
        w = below + 1
    return tuple(key), weights


@dataclass(frozen=True, slots=True)
class _Spec:
    """A pending match before its outcomes: team indices ``a`` < ``b``, its pending games (indices into the
    model's games, with whether ``a`` has White), and what its recorded boards already gave."""

    a: int
    b: int
    boards: tuple[tuple[int, bool], ...]
    recorded_a: int
    recorded_b: int
    recorded_played: bool


#: (match points a, game points a, match points b, game points b, one board assignment), in integer units
_Row = tuple[int, int, int, int, tuple[tuple[int, int], ...]]


def _rows(spec: _Spec, options: list[tuple[Option, ...]], points: _Points) -> list[_Row]:
    """The match's reachable (match and game points of both sides), by a dynamic programme over its boards."""
    states: dict[tuple[int, int, bool], tuple[tuple[int, int], ...]] = {(0, 0, False): ()}
    for k, a_white in spec.boards:
        nxt: dict[tuple[int, int, bool], tuple[tuple[int, int], ...]] = {}
        for (ua, ub, played), chosen in states.items():
            for o, opt in enumerate(options[k]):
                da, db = (opt.white, opt.black) if a_white else (opt.black, opt.white)
                state = (ua + da, ub + db, played or opt.result in ("1-0", "1/2-1/2", "0-1"))
                nxt.setdefault(state, (*chosen, (k, o)))
        states = nxt
    rows = []
    for (ua, ub, played), chosen in states.items():
        ma, mb = points(spec.recorded_a + ua, spec.recorded_b + ub, spec.recorded_played or played)
        rows.append((ma, ua, mb, ub, chosen))
    return rows


def _weigh(spec: _Spec, rows: list[_Row], wm: int, wg: int) -> _Match:
    distinct: dict[tuple[int, int], tuple[tuple[int, int], ...]] = {}
    for ma, ua, mb, ub, chosen in rows:
        distinct.setdefault((ma * wm + ua * wg, mb * wm + ub * wg), chosen)
    return _Match(spec.a, spec.b, tuple((ka, kb, ch) for (ka, kb), ch in sorted(distinct.items())))


class _Points:
    """Match points in integer units (``unit`` per point) from the two sides' game points, as the team view
    scores a complete match: more wins; equal and above 0 draws; a loss with nothing played is ``unplayed``."""

    def __init__(self, setup: TeamSetup) -> None:
        s = setup.scoring
        self.unit = lcm(*(Fraction(x).denominator for x in (s.win, s.draw, s.loss, s.unplayed, s.pab_points)))
        self.win, self.draw, self.loss, self.unplayed = (
            int(x * self.unit) for x in (s.win, s.draw, s.loss, s.unplayed)
        )

    def __call__(self, ga: int, gb: int, played: bool) -> tuple[int, int]:
        lose = self.loss if played else self.unplayed
        if ga > gb:
            return self.win, lose
        if ga < gb:
            return lose, self.win
        if ga > 0 and gb > 0:
            return self.draw, self.draw
        return lose, lose


def _model(t: Tournament, setup: TeamSetup, codes: Sequence[str]) -> tuple[_Model, tuple[str, ...]]:
    view = team_view(t, setup)
    n = view.n
    den = t.units.denominator
    points = _Points(setup)
    number_index = {team.number: k for k, team in enumerate(setup.teams)}
    games = pending_boards(t, setup)
    options = [options_of(t, t.index[g.white], t.index[g.black], g.round) for g in games]
    by_match: dict[tuple[int, int, int], list[int]] = {}
    for k, g in enumerate(games):
        a, b = sorted((number_index[g.white_team], number_index[g.black_team]))
        by_match.setdefault((g.round, a, b), []).append(k)
    specs = []
    for (r, a, b), ks in sorted(by_match.items()):
        side_a, side_b = view.sides[a].get(r), view.sides[b].get(r)
        specs.append(
            _Spec(
                a,
                b,
                tuple((k, number_index[games[k].white_team] == a) for k in ks),
                int(side_a.gp * den) if side_a is not None else 0,
                int(side_b.gp * den) if side_b is not None else 0,
                any(side is not None and side.played for side in (side_a, side_b)),
            )
        )
    table = [_rows(spec, options, points) for spec in specs]
    mp0 = [int(x * points.unit) for x in view.mp]
    gp0 = [int(x * den) for x in view.gp]
    # the reachable spread of each score over all teams bounds the weights
    lo_mp, hi_mp, lo_gp, hi_gp = list(mp0), list(mp0), list(gp0), list(gp0)
    for spec, rows in zip(specs, table, strict=True):
        for team, mps, gps in (
            (spec.a, [r[0] for r in rows], [r[1] for r in rows]),
            (spec.b, [r[2] for r in rows], [r[3] for r in rows]),
        ):
            lo_mp[team] += min(mps)
            hi_mp[team] += max(mps)
            lo_gp[team] += min(gps)
            hi_gp[team] += max(gps)
    spread = {"MPTS": max(hi_mp) - min(lo_mp), "GPTS": max(hi_gp) - min(lo_gp)}
    key, weights = _key_weights(codes, spread)
    wm, wg = weights["MPTS"], weights["GPTS"]
    base = [mp0[k] * wm + gp0[k] * wg for k in range(n)]
    matches = [_weigh(spec, rows, wm, wg) for spec, rows in zip(specs, table, strict=True)]
    return _Model(n, base, matches, games, options, specs, points, wm, wg), key


def _fixed(model: _Model, k: int, o: int) -> _Model:
    """``model`` with pending game ``k`` given its ``o``-th result: its match's outcomes made again (the
    weights stay valid, a fixed game only narrows every spread)."""
    options = list(model.options)
    options[k] = (model.options[k][o],)
    matches = list(model.matches)
    for i, spec in enumerate(model.specs):
        if any(g == k for g, _ in spec.boards):
            matches[i] = _weigh(spec, _rows(spec, options, model.points), model.wm, model.wg)
    return dataclasses.replace(model, matches=matches, options=options)


# -- the search -----------------------------------------------------------------------


class _OutOfBudget(Exception):
    pass


@dataclass(slots=True)
class _Search:
    """One extreme of one team: ``ahead(key, K)`` is whether a team counts (best: above, worst: at least)."""

    model: _Model
    worst: bool
    budget: int
    nodes: int = 0

    def counts(self, key: int, target: int) -> bool:
        return key >= target if self.worst else key > target

    def better(self, a: int, b: int) -> bool:
        return a > b if self.worst else a < b

    def solve_component(self, matches: list[_Match], keys: list[int], target: int) -> tuple[int, list[int]]:
        """The best count over ``matches`` (their teams' keys start at ``keys``) and the outcome per match."""
        teams = sorted({m.a for m in matches} | {m.b for m in matches})
        lo = {k: 0 for k in teams}
        hi = {k: 0 for k in teams}
        for m in matches:
            for team in (m.a, m.b):
                dlo, dhi = m.delta_range(team)
                lo[team] += dlo
                hi[team] += dhi
        keys = list(keys)
        best_count: int | None = None
        best_choice: list[int] = []
        choice: list[int] = [0] * len(matches)

        def bound() -> int:
            if self.worst:
                return sum(1 for k in teams if self.counts(keys[k] + hi[k], target))
            return sum(1 for k in teams if self.counts(keys[k] + lo[k], target))

        # from which match on the rest are one match per team: those are solved one by one (independent)
        tail = len(matches)
        seen: set[int] = set()
        while tail > 0 and not {matches[tail - 1].a, matches[tail - 1].b} & seen:
            tail -= 1
            seen |= {matches[tail].a, matches[tail].b}

        def visit(i: int) -> None:
            nonlocal best_count, best_choice
            self.nodes += 1
            if self.nodes > self.budget:
                raise _OutOfBudget
            b = bound()
            if best_count is not None and not self.better(b, best_count):
                return
            if i >= tail:
                count = sum(
                    1 for k in teams if not any(k in (m.a, m.b) for m in matches[i:]) and self.counts(keys[k], target)
                )
                for j in range(i, len(matches)):
                    m = matches[j]
                    self.nodes += 1
                    scored = [
                        (self.counts(keys[m.a] + ka, target) + self.counts(keys[m.b] + kb, target), o)
                        for o, (ka, kb, _) in enumerate(m.outcomes)
                    ]
                    c, o = max(scored) if self.worst else min(scored)
                    count += c
                    choice[j] = o
                if best_count is None or self.better(count, best_count):
                    best_count, best_choice = count, list(choice)
                return
            m = matches[i]
            lo_a, hi_a = m.delta_range(m.a)
            lo_b, hi_b = m.delta_range(m.b)
            lo[m.a] -= lo_a
            hi[m.a] -= hi_a
            lo[m.b] -= lo_b
            hi[m.b] -= hi_b
            order = sorted(
                range(len(m.outcomes)), key=lambda o: (m.outcomes[o][0] + m.outcomes[o][1]) * (-1 if self.worst else 1)
            )
            for o in order:
                ka, kb, _ = m.outcomes[o]
                keys[m.a] += ka
                keys[m.b] += kb
                choice[i] = o
                visit(i + 1)
                keys[m.a] -= ka
                keys[m.b] -= kb
            lo[m.a] += lo_a
            hi[m.a] += hi_a
            lo[m.b] += lo_b
            hi[m.b] += hi_b

        visit(0)
        assert best_count is not None
        return best_count, best_choice

    def front(self, m: _Match, x: int) -> list[int]:
        """``x``'s own match outcomes worth trying: no other is at least as good for ``x`` (a higher key for
        the best rank, lower for the worst) and at least as bad for its opponent.  The count is monotone in
        every key (more for ``x`` never puts a team above it, more for the opponent never takes one away), so
        a dominated outcome never does better than the one dominating it: one outcome under 1-½-0 (every
        board won for the best rank, lost for the worst)."""
        sign = -1 if self.worst else 1
        pairs = [((o[0], o[1]) if x == m.a else (o[1], o[0])) for o in m.outcomes]
        mine = [(sign * own, -sign * other) for own, other in pairs]
        return [
            k for k, (a, b) in enumerate(mine) if not any((c >= a and d >= b) and (c, d) != (a, b) for c, d in mine)
        ]

    def extreme(self, x: int) -> tuple[int, dict[int, int]]:
        """The best count of teams (other than ``x``) above / at least ``x``'s final key, and the outcome
        index per match that makes it."""
        model = self.model
        own = [i for i, m in enumerate(model.matches) if x in (m.a, m.b)]
        rest = [i for i, m in enumerate(model.matches) if x not in (m.a, m.b)]
        components = _components([model.matches[i] for i in rest], rest)
        own_options = [self.front(model.matches[i], x) for i in own]
        best: tuple[int, dict[int, int]] | None = None
        for combo in itertools.product(*own_options):
            keys = list(model.base)
            for i, o in zip(own, combo, strict=True):
                m = model.matches[i]
                keys[m.a] += m.outcomes[o][0]
                keys[m.b] += m.outcomes[o][1]
            target = keys[x]
            busy = {model.matches[i].a for i in rest} | {model.matches[i].b for i in rest}
            count = sum(1 for k in range(model.n) if k != x and k not in busy and self.counts(keys[k], target))
            choice = dict(zip(own, combo, strict=True))
            for indices in components:
                c, picked = self.solve_component([model.matches[i] for i in indices], keys, target)
                count += c
                choice.update(zip(indices, picked, strict=True))
            if best is None or self.better(count, best[0]):
                best = (count, choice)
        assert best is not None
        return best


def _components(matches: list[_Match], indices: list[int]) -> list[list[int]]:
    """The match indices grouped by connected teams (a team's matches in one group), in round order."""
    parent: dict[int, int] = {}

    def find(k: int) -> int:
        while parent.setdefault(k, k) != k:
            k = parent[k]
        return k

    for m in matches:
        parent[find(m.a)] = find(m.b)
    groups: dict[int, list[int]] = {}
    for m, i in zip(matches, indices, strict=True):
        groups.setdefault(find(m.a), []).append(i)
    return list(groups.values())


def _scenario(model: _Model, choice: dict[int, int]) -> Scenario:
    results: list[GameResult | None] = [None] * len(model.games)
    for i, o in choice.items():
        for k, opt in model.matches[i].outcomes[o][2]:
            results[k] = model.options[k][opt].result
    for k, r in enumerate(results):
        if r is None:  # a game with no match of its own cannot be, but leave no hole
            results[k] = model.options[k][0].result
    return tuple(
        ScenarioGame(g.round, g.white, g.black, r) for g, r in zip(model.games, results, strict=True) if r is not None
    )


def _interval_bound(model: _Model, x: int, worst: bool) -> int:
    lo, hi = list(model.base), list(model.base)
    for m in model.matches:
        for team in (m.a, m.b):
            dlo, dhi = m.delta_range(team)
            lo[team] += dlo
            hi[team] += dhi
    if worst:
        return sum(1 for k in range(model.n) if k != x and hi[k] >= lo[x])
    return sum(1 for k in range(model.n) if k != x and lo[k] > hi[x])


def _rank_of(model: _Model, x: int, choice: dict[int, int], worst: bool) -> int:
    keys = list(model.base)
    for i, o in choice.items():
        m = model.matches[i]
        keys[m.a] += m.outcomes[o][0]
        keys[m.b] += m.outcomes[o][1]
    if worst:
        return 1 + sum(1 for k in range(model.n) if k != x and keys[k] >= keys[x])
    return 1 + sum(1 for k in range(model.n) if k != x and keys[k] > keys[x])


def _greedy(model: _Model, x: int, worst: bool) -> dict[int, int]:
    """Some complete choice for a query out of budget: ``x``'s matches at its best (worst), the others first."""
    choice = {}
    for i, m in enumerate(model.matches):
        side = 0 if m.a == x else 1 if m.b == x else None
        if side is None:
            choice[i] = 0
        else:
            values = [o[side] for o in m.outcomes]
            choice[i] = values.index(min(values) if worst else max(values))
    return choice


def _project_model(model: _Model, setup: TeamSetup, budget: int) -> tuple[TeamRankProjection, ...]:
    rows = []
    for x in range(model.n):
        reached: dict[TeamExtreme, TeamReached] = {}
        values: dict[TeamExtreme, int] = {}
        for name in TEAM_EXTREMES:
            worst = name == "rank_worst"
            search = _Search(model, worst, budget)
            try:
                count, choice = search.extreme(x)
                value, exact = 1 + count, True
            except _OutOfBudget:
                choice = _greedy(model, x, worst)
                value, exact = 1 + _interval_bound(model, x, worst), False
            reached[name] = TeamReached(exact, _rank_of(model, x, choice, worst), _scenario(model, choice))
            values[name] = value
        team = setup.teams[x]
        rows.append(TeamRankProjection(team.number, team.name, values["rank_best"], values["rank_worst"], reached))
    return tuple(rows)


def project_teams(
    t: Tournament,
    setup: TeamSetup,
    codes: Sequence[str] | None = None,
    *,
    budget: int = QUERY_BUDGET,
) -> TeamProjection:
    """Every team's best and worst final rank over the pending board games of ``t`` (see the module
    docstring for the rank, the search and when it is exact), each with a scenario that reaches it.

    ``codes`` is the team order (default: the setup's); ``budget`` the search nodes per team extreme.
    Pure: reads ``t`` and changes nothing.  Raises :class:`ProjectionUnavailable` when the rounds to come
    are not paired.
    """
    model, key = _model(t, setup, codes if codes is not None else setup.tiebreaks)
    teams = _project_model(model, setup, budget)
    return TeamProjection(all(r.exact for r in teams), key, teams, tuple(model.games))


# -- board stakes ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BoardOutcomeStake:
    """What one result of a pending board game does: ``changes`` maps a team number to its (best, worst)
    rank range under that result, for the teams whose range differs from the unconditional one."""

    result: GameResult
    exact: bool
    changes: dict[int, tuple[int, int]]


@dataclass(frozen=True, slots=True)
class BoardStake:
    """One pending board game and, per result it can have, the teams whose rank range that result changes."""

    game: PendingBoard
    outcomes: tuple[BoardOutcomeStake, ...]


def board_stakes(
    t: Tournament,
    setup: TeamSetup,
    codes: Sequence[str] | None = None,
    *,
    budget: int = QUERY_BUDGET,
    base: TeamProjection | None = None,
) -> tuple[BoardStake, ...]:
    """Per pending board game and result (1-0, ½-½, 0-1; a forfeit's only result), the teams whose best or
    worst rank (as :func:`project_teams` defines it) changes when the game has that result — "if board 3 of
    Germany–Estonia is drawn, the USA's best rank becomes 2": team ``USA`` maps to ``(2, worst)``.

    Each is the projection with that game fixed, so it costs ``results × games`` projections (a 10-team,
    4-board round: 60).  ``base`` is :func:`project_teams`' answer for ``t`` when the caller has it.
    """
    order = codes if codes is not None else setup.tiebreaks
    model, _ = _model(t, setup, order)
    if base is None:
        base = TeamProjection(True, (), _project_model(model, setup, budget), tuple(model.games))
    before = {r.team: (r.rank_best, r.rank_worst) for r in base.teams}
    stakes = []
    for k, game in enumerate(model.games):
        outcomes = []
        for o, option in enumerate(model.options[k]):
            rows = _project_model(_fixed(model, k, o), setup, budget)
            changes = {
                r.team: (r.rank_best, r.rank_worst) for r in rows if (r.rank_best, r.rank_worst) != before[r.team]
            }
            outcomes.append(BoardOutcomeStake(option.result, all(r.exact for r in rows), changes))
        stakes.append(BoardStake(game, tuple(outcomes)))
    return tuple(stakes)


__all__ = [
    "QUERY_BUDGET",
    "TEAM_EXTREMES",
    "BoardOutcomeStake",
    "BoardStake",
    "PendingBoard",
    "TeamProjection",
    "TeamRankProjection",
    "TeamReached",
    "board_stakes",
    "pending_boards",
    "project_teams",
]
