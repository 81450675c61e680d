"""Standings: the ordered table, with shared ranks, and its JSON shape.

The order follows the tournament's tie-break list (TRF26 212 syntax, ``PTS``
first).  Each criterion splits the groups still tied after the ones before
it; ``DE`` is evaluated inside each such group (C.07 §6).  Players equal on
every criterion share a rank (1, 1, 3 …) and are listed by start number.

Values are exact (:class:`~fractions.Fraction`); :func:`standings_json` turns
them into JSON numbers (halves and quarters are exact in binary).  Beside the
rows, a table carries the same values as integer columns in standings order
(:class:`Table`): what a worker encodes after every result, without making a
row or a Fraction per value (``standings(t, rows=False)``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache, partial
from itertools import compress, pairwise
from operator import attrgetter, itemgetter, ne, neg
from typing import Any, Final, NamedTuple, cast

from tracker.core.crosstable import Tournament
from tracker.core.events import Rules, Scoring, Teams
from tracker.core.line import koya_threshold
from tracker.core.order import TieBreak
from tracker.core.phrases import format_points as format_points
from tracker.core.phrases import format_ratio as format_ratio
from tracker.core.scoring import Units
from tracker.core.teams.setup import TeamSetup, setup_of
from tracker.core.teams.standings import TeamStandings, team_standings
from tracker.core.tiebreaks import parse_tiebreaks, rule_of
from tracker.core.tiebreaks.rule import Column, Rule


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


class Table(NamedTuple):
    """The rows' values as columns in standings order, in the core's integer units.

    What :func:`tracker.protocol.shapes.encoding_payload` writes the rows' JSON from: the same values as
    :attr:`Standings.rows` (a row's ``points`` is ``points[k] / denominator``, its ``tiebreaks`` the
    ``shown`` columns' ``values[k] / denominator`` in the codes' order, its ``line`` ``lines[k] / (2 ×
    denominator)``), without a :class:`Row` or a :class:`~fractions.Fraction` made per value.
    """

    ranks: Sequence[int]
    start_nos: Sequence[int]
    names: Sequence[str]
    points: Sequence[int]
    denominator: int
    #: per shown code, in the codes' order: its values and their denominator
    shown: tuple[tuple[Sequence[int], int], ...]
    games: Sequence[int]
    withdrawn: Sequence[bool]
    qualified: Sequence[bool]
    #: twice the units of each row's line (:func:`~tracker.core.line.koya_threshold`)
    lines: Sequence[int]
    results: Sequence[tuple[tuple[int, int, str, str], ...]]


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
    #: a team event's team standings (the opening event's ``teams``, its team order); ``None``: an individual event
    teams: TeamStandings | None = None
    #: the rows' values as integer columns (:class:`Table`), when :func:`standings` made them: made with
    #: ``rows=False``, the standings have a table and no rows (a worker's, encoded and compared, never read)
    table: Table | None = field(default=None, compare=False, repr=False)

    def row(self, start_no: int) -> Row:
        for row in self.rows:
            if row.start_no == start_no:
                return row
        raise KeyError(start_no)


def standings(t: Tournament, *, rows: bool = True) -> Standings:
    """The current standings of ``t`` (provisional until every game is in).

    Built for speed, since it runs after every result: the ranking sorts
    integer keys; the places of a criterion decided inside tied groups (DE)
    are kept per group (:attr:`Tournament.de_places`) until a game between
    two of its members changes; every column is read once in standings
    order (the :class:`Table`); values become :class:`~fractions.Fraction`
    only at the end, one object per value (:func:`exact`), and the rows are
    assembled column by column.  ``rows=False`` stops at the table: the
    standings then have no rows (what a worker needs: it encodes them from
    the table and compares their keys).
    """
    plan, scoring = _made_once(t)
    den = t.units.denominator
    columns = {tb.code: column(t, tb) for tb, column in plan.columns}
    start_nos = t.start_nos
    order, ranks, rank_of = _rank(t, plan, columns)
    win = t.units.win
    games = t.line_games_all()
    line_of = {g: koya_threshold(win, g, 0) for g in set(games)}
    results = t.results_cache
    if None in results:
        for i, cached in enumerate(results):
            if cached is None:
                t.results_of(i)
    pick = itemgetter(*order)  # every column is read in standings order
    shown_columns = [columns[tb.code] for tb in plan.shown]
    table = Table(
        ranks=ranks,
        start_nos=pick(start_nos),
        names=tuple(map(_name, pick(t.opened.players))),
        points=pick(t.score),
        denominator=den,
        shown=tuple([(pick(c.shown), c.denominator) for c in shown_columns]),
        games=pick(t.games),
        withdrawn=pick(t.withdrawn),
        qualified=pick(t.qualified[0]),
        lines=tuple(map(line_of.__getitem__, pick(games))),
        results=pick(results),
    )
    complete = t.complete
    return Standings(
        tournament=t.id,
        name=t.name,
        seq=t.seq,
        rounds=t.rounds,
        provisional=not complete,
        basis=t.basis if complete else t.provisional_basis,
        max_basis=t.basis,
        codes=plan.codes,
        rows=_rows(table) if rows else (),
        scoring=scoring,
        rules=t.rules,
        keys=tuple(zip(start_nos, rank_of, t.score, *(c.shown for c in shown_columns), t.withdrawn, strict=True)),
        teams=team_standings(t, _team_setup(t.opened.teams)) if isinstance(t.opened.teams, Teams) else None,
        table=table,
    )


def _rows(table: Table) -> tuple[Row, ...]:
    """The rows of a table: its values made :class:`~fractions.Fraction` (one object per value), row by row in C."""
    shown = [map(_fractions(den).__getitem__, values) for values, den in table.shown]
    return tuple(
        map(
            _make_row,
            zip(
                table.ranks,
                table.start_nos,
                table.names,
                map(_fractions(table.denominator).__getitem__, table.points),
                zip(*shown, strict=True),
                table.games,
                table.withdrawn,
                table.qualified,
                map(_fractions(2 * table.denominator).__getitem__, table.lines),
                table.results,
                strict=True,
            ),
        )
    )


@lru_cache(maxsize=64)
def _team_setup(teams: Teams) -> TeamSetup:
    """The team setup of an opening event's ``teams``, made once per tournament (the struct is hashable)."""
    return setup_of(teams)


#: A :class:`Row` from a tuple of its fields in order, built in C (``Row(...)`` runs Python code per row).
_make_row = cast(Callable[[tuple[Any, ...]], Row], partial(tuple.__new__, Row))


_name = attrgetter("name")


class _Plan(NamedTuple):
    """What a tie-break order means for ranking and display, worked out once per order."""

    #: the order, PTS first, each with its rule
    order: tuple[tuple[TieBreak, Rule], ...]
    #: the codes with one column for everyone (not decided inside groups), sorted or shown, with their columns
    columns: tuple[tuple[TieBreak, Callable[[Tournament, TieBreak], Column]], ...]
    #: the codes shown in rows (the order without PTS, plus KS)
    shown: tuple[TieBreak, ...]
    codes: tuple[str, ...]


@lru_cache(maxsize=256)
def _plan(codes: tuple[str, ...], rules: Rules) -> _Plan:
    """The plan for a tournament's tie-break codes, keyed by the codes as sent (cheap to hash)."""
    order = parse_tiebreaks(codes, rules)
    shown = tuple(tb for tb in order if tb.kind != "PTS")
    if not any(tb.code == "KS" for tb in shown):
        shown += (TieBreak("KS", "KS"),)
    ruled = {tb.code: (tb, rule_of(tb)) for tb in (*order, *shown)}
    return _Plan(
        order=tuple(ruled[tb.code] for tb in order),
        columns=tuple((tb, rule.column) for tb, rule in ruled.values() if rule.column is not None),
        shown=shown,
        codes=tuple(tb.code for tb in shown),
    )


#: ``id(opening event) → (the event, its plan, its exact scoring)``: what :func:`standings` reads per tournament,
#: found by the event's identity (one int lookup; the lru caches hash the scoring's nine Decimals per call, and
#: compare them).  The entry holds the event, so its id is not reused while it is cached.
_OPENED: Final[dict[int, tuple[object, _Plan, tuple[tuple[str, Fraction], ...]]]] = {}


def _made_once(t: Tournament) -> tuple[_Plan, tuple[tuple[str, Fraction], ...]]:
    """:func:`_plan` and :func:`_scoring` of ``t``'s opening event, looked up by its identity."""
    opened = t.opened
    hit = _OPENED.get(id(opened))
    if hit is None or hit[0] is not opened:
        if len(_OPENED) >= 256:
            _OPENED.clear()
        hit = _OPENED[id(opened)] = (opened, _plan(opened.tiebreaks, t.rules), _scoring(opened.scoring, t.units))
    return hit[1], hit[2]


def display_codes(t: Tournament) -> tuple[TieBreak, ...]:
    """The codes shown in rows: the order without ``PTS``, plus ``KS`` if absent."""
    return _plan(t.opened.tiebreaks, t.rules).shown


def _rank(t: Tournament, plan: _Plan, columns: dict[str, Column]) -> tuple[list[int], list[int], list[int]]:
    """Player indices in standings order, the rank of each in that order and by index.

    A criterion decided inside groups (DE) is evaluated inside each group
    tied on the criteria before it (places cached per group, see
    :attr:`Tournament.de_places`) and becomes a column of places, added to
    ``columns``; then every player has an integer key (the criteria in
    order, a place as its negative) and one sort orders the table, ties
    listed by start number.  Runs after every result, so the per-player work
    is done by C loops (sorts, maps, zips) and Python code runs per group,
    not per player.
    """
    n = t.n
    start_nos = t.start_nos
    keys: list[Sequence[int]] = []
    for tb, rule in plan.order:
        column = columns.get(tb.code)
        if column is None:  # decided inside the groups tied so far
            prefix: Sequence[Any] = keys[0] if len(keys) == 1 else list(zip(*keys, strict=True))
            places = _places_column(t, tb, rule, prefix)
            column = columns[tb.code] = Column(list(map(neg, places)), 1, places)
        keys.append(column.keys)
    full = list(zip(*keys, strict=True))
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


def _places_column(t: Tournament, tb: TieBreak, rule: Rule, prefix: Sequence[Any]) -> list[int]:
    """Each player's place inside the group tied with them on ``prefix``, by ``rule`` (0: not tied).

    Places are cached per group (:attr:`Tournament.de_places`): only the
    groups whose members changed are decided again.
    """
    n = t.n
    assert rule.places is not None  # a rule without a column is decided inside groups
    places = [0] * n
    # a stable sort: inside each tied group the indices stay ascending (the cache key)
    grouped = sorted(range(n), key=prefix.__getitem__)
    values = list(map(prefix.__getitem__, grouped))
    cuts = [0, *compress(range(1, n), map(ne, values[1:], values)), n]
    cache = t.de_places
    used: dict[tuple[str, tuple[int, ...]], list[int]] = {}
    missed = False
    for lo, hi in pairwise(cuts):
        if hi - lo > 1:
            members = tuple(grouped[lo:hi])
            key = (tb.code, members)
            found = cache.get(key)
            if found is None:
                missed = True
                got = rule.places(t, grouped[lo:hi])
                found = list(map(got.__getitem__, members))
            used[key] = found
            for i, place in zip(members, found, strict=True):
                places[i] = place
    # the code's groups that are no longer tied are dropped; other codes' groups stay.  Every group found and
    # as many as the cache holds: the cache holds exactly these groups, and stays as it is
    if missed or len(used) != len(cache):
        t.de_places = {k: v for k, v in cache.items() if k[0] != tb.code} | used
    return places


_SCORING_FIELDS = ("win", "draw", "loss", "forfeit_win", "forfeit_loss", "full_bye", "half_bye", "zero_bye", "pab")


@lru_cache(maxsize=64)
def _scoring(scoring: Scoring, u: Units) -> tuple[tuple[str, Fraction], ...]:
    """The exact points per outcome; cached by the scoring as sent (``u`` is made from it)."""
    return tuple((name, exact(getattr(u, name), u.denominator)) for name in _SCORING_FIELDS)


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
