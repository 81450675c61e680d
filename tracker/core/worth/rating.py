"""Rating change and performance per player (FIDE B.02, the rating regulations in force 2024–2026).

How this works
--------------

A player's **rating change** is ``K · Σ (score − PD)`` over the rated games played so far (B.02 §8.3): a
game counts when it was played at the board (``1 = 0``; not a forfeit, not a bye, not a game of less than
one move, TRF ``W D L``: B.02 rates only games in which both players made a move) against an opponent with a
rating (an unrated opponent's games are rated in the opponent's own initial-rating process, not here).
``PD`` is table 8.1(b) of the rating difference ``D`` (:func:`tracker.core.worth.tables.expected`).

**The 400-point rule** (§8.3.1), as in force on the event's start date (record 042; the rule in force now
when the file has no date):

- from 1 October 2025: "a difference in rating of more than 400 points shall be counted for rating purposes
  as though it were a difference of 400 points, for players rated below 2650.  For players rated 2650 and
  above, the difference between ratings shall be used in all cases" — the cap in every game of a player
  rated under 2650, never for a player rated 2650 or more (:data:`RULE_2650`);
- 1 March 2024 – 30 September 2025: the cap in every game, for every player; the 2024 regulations abolished
  the older limit of one upgrade per event (:data:`RULE_2024`);
- before 1 March 2024: "in any tournament, a player may benefit from only one upgrade under this rule, for
  the game in which the rating difference is greatest" — the higher-rated player's cap (which lowers their
  ``PD``: the upgrade) in one game only, the largest difference, the earliest round among equal ones; the
  lower-rated player's (no benefit) in every game (:data:`RULE_ONE_UPGRADE`).

**K** (§8.3.3), per player, first found of:

1. the start list's own K (``XXK K start_no …`` records, which ``tracker new`` writes from a ``k`` column:
   :func:`k_records`) — what the arbiter's rating report will use;
2. FIDE's rule from what the file has: 10 for a rating of 2400 or more; 40 for a player rated under 2300
   in or before the year of their 18th birthday (the birth year from the start list, the event's year from
   record 042); 20 for anyone else whose birth year and event year are both known;
3. otherwise 20, and said (:data:`K_ASSUMED`).

The start list cannot tell two cases of the rule: a player new to the list (K 40 until 30 rated games) and
a player once published at 2400 or more who has since dropped below it (K 10).  Give their K in the list.
§8.3.4 caps ``K · n`` at 700 for a rating period: with ``n`` the rated games counted here (the period's
other events are unknown), K becomes the largest whole number with ``K · n ≤ 700``.

The **performance** is C.07's ``TPR`` (:mod:`tracker.core.tiebreaks.tpr`).

Everything is exact: ``PD`` values are hundredths, K is whole, so the change is an exact ``Fraction``;
:func:`one_decimal` rounds it for the wire (half away from zero).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Final, Literal

from tracker.core.crosstable import BYE, Entry, Tournament
from tracker.core.events import Player
from tracker.core.phrases import phrase
from tracker.core.tiebreaks.tpr import performance
from tracker.core.worth.tables import expected_hundredths

#: How a player's K was chosen (see the module docstring).
KSource = Literal["start-list", "rule", "default"]

#: The 400-point rule's cap (B.02 §8.3.1).
CAP: Final = 400
#: From 1 October 2025 a player rated this or more counts every rating difference as it is (§8.3.1).
UNCAPPED_FROM: Final = 2650

#: Which reading of the 400-point rule applies (the module docstring): by the event's start date.
CapRule = Literal["one-upgrade", "every-game", "under-2650"]
RULE_ONE_UPGRADE: Final = "one-upgrade"
RULE_2024: Final = "every-game"
RULE_2650: Final = "under-2650"
#: §8.3.4: K · n may not exceed this over a rating period.
K_TIMES_GAMES: Final = 700
#: The default K when neither the start list nor the rule decides (said).
DEFAULT_K: Final = 20

K_ASSUMED: Final = phrase(
    "worth.k_assumed",
    "K = 20 assumed for {players:players}: the start list gives no K, and the file has no birth year or "
    "event date for FIDE's rule",
)

_SCORE: Final[dict[str, Fraction]] = {"1": Fraction(1), "=": Fraction(1, 2), "0": Fraction(0)}
_HALVES: Final[dict[str, int]] = {"1": 2, "=": 1, "0": 0}
_XXK: Final = re.compile(r"^XXK\s+(\d{1,3})((?:\s+\d{1,4})+)\s*$")
_YEAR: Final = re.compile(r"(\d{4})")
_DATE: Final = re.compile(r"(\d{4})[/.-](\d{1,2})[/.-](\d{1,2})")


@dataclass(frozen=True, slots=True)
class RatingChange:
    """One player's rating change so far.

    ``k`` and ``k_from``: the K used and how it was chosen (``None`` for an unrated player, who has no
    change); ``games`` the rated games counted, ``score`` the points in them, ``expected`` ``Σ PD``;
    ``change`` ``K · (score − expected)`` exactly; ``capped_round`` the round of the game where the
    higher-rated player's one 400-point upgrade was used under the rule before March 2024 (``None``: none,
    or a later rule); ``performance`` C.07's TPR
    (``None`` without a game against a rated opponent).
    """

    start_no: int
    rating: int
    k: int | None
    k_from: KSource | None
    games: int
    score: Fraction
    expected: Fraction
    change: Fraction
    capped_round: int | None
    performance: int | None


def k_records(records: Sequence[str]) -> dict[int, int]:
    """The start list's K per start number, from ``XXK K start_no start_no …`` records (later ones win).

    A record that does not read so is ignored (it is kept and exported as written, like any record).
    """
    found: dict[int, int] = {}
    for record in records:
        match = _XXK.match(record)
        if match is None:
            continue
        k = int(match.group(1))
        if k < 1:
            continue
        for start_no in match.group(2).split():
            found[int(start_no)] = k
    return found


def xxk_records(ks: Mapping[int, int], width: int = 400) -> list[str]:
    """The ``XXK`` records that say ``ks`` (start number → K), each at most ``width`` characters."""
    by_k: dict[int, list[int]] = {}
    for start_no, k in sorted(ks.items()):
        by_k.setdefault(k, []).append(start_no)
    lines: list[str] = []
    for k, start_nos in sorted(by_k.items()):
        line = f"XXK {k}"
        for start_no in start_nos:
            if len(line) + 1 + len(str(start_no)) > width:
                lines.append(line)
                line = f"XXK {k}"
            line += f" {start_no}"
        lines.append(line)
    return lines


def event_year(records: Sequence[str]) -> int | None:
    """The year of the event's start date (record 042), or ``None``."""
    for record in records:
        if record.startswith("042"):
            match = _YEAR.search(record[3:])
            if match:
                return int(match.group(1))
    return None


def cap_rule(records: Sequence[str]) -> CapRule:
    """The 400-point rule in force on the event's start date (record 042); the current one without a date."""
    for record in records:
        if record.startswith("042"):
            match = _DATE.search(record[3:])
            if match:
                date = tuple(int(x) for x in match.groups())
                if date < (2024, 3, 1):
                    return RULE_ONE_UPGRADE
                if date < (2025, 10, 1):
                    return RULE_2024
            break
    return RULE_2650


def birth_year(p: Player) -> int | None:
    """The year of ``p``'s birth as the start list writes it (``1990/05/12``, ``1990``), or ``None``."""
    match = _YEAR.search(p.birth)
    return int(match.group(1)) if match else None


def k_of(p: Player, given: int | None, year: int | None) -> tuple[int, KSource]:
    """K for ``p`` (rated) by the module docstring's order: the start list's, FIDE's rule, else 20."""
    if given is not None:
        return given, "start-list"
    if p.rating >= 2400:
        return 10, "rule"
    born = birth_year(p)
    if born is None or year is None:
        return DEFAULT_K, "default"
    if year <= born + 18 and p.rating < 2300:
        return 40, "rule"
    return 20, "rule"


def _rated_games(t: Tournament, i: int, ratings: Sequence[int]) -> list[Entry]:
    return [
        e
        for _, e in sorted(t.entries[i].items())
        if e.opponent != BYE and e.played and e.code in _SCORE and ratings[e.opponent] > 0
    ]


def rating_change(
    t: Tournament, i: int, ks: Mapping[int, int] | None = None, ratings: Sequence[int] | None = None
) -> RatingChange:
    """Player ``i``'s :class:`RatingChange` over the rated games recorded in ``t`` (see the module docstring).

    ``ks`` is the start list's K per start number (default: read from ``t``'s records); ``ratings`` the start
    list's ratings in start-list order (default: read from ``t``).
    """
    players = t.opened.players
    p = players[i]
    tpr = performance(t, i)
    if p.rating <= 0:
        return RatingChange(p.start_no, 0, None, None, 0, Fraction(0), Fraction(0), Fraction(0), None, tpr)
    given = (k_records(t.opened.records) if ks is None else ks).get(p.start_no)
    k, source = k_of(p, given, event_year(t.opened.records))
    games = _rated_games(t, i, [q.rating for q in players] if ratings is None else ratings)
    if games and k * len(games) > K_TIMES_GAMES:
        k = K_TIMES_GAMES // len(games)
    differences = [p.rating - players[e.opponent].rating for e in games]
    rule = cap_rule(t.opened.records)
    upgrade = None  # before March 2024: the one game where the higher-rated player's difference counts as 400
    if rule == RULE_ONE_UPGRADE:
        for n, d in enumerate(differences):
            if d > CAP and (upgrade is None or d > differences[upgrade]):
                upgrade = n
    capped = rule != RULE_2650 or p.rating < UNCAPPED_FROM
    halves = sum(_HALVES[e.code] for e in games)
    hundredths = 0  # Σ PD in hundredths: integers, one Fraction per value at the end
    for n, d in enumerate(differences):
        if capped and d < -CAP:
            counted = -CAP
        elif capped and d > CAP and (rule != RULE_ONE_UPGRADE or n == upgrade):
            counted = CAP
        else:
            counted = d
        hundredths += expected_hundredths(counted)
    return RatingChange(
        start_no=p.start_no,
        rating=p.rating,
        k=k,
        k_from=source,
        games=len(games),
        score=Fraction(halves, 2),
        expected=Fraction(hundredths, 100),
        change=Fraction(k * (50 * halves - hundredths), 100),
        capped_round=None if upgrade is None else games[upgrade].round,
        performance=tpr,
    )


def rating_changes(t: Tournament) -> tuple[RatingChange, ...]:
    """Every player's :class:`RatingChange`, in start-list order."""
    ks = k_records(t.opened.records)
    ratings = [p.rating for p in t.opened.players]
    return tuple(rating_change(t, i, ks, ratings) for i in range(t.n))


def assumed(changes: Sequence[RatingChange]) -> list[int]:
    """The start numbers whose K is the unsaid default (what :data:`K_ASSUMED` names)."""
    return [c.start_no for c in changes if c.k_from == "default"]


def shown_change(c: RatingChange) -> float | None:
    """``c``'s change as every interface shows it: one decimal, ``None`` for an unrated player (no K)."""
    return None if c.k is None else one_decimal(c.change)


def one_decimal(x: Fraction) -> float:
    """``x`` rounded to one decimal, half away from zero (as a rating report prints a change)."""
    tenths = abs(x) * 10
    rounded = int(tenths + Fraction(1, 2))
    return (rounded if x >= 0 else -rounded) / 10


__all__ = [
    "CAP",
    "K_ASSUMED",
    "CapRule",
    "RatingChange",
    "assumed",
    "cap_rule",
    "k_of",
    "k_records",
    "one_decimal",
    "rating_change",
    "rating_changes",
    "shown_change",
    "xxk_records",
]
