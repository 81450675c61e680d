"""Each team's chances of 1st and of each team line, from the players' ratings: an estimate (issue 35).

How this works
--------------

Every pending board game (:func:`~tracker.core.teams.projection.pending_boards`) is drawn from its two
players' ratings by the model the individual chances use
(:func:`~tracker.core.projection.chances.game_probabilities`: Elo expectation, draws at ``draw_rate``
between equals, fewer the more lopsided the pairing; an unrated player at the field's average), each game
with its own seeded stream, so the same state and seed give the same numbers.  A simulated match adds its
boards to the game points its two teams have in it so far; once every board is in, the match points go by
the event's match scoring.  The teams are ranked on the team projection's score key (the leading ``MPTS``
and ``GPTS`` of the team order: the deeper tie-breaks are not simulated), and a place shared on the key is
shared evenly: two teams level on the key at the top each count half a 1st.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import lcm
from typing import Final

from tracker.core.crosstable import Tournament
from tracker.core.projection.chances import DRAW_RATE, RUNS, WHITE_EDGE, _draws, game_probabilities
from tracker.core.teams.projection import pending_boards
from tracker.core.teams.setup import TeamSetup
from tracker.core.teams.view import team_view

#: The chances' model, as the JSON says it.
TEAM_MODEL: Final = "each pending board drawn from its players' ratings (Elo, draw rate {rate}); {runs} runs"


@dataclass(frozen=True, slots=True)
class TeamChances:
    """A team's chance of 1st and of each line (``lines``: aligned with :attr:`TeamChancesResult.lines`)."""

    team: int
    first: float
    lines: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class TeamChancesResult:
    """Every team's :class:`TeamChances` (the setup's order), from ``runs`` runs seeded by ``seed``."""

    seed: int
    runs: int
    draw_rate: float
    lines: tuple[int, ...]
    key: tuple[str, ...]
    teams: tuple[TeamChances, ...]


def team_chances(
    t: Tournament,
    setup: TeamSetup,
    lines: Sequence[int],
    key: Sequence[str] = ("MPTS", "GPTS"),
    *,
    seed: int,
    runs: int = RUNS,
    draw_rate: float = DRAW_RATE,
) -> TeamChancesResult:
    """Simulate ``runs`` completions of ``t``'s pending board games (module docstring).  ``key`` is the
    team projection's score key; ``lines`` the places of each line (1: 1st).  Raises
    :class:`~tracker.core.errors.ProjectionUnavailable` when the rounds to come are not paired and
    :class:`ValueError` for ``runs`` < 1."""
    if runs < 1:
        raise ValueError("a simulation needs at least one run")
    v = team_view(t, setup)
    n = v.n
    index = {team.number: k for k, team in enumerate(setup.teams)}
    rated = [p.rating for p in t.opened.players if p.rating > 0]
    average = sum(rated) / len(rated) if rated else 0.0
    rating = {p.start_no: float(p.rating) if p.rating > 0 else average for p in t.opened.players}
    win, draw = v.game_win, v.game_win / 2
    scoring = setup.scoring
    # the pending matches: (round, first team index, second team index) → their boards' draws
    matches: dict[tuple[int, int, int], list[tuple[int, list[int]]]] = {}
    for g in pending_boards(t, setup):
        a, b = index[g.white_team], index[g.black_team]
        first, second = min(a, b), max(a, b)
        p_win, p_draw, _ = game_probabilities(
            rating[g.white], rating[g.black], draw_rate=draw_rate, white_edge=WHITE_EDGE
        )
        codes = [0 if u < p_win else 1 if u < p_win + p_draw else 2 for u in _draws(seed, g.white, g.black, runs)]
        white_first = a == first
        matches.setdefault((g.round, first, second), []).append((1 if white_first else -1, codes))
    base_mp = list(v.mp)
    base_gp = list(v.gp)
    partial = {
        (r, first, second): (
            v.sides[first][r].gp if r in v.sides[first] else Fraction(0),
            v.sides[second][r].gp if r in v.sides[second] else Fraction(0),
        )
        for r, first, second in matches
    }
    by_gp = any(code.upper() == "GPTS" for code in key)
    # integers in the loop: game points and match points each scaled by their common denominator
    gs = lcm(*(x.denominator for x in (win, draw, *base_gp, *(y for pair in partial.values() for y in pair))))
    ms = lcm(*(x.denominator for x in (scoring.win, scoring.draw, scoring.loss, *base_mp)))
    points = (int(win * gs), int(draw * gs), 0)
    mp_of = (int(scoring.win * ms), int(scoring.draw * ms), int(scoring.loss * ms))
    base_gp_units = [int(x * gs) for x in base_gp]
    base_mp_units = [int(x * ms) for x in base_mp]
    partial_units = {k: (int(a * gs), int(b * gs)) for k, (a, b) in partial.items()}
    counts_first = [0.0] * n
    counts_lines = [[0.0] * len(lines) for _ in range(n)]
    for run in range(runs):
        mp = list(base_mp_units)
        gp = list(base_gp_units)
        for (r, first, second), boards in matches.items():
            a_gp, b_gp = partial_units[(r, first, second)]
            got_a = got_b = 0
            for side, codes in boards:
                code = codes[run]
                white_points, black_points = points[code], points[2 - code]
                if side == 1:
                    got_a += white_points
                    got_b += black_points
                else:
                    got_a += black_points
                    got_b += white_points
            gp[first] += got_a
            gp[second] += got_b
            total_a, total_b = a_gp + got_a, b_gp + got_b
            if total_a > total_b:
                mp[first] += mp_of[0]
                mp[second] += mp_of[2]
            elif total_a < total_b:
                mp[first] += mp_of[2]
                mp[second] += mp_of[0]
            else:
                mp[first] += mp_of[1]
                mp[second] += mp_of[1]
        scores = [(mp[i], gp[i]) if by_gp else (mp[i], 0) for i in range(n)]
        for i in range(n):
            above = sum(1 for j in range(n) if scores[j] > scores[i])
            level = sum(1 for j in range(n) if scores[j] == scores[i])
            # the places above+1 … above+level are shared evenly among the level teams
            if above == 0:
                counts_first[i] += 1 / level
            for k, places in enumerate(lines):
                inside = max(0, min(places, above + level) - above)
                counts_lines[i][k] += inside / level
    teams = tuple(
        TeamChances(team.number, counts_first[k] / runs, tuple(c / runs for c in counts_lines[k]))
        for k, team in enumerate(setup.teams)
    )
    return TeamChancesResult(seed, runs, draw_rate, tuple(lines), tuple(key), teams)


__all__ = ["TEAM_MODEL", "TeamChances", "TeamChancesResult", "team_chances"]
