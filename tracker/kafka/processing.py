"""What a worker does with one results record, without Kafka.

How this works
--------------

The Faust table ``tournaments`` maps a tournament id to the tournament's
**event log**: the JSON array of every event the tournament accepted, in the
order they were applied (``[{"type":"tournament_opened",…},{…}]``, each
element exactly :func:`~tracker.core.events.encode_event`'s bytes).  Folding
the log rebuilds the crosstable exactly, seq included: opening is seq 1 and
every accepted event adds one, so ``seq == len(log)``.  Rejected and
re-delivered events are not in the log.  A log is small (a 20-player round
robin with every result corrected once is ~70 kB) and appending is a byte
copy, so the table stores it whole and Faust writes it whole to the
changelog; compaction keeps the latest per tournament.

The live :class:`~tracker.core.crosstable.Tournament` is cached in memory.
The cache entry remembers the log it was built from, and it is used only if
the table still holds that very log (an identity or byte comparison, no
decoding): after a restart or a rebalance, when the table was recovered
from the changelog or another worker applied events meanwhile, the
tournament is rebuilt by folding the stored log, once.

:meth:`Processor.handle` turns one record into an :class:`Outcome`: the new
table value (``None`` when nothing changed), the ``snapshot`` and
``update`` messages to produce, or a dead letter.  A record whose event the
tournament has already applied (Kafka's at-least-once re-delivery after a
crash or a rebalance) changes nothing, but its ``update`` is produced again,
recomputed from the log, because the crash may have come after the table
write and before the update reached the broker; gateways ignore the
duplicate by its seq.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Final, TypedDict

import msgspec

from tracker.core.apply import apply, fold, step
from tracker.core.crosstable import Tournament
from tracker.core.errors import DecodeError, EventRejected
from tracker.core.events import Event, decode_event, encode_event
from tracker.core.standings import Standings, standings
from tracker.protocol import snapshot_message, standings_payload, update_message

log = logging.getLogger(__name__)

EMPTY_LOG: Final = b"[]"
_log_decoder: Final = msgspec.json.Decoder(list[Event])
_json: Final = msgspec.json.Encoder(decimal_format="number")


class DeadLetter(TypedDict):
    """A rejected record on ``tracker-dead-letters``.

    ``event`` is the event as JSON, or the record's text when it was not
    JSON at all; ``id`` is the event's id when it could be read.
    """

    tournament: str
    id: str | None
    code: str
    reason: str
    event: Any


@dataclass(frozen=True, slots=True)
class Outcome:
    """The records one results record leads to.

    ``log`` is the table's new value (``None``: unchanged); ``snapshot`` and
    ``update`` go to the snapshots and standings topics, ``dead_letter`` to
    the dead-letter topic.  All are keyed by ``tournament``.
    """

    tournament: str
    log: bytes | None = None
    snapshot: bytes | None = None
    update: bytes | None = None
    dead_letter: bytes | None = None


def append(event_log: bytes | None, body: bytes) -> bytes:
    """The log with one more event body at the end."""
    if event_log is None or event_log == EMPTY_LOG:
        return b"[" + body + b"]"
    return event_log[:-1] + b"," + body + b"]"


def read_log(event_log: bytes) -> list[Event]:
    """The events of a log, in order.  Raises :class:`DecodeError` for a damaged log."""
    try:
        return _log_decoder.decode(event_log)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise DecodeError(f"damaged event log: {exc}") from None


def rebuild(event_log: bytes) -> Tournament | None:
    """Fold a log into a fresh tournament (``None`` for an empty log).

    Raises :class:`DecodeError` for a damaged log and
    :class:`EventRejected` for a log no tracker wrote.
    """
    return fold(read_log(event_log))


def dead_letter(tournament: str, value: bytes, code: str, reason: str) -> bytes:
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
    return _json.encode(letter)


def decode_dead_letter(value: bytes) -> DeadLetter:
    """Read a dead letter.  Raises :class:`DecodeError` when it is not one."""
    try:
        return msgspec.json.decode(value, type=DeadLetter)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise DecodeError(f"invalid dead letter: {exc}") from None


@dataclass(slots=True)
class _Live:
    log: bytes
    state: Tournament
    standings: Standings


class Processor:
    """The tournaments of the partitions a worker owns, kept live between records."""

    def __init__(self) -> None:
        self._live: dict[str, _Live] = {}

    def handle(self, key: bytes | None, value: bytes | None, stored: bytes | None) -> Outcome:
        """Apply one record to the tournament whose log is ``stored``.

        Returns the outcome; never raises: an invalid event, a key that is not
        the event's tournament, and (logged) anything unexpected become a
        dead letter, so one bad record never stops a partition.
        """
        tournament = (key or b"").decode("utf-8", "replace")
        try:
            return self._handle(tournament, value or b"", stored)
        except Exception as exc:
            log.exception("record for %r could not be processed", tournament)
            self._live.pop(tournament, None)
            return Outcome(tournament, dead_letter=dead_letter(tournament, value or b"", "internal-error", repr(exc)))

    def forget(self) -> None:
        """Drop every live tournament (partitions were revoked: they are rebuilt on next use)."""
        self._live.clear()

    def _handle(self, tournament: str, value: bytes, stored: bytes | None) -> Outcome:
        try:
            event = decode_event(value)
        except DecodeError as exc:
            return Outcome(tournament, dead_letter=dead_letter(tournament, value, "bad-event", str(exc)))
        if event.tournament != tournament:
            reason = f"the record's key {tournament!r} is not the event's tournament {event.tournament!r}"
            return Outcome(tournament, dead_letter=dead_letter(tournament, value, "wrong-key", reason))
        live = self._current(tournament, stored)
        try:
            if live is None:
                state, update = apply(None, event)
            else:
                state, update = apply(live.state, event, live.standings)
        except EventRejected as exc:
            return Outcome(tournament, dead_letter=dead_letter(tournament, value, exc.code, exc.reason))
        if update is None:
            assert live is not None  # only an open tournament can have applied the event before
            return Outcome(tournament, snapshot=_snapshot(live.standings), update=_replayed(live.log, event.id))
        new_log = append(None if live is None else live.log, encode_event(event))
        self._live[tournament] = _Live(new_log, state, update.standings)
        payload = standings_payload(update.standings)  # built once for the snapshot and the update
        return Outcome(
            tournament, log=new_log, snapshot=snapshot_message(payload), update=update_message(update, payload)
        )

    def _current(self, tournament: str, stored: bytes | None) -> _Live | None:
        """The live tournament matching the table's value, rebuilt when it does not."""
        live = self._live.get(tournament)
        if live is not None and (live.log is stored or live.log == stored):
            return live
        state = None if stored is None else rebuild(stored)
        if stored is None or state is None:
            self._live.pop(tournament, None)
            return None
        live = self._live[tournament] = _Live(stored, state, standings(state))
        return live


def _snapshot(s: Standings) -> bytes:
    return snapshot_message(standings_payload(s))


def _replayed(event_log: bytes, event_id: str) -> bytes | None:
    """The update an already applied event produced, recomputed from the log."""
    events = read_log(event_log)
    state: Tournament | None = None
    for event in events:
        if event.id == event_id:
            _, update = apply(state, event)
            return None if update is None else update_message(update)
        state, _ = step(state, event)
    return None
