"""What one tie-break kind is, everywhere it is used: the :class:`Rule`, and the crosstables it reads.

A kind's rule is read by three consumers, each through its own view of a
crosstable:

* the **live standings** (:mod:`tracker.core.standings`) read a
  :class:`~tracker.core.crosstable.Tournament`: :attr:`Rule.column` gives a
  :class:`Column` (sort keys, higher first, and the values shown), or, for a
  kind decided inside each group tied so far (direct encounter),
  :attr:`Rule.places` gives the places inside one group;
* the **projection's ranking** of a complete scenario reads a :class:`Final`
  (integer arrays of a finished crosstable): :attr:`Rule.final` or
  :attr:`Rule.final_places`;
* the **projection's search** reads a :class:`Span` (what is known about a
  crosstable whose remaining games are partly decided: intervals of scores,
  of the points between each pair, of the wins): :attr:`Rule.difference`
  bounds ``value_j − value_i``; for a kind decided inside groups,
  :attr:`Rule.group_difference` bounds the same at the group's first split
  while the group itself is not known yet.

A kind without the projection's parts (``final`` and ``difference``, or
``final_places`` and ``group_difference``) is *not projectable*: the
projection refuses an order that uses it (an allow-list: :attr:`Rule.projectable`),
it never ranks by another kind in its place.  Its words (:attr:`Rule.name`,
:meth:`Rule.what`, :attr:`Rule.better`) travel in the standings payload, so
the pages explain a column without knowing the kind.

Everything is in the core's integer units (:mod:`tracker.core.scoring`);
points are ``1/denominator`` of a point.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final as Constant
from typing import NamedTuple

from tracker.core.crosstable import Tournament
from tracker.core.events import Rules
from tracker.core.order import TieBreak
from tracker.core.phrases import Phrase, Said, render

BOTH: Constant[frozenset[Rules]] = frozenset({"2024", "2026"})


@dataclass(frozen=True, slots=True)
class Column:
    """One kind's values for every player (by index): ``keys`` sort (higher first), ``values`` are shown.

    ``values`` (default: ``keys``) is in units of ``1/denominator``; keys and
    values differ where a lower value ranks first (``TPN``: the key is minus
    the start number).
    """

    keys: Sequence[int]
    denominator: int
    values: Sequence[int] | None = None

    @property
    def shown(self) -> Sequence[int]:
        return self.keys if self.values is None else self.values


@dataclass(slots=True)
class Frame:
    """What no remaining game changes, for the projection's two views.

    Per player (by index): start numbers and ratings; ``trailing`` the
    trailing-bye units left out of a score when it counts for an opponent's
    Sonneborn-Berger (``Tournament._adjusted_score``); ``de_weight[i][j]``
    turns points against ``j`` into C.07 §6 DE units (meetings averaged,
    doubled to stay integral); ``thresholds[limit]`` the final Koya line of
    each limit (qualifies when ``2·score ≥ threshold``).
    """

    n: int
    start_nos: list[int]
    ratings: list[int]
    trailing: list[int]
    de_weight: list[list[int]]
    thresholds: dict[int, int]


@dataclass(slots=True)
class Final:
    """A complete crosstable in units: ``points[i][j]`` is what ``i`` scored against ``j``.

    ``memo`` lets a rule keep what it computed for this crosstable (Koya per
    limit is asked for twice: as a criterion and as the projected KS).
    """

    frame: Frame
    score: list[int]
    wins: list[int]
    points: list[list[int]]
    memo: dict[object, Sequence[int]] = field(default_factory=dict)


@dataclass(slots=True)
class Span:
    """A crosstable with some remaining games decided: lowest and highest values over the completions.

    Scores (``s_lo``/``s_hi``), points between each pair (``p_lo``/``p_hi``,
    as :attr:`Final.points`) and wins (``w_lo``/``w_hi``).  The search
    mutates these lists in place as it decides games; a rule only reads them.
    """

    frame: Frame
    s_lo: list[int]
    s_hi: list[int]
    p_lo: list[list[int]]
    p_hi: list[list[int]]
    w_lo: list[int]
    w_hi: list[int]

    def settled(self) -> Final:
        """The crosstable as far as it is decided (meaningful for players whose games are all decided)."""
        return Final(self.frame, self.s_lo, self.w_lo, self.p_lo)


def _english(words: str | Phrase) -> str:
    return words if isinstance(words, str) else words.english


class Words(NamedTuple):
    """What a column is, for people: the words the pages show beside it (one code of a kind)."""

    code: str
    name: str
    what: str
    better: str
    lower_first: bool


#: ``difference(span, tb, j, i, weight)``: the interval of ``value_j − value_i`` over the completions of ``span``.
#: ``weight``, when given, is raised for the players whose games could still narrow it (the search branches there).
Difference = Callable[[Span, TieBreak, int, int, "list[int] | None"], tuple[int, int]]


#: ``group_difference(span, i, candidates, certain, possible)``, for a kind decided inside the group tied so far:
#: per ``j`` of ``candidates``, where ``score_j − score_i`` at the group's first split lies over every group
#: holding ``i``, ``j``, the rest of ``certain`` and any of the rest of ``possible`` (over the completions of
#: ``span``): :data:`AHEAD` (above 0 in all of them), :data:`BEHIND` (below 0), :data:`LEVEL` (each member's
#: share of it exactly 0: the kind separates ``i`` and ``j`` in no group, both go on to the next criterion
#: together) or :data:`OPEN`.
GroupDifference = Callable[[Span, int, list[int], list[int], list[int]], list[int]]
#: :data:`GroupDifference`'s verdicts.
AHEAD: Constant = 1
BEHIND: Constant = -1
OPEN: Constant = 0
LEVEL: Constant = 2


@dataclass(frozen=True, slots=True)
class Rule:
    """Everything one kind means (see the module docstring).

    ``listed`` orders the kinds wherever they are listed (error messages);
    ``editions`` are the C.07 editions that define the kind; ``parse`` reads
    a code of this kind with parameters (``KS/L-2``), returning ``None`` for
    a code of another kind (default: the kind itself, nothing else).
    """

    kind: str
    name: str | Phrase
    what: Phrase | Callable[[TieBreak], Said]
    better: str | Phrase
    listed: int
    lower_first: bool = False
    editions: frozenset[Rules] = BOTH
    syntax: str = ""
    parse: Callable[[str], TieBreak | None] | None = None
    column: Callable[[Tournament, TieBreak], Column] | None = None
    places: Callable[[Tournament, list[int]], dict[int, int]] | None = None
    final: Callable[[Final, TieBreak], Sequence[int]] | None = None
    final_places: Callable[[Final, list[int]], dict[int, int]] | None = None
    difference: Difference | None = None
    group_difference: GroupDifference | None = None

    @property
    def grouped(self) -> bool:
        """Decided inside each group tied on the criteria before it (C.07 §6), not by one column."""
        return self.places is not None

    @property
    def projectable(self) -> bool:
        """Whether the projection can rank and bound by this kind (its two parts are given)."""
        if self.grouped:
            return self.final_places is not None and self.group_difference is not None
        return self.final is not None and self.difference is not None

    def words(self, tb: TieBreak) -> Words:
        """The words of code ``tb`` (a code of this kind), in English.

        The pages write them in their language from the same phrases, found by the kind:
        ``tiebreak.<kind>.name``, ``.what`` (``KS/L±n``: ``tiebreak.KS.what.limit``) and ``.better``.
        """
        what = self.what() if isinstance(self.what, Phrase) else self.what(tb)
        return Words(tb.code, _english(self.name), render(what, str), _english(self.better), self.lower_first)

    def read(self, text: str) -> TieBreak | None:
        """``text`` (upper case, stripped) as a code of this kind, or ``None``."""
        if self.parse is not None:
            return self.parse(text)
        return TieBreak(self.kind, self.kind) if text == self.kind else None


def descending(values: list[int]) -> list[int]:
    """The indices of ``values``, higher values first, equal ones in their order (a stable insertion sort: the
    tied groups it orders are small, and compiled it beats ``sorted`` with a key)."""
    order: list[int] = list(range(len(values)))
    for k in range(1, len(values)):
        e = order[k]
        v = values[e]
        m = k
        while m > 0 and values[order[m - 1]] < v:
            order[m] = order[m - 1]
            m -= 1
        order[m] = e
    return order
