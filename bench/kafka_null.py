"""``tracker worker`` with a processor that computes nothing: what Faust and the worker's records cost alone.

``python -m bench.kafka_null worker --broker … --partitions …`` runs the real
``tracker worker`` command (the same Faust app, tables, batches, publisher
and producer) with :meth:`Processor._handle <tracker.kafka.processing.Processor>`
replaced by :func:`canned`: per record it decodes the event and checks its key
as the real one does, stores the event's own table entry, and answers with a
canned ``update`` (a real 10-player update from the middle of a round robin,
with the record's event id spliced in) and a canned snapshot, without
applying anything.  So its rate against the bare loop is the most the worker
could reach with the core's cost at zero while it still produces one update
per accepted event.  A benchmark tool only: the canned updates are not the
standings of anything.

``BENCH_NULL_EVERY=N`` (an experiment, not in ``make bench``) answers with one
canned update per ``N`` events of a tournament instead, listing the event ids
it covers in ``events`` (and at the last event of a benchmark tournament): the
most that updates covering several results would give, which the protocol
does not have.
"""

from __future__ import annotations

import os
import sys
from typing import Final

from bench.scenario import tournament
from tracker.cli import main
from tracker.core.apply import apply
from tracker.core.crosstable import Tournament
from tracker.core.errors import DecodeError
from tracker.core.events import Event, decode_event, encode_event
from tracker.kafka import processing
from tracker.kafka.processing import Entries, Outcome, Processor, dead_letter, entry_key
from tracker.protocol import encoding_payload, update_message

_MIDDLE: Final = 22  # of the 45 results of a 10-player round robin
EVENTS: Final = 46  # of a benchmark tournament: the opening and 45 results
EVERY: Final = int(os.environ.get("BENCH_NULL_EVERY", "1"))


def _template() -> tuple[processing._Latest, bytes, bytes]:
    """A real update of a 10-player round robin halfway through, its event id, and its standings."""
    opened, results = tournament("canned", 10, seed=17)
    state: Tournament | None = None
    update = None
    events: list[Event] = [opened, *results[:_MIDDLE]]
    for event in events:
        state, update = apply(state, event)
    assert update is not None
    payload = encoding_payload(update.standings)  # as the real processor builds it
    event_id = results[_MIDDLE - 1].id
    return processing._Latest(update.standings, payload), update_message(update, payload), event_id.encode()


_LATEST, _UPDATE, _ID = _template()
_seqs: dict[str, int] = {}
_waiting: dict[str, list[str]] = {}  # per tournament, the events since its last canned update


def canned(self: Processor, tournament: str, value: bytes, table: Entries) -> Outcome:
    """The real record handling minus ``apply``: decode, check the key, store the entry, answer canned."""
    try:
        event = decode_event(value)
    except DecodeError as exc:
        return Outcome(tournament, dead_letter=dead_letter(tournament, value, "bad-event", str(exc)))
    if event.tournament != tournament:
        return Outcome(tournament, dead_letter=dead_letter(tournament, value, "wrong-key", "not the key"))
    seq = _seqs[tournament] = _seqs.get(tournament, 0) + 1
    self._touched[tournament] = _LATEST
    entry = (entry_key(tournament, seq), encode_event(event))
    update = _UPDATE.replace(_ID, event.id.encode())
    if EVERY > 1:
        waiting = _waiting.setdefault(tournament, [])
        waiting.append(event.id)
        if len(waiting) < EVERY and seq < EVENTS:
            return Outcome(tournament, entry=entry)
        covered = b",".join(b'{"id":"%s"}' % i.encode() for i in waiting)
        waiting.clear()
        update = update[:-1] + b',"events":[' + covered + b"]}"
    return Outcome(tournament, entry=entry, update=update)


if __name__ == "__main__":
    Processor._handle = canned  # type: ignore[method-assign]
    sys.exit(main(sys.argv[1:]))
