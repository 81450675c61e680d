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
ranked by :func:`~tracker.core.projection.ranking.ranks`, which reproduces
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

from fractions import Fraction

from tracker.core.crosstable import Tournament
from tracker.core.projection.bounds import bounds, bounds_given, intervals
from tracker.core.projection.exact import Range, Search
from tracker.core.projection.model import model_of
from tracker.core.projection.result import (
    GameProjection,
    OpponentStatus,
    OutcomeEffect,
    PlayerProjection,
    Projection,
    Status,
)

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
    m = model_of(t)
    n = m.n
    iv = intervals(m)
    exact = len(m.undecided) <= exact_limit
    per_game: list[list[Range]]
    if exact:
        search = Search(m)
        overall = search.run()
        per_game = [[r for r in slots if r is not None] for slots in search.by_game]
    else:
        overall = bounds(iv)
        per_game = [[bounds_given(iv, g, o) for o in g.options] for g in m.undecided]
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
    "Status",
    "project",
]
