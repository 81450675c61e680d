"""``tracker gateway``: the Kafka backend and feed of the distributed deployment's gateway.

How this works
--------------

The gateway is the same :class:`~tracker.gateway.serve.Gateway` as
``tracker up`` (same ``/ws`` protocol, same HTTP pages, same lifecycle);
only the backend differs: :class:`KafkaBackend` produces submits, and
:class:`Feed` reads the workers' topics into the gateway's sink.
Every gateway reads every partition without a consumer group, so any
number of them serve every tournament.

**Start without a gap.**  Before serving, the gateway notes the end offsets
of ``tracker-standings`` (*U*), then reads ``tracker-snapshots`` from the
beginning to its end offsets (*S*, taken after *U*) and installs the newest
snapshot of each tournament; then it follows ``tracker-standings`` from *U*.
A worker produces an event's snapshot, waits until the broker has it, and
only then produces its update.  So for any event, either its snapshot (or a
newer one) was before *S*, or its snapshot came after *S*, hence its update
after *U*: nothing is missed.  Updates the snapshot already covers are
dropped by seq, as are re-delivered duplicates.

**Submit.**  An arbiter's ``submit`` is produced to ``tracker-results``
(``acks=all``).  The gateway then waits for the worker's verdict, which it
sees on the topics it follows anyway: the event's ``update`` (the ``ack``
carries its seq; for an event applied before, the current seq, as
``tracker up`` answers) or its dead letter (``rejected`` with the worker's code
and reason, exactly as ``tracker up`` would say it).  So an ``ack`` means
the broker has the event *and* it is applied.  When no verdict comes within
``outcome_timeout`` (no worker running, a long rebalance) the reply is
``rejected`` with code ``pending``: the event is in the results log and
will be applied when a worker gets to it; resubmitting it is safe (same id).

**State for TRF and projections** comes from the table's changelog: the
gateway keeps every tournament's entries (one per accepted event, see
:mod:`tracker.kafka.processing`) and folds them when the TRF page or an
arbiter's projection asks for it.

**Updates** go into the gateway's :class:`~tracker.gateway.backend.Sink`,
which drops re-deliveries by seq (and says so): the feed checks nothing twice.

**Boards** (games in progress) travel apart from the results, on
``tracker-boards``: a board submitted at a gateway is checked against the
tournament as the gateway folds it (:func:`~tracker.core.boards.check_board`),
produced, and kept by every gateway when it reads it back (the one that
produced it too), newest per game; an update that decides a game ends its
board.  A gateway follows the boards from their end when it starts: the
games in progress report again within seconds.  No worker reads them, and a
board never changes the standings or their seq.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Final

import msgspec
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaError

from tracker.core.boards import BoardSet, check_board
from tracker.core.checks import NOT_OPEN
from tracker.core.crosstable import Tournament
from tracker.core.errors import DecodeError, EventRejected, TrackerError, UnknownTournament
from tracker.core.events import BoardUpdated, Event, decode_board
from tracker.core.phrases import Said, phrase
from tracker.gateway.backend import Sink
from tracker.gateway.metrics import Metrics
from tracker.kafka.processing import decode_dead_letter, legacy_log, parse_entry_key, rebuild
from tracker.kafka.producer import send_board, send_event
from tracker.kafka.topics import (
    BOARDS,
    CHANGELOG,
    DEAD_LETTERS,
    SNAPSHOTS,
    STANDINGS,
    BrokerError,
    KafkaSecurity,
    client_options,
    started,
)
from tracker.protocol import StandingsPayload, decode_head

log = logging.getLogger(__name__)

OUTCOME_TIMEOUT: Final = 30.0
PENDING: Final = phrase(
    "rejected.pending",
    "the event is in the results log but no worker applied it within {seconds} s; "
    "it will be applied when a worker catches up, and resubmitting it is safe",
)
"""Seconds a submit waits for the worker's verdict before replying ``pending``."""
BOOTSTRAP_TIMEOUT: Final = 120.0
"""Seconds the gateway may take to read the snapshots before it serves."""


FETCH_WAIT_MS: Final = 25
"""How long the gateway's consumer lets the broker hold a fetch that finds nothing.  Kafka answers
as soon as a record arrives (so this is how often an idle gateway asks); the test broker holds a fetch
of several partitions for the whole wait, which is then what an update waits for a gateway at most."""

_payload_decoder: Final = msgspec.json.Decoder(StandingsPayload)


def read_payload(message: bytes) -> StandingsPayload:
    """The standings part of a ``snapshot`` or ``update`` message.

    Raises :class:`DecodeError` when the message has none.
    """
    try:
        return _payload_decoder.decode(message)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise DecodeError(f"invalid standings message: {exc}") from None


class KafkaBackend:
    """The gateway's backend on Kafka: submits go to the results topic.

    The verdicts come from :class:`Feed`, which calls :meth:`accepted`,
    :meth:`rejected` and :meth:`record_log` as it reads the topics, and
    publishes into the sink this backend is attached to.
    """

    def __init__(self, producer: Any, *, outcome_timeout: float = OUTCOME_TIMEOUT) -> None:
        self.producer = producer  # None until the gateway has started (it serves no submit before)
        self.outcome_timeout = outcome_timeout
        self.sink: Sink | None = None
        self._installed: dict[str, StandingsPayload] = {}
        self._waiting: dict[tuple[str, str], list[asyncio.Future[int]]] = {}
        self._entries: dict[str, dict[int, bytes]] = {}
        self._versions: dict[str, int] = {}
        self._states: dict[str, tuple[int, Tournament]] = {}
        self.boards_of: dict[str, BoardSet] = {}
        self._prune_at: dict[str, int] = {}  # tournament → the seq whose entry its boards wait for

    def attach(self, sink: Sink) -> None:
        self.sink = sink
        for payload in self._installed.values():
            sink.install(payload)
        self._installed.clear()

    def install(self, payload: StandingsPayload) -> None:
        """Standings read on start (from the snapshots), installed in the sink once it is attached."""
        if self.sink is not None:
            self.sink.install(payload)
        else:
            self._installed[payload["tournament"]] = payload

    @property
    def waiting(self) -> int:
        """Submits waiting for a worker's verdict."""
        return sum(len(futures) for futures in self._waiting.values())

    async def submit(self, event: Event) -> int:
        """Produce ``event`` (``acks=all``), wait for the worker's verdict, return the event's seq.

        Raises :class:`EventRejected` with the worker's code and reason for an
        invalid event, with code ``not-durable`` when the broker did not take
        it, and with code ``pending`` when no worker decided in time.
        """
        key = (event.tournament, event.id)
        verdict: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(key, []).append(verdict)
        try:
            try:
                await (await send_event(self.producer, event))
            except KafkaError as exc:
                raise EventRejected(f"the results log did not take the event: {exc}", code="not-durable") from None
            try:
                async with asyncio.timeout(self.outcome_timeout):
                    return await verdict
            except TimeoutError:
                raise EventRejected(PENDING(seconds=f"{self.outcome_timeout:g}"), code="pending") from None
        finally:
            futures = self._waiting.get(key, [])
            if verdict in futures:
                futures.remove(verdict)
            if not futures:
                self._waiting.pop(key, None)

    async def board(self, board: BoardUpdated) -> int:
        """Check ``board`` against the tournament, produce it to ``tracker-boards``; return the tournament's seq.

        Raises :class:`EventRejected`: ``unknown-tournament`` when no
        tournament of it is open here, ``game-finished`` for a game with a
        result, the pairing rules otherwise, and ``not-durable`` when the
        broker did not take it.  The board is kept when the feed reads it back.
        """
        state = self.state(board.tournament)
        if state is None:
            raise UnknownTournament(NOT_OPEN(tournament=board.tournament))
        check_board(state, board)
        try:
            await (await send_board(self.producer, board))
        except KafkaError as exc:
            raise EventRejected(f"the boards topic did not take the board: {exc}", code="not-durable") from None
        return state.seq

    def boards(self, tournament: str) -> BoardSet | None:
        """The tournament's boards, the newest per game in progress (``None``: none here)."""
        return self.boards_of.get(tournament)

    def keep_board(self, board: BoardUpdated) -> None:
        """A board read from ``tracker-boards``: keep it if its game may still be played, and tell the sink."""
        state = self.state(board.tournament)
        if state is None:
            return
        try:
            check_board(state, board)
        except EventRejected:
            return  # decided since it was produced, or never valid here: a board is news, not a record
        now = asyncio.get_running_loop().time()  # when this gateway received it: boards age (core/boards.py)
        change = self.boards_of.setdefault(board.tournament, BoardSet()).put(state, board, now)
        if change != "none" and self.sink is not None:
            self.sink.boards_changed(board.tournament, change)

    def boards_after(self, tournament: str, seq: int) -> None:
        """The update ``seq`` of ``tournament`` was published: the boards of games it decided end.

        The tournament as folded here may not have that update's entry yet
        (the changelog and the standings are read side by side): then the
        boards wait for it (:meth:`record_entry`).
        """
        boards = self.boards_of.get(tournament)
        if not boards or not boards.boards:
            return
        state = self.state(tournament)
        if state is None or state.seq < seq:
            self._prune_at[tournament] = max(seq, self._prune_at.get(tournament, 0))
            return
        self._prune_at.pop(tournament, None)
        if boards.prune(state) and self.sink is not None:
            self.sink.boards_changed(tournament, "assessed")

    def accepted(self, tournament: str, event_id: str, seq: int) -> None:
        """A worker applied (or had applied) the event: acknowledge the oldest submit of it with ``seq``.

        One record on the results topic leads to one update, so each update
        answers one submit: an event submitted twice gets two answers, in order.
        """
        verdict = self._oldest(tournament, event_id)
        if verdict is not None:
            verdict.set_result(seq)

    def rejected(self, tournament: str, event_id: str, code: str, reason: str, said: Said | None = None) -> None:
        """A worker rejected the event: reject the oldest submit of it with the worker's code and reason."""
        verdict = self._oldest(tournament, event_id)
        if verdict is not None:
            log.info(
                "submitted event %s of %s rejected by a worker (%s): %s",
                event_id,
                tournament,
                code,
                reason,
                extra={"tournament": tournament, "event_id": event_id, "code": code},
            )
            verdict.set_exception(EventRejected(said if said is not None else reason, code=code))

    def _oldest(self, tournament: str, event_id: str) -> asyncio.Future[int] | None:
        for verdict in self._waiting.get((tournament, event_id), []):
            if not verdict.done():
                return verdict
        return None

    def record_entry(self, tournament: str, seq: int, body: bytes | None) -> None:
        """The table's entry of a tournament's event number ``seq`` (``None``: deleted)."""
        entries = self._entries.setdefault(tournament, {})
        if body is None:
            entries.pop(seq, None)
        else:
            entries[seq] = body
        self._versions[tournament] = self._versions.get(tournament, 0) + 1
        waiting = self._prune_at.get(tournament)
        if waiting is not None and seq >= waiting:
            self.boards_after(tournament, waiting)

    def state(self, tournament: str) -> Tournament | None:
        """The tournament folded from its entries seen so far, or ``None`` when none was seen."""
        entries = self._entries.get(tournament)
        if not entries:
            return None
        version = self._versions[tournament]
        cached = self._states.get(tournament)
        if cached is not None and cached[0] == version:
            return cached[1]
        bodies: list[bytes] = []
        while (body := entries.get(len(bodies) + 1)) is not None:
            bodies.append(body)
        try:
            state = rebuild(bodies)
        except TrackerError:
            log.exception("the entries of %r cannot be folded", tournament)
            return None
        if state is not None:
            self._states[tournament] = (version, state)
        return state


class Feed:
    """Reads the workers' topics into a :class:`KafkaBackend` and the sink it is attached to."""

    def __init__(self, backend: KafkaBackend, metrics: Metrics) -> None:
        self.backend = backend
        self.metrics = metrics

    async def start(self, live: Any, boot: Any, *, within: float = BOOTSTRAP_TIMEOUT) -> int:
        """Position ``live`` and install the snapshots read with ``boot``; return how many tournaments.

        ``live`` follows the standings and dead letters from their current
        ends and the changelog from its beginning.  Raises
        :class:`BrokerError` when the snapshots cannot be read within
        ``within`` seconds.
        """
        following = await _all_partitions(live, STANDINGS, DEAD_LETTERS, BOARDS)
        changelog = await _all_partitions(live, CHANGELOG)
        live.assign(following + changelog)
        ends = await live.end_offsets(following)  # U: taken before S
        for tp in following:
            live.seek(tp, ends[tp])
        await live.seek_to_beginning(*changelog)
        snapshots = await _all_partitions(boot, SNAPSHOTS)
        boot.assign(snapshots)
        await boot.seek_to_beginning(*snapshots)
        newest: dict[str, StandingsPayload] = {}
        try:
            async with asyncio.timeout(within):
                await _read_to_end(boot, snapshots, lambda record: self._snapshot(record.value, newest))
        except TimeoutError:
            raise BrokerError(f"could not read {SNAPSHOTS} within {within:g} s") from None
        for payload in newest.values():
            self.backend.install(payload)
        return len(newest)

    async def run(self, live: Any) -> None:
        """Follow the topics until cancelled."""
        handlers: dict[str, Callable[[Any], None]] = {
            STANDINGS: self._update,
            DEAD_LETTERS: self._dead_letter,
            CHANGELOG: self._changelog,
            BOARDS: self._board,
        }
        while True:
            batches = await live.getmany(timeout_ms=1000, max_records=2000)
            for tp, records in batches.items():
                handle = handlers[tp.topic]
                for record in records:
                    handle(record)

    def _snapshot(self, message: bytes | None, newest: dict[str, StandingsPayload]) -> None:
        try:
            payload = read_payload(message or b"")
        except DecodeError:
            log.warning("skipping an invalid record on %s", SNAPSHOTS)
            return
        known = newest.get(payload["tournament"])
        if known is None or payload["seq"] > known["seq"]:
            newest[payload["tournament"]] = payload

    def _update(self, record: Any) -> None:
        message: bytes = record.value or b""
        try:
            head = decode_head(message)
            payload = read_payload(message)
        except DecodeError:
            log.warning("skipping an invalid record on %s", STANDINGS)
            return
        sink = self.backend.sink
        assert sink is not None, "the feed runs once the gateway serves"
        if sink.publish(payload, message):
            self.metrics.inc("tracker_kafka_updates_total")
            self.backend.boards_after(head.tournament, head.seq)
            seq = head.seq
        else:  # a re-delivery: acknowledged with the current seq, as ``tracker up`` does
            seq = sink.seq(head.tournament)
        self.backend.accepted(head.tournament, head.event_id, seq)

    def _board(self, record: Any) -> None:
        try:
            board = decode_board(record.value or b"")
        except DecodeError:
            log.warning("skipping an invalid record on %s", BOARDS)
            return
        self.backend.keep_board(board)

    def _dead_letter(self, record: Any) -> None:
        try:
            letter = decode_dead_letter(record.value or b"")
        except DecodeError:
            log.warning("skipping an invalid record on %s", DEAD_LETTERS)
            return
        self.metrics.inc("tracker_kafka_dead_letters_total")
        if letter["id"] is not None:
            said = letter.get("said")
            self.backend.rejected(letter["tournament"], letter["id"], letter["code"], letter["reason"], said)

    def _changelog(self, record: Any) -> None:
        entry = None if record.key is None else parse_entry_key(record.key)
        if entry is not None:
            self.backend.record_entry(*entry, record.value)
        elif record.key is not None and record.value:  # the older layout: a tournament's whole log under its id
            try:
                older = legacy_log(record.value)
            except DecodeError:
                log.warning("skipping a changelog record that is neither an entry nor an older log")
                return
            tournament = record.key.decode("utf-8", "replace")
            for seq, body in enumerate(older, start=1):
                self.backend.record_entry(tournament, seq, body)


async def _all_partitions(consumer: Any, *topics: str) -> list[Any]:
    await consumer.topics()  # refreshes the metadata
    tps = []
    for topic in topics:
        partitions = consumer.partitions_for_topic(topic)
        if not partitions:
            raise BrokerError(f"topic {topic} does not exist")
        tps += [TopicPartition(topic, p) for p in sorted(partitions)]
    return tps


async def _read_to_end(consumer: Any, tps: list[Any], handle: Callable[[Any], None]) -> None:
    """Read ``tps`` from their positions to the end offsets they have now."""
    ends = await consumer.end_offsets(tps)
    remaining = {tp for tp in tps if await consumer.position(tp) < ends[tp]}
    while remaining:
        batches = await consumer.getmany(*remaining, timeout_ms=1000)
        for tp, records in batches.items():
            for record in records:
                handle(record)
            if await consumer.position(tp) >= ends[tp]:
                remaining.discard(tp)


@asynccontextmanager
async def standings_consumer(broker: str, security: KafkaSecurity, wait: float) -> AsyncIterator[Any]:
    """A started consumer without a group (a gateway reads every partition), stopped on exit."""
    options = client_options(broker, security)

    def make() -> AIOKafkaConsumer:
        return AIOKafkaConsumer(
            group_id=None,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            fetch_max_wait_ms=FETCH_WAIT_MS,
            **options,
        )

    async with started(make, broker, wait=wait, tls=security.tls) as consumer:
        yield consumer
