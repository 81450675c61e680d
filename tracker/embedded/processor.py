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
- **The ack does not wait for the audience.**  Once the journal has committed
  an event, its submitter's future is resolved and its update is queued for
  the publisher task, which fans updates out in seq order after yielding to
  the loop, so the ack is written before the fan-out to thousands of
  subscribers, not after it.

If a commit fails, the tournaments whose events were in the failed batch
are rebuilt from the journal at once (before any other event is applied),
so the in-memory state never holds an event the journal does not.

**Finished tournaments are compacted.**  A live :class:`Tournament` and its
last :class:`Standings` cost about 50 KB for ten players, and a finished
tournament rarely changes again.  Once a tournament is complete (every game
in), has no event on its way to the journal and has been idle for
``compact_after`` seconds, the processor drops both and remembers only its
id: the journal holds every event it accepted, so the state is exactly
``fold`` of the tournament's journalled events.  An event for a compacted
tournament (a correction, a re-delivery whose id must be recognised)
rehydrates it first, synchronously, then proceeds as for any live
tournament; :meth:`EmbeddedProcessor.state` folds a transient copy for
readers (TRF, projections, stakes, the arbiter's schedule) without keeping
it.  The journal is never behind for a compacted tournament: compaction
waits for its last commit.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable

from tracker.core.apply import Batch, apply, fold
from tracker.core.boards import BoardSet, check_board
from tracker.core.checks import NOT_OPEN
from tracker.core.crosstable import Tournament
from tracker.core.errors import DecodeError, EventRejected, UnknownTournament
from tracker.core.events import BoardUpdated, Event, decode_event, encode_event
from tracker.core.phrases import phrase
from tracker.core.standings import Standings, standings
from tracker.embedded.boards import BoardStore
from tracker.embedded.journal import Journal, JournalError
from tracker.gateway.backend import Sink
from tracker.gateway.metrics import Metrics
from tracker.protocol import StandingsPayload, standings_payload, update_message

FINISHED = phrase("rejected.finished", "tournament {tournament} is finished: every game is in")
#: seconds a finished tournament stays live after its last accepted event (corrections reuse the live state)
COMPACT_AFTER = 30.0


class EmbeddedProcessor:
    """Owns every tournament's state in this process; the gateway's backend in ``tracker up``.

    ``states`` and ``last`` hold the live tournaments; ``compacted`` the ids
    of the finished ones kept only in the journal (see the module docstring).
    """

    def __init__(
        self,
        journal: Journal,
        metrics: Metrics,
        *,
        compact_after: float = COMPACT_AFTER,
        boards: BoardStore | None = None,
    ) -> None:
        self.journal = journal
        self.store = boards
        self.boards_of: dict[str, BoardSet] = {}
        self.metrics = metrics
        self.compact_after = compact_after
        self.states: dict[str, Tournament] = {}
        self.last: dict[str, Standings] = {}
        self.compacted: set[str] = set()
        self.sink: Sink | None = None
        self._committing: dict[tuple[str, str], asyncio.Future[int]] = {}  # (tournament, event id) → its seq
        self._in_flight: dict[str, int] = {}  # tournament → events of it on their way to the journal
        self._idle: dict[str, asyncio.TimerHandle] = {}  # finished tournament → its compaction, once idle
        self._commits: set[asyncio.Task[None]] = set()
        self._outbox: deque[tuple[str, StandingsPayload, bytes]] = deque()  # committed, to be published
        self._publisher: asyncio.Task[None] | None = None
        journal.on_failure = self._rebuild
        metrics.gauges["tracker_journal_lag"] = lambda: journal.lag
        metrics.gauges["tracker_tournaments_live"] = lambda: len(self.states)
        metrics.gauges["tracker_tournaments_compacted"] = lambda: len(self.compacted)

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
        """Install every tournament's standings into ``sink``, publish into it from now on.

        Then the finished tournaments are compacted at once (their standings
        now live in the sink): on start nobody is correcting them.
        """
        self.sink = sink
        for s in self.last.values():
            sink.install(standings_payload(s))
        for tid, state in list(self.states.items()):
            if state.complete:
                self._compact(tid)

    def restore_boards(self, boards: Iterable[BoardUpdated]) -> int:
        """Keep the boards a restart found (:meth:`BoardStore.load`) whose games are still to be played.

        Returns how many; the others (a result came, the tournament is gone) are dropped from the store.
        They are stale (no receive time, :func:`~tracker.core.boards.is_stale`) until their source sends them
        again: a restart never shows a board as live that nobody has confirmed since.
        """
        kept = 0
        for board in boards:
            state = self.states.get(board.tournament)
            try:
                if state is None:
                    raise UnknownTournament(NOT_OPEN(tournament=board.tournament))
                check_board(state, board)
            except EventRejected:
                if self.store is not None:
                    self.store.delete(board.tournament, (board.round, board.white, board.black))
                continue
            self.boards_of.setdefault(board.tournament, BoardSet()).put(state, board)  # no receive time: stale
            kept += 1
        return kept

    async def board(self, board: BoardUpdated) -> int:
        """Keep ``board`` apart from the results; return the tournament's seq (see :class:`Backend`).

        Raises :class:`EventRejected`: ``game-finished`` for a game with a result or a finished
        tournament, the pairing rules otherwise.  Nothing is journalled; the store writes it within a second.
        """
        tid = board.tournament
        state = self.states.get(tid)
        if state is None:
            if tid in self.compacted:
                raise EventRejected(FINISHED(tournament=tid), code="game-finished")
            raise UnknownTournament(NOT_OPEN(tournament=tid))
        check_board(state, board)
        change = self.boards_of.setdefault(tid, BoardSet()).put(state, board, asyncio.get_running_loop().time())
        if change != "none":
            if self.store is not None:
                self.store.put(board)
            if self.sink is not None:
                self.sink.boards_changed(tid, change)
        return state.seq

    def boards(self, tournament: str) -> BoardSet | None:
        """The tournament's boards (``None`` when it has none)."""
        return self.boards_of.get(tournament)

    def _boards_after(self, tid: str) -> None:
        """An event of ``tid`` was published: the boards of games it decided (or took away) end."""
        boards, state = self.boards_of.get(tid), self.states.get(tid)
        if boards is None or state is None:
            return
        gone = boards.prune(state)
        if not gone:
            return
        if self.store is not None:
            for key in gone:
                self.store.delete(tid, key)
        if not boards.boards:
            del self.boards_of[tid]
        if self.sink is not None:
            self.sink.boards_changed(tid, "assessed")

    async def submit(self, event: Event) -> int:
        """Apply, journal and publish ``event``; return its seq once it is durable.

        Raises :class:`EventRejected` with the core's reason, or with code
        ``not-durable`` when the journal could not write it (then nothing of
        it is kept).  A re-delivered event answers with the current seq, once
        the original is durable if it is still being written.
        """
        tid = event.tournament
        key = (tid, event.id)
        if (idle := self._idle.pop(tid, None)) is not None:
            idle.cancel()
        if tid in self.compacted:
            self._rehydrate(tid)
        try:
            state, update = apply(self.states.get(tid), event, self.last.get(tid))
            if update is None:  # applied before (same content): share the original's fate if it is in flight
                seq = state.seq  # the tournament's seq now, as the Kafka worker answers a re-delivery
                original = self._committing.get(key)
                if original is not None:
                    await asyncio.shield(original)
                else:
                    self._finished(tid)  # rehydrated for nothing: compact it again once idle
                return seq
            payload = standings_payload(update.standings)
            message = update_message(update, payload)  # the rows are built once
        except EventRejected:
            self._finished(tid)
            raise
        except Exception as exc:  # a bug or an unbounded input: never keep an event the journal will not have
            self._rebuild({tid})
            self._finished(tid)
            raise EventRejected(
                f"the event could not be applied ({type(exc).__name__})", code="internal-error"
            ) from exc
        self.states[tid] = state
        self.last[tid] = update.standings
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._committing[key] = done
        self._in_flight[tid] = self._in_flight.get(tid, 0) + 1
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
            self._outbox.append((event.tournament, payload, message))
            if self._publisher is None or self._publisher.done():
                self._publisher = asyncio.create_task(self._publish(), name="publish")
            done.set_result(seq)
        finally:
            self._committing.pop(key, None)
            tid = event.tournament
            if (left := self._in_flight[tid] - 1) == 0:
                del self._in_flight[tid]
                self._finished(tid)
            else:
                self._in_flight[tid] = left
            if not done.done():  # pragma: no cover - the journal raises only JournalError
                done.set_exception(EventRejected("the event could not be written", code="not-durable"))
            if done.exception() is not None:
                done.exception()  # retrieved: nobody may be waiting any more (the submitter disconnected)

    async def _publish(self) -> None:
        """Publish the committed updates in seq order, after letting the acks of their submitters go out."""
        while self._outbox:
            # the submitters' tasks resume two loop turns after their futures resolve: let their acks out first
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            while self._outbox:
                tid, payload, message = self._outbox.popleft()
                if self.sink is not None:
                    self.sink.publish(payload, message)
                self._boards_after(tid)

    async def drain(self) -> None:
        """Wait until every accepted event is journalled and published (or failed): on shutdown.

        Pending compactions are cancelled: the state is about to go anyway.
        """
        while self._commits or (self._publisher is not None and not self._publisher.done()):
            await asyncio.gather(*self._commits, return_exceptions=True)
            if self._publisher is not None:
                await asyncio.gather(self._publisher, return_exceptions=True)
        for idle in self._idle.values():
            idle.cancel()
        self._idle.clear()

    def _rebuild(self, tournaments: set[str]) -> None:
        """Reset tournaments to exactly what the journal holds."""
        for tid in tournaments:
            state = self._fold(tid)
            if state is None:
                self.states.pop(tid, None)
                self.last.pop(tid, None)
            else:
                self.states[tid] = state
                self.last[tid] = standings(state)

    # -- compaction ---------------------------------------------------------------

    def _fold(self, tid: str) -> Tournament | None:
        """The tournament folded from its journalled events (``None``: none journalled).

        Raises :class:`JournalError` when the journal cannot be read or holds
        an event that cannot be replayed.
        """
        try:
            return fold(decode_event(body) for body in self.journal.read_tournament(tid))
        except (DecodeError, EventRejected) as exc:
            raise JournalError(f"{self.journal.path}: tournament {tid} cannot be replayed: {exc}") from None

    def _rehydrate(self, tid: str) -> None:
        """Make compacted ``tid`` live again, exactly as the journal has it.

        Raises :class:`EventRejected` (``not-durable``) when the journal
        cannot be read: the event cannot be checked against the state, so it
        is not taken; the tournament stays compacted.
        """
        try:
            state = self._fold(tid)
        except JournalError as exc:
            raise EventRejected(str(exc), code="not-durable") from None
        self.compacted.discard(tid)
        if state is not None:
            self.states[tid] = state
            self.last[tid] = standings(state)

    def _finished(self, tid: str) -> None:
        """Schedule ``tid``'s compaction if it is finished and nothing of it is on its way to the journal."""
        state = self.states.get(tid)
        if state is None or not state.complete or tid in self._in_flight or tid in self._idle:
            return
        loop = asyncio.get_running_loop()
        self._idle[tid] = loop.call_later(self.compact_after, self._compact, tid)

    def _compact(self, tid: str) -> None:
        """Drop finished ``tid``'s live state and standings; the journal holds every event of it."""
        self._idle.pop(tid, None)
        state = self.states.get(tid)
        if state is None or not state.complete or tid in self._in_flight:
            return  # changed since (a correction arrived, or one is still being written)
        del self.states[tid], self.last[tid]
        self.compacted.add(tid)

    def state(self, tournament: str) -> Tournament | None:
        """The tournament's state: the live one, or for a compacted one a copy folded from the journal.

        The copy is not kept (nor may it be changed: it is not the processor's).
        Raises :class:`JournalError` when a compacted tournament cannot be read back.
        """
        state = self.states.get(tournament)
        if state is None and tournament in self.compacted:
            return self._fold(tournament)
        return state
