"""Arbiter projections: what the remaining games of a round robin can still change.

How this works
--------------

The *remaining games* are the pairs :meth:`Tournament.pending_pairs` lists
(every meeting of the round robin without a result), placed in their
scheduled round when the tournament has a schedule (``round`` is ``None``
otherwise, and colours are then a guess: the lower start number, or the
reverse of the pair's previous game).  A withdrawn player's remaining games
are forfeit wins for the opponent (``--`` when both have withdrawn), as
:class:`~tracker.core.events.PlayerWithdrawn` says; they have one outcome and
are not enumerated.  Byes not yet recorded are not projected (a free round
normally scores nothing); a tournament that is already complete has no
remaining games.

Everything is measured against the **final** line, the one C.07 §9.2 uses
once all games are in (:meth:`Tournament.line_games` of a complete
tournament): an opponent qualifies when ``2·score ≥ win·(G + limit)``, with
``G = (n − 1) × cycles`` less the players who never had an opponent (basis
``games``) or ``G`` = the number of rounds (basis ``rounds``).  The KS
reported is plain ``KS`` (limit 0); ranks use the tournament's whole
tie-break order, ``KS/L±n`` included.

*Exact* (at most ``exact_limit`` undecided games): a depth-first search over
the outcomes 1-0, ½-½, 0-1 of each undecided game mutates integer arrays
(scores, wins, the points between each pair, Sonneborn-Berger kept current
by its bilinear increment) and undoes them on the way back.  The qualifying
set is a bit mask per limit, updated for the two players of each game.  Only
at a leaf are the final Koya sums formed — the recorded games' part
memoised per mask, plus the leaf's own remaining games — and the players
ranked by :func:`_ranks`, which reproduces
:func:`tracker.core.standings.standings` on a complete crosstable (PTS, then
each criterion on the groups still tied, DE inside each group, shared
ranks).  Each subtree returns the elementwise min/max of (KS, rank) over its
leaves, so every game's per-outcome ranges fall out of the recursion without
storing any leaf.

*Bounds* (more undecided games; ``exact=False``): each player's final score
lies in [recorded + worst outcomes, recorded + best outcomes].  An opponent
is clinched when even their minimum is on the line, eliminated when even
their maximum is below it; KS lies between the points certainly scored
against clinched opponents and the most that can be scored against all
opponents not eliminated; the rank lies between 1 + the players certainly
ahead on points and n − the players certainly behind.  These are sound
(every outcome's value lies inside) but usually not tight.  Per-game effects
are the same bounds with that game's outcome fixed.

Qualification statuses are exact in both modes: a player's minimum and
maximum final scores are each reached by some outcome of the remaining
games.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Final, Literal, TypedDict

from tracker.core.crosstable import Tournament
from tracker.core.events import GameResult
from tracker.core.tiebreaks import final_games, koya_threshold, qualifies

Status = Literal["clinched", "eliminated", "open"]

#: An unscheduled game is assumed to come after every recorded round (it
#: only matters for Sonneborn-Berger's trailing-bye adjustment).
_LATER: Final = 1 << 30


# -- the result ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OpponentStatus:
    """An opponent's qualification against the final line (limit 0)."""

    start_no: int
    status: Status


@dataclass(frozen=True, slots=True)
class PlayerProjection:
    """One player's final ranges over all outcomes of the remaining games.

    ``ks_min``/``ks_max`` are plain Koya (limit 0) in points; ``rank_best``
    ≤ ``rank_worst`` (1 is first; shared ranks as in the standings);
    ``points_min``/``points_max`` the final score's range (always exact);
    ``qualification`` this player's own status against the final line;
    ``opponents`` every other player's status, by start number.
    """

    start_no: int
    ks_min: Fraction
    ks_max: Fraction
    rank_best: int
    rank_worst: int
    points_min: Fraction
    points_max: Fraction
    qualification: Status
    opponents: tuple[OpponentStatus, ...]


@dataclass(frozen=True, slots=True)
class OutcomeEffect:
    """What one outcome of a remaining game leaves possible.

    ``ks`` maps the start number of every player whose final KS range is not
    the same under all outcomes of this game to their range (min, max) under
    *this* outcome; ``ranks`` does the same for the rank range (best, worst).
    A player absent from both is not affected by this game.  The same
    players appear under each outcome of a game, so the outcomes can be
    compared side by side.  A forfeit (a withdrawn player's game) is the
    only outcome of its game and affects no one.
    """

    result: GameResult
    ks: dict[int, tuple[Fraction, Fraction]]
    ranks: dict[int, tuple[int, int]]


@dataclass(frozen=True, slots=True)
class GameProjection:
    """A remaining game (start numbers) and each of its outcomes' effect."""

    round: int | None
    white: int
    black: int
    outcomes: tuple[OutcomeEffect, ...]


@dataclass(frozen=True, slots=True)
class Projection:
    """The projection of a tournament's final standings after event ``seq``.

    ``exact`` is true when every range is exactly the min/max over all
    outcomes of the remaining games, false when they are sound bounds
    (always containing the truth, possibly wider).  ``remaining`` counts the
    games still without a result (forfeits of withdrawn players included);
    ``line`` is the final 50% line in points (limit 0).  ``players`` are
    ordered by start number; ``games`` by round, then White's start number.
    """

    tournament: str
    seq: int
    exact: bool
    remaining: int
    line: Fraction
    players: tuple[PlayerProjection, ...]
    games: tuple[GameProjection, ...]

    def player(self, start_no: int) -> PlayerProjection:
        """The projection of ``start_no``; raises :class:`KeyError` if absent."""
        for p in self.players:
            if p.start_no == start_no:
                return p
        raise KeyError(start_no)


class OpponentStatusJSON(TypedDict):
    start_no: int
    status: Status


class PlayerProjectionJSON(TypedDict):
    start_no: int
    ks_min: float
    ks_max: float
    rank_best: int
    rank_worst: int
    points_min: float
    points_max: float
    qualification: Status
    opponents: list[OpponentStatusJSON]


class KoyaRangeJSON(TypedDict):
    start_no: int
    min: float
    max: float


class RankRangeJSON(TypedDict):
    start_no: int
    best: int
    worst: int


class OutcomeEffectJSON(TypedDict):
    result: GameResult
    ks: list[KoyaRangeJSON]
    ranks: list[RankRangeJSON]


class GameProjectionJSON(TypedDict):
    round: int | None
    white: int
    black: int
    outcomes: list[OutcomeEffectJSON]


class ProjectionJSON(TypedDict):
    tournament: str
    seq: int
    exact: bool
    remaining: int
    line: float
    players: list[PlayerProjectionJSON]
    games: list[GameProjectionJSON]


def projection_json(p: Projection) -> ProjectionJSON:
    """The JSON shape sent to arbiters: points as JSON numbers, maps as lists."""
    return {
        "tournament": p.tournament,
        "seq": p.seq,
        "exact": p.exact,
        "remaining": p.remaining,
        "line": float(p.line),
        "players": [
            {
                "start_no": pp.start_no,
                "ks_min": float(pp.ks_min),
                "ks_max": float(pp.ks_max),
                "rank_best": pp.rank_best,
                "rank_worst": pp.rank_worst,
                "points_min": float(pp.points_min),
                "points_max": float(pp.points_max),
                "qualification": pp.qualification,
                "opponents": [{"start_no": o.start_no, "status": o.status} for o in pp.opponents],
            }
            for pp in p.players
        ],
        "games": [
            {
                "round": g.round,
                "white": g.white,
                "black": g.black,
                "outcomes": [
                    {
                        "result": o.result,
                        "ks": [{"start_no": s, "min": float(lo), "max": float(hi)} for s, (lo, hi) in o.ks.items()],
                        "ranks": [{"start_no": s, "best": b, "worst": w} for s, (b, w) in o.ranks.items()],
                    }
                    for o in g.outcomes
                ],
            }
            for g in p.games
        ],
    }


# -- the model: the crosstable as the remaining games will complete it ---------


@dataclass(frozen=True, slots=True)
class _Option:
    """One outcome of a remaining game, in units; ``*_won`` counts for WON."""

    result: GameResult
    white: int
    black: int
    white_won: int
    black_won: int


@dataclass(frozen=True, slots=True)
class _Game:
    round: int | None
    white: int  # player index
    black: int
    options: tuple[_Option, ...]


@dataclass(slots=True)
class _Model:
    """Integer arrays for the final crosstable, forced forfeits already in.

    ``points[i][j]`` is what ``i`` scored against ``j``; ``trailing[i]`` the
    trailing-bye units left out of ``i``'s score when ``i`` is an SB opponent
    (see ``Tournament._adjusted_score``); ``de_weight[i][j]`` turns points into
    C.07 §6 DE units (meetings averaged, doubled to stay integral).
    ``thresholds[limit]``: qualifies when ``2·score ≥ threshold``.
    """

    n: int
    score: list[int]
    wins: list[int]
    points: list[list[int]]
    trailing: list[int]
    de_weight: list[list[int]]
    thresholds: dict[int, int]
    order: tuple[tuple[str, int], ...]
    games: list[_Game]
    undecided: list[_Game] = field(default_factory=list)


def _remaining_games(t: Tournament) -> list[tuple[int | None, int, int]]:
    """(round, white, black) of every meeting still without a result."""
    missing: dict[tuple[int, int], int] = {}
    for pair in t.pending_pairs():
        missing[pair] = missing.get(pair, 0) + 1
    found: list[tuple[int | None, int, int]] = []
    if t.schedule is not None:
        for r in sorted(t.schedule):
            for w, b in sorted(t.schedule[r]):
                pair = (min(w, b), max(w, b))
                if missing.get(pair, 0) and r not in t.entries[w] and r not in t.entries[b]:
                    found.append((r, w, b))
                    missing[pair] -= 1
    for (i, j), count in missing.items():
        met = t.games_between(i, j)
        # colours alternate with the pair's previous game; the lower start number starts
        white_first = (j if t.entries[i][met[-1]].white else i) if met else min(i, j, key=t.start_nos.__getitem__)
        black_first = j if white_first == i else i
        for k in range(count):
            found.append((None, white_first, black_first) if k % 2 == 0 else (None, black_first, white_first))
    found.sort(key=lambda g: (_LATER if g[0] is None else g[0], t.start_nos[g[1]], t.start_nos[g[2]]))
    return found


def _options(t: Tournament, white: int, black: int) -> tuple[_Option, ...]:
    u = t.units
    if t.withdrawn[white] and t.withdrawn[black]:
        return (_Option("--", u.forfeit_loss, u.forfeit_loss, 0, 0),)
    if t.withdrawn[white]:
        return (_Option("-+", u.forfeit_loss, u.forfeit_win, 0, 0),)
    if t.withdrawn[black]:
        return (_Option("+-", u.forfeit_win, u.forfeit_loss, 0, 0),)
    played: tuple[tuple[GameResult, int, int], ...] = (
        ("1-0", u.win, u.loss),
        ("1/2-1/2", u.draw, u.draw),
        ("0-1", u.loss, u.win),
    )
    return tuple(_Option(r, w, b, int(w == u.win), int(b == u.win)) for r, w, b in played)


def _model(t: Tournament) -> _Model:
    n = t.n
    points = [[0] * n for _ in range(n)]
    meetings = [[0] * n for _ in range(n)]
    for i in range(n):
        for e in t.entries[i].values():
            if e.is_game:
                points[i][e.opponent] += e.units
                meetings[i][e.opponent] += 1
    score = list(t.score)
    wins = list(t.wins)
    games_at_end = list(t.games)
    # the rounds of each player's last real (non-VUR) result, remaining games included
    last_real = [max((r for r, e in t.entries[i].items() if not e.voluntarily_unplayed), default=0) for i in range(n)]
    games: list[_Game] = []
    undecided: list[_Game] = []
    for r, w, b in [] if t.complete else _remaining_games(t):
        game = _Game(r, w, b, _options(t, w, b))
        games.append(game)
        games_at_end[w] += 1
        games_at_end[b] += 1
        meetings[w][b] += 1
        meetings[b][w] += 1
        at = _LATER if r is None else r
        if len(game.options) == 1:
            o = game.options[0]
            score[w] += o.white
            score[b] += o.black
            points[w][b] += o.white
            points[b][w] += o.black
            for p, code in ((w, o.result[0]), (b, o.result[-1])):
                if code != "-":  # a forfeit loss is voluntarily unplayed
                    last_real[p] = max(last_real[p], at)
        else:
            undecided.append(game)
            last_real[w] = max(last_real[w], at)
            last_real[b] = max(last_real[b], at)
    trailing = [sum(e.units for r, e in t.entries[i].items() if r > last_real[i] and not e.is_game) for i in range(n)]
    never_paired = sum(1 for g in games_at_end if g == 0)
    line_games = final_games(n, t.cycles, t.rounds, t.basis, never_paired)
    win = t.units.win
    return _Model(
        n=n,
        score=score,
        wins=wins,
        points=points,
        trailing=trailing,
        # meetings are at most 2 (double round robin): 2·Σ/1 or 2·Σ/2
        de_weight=[[2 // m if m else 0 for m in row] for row in meetings],
        thresholds={limit: koya_threshold(win, line_games, limit) for limit in t.limits},
        order=tuple((tb.kind, tb.limit) for tb in t.tiebreaks),
        games=games,
        undecided=undecided,
    )


# -- ranking a complete crosstable ----------------------------------------------


def _ranks(
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


# -- exact: depth-first over the undecided games ----------------------------------

#: (KS lows + rank bests, KS highs + rank worsts) over some leaves, in units.
_Range = tuple[list[int], list[int]]


class _Search:
    """The exhaustive search; see the module docstring."""

    def __init__(self, m: _Model) -> None:
        n = m.n
        self.m = m
        self.n = n
        self.games = m.undecided
        self.score = list(m.score)
        self.wins = list(m.wins)
        self.cols = [[m.points[i][j] for i in range(n)] for j in range(n)]
        self.limits = tuple(sorted(m.thresholds))
        self.thresholds = tuple(m.thresholds[limit] for limit in self.limits)
        self.ks_memo: tuple[dict[int, list[int]], ...] = tuple({} for _ in self.limits)
        self.needs_sb = any(kind == "SB" for kind, _ in m.order)
        adjusted = [s - tr for s, tr in zip(self.score, m.trailing, strict=True)]
        self.sb = [sum(p * a for p, a in zip(row, adjusted, strict=True)) for row in m.points]
        self.path: list[tuple[int, int, int, int]] = []
        self.by_game: list[list[_Range | None]] = [[None] * len(g.options) for g in self.games]

    def run(self) -> _Range:
        masks = tuple(sum(1 << i for i, s in enumerate(self.score) if qualifies(s, thr)) for thr in self.thresholds)
        return self._node(0, masks)

    def _node(self, depth: int, masks: tuple[int, ...]) -> _Range:
        if depth == len(self.games):
            leaf = self._leaf(masks)
            return leaf, leaf
        game = self.games[depth]
        a, b = game.white, game.black
        bit_a, bit_b = 1 << a, 1 << b
        keep = ~(bit_a | bit_b)
        score, wins, cols, trailing = self.score, self.wins, self.cols, self.m.trailing
        sb = self.sb
        slots = self.by_game[depth]
        lows: list[list[int]] = []
        highs: list[list[int]] = []
        for k, o in enumerate(game.options):
            ua, ub = o.white, o.black
            if self.needs_sb:
                # SB_i = Σ_j P_ij·(S_j − trailing_j): bilinear in (P, S)
                new = [s + x * ua + y * ub for s, x, y in zip(sb, cols[a], cols[b], strict=True)]
                new[a] += ua * (score[b] - trailing[b] + ub)
                new[b] += ub * (score[a] - trailing[a] + ua)
                self.sb = new
            score[a] += ua
            score[b] += ub
            wins[a] += o.white_won
            wins[b] += o.black_won
            cols[b][a] += ua
            cols[a][b] += ub
            child_masks = tuple(
                (mask & keep) | (bit_a if qualifies(score[a], thr) else 0) | (bit_b if qualifies(score[b], thr) else 0)
                for mask, thr in zip(masks, self.thresholds, strict=True)
            )
            self.path.append((a, b, ua, ub))
            low, high = self._node(depth + 1, child_masks)
            self.path.pop()
            score[a] -= ua
            score[b] -= ub
            wins[a] -= o.white_won
            wins[b] -= o.black_won
            cols[b][a] -= ua
            cols[a][b] -= ub
            seen = slots[k]
            if seen is None:
                slots[k] = (low, high)
            else:
                slots[k] = (list(map(min, seen[0], low)), list(map(max, seen[1], high)))
            lows.append(low)
            highs.append(high)
        self.sb = sb
        return list(map(min, *lows)), list(map(max, *highs))

    def _leaf(self, masks: tuple[int, ...]) -> list[int]:
        ks_by_limit: dict[int, list[int]] = {}
        for limit, mask, memo in zip(self.limits, masks, self.ks_memo, strict=True):
            base = memo.get(mask)
            if base is None:
                base = memo[mask] = self._recorded_ks(mask)
            ks = base.copy()
            for a, b, ua, ub in self.path:
                if mask >> b & 1:
                    ks[a] += ua
                if mask >> a & 1:
                    ks[b] += ub
            ks_by_limit[limit] = ks
        columns: list[Sequence[int] | None] = []
        for kind, limit in self.m.order:
            if kind == "PTS":
                columns.append(self.score)
            elif kind == "SB":
                columns.append(self.sb)
            elif kind == "WON":
                columns.append(self.wins)
            elif kind == "KS":
                columns.append(ks_by_limit[limit])
            else:
                columns.append(None)
        return ks_by_limit[0] + _ranks(self.n, columns, self.cols, self.m.de_weight)

    def _recorded_ks(self, mask: int) -> list[int]:
        qualifying = [j for j in range(self.n) if mask >> j & 1]
        return [sum(row[j] for j in qualifying) for row in self.m.points]


# -- bounds: score intervals ----------------------------------------------------


@dataclass(slots=True)
class _Intervals:
    """Score and pairwise-points intervals; the bounds derived from them."""

    s_min: list[int]
    s_max: list[int]
    p_min: list[list[int]]
    p_max: list[list[int]]
    threshold: int
    ks_min: list[int] = field(default_factory=list)
    ks_max: list[int] = field(default_factory=list)
    ahead: list[int] = field(default_factory=list)  # players certainly ahead on points
    behind: list[int] = field(default_factory=list)  # players certainly behind

    def clinched(self, j: int) -> bool:
        return qualifies(self.s_min[j], self.threshold)

    def alive(self, j: int) -> bool:
        return qualifies(self.s_max[j], self.threshold)


def _intervals(m: _Model) -> _Intervals:
    s_min, s_max = list(m.score), list(m.score)
    p_min = [row.copy() for row in m.points]
    p_max = [row.copy() for row in m.points]
    for g in m.undecided:
        w, b = g.white, g.black
        lw, hw = min(o.white for o in g.options), max(o.white for o in g.options)
        lb, hb = min(o.black for o in g.options), max(o.black for o in g.options)
        s_min[w] += lw
        s_max[w] += hw
        s_min[b] += lb
        s_max[b] += hb
        p_min[w][b] += lw
        p_max[w][b] += hw
        p_min[b][w] += lb
        p_max[b][w] += hb
    iv = _Intervals(s_min, s_max, p_min, p_max, m.thresholds[0])
    n = m.n
    clinched = [iv.clinched(j) for j in range(n)]
    alive = [iv.alive(j) for j in range(n)]
    iv.ks_min = [sum(p for p, c in zip(row, clinched, strict=True) if c) for row in p_min]
    iv.ks_max = [sum(p for p, a in zip(row, alive, strict=True) if a) for row in p_max]
    iv.ahead = [sum(1 for lo in s_min if lo > hi) for hi in s_max]
    iv.behind = [sum(1 for hi in s_max if hi < lo) for lo in s_min]
    return iv


def _bounds(iv: _Intervals) -> _Range:
    n = len(iv.s_min)
    return (
        iv.ks_min + [1 + a for a in iv.ahead],
        iv.ks_max + [n - b for b in iv.behind],
    )


def _bounds_given(iv: _Intervals, g: _Game, o: _Option) -> _Range:
    """The bounds with ``g``'s outcome fixed to ``o``, in O(n) from ``iv``."""
    n = len(iv.s_min)
    a, b = g.white, g.black
    lo_a, hi_a = min(x.white for x in g.options), max(x.white for x in g.options)
    lo_b, hi_b = min(x.black for x in g.options), max(x.black for x in g.options)
    s_min = {a: iv.s_min[a] - lo_a + o.white, b: iv.s_min[b] - lo_b + o.black}
    s_max = {a: iv.s_max[a] - hi_a + o.white, b: iv.s_max[b] - hi_b + o.black}
    thr = iv.threshold
    clinched = {p: qualifies(s_min[p], thr) for p in (a, b)}
    alive = {p: qualifies(s_max[p], thr) for p in (a, b)}
    ks_min, ks_max = iv.ks_min.copy(), iv.ks_max.copy()
    ahead, behind = iv.ahead.copy(), iv.behind.copy()
    for i in range(n):
        if i in (a, b):
            continue
        for p in (a, b):
            ks_min[i] += (clinched[p] - iv.clinched(p)) * iv.p_min[i][p]
            ks_max[i] += (alive[p] - iv.alive(p)) * iv.p_max[i][p]
            ahead[i] += (s_min[p] > iv.s_max[i]) - (iv.s_min[p] > iv.s_max[i])
            behind[i] += (s_max[p] < iv.s_min[i]) - (iv.s_max[p] < iv.s_min[i])
    for p, q, lo_p, hi_p, u_p in ((a, b, lo_a, hi_a, o.white), (b, a, lo_b, hi_b, o.black)):
        # p's points against q are now fixed; q's status may have changed
        ks_min[p] += clinched[q] * (iv.p_min[p][q] - lo_p + u_p) - iv.clinched(q) * iv.p_min[p][q]
        ks_max[p] += alive[q] * (iv.p_max[p][q] - hi_p + u_p) - iv.alive(q) * iv.p_max[p][q]
        others = [j for j in range(n) if j not in (a, b)]
        ahead[p] = sum(1 for j in others if iv.s_min[j] > s_max[p]) + (s_min[q] > s_max[p])
        behind[p] = sum(1 for j in others if iv.s_max[j] < s_min[p]) + (s_max[q] < s_min[p])
    return ks_min + [1 + x for x in ahead], ks_max + [n - x for x in behind]


# -- the projection -------------------------------------------------------------------


def project(t: Tournament, *, exact_limit: int = 10) -> Projection:
    """Project ``t``'s final KS, ranks and qualifications over its remaining games.

    Exact when at most ``exact_limit`` games remain undecided (3^k outcomes
    are enumerated; forfeits of withdrawn players are not counted), sound
    bounds otherwise (``exact=False``; a negative limit always gives bounds).
    A 16-player last round (8 games) takes about 0.2 s, ten undecided games
    a few seconds: call it off the hot path.  Reads ``t`` and changes nothing
    in it (the search mutates its own copies); raises nothing for a valid
    tournament.
    """
    m = _model(t)
    n = m.n
    iv = _intervals(m)
    exact = len(m.undecided) <= exact_limit
    per_game: list[list[_Range]]
    if exact:
        search = _Search(m)
        overall = search.run()
        per_game = [[r for r in slots if r is not None] for slots in search.by_game]
    else:
        overall = _bounds(iv)
        per_game = [[_bounds_given(iv, g, o) for o in g.options] for g in m.undecided]
    den = t.units.denominator

    def points(units: int) -> Fraction:
        return Fraction(units, den)

    statuses: list[Status] = [
        "clinched" if iv.clinched(j) else "open" if iv.alive(j) else "eliminated" for j in range(n)
    ]
    by_start = sorted(range(n), key=lambda i: t.start_nos[i])
    low, high = overall
    players = tuple(
        PlayerProjection(
            start_no=t.start_nos[i],
            ks_min=points(low[i]),
            ks_max=points(high[i]),
            rank_best=low[n + i],
            rank_worst=high[n + i],
            points_min=points(iv.s_min[i]),
            points_max=points(iv.s_max[i]),
            qualification=statuses[i],
            opponents=tuple(OpponentStatus(t.start_nos[j], statuses[j]) for j in by_start if j != i),
        )
        for i in by_start
    )
    undecided_ranges = iter(per_game)  # m.undecided keeps m.games' order
    games = []
    for g in m.games:
        if len(g.options) == 1:
            outcomes: tuple[OutcomeEffect, ...] = (OutcomeEffect(g.options[0].result, {}, {}),)
        else:
            ranges = next(undecided_ranges)
            ks_moved = [i for i in by_start if len({(lo[i], hi[i]) for lo, hi in ranges}) > 1]
            rank_moved = [i for i in by_start if len({(lo[n + i], hi[n + i]) for lo, hi in ranges}) > 1]
            outcomes = tuple(
                OutcomeEffect(
                    o.result,
                    {t.start_nos[i]: (points(lo[i]), points(hi[i])) for i in ks_moved},
                    {t.start_nos[i]: (lo[n + i], hi[n + i]) for i in rank_moved},
                )
                for o, (lo, hi) in zip(g.options, ranges, strict=True)
            )
        games.append(GameProjection(g.round, t.start_nos[g.white], t.start_nos[g.black], outcomes))
    return Projection(
        tournament=t.id,
        seq=t.seq,
        exact=exact,
        remaining=len(m.games),
        line=Fraction(m.thresholds[0], 2 * den),
        players=players,
        games=tuple(games),
    )


__all__ = [
    "GameProjection",
    "OpponentStatus",
    "OutcomeEffect",
    "PlayerProjection",
    "Projection",
    "ProjectionJSON",
    "Status",
    "project",
    "projection_json",
]
