"""Title norms (FIDE B.01, title regulations): GM, IM, WGM, WIM — possible, secured or out, and the least score.

How this works
--------------

In a round robin the schedule is known, so a player's norm games are known before they are played: every
game of theirs, recorded or remaining, except forfeits (B.01 counts only games played over the board; a
remaining game against a withdrawn player is a forfeit and drops out).  What decides a norm, per title
(:data:`NORMS`), read from B.01 as docs/ratings.md quotes it (with where it is unsure):

* at least 9 games;
* at least half of the opponents title holders (GM, IM, FM, WGM, WIM, WFM; not CM/WCM), and at least a
  third of them, and at least 3, holding the title asked or one above it (GM: GMs; IM: IMs or GMs; WGM:
  WGMs, IMs or GMs; WIM: WIMs, WGMs, IMs or GMs);
* at least two federations other than the player's; at most 3/5 of the opponents from the player's own
  federation and at most 2/3 from any one federation (checked only when the start list has federations);
* the opponents' average rating ``Ra`` (rounded half up) at least the title's minimum, an unrated opponent
  counted at 1400 and the lowest-rated opponent (one only) raised to the title's floor;
* a performance ``Ra + dp(p) ≥`` the title's threshold (B.02 table 8.1(a), ``p`` the fractional score
  rounded to two decimals), with at least 35 %.

All but the score are fixed by the field and the schedule: the norm is **out** when one of them fails;
otherwise the least score over the norm games that gives the performance (:attr:`Norm.needed`) decides:
**secured** when the points already scored reach it, **out** when even winning every remaining game does
not, else **possible**, with :attr:`Norm.scenario` (the remaining games' results that score exactly what is
still needed: wins first, then a draw).  The other players' results change nothing here, so this is exact
over the whole remaining schedule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Final, Literal

from tracker.core.crosstable import BYE, Tournament
from tracker.core.events import GameResult, Player
from tracker.core.projection.model import options_of, remaining_games
from tracker.core.worth.tables import dp_of

Title = Literal["GM", "IM", "WGM", "WIM"]
NormStatus = Literal["secured", "possible", "out"]


@dataclass(frozen=True, slots=True)
class NormRule:
    """One title's norm requirements (B.01): performance, minimum average, floor for the lowest opponent, the
    titles that count towards the third, and whether it is a women's title."""

    performance: int
    average: int
    floor: int
    counted: frozenset[str]
    women: bool


#: B.01's four norms.
NORMS: Final[dict[Title, NormRule]] = {
    "GM": NormRule(2600, 2380, 2200, frozenset({"GM"}), False),
    "IM": NormRule(2450, 2230, 2050, frozenset({"GM", "IM"}), False),
    "WGM": NormRule(2400, 2180, 2000, frozenset({"GM", "IM", "WGM"}), True),
    "WIM": NormRule(2250, 2030, 1850, frozenset({"GM", "IM", "WGM", "WIM"}), True),
}
#: Title holders for the 50 % rule (B.01: CM and WCM do not count).
TITLE_HOLDERS: Final = frozenset({"GM", "IM", "FM", "WGM", "WIM", "WFM"})
#: The titles a player who holds the key may still earn a norm for.
ABOVE: Final[dict[str, tuple[Title, ...]]] = {
    "GM": (),
    "IM": ("GM",),
    "WGM": ("GM", "IM"),
    "WIM": ("GM", "IM", "WGM"),
}
MIN_GAMES: Final = 9
UNRATED_AS: Final = 1400
MIN_SCORE: Final = Fraction(35, 100)

#: Why a norm is out on the field alone (the requirement's name, as the JSON says it).
Failing = Literal["games", "title_holders", "titled", "federations", "own_federation", "one_federation", "average"]


@dataclass(frozen=True, slots=True)
class Norm:
    """One player's norm for one title.

    ``games`` the norm games (recorded and remaining, forfeits out), ``average`` ``Ra`` as B.01 counts it,
    ``failing`` the field's requirements that fail (empty: the score decides), ``needed`` the least score
    over the norm games that gives the performance (``None`` when no score does), ``scored`` the points
    already scored in them, ``remaining`` the games still to play; ``scenario`` the remaining games' results
    (round, white, black, result: start numbers) that reach ``needed`` exactly, when the norm is possible.
    """

    start_no: int
    title: Title
    status: NormStatus
    games: int
    average: int
    failing: tuple[Failing, ...]
    needed: Fraction | None
    scored: Fraction
    remaining: int
    scenario: tuple[tuple[int | None, int, int, GameResult], ...] = ()


def titles_for(p: Player) -> tuple[Title, ...]:
    """The norms ``p`` can still aim at: the titles above their own (women's titles for women only)."""
    held = p.title.upper()
    women = p.sex.lower() == "w"
    candidates: tuple[Title, ...] = ABOVE.get(held, ("GM", "IM", "WGM", "WIM"))
    return tuple(title for title in candidates if women or not NORMS[title].women)


def _average(ratings: list[int], floor: int) -> int:
    counted = sorted(r if r > 0 else UNRATED_AS for r in ratings)
    if counted and counted[0] < floor:
        counted[0] = floor  # B.01: the lowest-rated opponent only
    return (2 * sum(counted) + len(counted)) // (2 * len(counted))


def least_score(games: int, average: int, performance: int) -> Fraction | None:
    """The least score (in half points) of ``games`` with ``Ra = average`` whose performance reaches
    ``performance`` and which is at least 35 %, or ``None``.

    Both conditions only ever turn true as the score grows (``dp`` does not fall as ``p`` rises), so the
    least such score is found by bisection over the half points: a 300-player round robin asks this for
    every player and title.
    """

    def reaches(halves: int) -> bool:
        p = Fraction(halves, 2 * games)
        return p >= MIN_SCORE and average + dp_of(p) >= performance

    if not reaches(2 * games):
        return None
    low, high = 0, 2 * games  # reaches(high) holds; the answer is in [low, high]
    while low < high:
        middle = (low + high) // 2
        if reaches(middle):
            high = middle
        else:
            low = middle + 1
    return Fraction(low, 2)


def norm_games(t: Tournament) -> list[list[tuple[int | None, int, int]]]:
    """Per player (index), the remaining games that are norm games (played at the board: a forfeit of a
    withdrawn player is none), in the schedule's order."""
    ahead: list[list[tuple[int | None, int, int]]] = [[] for _ in range(t.n)]
    for r, w, b in remaining_games(t) if not t.complete else []:
        if len(options_of(t, w, b, r)) > 1:
            ahead[w].append((r, w, b))
            ahead[b].append((r, w, b))
    return ahead


def norm(t: Tournament, i: int, title: Title, games: Sequence[tuple[int | None, int, int]] | None = None) -> Norm:
    """Player ``i``'s :class:`Norm` for ``title`` on the crosstable and schedule of ``t`` (module docstring).

    ``games`` is player ``i``'s entry of :func:`norm_games` (computed when not given: pass it when asking for
    many players, the remaining games are the whole schedule's).
    """
    rule = NORMS[title]
    players = t.opened.players
    me = players[i]
    opponents: list[int] = []
    scored = Fraction(0)
    for e in t.entries[i].values():
        if e.opponent != BYE and e.played:
            opponents.append(e.opponent)
            scored += {"1": Fraction(1), "W": Fraction(1), "=": Fraction(1, 2), "D": Fraction(1, 2)}.get(
                e.code, Fraction(0)
            )
    ahead = list(norm_games(t)[i] if games is None else games)
    opponents += [b if w == i else w for _, w, b in ahead]
    n = len(opponents)
    failing: list[Failing] = []
    if n < MIN_GAMES:
        failing.append("games")
    titles = [players[j].title.upper() for j in opponents]
    if 2 * sum(1 for x in titles if x in TITLE_HOLDERS) < n:
        failing.append("title_holders")
    counted = sum(1 for x in titles if x in rule.counted)
    if counted < 3 or 3 * counted < n:
        failing.append("titled")
    feds = [players[j].federation.upper() for j in opponents]
    if me.federation and all(feds):
        own = me.federation.upper()
        if len(set(feds) - {own}) < 2:
            failing.append("federations")
        if 5 * sum(1 for f in feds if f == own) > 3 * n:
            failing.append("own_federation")
        if n and 3 * max(feds.count(f) for f in set(feds)) > 2 * n:
            failing.append("one_federation")
    average = _average([players[j].rating for j in opponents], rule.floor) if n else 0
    if average < rule.average:
        failing.append("average")
    needed = least_score(n, average, rule.performance) if n else None
    if failing or needed is None or scored + len(ahead) < needed:
        status: NormStatus = "out"
    elif scored >= needed:
        status = "secured"
    else:
        status = "possible"
    scenario: tuple[tuple[int | None, int, int, GameResult], ...] = ()
    if status == "possible":
        assert needed is not None
        more = needed - scored
        picks = []
        for r, w, b in ahead:
            gain = min(more, Fraction(1))
            more -= gain
            mine_white = w == i
            result: GameResult = (
                ("1-0" if mine_white else "0-1")
                if gain == 1
                else "1/2-1/2"
                if gain
                else ("0-1" if mine_white else "1-0")
            )
            picks.append((r, t.start_nos[w], t.start_nos[b], result))
        scenario = tuple(picks)
    return Norm(me.start_no, title, status, n, average, tuple(failing), needed, scored, len(ahead), scenario)


def norms(t: Tournament) -> tuple[Norm, ...]:
    """Every player's norms for the titles above their own, in start-list order."""
    ahead = norm_games(t)
    return tuple(norm(t, i, title, ahead[i]) for i, p in enumerate(t.opened.players) for title in titles_for(p))


__all__ = ["NORMS", "Norm", "least_score", "norm", "norm_games", "norms", "titles_for"]
