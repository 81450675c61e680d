"""Real updates for protocol and hub tests: a tournament's events through the core, as the processor encodes them."""

from __future__ import annotations

from collections.abc import Iterable

from tracker.core.apply import apply
from tracker.core.crosstable import Tournament
from tracker.core.events import Event
from tracker.core.standings import Standings
from tracker.protocol import StandingsPayload, standings_payload, update_message


def feed(events: Iterable[Event]) -> list[tuple[StandingsPayload, bytes]]:
    """``(payload, message)`` of every accepted event, in order: what ``Hub.publish`` is given."""
    state: Tournament | None = None
    last: Standings | None = None
    out = []
    for event in events:
        state, update = apply(state, event, last)
        assert update is not None
        last = update.standings
        payload = standings_payload(update.standings)
        out.append((payload, update_message(update, payload)))
    return out
