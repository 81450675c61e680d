"""Standings: the ordered table, with shared ranks, and its JSON shape.

The order follows the tournament's tie-break list (TRF26 212 syntax, ``PTS``
first).  Each criterion splits the groups still tied after the ones before
it; ``DE`` is evaluated inside each such group (C.07 §6).  Players equal on
every criterion share a rank (1, 1, 3 …) and are listed by start number.

Values are exact (:class:`~fractions.Fraction`); :func:`standings_json` turns
them into JSON numbers (halves and quarters are exact in binary).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import NamedTuple

from tracker.core.crosstable import Tournament
from tracker.core.editions import record_column
from tracker.core.tiebreaks import RECORD_KINDS, TieBreak, koya_threshold


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

    def row(self, start_no: int) -> Row:
        for row in self.rows:
            if row.start_no == start_no:
                return row
        raise KeyError(start_no)


def display_codes(t: Tournament) -> tuple[TieBreak, ...]:
    """The codes shown in rows: the order without ``PTS``, plus ``KS`` if absent."""
    shown = tuple(tb for tb in t.tiebreaks if tb.kind != "PTS")
    if not any(tb.code == "KS" for tb in shown):
        shown += (TieBreak("KS", "KS"),)
    return shown


def standings(t: Tournament) -> Standings:
    """The current standings of ``t`` (provisional until every game is in)."""
    n = t.n
    den = t.units.denominator
    de = [0] * n
    shown = display_codes(t)
    records = {tb.code: record_column(t, tb) for tb in (*t.tiebreaks, *shown) if tb.kind in RECORD_KINDS}
    groups = _rank_groups(t, list(range(n)), 0, _sort_values(t, records), de)
    complete = t.complete
    columns = [records[tb.code][1] if tb.code in records else _display_column(t, tb, de) for tb in shown]
    lines = t.line_games_all()
    win = t.units.win
    rows = []
    rank = 1
    for group in groups:
        for i in sorted(group, key=lambda i: t.start_nos[i]):
            player = t.opened.players[i]
            rows.append(
                Row(
                    rank=rank,
                    start_no=player.start_no,
                    name=player.name,
                    points=exact(t.score[i], den),
                    tiebreaks=tuple(column[i] for column in columns),
                    games=t.games[i],
                    withdrawn=t.withdrawn[i],
                    qualified=t.qualified[0][i],
                    line=exact(koya_threshold(win, lines[i], 0), 2 * den),
                    results=t.results_of(i),
                )
            )
        rank += len(group)
    return Standings(
        tournament=t.id,
        name=t.name,
        seq=t.seq,
        rounds=t.rounds,
        provisional=not complete,
        basis=t.basis if complete else t.provisional_basis,
        max_basis=t.basis,
        codes=tuple(tb.code for tb in shown),
        rows=tuple(rows),
        scoring=_scoring(t),
        rules=t.rules,
    )


def _rank_groups(
    t: Tournament, group: list[int], pos: int, keys: list[Sequence[int]], de: list[int]
) -> list[list[int]]:
    """``group`` split into ordered groups tied on every criterion from ``pos`` on.

    Runs of criteria other than DE are applied as one sort on a key tuple;
    DE is evaluated inside each group still tied when its turn comes.
    """
    order = t.tiebreaks
    if len(group) == 1 or pos == len(order):
        return [group]
    if order[pos].kind == "DE":
        places = direct_encounter(t, group)
        for i in group:
            de[i] = places[i]
        parts = list(_split(group, {i: -places[i] for i in group}))
        end = pos + 1
    else:
        end = pos
        while end < len(order) and order[end].kind != "DE":
            end += 1
        columns = keys[pos:end]
        parts = list(_split(group, {i: tuple(c[i] for c in columns) for i in group}))
    result: list[list[int]] = []
    for part in parts:
        result.extend(_rank_groups(t, part, end, keys, de))
    return result


_SCORING_FIELDS = ("win", "draw", "loss", "forfeit_win", "forfeit_loss", "full_bye", "half_bye", "zero_bye", "pab")


def _scoring(t: Tournament) -> tuple[tuple[str, Fraction], ...]:
    u = t.units
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


def _split(group: list[int], values: dict[int, int] | dict[int, tuple[int, ...]]) -> Iterable[list[int]]:
    """``group`` ordered by ``values`` (higher first), cut where the value changes."""
    ordered = sorted(group, key=values.__getitem__, reverse=True)
    current = [ordered[0]]
    for i in ordered[1:]:
        if values[i] == values[current[0]]:
            current.append(i)
        else:
            yield current
            current = [i]
    yield current


@lru_cache(maxsize=4096)
def exact(numerator: int, denominator: int) -> Fraction:
    """``numerator/denominator`` as a Fraction, shared between rows and updates.

    Standings repeat a few small values over and over; caching them saves
    most of the cost of building rows, and equal values being the same object
    makes comparing two standings cheap.
    """
    return Fraction(numerator, denominator)


def _display_column(t: Tournament, tb: TieBreak, de: list[int]) -> list[Fraction]:
    den = t.units.denominator
    if tb.kind == "PTS":
        return [exact(v, den) for v in t.score]
    if tb.kind == "SB":
        return [exact(v, den * den) for v in t.sb]
    if tb.kind == "WON":
        return [exact(v, 1) for v in t.wins]
    if tb.kind == "KS":
        return [exact(v, den) for v in t.ks[tb.limit]]
    return [exact(v, 1) for v in de]


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
    members = set(group)
    scores = {i: _de_score(t, i, members) for i in group}
    parts = list(_split(group, scores))
    if len(parts) == 1:
        for i in group:
            places[i] = base
        return
    offset = base
    for part in parts:
        if len(part) == 1:
            places[part[0]] = offset
        else:
            _resolve(t, part, offset, places)
        offset += len(part)


def _de_score(t: Tournament, i: int, members: set[int]) -> int:
    """Twice the DE score in units (averages of two meetings stay integral)."""
    versus = t.versus[i]
    if len(members) < len(versus):
        return sum(2 * rec[0] // rec[1] for j in members if (rec := versus.get(j)) is not None)
    return sum(2 * total // count for j, (total, count) in versus.items() if j in members)


def format_points(value: Fraction) -> str:
    """Points as people write them: ``3``, ``2½``, ``½``, ``14¾``, ``−1¼``, otherwise a short decimal (``9.3``).

    Quarters come from Sonneborn-Berger (a draw against a player on 2½);
    the pages write them the same way.
    """
    if value < 0:
        return "−" + format_points(-value)
    whole, rest = divmod(value, 1)
    if rest == 0:
        return str(int(whole))
    glyph = {Fraction(1, 4): "¼", Fraction(1, 2): "½", Fraction(3, 4): "¾"}.get(rest)
    if glyph is not None:
        return f"{int(whole)}{glyph}" if whole else glyph
    return f"{float(value):g}"
