"""The model: the crosstable as the remaining games will complete it, in integer units."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from tracker.core.crosstable import Tournament
from tracker.core.errors import ProjectionUnavailable
from tracker.core.events import GameResult
from tracker.core.line import final_games, koya_threshold
from tracker.core.order import TieBreak
from tracker.core.tiebreaks import RULES, rule_of
from tracker.core.tiebreaks.rule import Frame, Rule

#: An unscheduled game is assumed to come after every recorded round (it
#: only matters for Sonneborn-Berger's trailing-bye adjustment).
LATER: Final = 1 << 30


# -- the model: the crosstable as the remaining games will complete it ---------


@dataclass(frozen=True, slots=True)
class Option:
    """One outcome of a remaining game, in units; ``*_won`` counts for WON."""

    result: GameResult
    white: int
    black: int
    white_won: int
    black_won: int


@dataclass(frozen=True, slots=True)
class Game:
    round: int | None
    white: int  # player index
    black: int
    options: tuple[Option, ...]


@dataclass(slots=True)
class Model:
    """Integer arrays for the final crosstable, forced forfeits already in.

    ``points[i][j]`` is what ``i`` scored against ``j``; ``frame`` what no
    remaining game changes (trailing byes, DE weights, the final lines: see
    :class:`~tracker.core.tiebreaks.rule.Frame`); ``order`` the tie-break
    order with each code's rule, every one of them projectable.
    """

    n: int
    score: list[int]
    wins: list[int]
    points: list[list[int]]
    frame: Frame
    order: tuple[tuple[TieBreak, Rule], ...]
    games: list[Game]
    undecided: list[Game] = field(default_factory=list)

    @property
    def thresholds(self) -> dict[int, int]:
        """The final Koya line per limit: qualifies when ``2·score ≥ threshold``."""
        return self.frame.thresholds


def projectable_codes() -> str:
    """The kinds the projection ranks by, as a sentence lists them."""
    names = [rule.syntax or rule.kind for rule in RULES.values() if rule.projectable]
    return ", ".join(names[:-1]) + f" and {names[-1]}"


def remaining_games(t: Tournament) -> list[tuple[int | None, int, int]]:
    """(round, white, black) of every meeting still without a result.

    With a schedule, only its games whose players both have nothing in that
    round: the core refuses any other pairing, so a meeting the schedule does
    not leave open (a requested bye replaced it) is never played.
    """
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
        missing.clear()
    for (i, j), count in missing.items():
        met = t.games_between(i, j)
        # colours alternate with the pair's previous game; the lower start number starts
        white_first = (j if t.entries[i][met[-1]].white else i) if met else min(i, j, key=t.start_nos.__getitem__)
        black_first = j if white_first == i else i
        for k in range(count):
            found.append((None, white_first, black_first) if k % 2 == 0 else (None, black_first, white_first))
    found.sort(key=lambda g: (LATER if g[0] is None else g[0], t.start_nos[g[1]], t.start_nos[g[2]]))
    return found


def options_of(t: Tournament, white: int, black: int, round_: int | None = None) -> tuple[Option, ...]:
    """The outcomes of a remaining game of ``round_``: a forfeit where a player no longer plays (``t.absent``)."""
    u = t.units
    gone_white, gone_black = t.absent(white, round_), t.absent(black, round_)
    if gone_white and gone_black:
        return (Option("--", u.forfeit_loss, u.forfeit_loss, 0, 0),)
    if gone_white:
        return (Option("-+", u.forfeit_loss, u.forfeit_win, 0, 0),)
    if gone_black:
        return (Option("+-", u.forfeit_win, u.forfeit_loss, 0, 0),)
    played: tuple[tuple[GameResult, int, int], ...] = (
        ("1-0", u.win, u.loss),
        ("1/2-1/2", u.draw, u.draw),
        ("0-1", u.loss, u.win),
    )
    return tuple(Option(r, w, b, int(w == u.win), int(b == u.win)) for r, w, b in played)


def model_of(t: Tournament) -> Model:
    """The model of ``t``.

    Raises :class:`ProjectionUnavailable` for an order with a kind whose rule
    is not projectable (:attr:`~tracker.core.tiebreaks.rule.Rule.projectable`:
    an allow-list, so a kind the projection does not know is refused, never
    ranked as another).
    """
    order = tuple((tb, rule_of(tb)) for tb in t.tiebreaks)
    refused = [tb.code for tb, rule in order if not rule.projectable]
    if refused:
        raise ProjectionUnavailable(
            f"the projection does not compute {', '.join(refused)}: it ranks only by {projectable_codes()} "
            "(the standings themselves are computed)"
        )
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
    games: list[Game] = []
    undecided: list[Game] = []
    for r, w, b in [] if t.complete else remaining_games(t):
        game = Game(r, w, b, options_of(t, w, b, r))
        games.append(game)
        games_at_end[w] += 1
        games_at_end[b] += 1
        meetings[w][b] += 1
        meetings[b][w] += 1
        at = LATER if r is None else r
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
    return Model(
        n=n,
        score=score,
        wins=wins,
        points=points,
        frame=Frame(
            n=n,
            start_nos=list(t.start_nos),
            ratings=[p.rating for p in t.opened.players],
            trailing=trailing,
            # meetings are at most 2 (double round robin): 2·Σ/1 or 2·Σ/2
            de_weight=[[2 // m if m else 0 for m in row] for row in meetings],
            thresholds={limit: koya_threshold(win, line_games, limit) for limit in t.limits},
        ),
        order=order,
        games=games,
        undecided=undecided,
    )
