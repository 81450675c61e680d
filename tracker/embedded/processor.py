"""The embedded processor: core ``apply`` + journal, in one process.

Recipe per submitted event: apply it to the tournament's state (rejecting it
with the core's reason if invalid), append it to the journal, and once the
journal has committed it publish the update into the gateway's sink and
acknowledge.  Nothing is published or acknowledged before it is durable.

Two things make that hold for unlucky clients:

- **A retry shares the original's fate.**  While an event is on its way to
  the journal, a submit of the same event (same id, same content) waits for
  it and gets the same answer: acknowledged once it is durable, or rejected
  with it when the journal fails.  It is never acknowledged early.
- **What is committed is published, whatever the submitter does.**  The
  journal write and the publish after it run in a task the processor owns;
  a submitter that disconnects (its submit cancelled) stops waiting, not the
  commit.  :meth:`EmbeddedProcessor.drain` waits for these tasks on shutdown.

If a commit fails, the tournaments whose events were in the failed batch
are rebuilt from the journal at once (before any other event is applied),
so the in-memory state never holds an event the journal does not.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

from tracker.core.apply import Batch, apply, fold
from tracker.core.crosstable import Tournament
from tracker.core.errors import DecodeError, EventRejected
from tracker.core.events import Event, decode_event, encode_event
from tracker.core.standings import Standings, standings
from tracker.embedded.journal import Journal, JournalError
from tracker.gateway.backend import Sink
from tracker.gateway.metrics import Metrics
from tracker.protocol import StandingsPayload, standings_payload, update_message


class EmbeddedProcessor:
    """Owns every tournament's state in this process; the gateway's backend in ``tracker up``."""

    def __init__(self, journal: Journal, metrics: Metrics) -> None:
        self.journal = journal
        self.metrics = metrics
        self.states: dict[str, Tournament] = {}
        self.last: dict[str, Standings] = {}
        self.sink: Sink | None = None
        self._committing: dict[tuple[str, str], asyncio.Future[int]] = {}  # (tournament, event id) → its seq
        self._commits: set[asyncio.Task[None]] = set()
        journal.on_failure = self._rebuild
        metrics.gauges["tracker_journal_lag"] = lambda: journal.lag

    def replay(self, rows: Iterable[tuple[int, bytes]], progress: Callable[[int], None] | None = None) -> int:
        """Fold journalled events ``(position, body)`` into the state (no updates); return how many.

        Each tournament is folded in one :class:`~tracker.core.apply.Batch`
        (its sums computed once).  Raises :class:`JournalError` naming the
        journal file and the row of an event that cannot be read or applied:
        the journal is not what tracker wrote, and guessing would serve
        standings nobody acknowledged.
        """
        count = 0
        batches: dict[str, Batch] = {tid: Batch(state) for tid, state in self.states.items()}
        for pos, body in rows:
            try:
                event = decode_event(body)
                batch = batches.get(event.tournament)
                if batch is None:
                    batch = batches[event.tournament] = Batch()
                batch.fold(event)
            except (DecodeError, EventRejected) as exc:
                raise JournalError(f"{self.journal.path}: row {pos} cannot be replayed: {exc}") from None
            count += 1
            if progress is not None and count % 10_000 == 0:
                progress(count)
        for tid, batch in batches.items():
            state = batch.finish()
            if state is not None:
                self.states[tid] = state
                self.last[tid] = standings(state)
        return count

    def attach(self, sink: Sink) -> None:
        self.sink = sink
        for s in self.last.values():
            sink.install(standings_payload(s))

    async def submit(self, event: Event) -> int:
        """Apply, journal and publish ``event``; return its seq once it is durable.

        Raises :class:`EventRejected` with the core's reason, or with code
        ``not-durable`` when the journal could not write it (then nothing of
        it is kept).  A re-delivered event answers with the current seq, once
        the original is durable if it is still being written.
        """
        tid = event.tournament
        key = (tid, event.id)
        try:
            state, update = apply(self.states.get(tid), event, self.last.get(tid))
            if update is None:  # applied before (same content): share the original's fate if it is in flight
                seq = state.seq  # the tournament's seq now, as the Kafka worker answers a re-delivery
                original = self._committing.get(key)
                if original is not None:
                    await asyncio.shield(original)
                return seq
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
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._committing[key] = done
        task = asyncio.create_task(self._commit(event, payload, message, update.seq, done), name=f"commit-{tid}")
        self._commits.add(task)
        task.add_done_callback(self._commits.discard)
        return await asyncio.shield(done)

    async def _commit(
        self, event: Event, payload: StandingsPayload, message: bytes, seq: int, done: asyncio.Future[int]
    ) -> None:
        """Journal ``event``, then publish its update and resolve ``done``; owned by the processor, never cancelled."""
        key = (event.tournament, event.id)
        try:
            await self.journal.append(event.tournament, event.id, encode_event(event))
        except JournalError as exc:
            done.set_exception(EventRejected(str(exc), code="not-durable"))
        else:
            if self.sink is not None:
                self.sink.publish(payload, message)
            done.set_result(seq)
        finally:
            self._committing.pop(key, None)
            if not done.done():  # pragma: no cover - the journal raises only JournalError
                done.set_exception(EventRejected("the event could not be written", code="not-durable"))
            if done.exception() is not None:
                done.exception()  # retrieved: nobody may be waiting any more (the submitter disconnected)

    async def drain(self) -> None:
        """Wait until every accepted event is journalled and published (or failed): on shutdown."""
        while self._commits:
            await asyncio.gather(*self._commits, return_exceptions=True)

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
