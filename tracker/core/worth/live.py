"""What results are worth while games remain, for the live pages (the ``stakes`` message's ``worth``).

How this works
--------------

Per player: the rating change and performance over the rated games so far (:mod:`tracker.core.worth.rating`)
and the norms still in play — possible or secured (:mod:`tracker.core.worth.norms`), each said in a
sentence.  A norm depends on the player's own games only, and its least score is fixed by the field and the
schedule, so a pending game decides it exactly: an outcome **secures** it when the points it adds reach the
least score, and puts it **out** when the games left after it cannot make up the rest.  :func:`live_worth`
answers both from one :func:`~tracker.core.worth.norms.norms` pass: no search, no other player's result.
A game the stakes list (by round and the two start numbers) finds its norm sentences under the same key.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Final, Literal

from tracker.core.crosstable import Tournament
from tracker.core.errors import ProjectionUnavailable
from tracker.core.events import GameResult
from tracker.core.phrases import Said, phrase, plural, render
from tracker.core.projection.stakes import surname
from tracker.core.standings import Standings, standings
from tracker.core.worth.categories import Category, declared
from tracker.core.worth.norms import Norm, Title, norm, norm_games, titles_for
from tracker.core.worth.prizes import Money, MoneyStake, Sharing, money, money_at_stake
from tracker.core.worth.rating import RatingChange, rating_changes

NORM_SECURED: Final = phrase("norm.secured", "{who:player} has secured a {title} norm")
NORM_NEEDS: Final = plural(
    "norm.needs",
    "{who:player} needs {points:points} from the last game for a {title} norm",
    "{who:player} needs {points:points} from the last {n} games for a {title} norm",
)
NORM_SECURES: Final = phrase("norm.secures", "{who:player} secures a {title} norm")
NORM_OUT: Final = phrase("norm.out", "{who:player} can no longer make a {title} norm")

#: A game's points for White and Black by result (a pending game is decided at the board).
_POINTS: Final[dict[GameResult, tuple[Fraction, Fraction]]] = {
    "1-0": (Fraction(1), Fraction(0)),
    "1/2-1/2": (Fraction(1, 2), Fraction(1, 2)),
    "0-1": (Fraction(0), Fraction(1)),
}

#: A pending game as the stakes name it: (round or ``None``, White's start number, Black's start number).
GameKey = tuple[int | None, int, int]


@dataclass(frozen=True, slots=True)
class NormStake:
    """One outcome of one pending game decides ``start_no``'s ``title`` norm: ``after`` it is secured or out."""

    start_no: int
    title: Title
    after: Literal["secured", "out"]
    said: Said
    text: str


@dataclass(frozen=True, slots=True)
class PlayerWorth:
    """One player's worth so far: the rating change (``rating``), and the norms possible or secured with a
    sentence each (``said`` and its English ``texts``, aligned with ``norms``)."""

    rating: RatingChange
    norms: tuple[Norm, ...]
    said: tuple[Said, ...]
    texts: tuple[str, ...]
    #: with prizes declared: the money paid (complete) or the least and most still possible
    money: Money | None = None


@dataclass(frozen=True, slots=True)
class LiveWorth:
    """Every player's :class:`PlayerWorth` (start-list order) and, per pending game and outcome, the norms it
    decides (games deciding none are absent)."""

    players: tuple[PlayerWorth, ...]
    decides: dict[GameKey, dict[GameResult, tuple[NormStake, ...]]]
    #: with prizes declared: per game of the round being played and outcome, its players' money then
    money: dict[GameKey, dict[GameResult, tuple[MoneyStake, ...]]] = field(default_factory=dict)
    #: the prizes declared per place (empty: none) and how they are shared
    prizes: tuple[Fraction, ...] = ()
    sharing: str = "hort"
    #: the prize categories paid beside the places (one prize per player)
    categories: tuple[Category, ...] = ()


def norm_words(n: Norm) -> Said:
    """A possible or secured norm in a sentence."""
    if n.status == "secured":
        return NORM_SECURED(who=n.start_no, title=n.title)
    assert n.needed is not None
    return NORM_NEEDS(who=n.start_no, points=float(n.needed - n.scored), n=n.remaining, title=n.title)


#: Nodes each prize search of the live worth may expand (the CLI's are :data:`~tracker.core.worth.prizes.BUDGET`):
#: a 10-player round robin with 3 rounds left stays exact; beyond, the money found is marked not exact.
LIVE_BUDGET: Final = 50_000


def live_worth(
    t: Tournament,
    s: Standings | None = None,
    *,
    prizes: tuple[Fraction, ...] | None = None,
    sharing: Sharing | None = None,
    budget: int = LIVE_BUDGET,
    categories: Sequence[Category] | None = None,
) -> LiveWorth:
    """What results are worth in ``t`` as it stands (see the module docstring); ``s`` is ``standings(t)``.

    With prizes declared (``tournament_opened.prizes``; ``prizes``/``sharing`` given instead: those) each
    player's money and the money at stake in each game of the round being played
    (:func:`~tracker.core.worth.prizes.money_at_stake`), each search within ``budget`` nodes; none for a
    tie-break order the projection cannot rank by.  ``categories``: prize categories besides the places (one prize
    per player, :mod:`tracker.core.worth.prizes`); ``None``: the tournament's own (``tournament_opened``)."""
    ahead = norm_games(t)
    changes = rating_changes(t)
    players: list[PlayerWorth] = []
    decides: dict[GameKey, dict[GameResult, list[NormStake]]] = {}
    start_nos = t.start_nos
    names = [p.name for p in t.opened.players]

    def short(start_no: int) -> str:
        return surname(names[t.index[start_no]])

    def stake(n: Norm, after: Literal["secured", "out"]) -> NormStake:
        said = (NORM_SECURES if after == "secured" else NORM_OUT)(who=n.start_no, title=n.title)
        return NormStake(n.start_no, n.title, after, said, render(said, short))

    for i, p in enumerate(t.opened.players):
        kept = tuple(n for n in (norm(t, i, title, ahead[i]) for title in titles_for(p)) if n.status != "out")
        said = tuple(norm_words(n) for n in kept)
        players.append(PlayerWorth(changes[i], kept, said, tuple(render(x, short) for x in said)))
        for n in kept:
            if n.status != "possible" or n.needed is None:
                continue
            for r, w, b in ahead[i]:
                left = n.remaining - 1  # the norm games after this one
                for result, points in _POINTS.items():
                    scored = n.scored + points[0 if w == i else 1]
                    if scored >= n.needed:
                        found = stake(n, "secured")
                    elif scored + left < n.needed:
                        found = stake(n, "out")
                    else:
                        continue
                    key = (r, start_nos[w], start_nos[b])
                    decides.setdefault(key, {}).setdefault(result, []).append(found)
    at_stake: dict[GameKey, dict[GameResult, tuple[MoneyStake, ...]]] = {}
    prizes = prizes if prizes is not None else tuple(Fraction(p) for p in t.opened.prizes)
    sharing = sharing or t.opened.sharing
    categories = tuple(categories) if categories is not None else declared(t.opened)
    if prizes or categories:
        try:
            paid = {
                m.start_no: m
                for m in money(t, s or standings(t), prizes, sharing, budget=budget, categories=categories)
            }
            at_stake = money_at_stake(t, prizes, sharing, budget=budget, categories=categories)
        except ProjectionUnavailable:
            paid = {}
        players = [dataclasses.replace(p, money=paid.get(p.rating.start_no)) for p in players]
    return LiveWorth(
        tuple(players),
        {key: {result: tuple(stakes) for result, stakes in by.items()} for key, by in decides.items()},
        at_stake,
        prizes,
        sharing,
        categories,
    )


__all__ = [
    "NORM_NEEDS",
    "NORM_OUT",
    "NORM_SECURED",
    "NORM_SECURES",
    "LiveWorth",
    "NormStake",
    "PlayerWorth",
    "live_worth",
]
