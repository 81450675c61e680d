"""Exact projections: depth-first over the outcomes of every undecided game."""

from __future__ import annotations

from collections.abc import Sequence

from tracker.core.projection.model import Model
from tracker.core.projection.ranking import ranks
from tracker.core.tiebreaks import qualifies

Range = tuple[list[int], list[int]]


# -- exact: depth-first over the undecided games ----------------------------------

#: (KS lows + rank bests, KS highs + rank worsts) over some leaves, in units.


class Search:
    """The exhaustive search; see the module docstring."""

    def __init__(self, m: Model) -> None:
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
        self.by_game: list[list[Range | None]] = [[None] * len(g.options) for g in self.games]

    def run(self) -> Range:
        masks = tuple(sum(1 << i for i, s in enumerate(self.score) if qualifies(s, thr)) for thr in self.thresholds)
        return self._node(0, masks)

    def _node(self, depth: int, masks: tuple[int, ...]) -> Range:
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
            elif kind in self.m.static:
                columns.append(self.m.static[kind])
            else:
                columns.append(None)
        return ks_by_limit[0] + ranks(self.n, columns, self.cols, self.m.de_weight)

    def _recorded_ks(self, mask: int) -> list[int]:
        qualifying = [j for j in range(self.n) if mask >> j & 1]
        return [sum(row[j] for j in qualifying) for row in self.m.points]
