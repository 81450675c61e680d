"""The one transition function, and the diff live subscribers receive.

``step(state, event)`` is the transition: it validates the event against
the state (raising :class:`~tracker.core.errors.EventRejected` with nothing
changed) and applies it to the state *in place*, O(n).  ``fold(events)``
steps through many events (a journal on start, a file); ``apply(state,
event)`` steps and returns the :class:`Update` live subscribers receive: the
new standings, the rows that changed, who entered or left each player's
qualifying set, and the event that caused it.

Re-delivering an event whose id the tournament has applied returns no update
and changes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress
from operator import ne
from typing import Final, NamedTuple, assert_never

from tracker.core.checks import Plan, check_opened, plan, require_tournament
from tracker.core.crosstable import Entry, Tournament
from tracker.core.errors import EventRejected
from tracker.core.events import (
    ByeRecorded,
    ByeVoided,
    Event,
    PlayerWithdrawn,
    ResultCorrected,
    ResultRecorded,
    ResultVoided,
    TournamentOpened,
    encode_event,
)
from tracker.core.phrases import ENGLISH, Language, Said, phrase, plural, points_value, render
from tracker.core.standings import Row, Standings, standings
from tracker.core.tiebreaks import parse_tiebreaks


@dataclass(frozen=True, slots=True)
class QualificationChange:
    """Opponents (start numbers) who entered or left ``player``'s qualifying set."""

    player: int
    entered: tuple[int, ...]
    left: tuple[int, ...]


class Change(NamedTuple):
    """What :func:`step` did: the players whose entries changed and the line flips.

    ``reached``/``fell`` are the start numbers that crossed the 50% line
    (limit 0) upwards or downwards.  A named tuple, as :class:`~tracker.core.standings.Row`: one is made per
    result, and a tuple is several times cheaper to make than a dataclass.
    """

    players: tuple[int, ...]
    reached: tuple[int, ...]
    fell: tuple[int, ...]
    qualification: tuple[QualificationChange, ...]


@dataclass(frozen=True, slots=True)
class Update:
    """One accepted event's effect, as pushed to subscribers."""

    tournament: str
    seq: int
    event: Event
    standings: Standings
    changed: tuple[int, ...]
    reached: tuple[int, ...]
    fell: tuple[int, ...]
    qualification: tuple[QualificationChange, ...]
    summary: str
    said: tuple[Said, ...] = ()
    """The summary as phrases (:func:`said_of`): what a client renders in its viewer's language."""


def step(
    state: Tournament | None, event: Event, *, explain: bool = True, encoded: bytes | None = None
) -> tuple[Tournament, Change | None]:
    """Apply ``event`` to ``state`` in place; return the state and what changed.

    ``state`` is ``None`` before the tournament is opened.  Returns a ``None``
    change for an event id already applied.  Raises :class:`EventRejected`
    (and subclasses) for an invalid event; the state is then unchanged.
    ``explain=False`` skips working out who entered or left each qualifying
    set (the change then has no ``qualification``): replaying a journal on
    start needs the state, not the story.  ``encoded`` is ``encode_event(event)`` when the caller has it
    (what :func:`fingerprint` reads).
    """
    if state is None and isinstance(event, TournamentOpened):
        check_opened(event)
        t = Tournament(event, parse_tiebreaks(event.tiebreaks, event.rules))
        t.applied[event.id] = fingerprint(event, encoded)
        t.seq = 1
        return t, Change((), (), (), ())
    t = require_tournament(state, event)
    if already_applied(t, event, encoded):
        return t, None
    p = plan(t, event)
    players = p.players
    met = t.pair_games[players[0] * t.n + players[1]] if len(players) == 2 else 0  # games of the pair before
    flips = _carry_out(t, p, bulk=False)
    t.applied[event.id] = fingerprint(event, encoded)
    t.seq += 1
    reached = tuple(sorted(t.start_nos[p] for limit, p, now in flips if limit == 0 and now))
    fell = tuple(sorted(t.start_nos[p] for limit, p, now in flips if limit == 0 and not now))
    return t, Change(
        players=tuple(t.start_nos[p] for p in players),
        reached=reached,
        fell=fell,
        qualification=_qualification_changes(t, players, met, flips) if explain else (),
    )


def _carry_out(t: Tournament, p: Plan, *, bulk: bool) -> list[tuple[int, int, bool]]:
    """Make the change ``p`` says; return the qualification flips (none in ``bulk``, whose sums wait for a resum)."""
    if p.withdraws:
        t.withdrawn[p.players[0]] = True
        t.withdrawn_from[p.players[0]] = p.round
        return []
    if bulk:
        t.store_entries(p.round, p.players, p.new)
        return []
    return t.set_entries(p.round, p.players, p.new)


class Batch:
    """Many events folded into one tournament, the running sums computed once at the end.

    What replaying a journal or reading a file needs: :meth:`fold` validates
    each event exactly as :func:`step` does (same checks, same
    :class:`EventRejected`, nothing changed by a rejected event; re-delivered
    ids are skipped) but only stores the entries; :meth:`finish` recomputes score, SB, the line and
    Koya from them (:meth:`Tournament.resum`, O(entries)).  Folding event by
    event moves those sums O(n) per result — O(n³) for a whole round robin,
    minutes at 500 players.  No standings, diffs or explanations are built.
    """

    def __init__(self, state: Tournament | None = None) -> None:
        self._state = state
        self._stale = False

    def fold(self, event: Event) -> None:
        """Validate and store ``event``; raises :class:`EventRejected` with nothing changed."""
        if self._state is None:
            self._state, _ = step(self._state, event, explain=False)
            return
        t = require_tournament(self._state, event)
        if already_applied(t, event):
            return
        p = plan(t, event)
        _carry_out(t, p, bulk=True)
        self._stale = self._stale or not p.withdraws
        t.applied[event.id] = fingerprint(event)
        t.seq += 1

    def finish(self) -> Tournament | None:
        """The tournament with every sum up to date (``None`` when nothing was opened)."""
        if self._state is not None and self._stale:
            self._state.resum()
            self._stale = False
        return self._state


def fold(events: Iterable[Event], state: Tournament | None = None) -> Tournament | None:
    """Fold ``events`` into ``state`` (in place when given) in one :class:`Batch`; ``None`` for no events.

    The running sums are computed once at the end, and no one's qualifying
    set story is worked out: a replay needs the state, not the story.
    Raises :class:`EventRejected` at the first invalid event; the events
    before it stay applied, with their sums up to date.
    """
    batch = Batch(state)
    try:
        for event in events:
            batch.fold(event)
    finally:
        state = batch.finish()
    return state


def fingerprint(event: Event, encoded: bytes | None = None) -> int:
    """A 64-bit digest of the event's canonical JSON: what "the same event" means for a re-delivery.

    ``encoded`` is that JSON (``encode_event(event)``) when the caller has it.
    """
    body = encode_event(event) if encoded is None else encoded
    return int.from_bytes(hashlib.blake2b(body, digest_size=8).digest(), "big")


def already_applied(t: Tournament, event: Event, encoded: bytes | None = None) -> bool:
    """Whether ``t`` applied this very event before (a re-delivery: apply it again and nothing changes).

    Raises :class:`EventRejected` (``id-reused``) when ``t`` applied an event
    with this id and different content: acknowledging it would tell the sender
    a change was made that never was.
    """
    known = t.applied.get(event.id)
    if known is None:
        return False
    if known != fingerprint(event, encoded):
        raise EventRejected(ID_REUSED(id=event.id), code="id-reused")
    return True


def apply(
    state: Tournament | None,
    event: Event,
    previous: Standings | None = None,
    *,
    encoded: bytes | None = None,
    rows: bool = True,
) -> tuple[Tournament, Update | None]:
    """Apply ``event`` and compute the update subscribers receive.

    ``previous`` is the standings before the event (computed from ``state``
    when not given); ``encoded`` is ``encode_event(event)`` when the caller
    has it (a worker stores it anyway); ``rows=False`` gives the update's
    standings without rows, only their table (``standings(t, rows=False)``:
    what a worker encodes).  Returns ``(state, None)`` for a re-delivered event.
    Raises :class:`EventRejected` for an invalid one; the state is then
    unchanged.
    """
    if previous is None and state is not None:
        previous = standings(state, rows=rows)
    t, change = step(state, event, encoded=encoded)
    if change is None:
        return t, None
    after = standings(t, rows=rows)
    changed, moves = _compare(previous, after)
    return t, Update(
        tournament=t.id,
        seq=t.seq,
        event=event,
        standings=after,
        changed=changed,
        reached=change.reached,
        fell=change.fell,
        qualification=change.qualification,
        summary=summary_text(said := said_of(t, event, change, moves), _namer(t)),
        said=said,
    )


def diff(before: Standings | None, after: Standings) -> tuple[int, ...]:
    """Start numbers whose rank, points or tie-breaks differ between two standings."""
    return _compare(before, after)[0]


def _compare(before: Standings | None, after: Standings) -> tuple[tuple[int, ...], list[tuple[int, int, int]] | None]:
    """:func:`diff`, and whose KS moved: ``(start no, before, after)`` in KS units, in ``after``'s order.

    The second is ``None`` when no KS is shown.  One pass over both tables'
    integer keys (:attr:`Standings.keys`) for both answers: :func:`apply`
    needs them after every result.
    """
    k = 3 + after.codes.index("KS") if "KS" in after.codes else -1
    if before is None:
        changed = tuple(after.table.start_nos if after.table is not None else [row.start_no for row in after.rows])
        if k < 0:
            return changed, None
        now = sorted((key[1], key[0], key[k]) for key in after.keys if key[k] != 0)
        return changed, [(start_no, 0, units) for _, start_no, units in now]
    if before.codes != after.codes or len(before.keys) != len(after.keys):
        return _compare_rows(before, after), None  # not two tables of one tournament: no KS story
    moved = list(map(ne, before.keys, after.keys))
    new = list(compress(after.keys, moved))
    if k < 0:
        return tuple(sorted([key[0] for key in new])), None
    # rows are listed by rank, then start number
    moves = sorted(
        (now[1], now[0], was[k], now[k])
        for was, now in zip(compress(before.keys, moved), new, strict=True)
        if was[k] != now[k]
    )
    return tuple(sorted([key[0] for key in new])), [(start_no, was, now) for _, start_no, was, now in moves]


def _compare_rows(before: Standings, after: Standings) -> tuple[int, ...]:
    """:func:`diff` of two tables that need not share their codes or players, row by row."""
    old: dict[int, Row] = {row.start_no: row for row in before.rows}
    changed = []
    for row in after.rows:
        prev = old.get(row.start_no)
        if prev is None or (prev.rank, prev.points, prev.tiebreaks, prev.withdrawn) != (
            row.rank,
            row.points,
            row.tiebreaks,
            row.withdrawn,
        ):
            changed.append(row.start_no)
    return tuple(sorted(changed))


def _qualification_changes(
    t: Tournament, players: tuple[int, ...], met: int, flips: list[tuple[int, int, bool]]
) -> tuple[QualificationChange, ...]:
    """Per player, opponents who entered or left the qualifying set (limit 0).

    A player's qualifying set is the opponents met who qualify, so it moves
    only where an opponent's qualification flipped (``flips``), and, for the
    two ``players`` of a game, where their own pair changed: ``met`` is how
    many games the pair had before the event.
    """
    n = t.n
    qualified = t.qualified[0]
    flipped = {f: up for limit, f, up in flips if limit == 0}
    moved: dict[int, tuple[list[int], list[int]]] = {}
    pair = set(players) if len(players) == 2 else set()
    for f, up in flipped.items():
        for o in t.opponents(f):
            if f in pair and o in pair:
                continue  # the pair of the game: below
            sets = moved.get(o)
            if sets is None:
                sets = moved[o] = ([], [])
            sets[0 if up else 1].append(f)
    if pair:
        a, b = players
        meets = t.pair_games[a * n + b] > 0
        for p, o in ((a, b), (b, a)):
            was = met > 0 and qualified[o] != (o in flipped)
            now = meets and qualified[o]
            if was != now:
                sets = moved.get(p)
                if sets is None:
                    sets = moved[p] = ([], [])
                sets[0 if now else 1].append(o)
    start_no = t.start_nos.__getitem__
    changes = []
    for p in sorted(moved, key=start_no):
        entered, left = moved[p]
        changes.append(
            QualificationChange(start_no(p), tuple(sorted(map(start_no, entered))), tuple(sorted(map(start_no, left))))
        )
    return tuple(changes)


# -- plain words ----------------------------------------------------------------

OPENED: Final = plural("summary.opened", "{name} opened with {n} player", "{name} opened with {n} players")
RECORDED: Final = phrase("summary.recorded", "{white:player}–{black:player} {result:result} (round {round})")
CORRECTED: Final = phrase(
    "summary.corrected", "{white:player}–{black:player} corrected to {result:result} (round {round})"
)
VOIDED: Final = phrase("summary.voided", "{white:player}–{black:player} (round {round}) voided")
BYES: Final = {
    "full": phrase("summary.bye.full", "{player:player} has a full bye in round {round}"),
    "half": phrase("summary.bye.half", "{player:player} has a half bye in round {round}"),
    "zero": phrase("summary.bye.zero", "{player:player} has a zero bye in round {round}"),
    "pab": phrase("summary.bye.pab", "{player:player} has a pab bye in round {round}"),
}
BYE_VOIDED: Final = phrase("summary.bye_voided", "{player:player}'s bye in round {round} voided")
WITHDRAWS: Final = phrase("summary.withdraws", "{player:player} withdraws")
WITHDRAWS_FROM: Final = phrase("summary.withdraws_from", "{player:player} withdraws from round {round}")
REACHES: Final = phrase("summary.reaches", "{player:player} reaches 50%")
FALLS: Final = phrase("summary.falls", "{player:player} falls below 50%")
KS_MOVES: Final = phrase("summary.ks", "{player:player}'s KS {delta:signed}")
ID_REUSED: Final = phrase(
    "rejected.id_reused",
    "event id {id} was already used for a different event; send a new id (result_corrected to change a result)",
)
#: How a summary's head and its parts are put together (the parts as a comma-separated list).
SUMMARY: Final = phrase("summary", "{head}: {parts}")
PARTS: Final = phrase("summary.parts", "{first}, {next}")


def describe(t: Tournament, event: Event, change: Change, before: Standings | None, after: Standings) -> str:
    """One sentence for people, e.g. "Caruana–So ½–½: So reaches 50%, Caruana's KS +½"."""
    return summary_text(said_of(t, event, change, _compare(before, after)[1]), _namer(t))


@lru_cache(maxsize=4096)
def _short_name(name: str) -> str:
    """How the sentence names a player: the surname of "Surname, Given" (cached: a summary names several)."""
    return name.split(",")[0].strip() or name


def _namer(t: Tournament) -> Callable[[int], str]:
    players, index = t.opened.players, t.index
    return lambda start_no: _short_name(players[index[start_no]].name)


def said_of(t: Tournament, event: Event, change: Change, moves: list[tuple[int, int, int]] | None) -> tuple[Said, ...]:
    """What :func:`describe` says, as phrases: the event's, then who crossed the line and whose KS moved."""
    match event:
        case TournamentOpened():
            head = OPENED(name=event.name, n=len(event.players))
        case ResultRecorded():
            head = RECORDED(white=event.white, black=event.black, result=event.result, round=event.round)
        case ResultCorrected():
            head = CORRECTED(white=event.white, black=event.black, result=event.result, round=event.round)
        case ResultVoided():
            head = VOIDED(white=event.white, black=event.black, round=event.round)
        case ByeRecorded():
            head = BYES[event.kind](player=event.player, round=event.round)
        case ByeVoided():
            head = BYE_VOIDED(player=event.player, round=event.round)
        case PlayerWithdrawn():
            head = (
                WITHDRAWS_FROM(player=event.player, round=event.round)
                if event.round
                else WITHDRAWS(player=event.player)
            )
        case _:
            assert_never(event)
    parts = [REACHES(player=p) for p in change.reached]
    parts += [FALLS(player=p) for p in change.fell]
    denominator = t.units.denominator
    for start_no, was, now in moves or ():
        parts.append(KS_MOVES(player=start_no, delta=points_value(now - was, denominator)))
    return (head, *parts)


def summary_text(said: Sequence[Said], names: Callable[[int], str], language: Language = ENGLISH) -> str:
    """A summary's phrases (:func:`said_of`) as one sentence in ``language``: the head, then its parts."""
    head = render(said[0], names, language)
    if len(said) == 1:
        return head
    if language.forms(PARTS.key) == PARTS.forms and language.forms(SUMMARY.key) == SUMMARY.forms:
        # the English joints ("{first}, {next}", "{head}: {parts}") put text between texts: written
        # without a phrase said and rendered per joint (a worker writes a summary per result)
        return f"{head}: {', '.join([render(part, names, language) for part in said[1:]])}"
    parts = render(said[-1], names, language)
    for part in reversed(said[1:-1]):
        parts = render(PARTS(first=render(part, names, language), next=parts), names, language)
    return render(SUMMARY(head=head, parts=parts), names, language)


__all__ = [
    "Batch",
    "Change",
    "Entry",
    "QualificationChange",
    "Update",
    "apply",
    "describe",
    "diff",
    "fold",
    "said_of",
    "step",
    "summary_text",
]
