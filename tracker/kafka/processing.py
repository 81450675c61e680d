"""What a worker does with the results records it takes, without Kafka.

How this works
--------------

The Faust table ``tournaments`` holds **one entry per accepted event**: the
key is the tournament id, a slash and the event's seq (``"open-2026/17"``:
a tournament id has no slash), the value exactly
:func:`~tracker.core.events.encode_event`'s bytes of the event.  Opening is
seq 1 and every accepted event adds one, so a tournament's entries are
``/1`` to ``/seq`` without a hole, and folding them in that order rebuilds
the crosstable exactly, seq included.  Rejected and re-delivered events get
no entry.  Each accepted event writes one entry and changes no other, so the
changelog gets one record of about 170 bytes per event however long the
tournament (the whole log rewritten per event cost O(n) bytes per event,
O(n²) per tournament); the table needs no entry for the latest seq, since
it is where the entries stop.  The entries of a tournament go to the
changelog partition of its results partition in the order written, so what
a crash leaves on the broker is always the entries ``/1`` to ``/k`` of some
``k``.  (A snapshot plus the offset it covers would also be O(1) per
event, but a standings snapshot is kilobytes where an event is 170 bytes, and
the gateway's TRF and projections need the events anyway.)

The live :class:`~tracker.core.crosstable.Tournament` is cached in memory
with its seq and the bytes of its last entry, and used only while the table
agrees: entry ``/seq`` holds those bytes and there is no entry ``/seq+1``.
After a restart or a rebalance, when the table was recovered from the
changelog or another worker applied events meanwhile, the tournament is
rebuilt by folding its stored entries, once.

:meth:`Processor.handle` turns one record into an :class:`Outcome`: the
table entry to write (``None`` when nothing changed), the ``update``
message to produce, or a dead letter.  A record whose event the tournament
has already applied (Kafka's at-least-once re-delivery after a crash or a
rebalance) changes nothing, but its ``update`` is produced again,
recomputed from the entries, because the crash may have come after the
table write and before the update reached the broker; gateways ignore the
duplicate by its seq.  :meth:`Processor.snapshots` gives, once per batch of
records, the ``snapshot`` message of every tournament handled since the
last call, at its latest standings: ``tracker-snapshots`` is compacted, so
only the latest one matters.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final, NotRequired, Protocol, TypedDict

import msgspec

from tracker.core.apply import apply, fold, step
from tracker.core.crosstable import Tournament
from tracker.core.errors import DecodeError, EventRejected
from tracker.core.events import Event, decode_event, encode_event
from tracker.core.phrases import Said
from tracker.core.standings import Standings, standings
from tracker.protocol import StandingsPayload, encoding_payload, snapshot_message, update_message

log = logging.getLogger(__name__)

SEPARATOR: Final = "/"
_json: Final = msgspec.json.Encoder(decimal_format="number")
_legacy_decoder: Final = msgspec.json.Decoder(list[msgspec.Raw])


class Entries(Protocol):
    """The table as the processor reads it: a key's value, or ``None``."""

    def get(self, key: bytes) -> bytes | None: ...


class DeadLetter(TypedDict):
    """A rejected record on ``tracker-dead-letters``.

    ``event`` is the event as JSON, or the record's text when it was not
    JSON at all; ``id`` is the event's id when it could be read; ``said``
    the reason as a phrase (``{"key", "args"}``) when it has one.
    """

    tournament: str
    id: str | None
    code: str
    reason: str
    event: Any
    said: NotRequired[Said | None]


@dataclass(frozen=True, slots=True)
class Outcome:
    """The records one results record leads to.

    ``entry`` is the table key and value to write (``None``: nothing to
    write); ``update`` goes to the standings topic, ``dead_letter`` to the
    dead-letter topic.  Both are keyed by ``tournament``.
    """

    tournament: str
    entry: tuple[bytes, bytes] | None = None
    update: bytes | None = None
    dead_letter: bytes | None = None


def entry_key(tournament: str, seq: int) -> bytes:
    """The table key of a tournament's event number ``seq``."""
    return f"{tournament}{SEPARATOR}{seq}".encode()


def parse_entry_key(key: bytes) -> tuple[str, int] | None:
    """The tournament and seq of a table key, or ``None`` when it is not an entry's key."""
    tournament, slash, seq = key.decode("utf-8", "replace").rpartition(SEPARATOR)
    if not slash or not tournament or not seq.isdigit():
        return None
    return tournament, int(seq)


def legacy_log(value: bytes | None) -> list[bytes]:
    """The events of a value in the table's older layout (the whole log under the tournament id), else none.

    That layout is read, never written: a table recovered from an older
    worker's changelog keeps its tournaments (their events are seqs 1 to
    the log's length, and entries continue from there).  Raises
    :class:`DecodeError` for a value that is not a JSON array.
    """
    if not value:
        return []
    try:
        return [bytes(raw) for raw in _legacy_decoder.decode(value)]
    except msgspec.DecodeError as exc:
        raise DecodeError(f"a table value in the older layout is not a JSON array of events: {exc}") from exc


def stored_entries(table: Entries, tournament: str) -> Iterator[bytes]:
    """The tournament's entries in the table, from seq 1 to the first one missing.

    A log in the older layout (:func:`legacy_log`) under the tournament id comes first.
    """
    older = legacy_log(table.get(tournament.encode()))
    yield from older
    seq = len(older) + 1
    while (body := table.get(entry_key(tournament, seq))) is not None:
        yield body
        seq += 1


def read_entries(bodies: Iterator[bytes] | list[bytes]) -> list[Event]:
    """The events of entries, in order.  Raises :class:`DecodeError` for a damaged entry."""
    return [decode_event(body) for body in bodies]


def rebuild(bodies: Iterator[bytes] | list[bytes]) -> Tournament | None:
    """Fold entries into a fresh tournament (``None`` for no entries).

    Raises :class:`DecodeError` for a damaged entry and
    :class:`EventRejected` for entries no tracker wrote.
    """
    return fold(read_entries(bodies))


def dead_letter(tournament: str, value: bytes, code: str, reason: str, said: Said | None = None) -> bytes:
    """The dead-letter record of a rejected ``value``."""
    try:
        body: Any = msgspec.json.decode(value)
    except msgspec.DecodeError:
        body = value.decode("utf-8", "replace")
    event_id = body.get("id") if isinstance(body, dict) else None
    letter: DeadLetter = {
        "tournament": tournament,
        "id": event_id if isinstance(event_id, str) else None,
        "code": code,
        "reason": reason,
        "event": body,
    }
    if said is not None:
        letter["said"] = said
    return _json.encode(letter)


def decode_dead_letter(value: bytes) -> DeadLetter:
    """Read a dead letter.  Raises :class:`DecodeError` when it is not one."""
    try:
        return msgspec.json.decode(value, type=DeadLetter)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise DecodeError(f"invalid dead letter: {exc}") from None


@dataclass(slots=True)
class _Live:
    seq: int
    last: bytes  # the value of entry ``/seq``, as written
    state: Tournament
    standings: Standings


@dataclass(slots=True)
class _Latest:
    standings: Standings
    payload: StandingsPayload | None  # encoding_payload(standings), when it was built anyway


class Processor:
    """The tournaments of the partitions a worker owns, kept live between records."""

    def __init__(self) -> None:
        self._live: dict[str, _Live] = {}
        self._touched: dict[str, _Latest] = {}

    def handle(self, key: bytes | None, value: bytes | None, table: Entries) -> Outcome:
        """Apply one record to its tournament, whose entries are in ``table``.

        Returns the outcome, whose entry the caller writes to the table
        before it hands the processor another record; never raises: an
        invalid event, a key that is not the event's tournament, and
        (logged) anything unexpected become a dead letter, so one bad record
        never stops a partition.
        """
        tournament = (key or b"").decode("utf-8", "replace")
        try:
            return self._handle(tournament, value or b"", table)
        except Exception as exc:
            log.exception("record for %r could not be processed", tournament, extra={"tournament": tournament})
            self._live.pop(tournament, None)
            return Outcome(tournament, dead_letter=dead_letter(tournament, value or b"", "internal-error", repr(exc)))

    def snapshots(self) -> list[tuple[str, bytes]]:
        """``(tournament, snapshot message)`` of every tournament handled since the last call, then forgets them.

        Each is the tournament's latest standings: produce them before the
        updates of the records handled meanwhile (see :mod:`tracker.kafka.worker`).
        """
        touched, self._touched = self._touched, {}
        return [
            (tournament, snapshot_message(latest.payload or encoding_payload(latest.standings)))
            for tournament, latest in touched.items()
        ]

    def forget(self) -> None:
        """Drop every live tournament (partitions were revoked: they are rebuilt on next use)."""
        self._live.clear()

    def _handle(self, tournament: str, value: bytes, table: Entries) -> Outcome:
        try:
            event = decode_event(value)
        except DecodeError as exc:
            return Outcome(tournament, dead_letter=dead_letter(tournament, value, "bad-event", str(exc)))
        if event.tournament != tournament:
            reason = f"the record's key {tournament!r} is not the event's tournament {event.tournament!r}"
            return Outcome(tournament, dead_letter=dead_letter(tournament, value, "wrong-key", reason))
        live = self._current(tournament, table)
        body = encode_event(event)  # the entry's value, and what the fingerprint of the event reads
        try:
            # rows=False: the standings are only encoded (from their table) and compared, never read
            if live is None:
                state, update = apply(None, event, encoded=body, rows=False)
            else:
                state, update = apply(live.state, event, live.standings, encoded=body, rows=False)
        except EventRejected as exc:
            log.info(
                "event %s of %s rejected (%s): %s",
                event.id,
                tournament,
                exc.code,
                exc.reason,
                extra={"tournament": tournament, "event_id": event.id, "code": exc.code},
            )
            return Outcome(tournament, dead_letter=dead_letter(tournament, value, exc.code, exc.reason, exc.said))
        if update is None:
            assert live is not None  # only an open tournament can have applied the event before
            self._touched[tournament] = _Latest(live.standings, None)
            return Outcome(tournament, update=_replayed(table, tournament, event.id))
        self._live[tournament] = _Live(state.seq, body, state, update.standings)
        payload = encoding_payload(update.standings)  # built once for the update and the snapshot
        self._touched[tournament] = _Latest(update.standings, payload)
        return Outcome(
            tournament, entry=(entry_key(tournament, state.seq), body), update=update_message(update, payload)
        )

    def _current(self, tournament: str, table: Entries) -> _Live | None:
        """The live tournament matching the table's entries, rebuilt when it does not."""
        live = self._live.get(tournament)
        if live is not None and table.get(entry_key(tournament, live.seq + 1)) is None:
            stored = table.get(entry_key(tournament, live.seq))
            if stored is live.last or stored == live.last:
                return live
        state = rebuild(stored_entries(table, tournament))
        if state is None:
            self._live.pop(tournament, None)
            return None
        live = self._live[tournament] = _Live(
            state.seq, table.get(entry_key(tournament, state.seq)) or b"", state, standings(state, rows=False)
        )
        return live


def _replayed(table: Entries, tournament: str, event_id: str) -> bytes | None:
    """The update an already applied event produced, recomputed from the entries."""
    state: Tournament | None = None
    for event in read_entries(stored_entries(table, tournament)):
        if event.id == event_id:
            _, update = apply(state, event)
            return None if update is None else update_message(update)
        state, _ = step(state, event)
    return None
