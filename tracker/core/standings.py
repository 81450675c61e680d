"""Standings: the ordered table, with shared ranks, and its JSON shape.

The order follows the tournament's tie-break list (TRF26 212 syntax, ``PTS``
first).  Each criterion splits the groups still tied after the ones before
it; ``DE`` is evaluated inside each such group (C.07 §6).  Players equal on
every criterion share a rank (1, 1, 3 …) and are listed by start number.

Values are exact (:class:`~fractions.Fraction`); :func:`standings_json` turns
them into JSON numbers (halves and quarters are exact in binary).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache, partial
from itertools import compress, groupby, pairwise
from math import gcd
from operator import attrgetter, itemgetter, ne, neg
from typing import Any, Final, NamedTuple, cast

from tracker.core.crosstable import Tournament
from tracker.core.editions import record_column
from tracker.core.events import Scoring
from tracker.core.scoring import Units
from tracker.core.tiebreaks import RECORD_KINDS, Rules, TieBreak, koya_threshold, parse_tiebreaks


class Row(NamedTuple):
    """One line of the standings; ``tiebreaks`` is aligned with ``Standings.codes``.

    A named tuple rather than a frozen dataclass: a standings table builds n
    of them per event, and tuples are several times cheaper to construct.
    """

    rank: int
    start_no: int
    name: str
    points: Fraction
    tiebreaks: tuple[Fraction, ...]
    games: int
    withdrawn: bool
    qualified: bool = False
    line: Fraction = Fraction(0)
    results: tuple[tuple[int, int, str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Standings:
    """The whole table after event number ``seq``."""

    tournament: str
    name: str
    seq: int
    rounds: int
    provisional: bool
    basis: str
    max_basis: str
    codes: tuple[str, ...]
    rows: tuple[Row, ...]
    #: points per outcome (win, draw, loss, forfeit_win, …), exact
    scoring: tuple[tuple[str, Fraction], ...] = ()
    #: the C.07 edition the values follow (``2024`` or ``2026``)
    rules: str = "2026"
    #: per player (in start-list order), the integers behind what :func:`tracker.core.apply.diff` compares:
    #: ``(start no, rank, points, *tie-breaks shown, withdrawn)`` in the core's units — comparing them is
    #: several times cheaper than comparing the rows' Fractions, after every result
    keys: tuple[tuple[int, ...], ...] = field(default=(), compare=False, repr=False)

    def row(self, start_no: int) -> Row:
        for row in self.rows:
            if row.start_no == start_no:
                return row
        raise KeyError(start_no)


def standings(t: Tournament) -> Standings:
    """The current standings of ``t`` (provisional until every game is in).

    Built for speed, since it runs after every result: the ranking sorts
    integer keys; direct-encounter places are kept per tied group
    (:attr:`Tournament.de_places`) until a game between two of its members
    changes; values become :class:`~fractions.Fraction` only at the end, one
    object per value (:func:`exact`); the rows are assembled column by column.
    """
    plan = _plan(t.opened.tiebreaks, t.rules)
    den = t.units.denominator
    de = [0] * t.n
    records = {code: record_column(t, tb) for code, tb in plan.records}
    start_nos = t.start_nos
    order, ranks, rank_of = _rank(t, plan, _sort_values(t, records), de)
    units = [records[tb.code][0] if tb.code in records else _units_column(t, tb, de) for tb in plan.shown]
    win = t.units.win
    lines = _fractions(2 * den)
    games = t.line_games_all()
    line_of = {g: lines[koya_threshold(win, g, 0)] for g in set(games)}
    results = t.results_cache
    if None in results:
        for i, cached in enumerate(results):
            if cached is None:
                t.results_of(i)
    pick = itemgetter(*order)  # every column is read in standings order, then made values
    shown = [
        pick(records[tb.code][1]) if tb.code in records else map(_column_fractions(t, tb).__getitem__, pick(column))
        for tb, column in zip(plan.shown, units, strict=True)
    ]
    complete = t.complete
    rows = tuple(
        map(
            _make_row,
            zip(
                ranks,
                pick(start_nos),
                map(_name, pick(t.opened.players)),
                map(_fractions(den).__getitem__, pick(t.score)),
                zip(*shown, strict=True),
                pick(t.games),
                pick(t.withdrawn),
                pick(t.qualified[0]),
                map(line_of.__getitem__, pick(games)),
                pick(results),
                strict=True,
            ),
        )
    )
    return Standings(
        tournament=t.id,
        name=t.name,
        seq=t.seq,
        rounds=t.rounds,
        provisional=not complete,
        basis=t.basis if complete else t.provisional_basis,
        max_basis=t.basis,
        codes=plan.codes,
        rows=rows,
        scoring=_scoring(t.opened.scoring, t.units),
        rules=t.rules,
        keys=tuple(zip(start_nos, rank_of, t.score, *units, t.withdrawn, strict=True)),
    )


#: A :class:`Row` from a tuple of its fields in order, built in C (``Row(...)`` runs Python code per row).
_make_row = cast(Callable[[tuple[Any, ...]], Row], partial(tuple.__new__, Row))


_name = attrgetter("name")


class _Plan(NamedTuple):
    """What a tie-break order means for ranking and display, worked out once per order."""

    #: positions in the order of the criteria before DE (all when there is no DE) and after it
    before_de: tuple[int, ...]
    after_de: tuple[int, ...]
    has_de: bool
    #: the codes shown in rows
    shown: tuple[TieBreak, ...]
    codes: tuple[str, ...]
    #: (code, tie-break) of the record-kind columns, sorted or shown
    records: tuple[tuple[str, TieBreak], ...]


@lru_cache(maxsize=256)
def _plan(codes: tuple[str, ...], rules: Rules) -> _Plan:
    """The plan for a tournament's tie-break codes, keyed by the codes as sent (cheap to hash)."""
    order = parse_tiebreaks(codes, rules)
    at = next((pos for pos, tb in enumerate(order) if tb.kind == "DE"), len(order))
    before, after = tuple(range(at)), tuple(range(at + 1, len(order)))
    shown = tuple(tb for tb in order if tb.kind != "PTS")
    if not any(tb.code == "KS" for tb in shown):
        shown += (TieBreak("KS", "KS"),)
    records = {tb.code: tb for tb in (*order, *shown) if tb.kind in RECORD_KINDS}
    return _Plan(before, after, at < len(order), shown, tuple(tb.code for tb in shown), tuple(records.items()))


def display_codes(t: Tournament) -> tuple[TieBreak, ...]:
    """The codes shown in rows: the order without ``PTS``, plus ``KS`` if absent."""
    return _plan(t.opened.tiebreaks, t.rules).shown


def _rank(
    t: Tournament, plan: _Plan, keys: list[Sequence[int]], de: list[int]
) -> tuple[list[int], list[int], list[int]]:
    """Player indices in standings order, the rank of each in that order and by index; fills ``de`` with DE places.

    DE is evaluated inside each group tied on the criteria before it (its
    places cached per group, see :attr:`Tournament.de_places`); then every
    player has an integer key (the criteria in order, DE as minus the place)
    and one sort orders the table, ties listed by start number.  Runs after
    every result, so the per-player work is done by C loops (sorts, maps,
    zips) and Python code runs per group, not per player.
    """
    n = t.n
    start_nos = t.start_nos
    before, after = plan.before_de, plan.after_de
    if plan.has_de:
        _de_column(t, keys[before[0]] if len(before) == 1 else list(zip(*(keys[p] for p in before), strict=True)), de)
        full = list(zip(*(keys[p] for p in before), map(neg, de), *(keys[p] for p in after), strict=True))
    else:
        full = list(zip(*(keys[p] for p in before), strict=True))
    by_start = range(n) if start_nos == sorted(start_nos) else sorted(range(n), key=start_nos.__getitem__)
    order = sorted(by_start, key=full.__getitem__, reverse=True)
    ranks = []
    rank_of = [0] * n
    rank, last = 0, None
    for position, i in enumerate(order, start=1):
        if full[i] != last:  # a rank is the position of the first of the equal keys
            rank, last = position, full[i]
        ranks.append(rank)
        rank_of[i] = rank
    return order, ranks, rank_of


def _de_column(t: Tournament, prefix: Sequence[Any], de: list[int]) -> None:
    """Fill ``de`` (all 0) with each player's DE place inside the group tied with them on ``prefix`` (0: not tied).

    Places are cached per group (:attr:`Tournament.de_places`): only the
    groups whose members changed are decided again.
    """
    n = t.n
    # a stable sort: inside each tied group the indices stay ascending (the cache key)
    grouped = sorted(range(n), key=prefix.__getitem__)
    values = list(map(prefix.__getitem__, grouped))
    cuts = [0, *compress(range(1, n), map(ne, values[1:], values)), n]
    cache = t.de_places
    used: dict[tuple[int, ...], list[int]] = {}
    for lo, hi in pairwise(cuts):
        if hi - lo > 1:
            members = tuple(grouped[lo:hi])
            places = cache.get(members)
            if places is None:
                found = direct_encounter(t, grouped[lo:hi])
                places = list(map(found.__getitem__, members))
            used[members] = places
            for i, place in zip(members, places, strict=True):
                de[i] = place
    t.de_places = used


_SCORING_FIELDS = ("win", "draw", "loss", "forfeit_win", "forfeit_loss", "full_bye", "half_bye", "zero_bye", "pab")


@lru_cache(maxsize=64)
def _scoring(scoring: Scoring, u: Units) -> tuple[tuple[str, Fraction], ...]:
    """The exact points per outcome; cached by the scoring as sent (``u`` is made from it)."""
    return tuple((name, exact(getattr(u, name), u.denominator)) for name in _SCORING_FIELDS)


def _sort_values(t: Tournament, records: dict[str, tuple[list[int], list[Fraction]]]) -> list[Sequence[int]]:
    columns: list[Sequence[int]] = []
    for tb in t.tiebreaks:
        if tb.code in records:
            columns.append(records[tb.code][0])
        elif tb.kind == "PTS":
            columns.append(t.score)
        elif tb.kind == "SB":
            columns.append(t.sb)
        elif tb.kind == "WON":
            columns.append(t.wins)
        elif tb.kind == "KS":
            columns.append(t.ks[tb.limit])
        else:
            columns.append(())  # DE: computed per group
    return columns


class _Fractions(dict[int, Fraction]):
    """``units → Fraction(units, denominator)``, made once: equal values are the same object."""

    __slots__ = ("denominator",)

    def __init__(self, denominator: int) -> None:
        super().__init__()
        self.denominator = denominator

    def __missing__(self, units: int) -> Fraction:
        if len(self) >= 4096:
            self.clear()
        value = self[units] = Fraction(units, self.denominator)
        return value


_BY_DENOMINATOR: dict[int, _Fractions] = {}


def _fractions(denominator: int) -> _Fractions:
    table = _BY_DENOMINATOR.get(denominator)
    if table is None:
        table = _BY_DENOMINATOR[denominator] = _Fractions(denominator)
    return table


def exact(numerator: int, denominator: int) -> Fraction:
    """``numerator/denominator`` as a Fraction, shared between rows and updates.

    Standings repeat a few small values over and over; making each once
    saves most of the cost of building rows, and equal values being the
    same object makes comparing two standings cheap.
    """
    return _fractions(denominator)[numerator]


def _units_column(t: Tournament, tb: TieBreak, de: list[int]) -> Sequence[int]:
    """A shown column's values per player, in its units (see :func:`_column_fractions`)."""
    if tb.kind == "PTS":
        return t.score
    if tb.kind == "SB":
        return t.sb
    if tb.kind == "WON":
        return t.wins
    if tb.kind == "KS":
        return t.ks[tb.limit]
    return de


def _column_fractions(t: Tournament, tb: TieBreak) -> _Fractions:
    """Units → value for a column of :func:`_units_column`: SB is in units², wins and DE places are counts."""
    den = t.units.denominator
    if tb.kind in ("PTS", "KS"):
        return _fractions(den)
    if tb.kind == "SB":
        return _fractions(den * den)
    return _fractions(1)


def direct_encounter(t: Tournament, group: list[int]) -> dict[int, int]:
    """Places inside a tied ``group`` by direct encounter (C.07 §6).

    Each player's DE score is the points scored against the others in the
    group, repeated meetings (double round robin) averaged; players not yet
    met contribute nothing (a round robin compares the games that exist, as
    the FIDE TEC server does).  Sub-groups still tied are decided again on
    the games inside them, until nothing changes.  Returns 1-based places
    (shared places repeat); all 0 when the group stays completely tied.
    """
    places = dict.fromkeys(group, 0)
    _resolve(t, group, 1, places)
    if len(set(places.values())) == 1:
        return dict.fromkeys(group, 0)
    return places


def _resolve(t: Tournament, group: list[int], base: int, places: dict[int, int]) -> None:
    """Give the members of ``group`` their places from ``base`` on, by DE inside ``group``, recursively."""
    if len(group) == 2:
        # the two met as often as each other: what each scored against the other decides
        a, b = group
        n = t.n
        da, db = t.pair_units[a * n + b], t.pair_units[b * n + a]
        places[a] = base if da >= db else base + 1
        places[b] = base if db >= da else base + 1
        return
    scores = _de_scores(t, group)
    if min(scores) == max(scores):
        for i in group:
            places[i] = base
        return
    # a stable sort: ties keep the group's order
    ranked = sorted(zip(scores, group, strict=True), key=_first, reverse=True)
    offset = base
    for _, tied in groupby(ranked, key=_first):
        part = [i for _, i in tied]
        if len(part) == 1:
            places[part[0]] = offset
        else:
            _resolve(t, part, offset, places)
        offset += len(part)


_first = itemgetter(0)


def _de_scores(t: Tournament, group: list[int]) -> list[int]:
    """Numbers that order the members of ``group`` by DE score inside it: the score doubled, in units.

    Doubled so that the average of two meetings stays integral; in a single
    round robin a pair meets at most once and the units scored against a
    player never met are 0, so the units scored are summed as they are
    (and doubled: the same numbers).  Plain loops: groups are small, and
    they run for every tied group whose members changed, after every result
    (comprehensions cost a call each).
    """
    n = t.n
    units = t.pair_units
    scores = []
    if t.cycles == 1:
        for i in group:
            at = i * n
            score = 0
            for j in group:
                score += units[at + j]
            scores.append(2 * score)
        return scores
    games = t.pair_games
    for i in group:
        at = i * n
        score = 0
        for j in group:
            if games[at + j]:
                score += 2 * units[at + j] // games[at + j]
        scores.append(score)
    return scores


def format_points(value: Fraction) -> str:
    """Points as people write them: ``3``, ``2½``, ``½``, ``14¾``, ``−1¼``, otherwise a short decimal (``9.3``).

    Quarters come from Sonneborn-Berger (a draw against a player on 2½);
    the pages write them the same way.
    """
    return format_ratio(value.numerator, value.denominator)


def format_ratio(numerator: int, denominator: int) -> str:
    """:func:`format_points` of ``numerator / denominator`` (``denominator`` > 0, any terms), from integers."""
    if numerator < 0:
        return "−" + format_ratio(-numerator, denominator)
    common = gcd(numerator, denominator)
    numerator //= common
    denominator //= common
    whole, rest = divmod(numerator, denominator)
    if rest == 0:
        return str(whole)
    glyph = _GLYPHS.get((rest, denominator))
    if glyph is not None:
        return f"{whole}{glyph}" if whole else glyph
    return f"{numerator / denominator:g}"


_GLYPHS: Final = {(1, 4): "¼", (1, 2): "½", (3, 4): "¾"}
