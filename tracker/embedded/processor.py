"""The embedded processor: core ``apply`` + journal, in one process.

Recipe per submitted event: apply it to the tournament's state (rejecting it
with the core's reason if invalid), append it to the journal, and once the
journal has committed it publish the update into the gateway's sink and
acknowledge.  Nothing is published or acknowledged before it is durable.

If a commit fails, the tournaments whose events were in the failed batch
are rebuilt from the journal at once (before any other event is applied),
so the in-memory state never holds an event the journal does not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tracker.core.apply import apply, fold, step
from tracker.core.crosstable import Tournament
from tracker.core.errors import EventRejected
from tracker.core.events import Event, decode_event, encode_event
from tracker.core.standings import Standings, standings
from tracker.embedded.journal import Journal, JournalError
from tracker.gateway.backend import Sink
from tracker.gateway.metrics import Metrics
from tracker.protocol import standings_payload, update_message


class EmbeddedProcessor:
    """Owns every tournament's state in this process; the gateway's backend in ``tracker up``."""

    def __init__(self, journal: Journal, metrics: Metrics) -> None:
        self.journal = journal
        self.metrics = metrics
        self.states: dict[str, Tournament] = {}
        self.last: dict[str, Standings] = {}
        self.sink: Sink | None = None
        journal.on_failure = self._rebuild
        metrics.gauges["tracker_journal_lag"] = lambda: journal.lag

    def replay(self, bodies: Iterable[bytes], progress: Callable[[int], None] | None = None) -> int:
        """Fold journalled events into the state (no updates); return how many."""
        count = 0
        states = self.states
        for body in bodies:
            event = decode_event(body)
            state, _ = step(states.get(event.tournament), event, explain=False)
            states[event.tournament] = state
            count += 1
            if progress is not None and count % 10_000 == 0:
                progress(count)
        for tid, state in states.items():
            self.last[tid] = standings(state)
        return count

    def attach(self, sink: Sink) -> None:
        self.sink = sink
        for s in self.last.values():
            sink.install(standings_payload(s))

    async def submit(self, event: Event) -> int:
        tid = event.tournament
        try:
            state, update = apply(self.states.get(tid), event, self.last.get(tid))
            if update is None:
                return state.seq  # already applied: idempotent
            payload = standings_payload(update.standings)
            message = update_message(update, payload)  # the rows are built once
        except EventRejected:
            raise
        except Exception as exc:  # a bug or an unbounded input: never keep an event the journal will not have
            self._rebuild({tid})
            raise EventRejected(
                f"the event could not be applied ({type(exc).__name__})", code="internal-error"
            ) from exc
        self.states[tid] = state
        self.last[tid] = update.standings
        try:
            await self.journal.append(tid, event.id, encode_event(event))
        except JournalError as exc:
            raise EventRejected(str(exc), code="not-durable") from None
        if self.sink is not None:
            self.sink.publish(payload, message)
        return update.seq

    def _rebuild(self, tournaments: set[str]) -> None:
        """Reset tournaments to exactly what the journal holds."""
        for tid in tournaments:
            state = fold(decode_event(body) for body in self.journal.read_tournament(tid))
            if state is None:
                self.states.pop(tid, None)
                self.last.pop(tid, None)
            else:
                self.states[tid] = state
                self.last[tid] = standings(state)

    def state(self, tournament: str) -> Tournament | None:
        return self.states.get(tournament)
