"""Auditing official standings: where a published table disagrees with tracker's, and the likely cause.

How this works
--------------

A results site or an arbiter program publishes places (TRF's rank column)
and sometimes tie-break values.  :func:`audit` computes the standings of
the same crosstable under the declared tie-breaks and edition and lists
every player whose place or value differs.  For each difference it then
tries the usual reasons one at a time, on the same crosstable, and names
the first that makes the official figure come out:

1. **different basis** — the Koya maximum on the other basis (``games`` ↔
   ``rounds``: an odd round robin, where they differ);
2. **different edition** — the other C.07 edition (2024 ↔ 2026);
3. **forfeit handling** — forfeits not counted as games (each forfeit read
   as a bye: the points stay, the game leaves KS, SB and DE);
4. **missing game** — one recorded game left out (tried game by game);
5. otherwise, for a place: the declared tie-breaks order the two players
   the other way (the first criterion that separates them is named); for a
   value: no usual cause explains it.

Nothing here reads files; :mod:`tracker.formats.trf` reads the official
figures (:class:`Official`) and the CLI and ``follow`` print the result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Final

import msgspec

from tracker.core.apply import step
from tracker.core.crosstable import Tournament
from tracker.core.errors import EventRejected
from tracker.core.events import Basis, ByeKind, ByeRecorded, Event, ResultRecorded, Rules, TournamentOpened
from tracker.core.phrases import Said, phrase, render
from tracker.core.standings import Standings, format_points, standings
from tracker.core.tiebreaks import parse_tiebreak, parse_tiebreaks, rule_of
from tracker.core.tiebreaks.de import place_words

#: The name of the place column in :class:`Disagreement.what`.
RANK: Final = "rank"


@dataclass(frozen=True, slots=True)
class Official:
    """What a published table says about one player: the place and any tie-break values (by code)."""

    start_no: int
    rank: int | None = None
    values: dict[str, Fraction] = field(default_factory=dict)


# -- the causes, as phrases (the CLI says them in its language; ``Disagreement.cause`` is their English) --------

BASIS: Final = phrase(
    "audit.basis",
    "different basis: the official figures use the Koya maximum on the {basis} basis (tracker: {tracker})",
)
EDITION: Final = phrase(
    "audit.edition", "different edition: the official figures follow C.07 {rules} (the file is read under {read})"
)
FORFEITS: Final = phrase(
    "audit.forfeits",
    "forfeit handling: the official figures do not count forfeits as games (C.07 §15.2 counts them in a round robin)",
)
MISSING: Final = phrase(
    "audit.missing", "missing game: the official figures leave out round {round}, {white}–{black} {result}"
)
UNEXPLAINED: Final = phrase(
    "audit.unexplained", "no usual cause explains it (another definition of the tie-break, or a typing error)"
)
DEFAULT_ORDER: Final = phrase(
    "audit.default_order",
    "{cause:phrase}; the file names no tie-breaks (202/212), so tracker used its default order {order}: pass the "
    "event's own with --tiebreaks",
)
NOT_POINTS: Final = phrase("audit.not_points", "the official place does not follow the points")
POINTS_PLACE: Final = phrase("audit.points_place", "the official place is {other}'s: {theirs} points against {mine}")
OTHER_WAY: Final = phrase(
    "audit.other_way", "the declared tie-breaks order {a} and {b} the other way ({code}: {va} against {vb})"
)
OTHER_WAY_TIED: Final = phrase(
    "audit.other_way_tied",
    "the declared tie-breaks order {a} and {b} the other way ({code}: {va} against {vb} among the tied players)",
)
TIED_ALL: Final = phrase(
    "audit.tied_all", "{a} and {b} are tied on every declared tie-break (lots or a later criterion decided)"
)


@dataclass(frozen=True, slots=True)
class Disagreement:
    """One figure that differs: ``what`` is :data:`RANK` or a tie-break code."""

    start_no: int
    name: str
    what: str
    official: Fraction
    computed: Fraction
    cause: str
    #: the cause as a phrase, for a reader in another language (``cause`` is its English)
    said: Said | None = None

    def sentence(self) -> str:
        """E.g. ``"Caruana (2): rank 2, tracker 1 — different basis (…)"``; a DE value as a place (``2nd``)."""
        label = "place" if self.what == RANK else self.what
        return (
            f"{self.name} ({self.start_no}): {label} {shown(self.what, self.official)} in the official standings, "
            f"{shown(self.what, self.computed)} computed — {self.cause}"
        )


def shown(what: str, value: Fraction) -> str:
    """A figure as the pages and the CLI write it: a place among the tied for a kind decided inside groups (DE:
    ``1st``, ``—``), points otherwise (``2½``)."""
    if what != RANK and rule_of(parse_tiebreak(what)).grouped:
        return place_words(int(value))
    return format_points(value)


def audit(
    opened: TournamentOpened, events: Sequence[Event], official: Sequence[Official], *, declared: bool = True
) -> list[Disagreement]:
    """Every official place or value that differs from the standings of ``opened`` + ``events``.

    Codes the official figures carry but the tournament's order does not
    are computed too (added after the declared ones, so they do not change
    the order).  ``declared`` says whether the file named its tie-breaks
    (``202``/``212``); when it did not, tracker's default order is a likely
    cause of different places.  Returns the disagreements in start-number
    order, each with its likely cause: a trial (another basis, the other
    edition, forfeits as byes, one game left out) counts as the cause when
    it makes *every* official figure of that kind (all places, or all values
    of that code) come out.  Raises :class:`EventRejected` only for events
    the core refuses (they come from a file that already read: a bug).
    """
    extra = [c for o in official for c in o.values if c not in opened.tiebreaks and c != "PTS"]
    if extra:
        opened = msgspec.structs.replace(opened, tiebreaks=(*opened.tiebreaks, *dict.fromkeys(extra)))
    table = standings(_fold(opened, events))
    found: list[Disagreement] = []
    explained: dict[str, Said | None] = {}
    trials = _Trials(opened, events, table)
    for o in sorted(official, key=lambda o: o.start_no):
        try:
            row = table.row(o.start_no)
        except KeyError:
            continue
        checks: list[tuple[str, Fraction, Fraction]] = []
        if o.rank is not None and o.rank != row.rank:
            checks.append((RANK, Fraction(o.rank), Fraction(row.rank)))
        for code, value in o.values.items():
            mine = _figure(table, o.start_no, code)
            if value != mine:
                checks.append((code, value, mine))
        for what, theirs, mine in checks:
            if what not in explained:
                explained[what] = trials.explain(official, what)
            cause = explained[what]
            if cause is None:
                cause = _unexplained(opened, table, o.start_no, what, theirs, declared)
            found.append(Disagreement(o.start_no, row.name, what, theirs, mine, render(cause, str), cause))
    return found


def _fold(opened: TournamentOpened, events: Sequence[Event]) -> Tournament:
    t, _ = step(None, opened)
    for event in events:
        t, _ = step(t, event)
    return t


def _figure(s: Standings, start_no: int, what: str) -> Fraction:
    row = s.row(start_no)
    if what == RANK:
        return Fraction(row.rank)
    return row.points if what == "PTS" else row.tiebreaks[s.codes.index(what)]


def _agrees(s: Standings, official: Sequence[Official], what: str) -> bool:
    """Whether every official figure of kind ``what`` equals ``s``'s."""
    for o in official:
        theirs = (None if o.rank is None else Fraction(o.rank)) if what == RANK else o.values.get(what)
        if theirs is not None and _figure(s, o.start_no, what) != theirs:
            return False
    return True


class _Trials:
    """The standings under each usual cause, computed once per audit and only when asked for."""

    def __init__(self, opened: TournamentOpened, events: Sequence[Event], table: Standings) -> None:
        self.opened = opened
        self.events = events
        self.table = table
        self.cache: list[tuple[Said, Standings | None]] | None = None

    def _tables(self) -> Iterator[tuple[Said, Standings | None]]:
        if self.cache is not None:
            yield from self.cache
            return
        made: list[tuple[Said, Standings | None]] = []
        for cause, trial in self._makers():
            try:
                made.append((cause, standings(_fold(*trial()))))
            except EventRejected:
                made.append((cause, None))
            yield made[-1]
        self.cache = made

    def _makers(self) -> Iterator[tuple[Said, Callable[[], tuple[TournamentOpened, Sequence[Event]]]]]:
        opened, events = self.opened, self.events
        other_basis: Basis = "rounds" if opened.basis == "games" else "games"
        other_rules: Rules = "2024" if opened.rules == "2026" else "2026"
        yield (
            BASIS(basis=other_basis, tracker=opened.basis),
            lambda: (msgspec.structs.replace(opened, basis=other_basis), events),
        )
        yield (
            EDITION(rules=other_rules, read=opened.rules),
            lambda: (msgspec.structs.replace(opened, rules=other_rules), events),
        )
        yield (
            FORFEITS(),
            lambda: (opened, _forfeits_as_byes(events)),
        )
        for left_out in [e for e in events if isinstance(e, ResultRecorded)]:
            yield (
                MISSING(
                    round=left_out.round,
                    white=_name(self.table, left_out.white),
                    black=_name(self.table, left_out.black),
                    result=left_out.result,
                ),
                _leaving_out(opened, events, left_out),
            )

    def explain(self, official: Sequence[Official], what: str) -> Said | None:
        """The first usual cause under which every official figure of kind ``what`` comes out, if any."""
        for cause, table in self._tables():
            if table is not None and _agrees(table, official, what):
                return cause
        return None


def _leaving_out(
    opened: TournamentOpened, events: Sequence[Event], left_out: Event
) -> Callable[[], tuple[TournamentOpened, Sequence[Event]]]:
    """A trial: the crosstable without ``left_out`` (bound now, not when the trial runs)."""
    return lambda: (opened, [e for e in events if e is not left_out])


def _unexplained(
    opened: TournamentOpened, table: Standings, start_no: int, what: str, theirs: Fraction, declared: bool
) -> Said:
    if what != RANK:
        return UNEXPLAINED()
    cause = _order_cause(
        table, tuple(tb.code for tb in parse_tiebreaks(opened.tiebreaks, opened.rules)), start_no, int(theirs)
    )
    if not declared:
        return DEFAULT_ORDER(cause=cause, order=",".join(opened.tiebreaks))
    return cause


_AS_BYES: Final[dict[str, tuple[ByeKind, ByeKind]]] = {
    "+-": ("full", "zero"),
    "-+": ("zero", "full"),
    "--": ("zero", "zero"),
}


def _forfeits_as_byes(events: Sequence[Event]) -> list[Event]:
    """``events`` with every forfeit read as byes: the points stay, the game is gone."""
    out: list[Event] = []
    for e in events:
        if isinstance(e, ResultRecorded) and e.result in ("+-", "-+", "--"):
            kinds = _AS_BYES[e.result]
            for player, kind in zip((e.white, e.black), kinds, strict=True):
                out.append(
                    ByeRecorded(f"{e.id}/as-bye/{player}", e.tournament, e.round, player, kind, replaces_game=True)
                )
        else:
            out.append(e)
    return out


def _order_cause(table: Standings, declared: tuple[str, ...], start_no: int, official_rank: int) -> Said:
    """Who the declared tie-breaks put in the official place, and on which criterion."""
    rows = table.rows
    mine = table.row(start_no)
    other = next((r for r in rows if r.rank == official_rank and r.start_no != start_no), None)
    if other is None:
        other = next((r for r in rows if r.start_no != start_no and r.points == mine.points), None)
    if other is None:
        return NOT_POINTS()
    if other.points != mine.points:
        return POINTS_PLACE(other=other.name, theirs=format_points(other.points), mine=format_points(mine.points))
    for code, a, b in zip(table.codes, mine.tiebreaks, other.tiebreaks, strict=True):
        if a != b and code in declared:
            way = OTHER_WAY_TIED if rule_of(parse_tiebreak(code)).grouped else OTHER_WAY
            return way(a=mine.name, b=other.name, code=code, va=shown(code, a), vb=shown(code, b))
    return TIED_ALL(a=mine.name, b=other.name)


def _name(table: Standings, start_no: int) -> str:
    return table.row(start_no).name
