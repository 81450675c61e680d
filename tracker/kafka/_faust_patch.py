"""The one place that touches Faust's internals: a consumer that commits results offsets by :class:`Progress`.

Verified against faust-streaming 0.15.3 (the range pinned in pyproject.toml):
it overrides ``Consumer._new_offset`` and ``Consumer._add_gap``, reads
``Consumer._acked``/``_acked_index`` under ``faust.types.tuples.ack_lock``,
replaces ``App._new_transport``, sets ``faust.streams._current_event``
(:func:`make_current`), and reaches Faust's aiokafka producer
(``Producer._producer``, :func:`raw_producer`) and a table's store
(``Table.data`` and a memory store's ``data``, :func:`table_store`), reads whether the
app rebalances or recovers its tables (:func:`busy`), and sets the fetch wait of the aiokafka
consumer Faust makes (``AIOKafkaConsumerThread._create_worker_consumer``, :data:`FETCH_WAIT_MS`).
A Faust release that renames any of these breaks the worker's delivery guarantee, so the pin moves only after the
Kafka tests pass on the new release, and :func:`check_version` refuses to run
on any other release (:data:`VERIFIED` names the ones it was verified on).
"""

from __future__ import annotations

import logging
import weakref
from typing import Any, Final

import faust
import faust.streams
from faust.stores.memory import Store as MemoryStore
from faust.transport.drivers import aiokafka as faust_kafka
from faust.types import TP
from faust.types.tuples import ack_lock

from tracker.core.errors import TrackerError
from tracker.kafka.progress import Progress
from tracker.kafka.topics import RESULTS

log = logging.getLogger(__name__)

VERIFIED: Final = ("0.15.3",)
"""The faust-streaming releases this module's overrides were verified on (the Kafka tests pass)."""


FETCH_WAIT_MS: Final = 25
"""How long the worker's consumer lets the broker hold a fetch that finds nothing (Faust hard-codes 1,500 ms).

Kafka answers a fetch as soon as a record arrives, so on Kafka this only sets how often an idle worker
asks (40 times a second, a few hundred bytes each); the test broker (Tansu 0.6) holds a fetch of several
partitions for the whole wait even when records arrive, so there it is what a result waits for the
worker at most: 1.5 s a hop before, 25 ms now."""


class UnverifiedFaust(TrackerError):
    """The installed faust-streaming is not a release this module was verified on."""


def check_version(installed: str | None = None) -> None:
    """Refuse to run on a faust-streaming release not in :data:`VERIFIED`.

    ``installed`` defaults to ``faust.__version__``.  Raises
    :class:`UnverifiedFaust` naming both, since overriding the internals of
    another release could lose results without a sound.
    """
    found = installed if installed is not None else str(faust.__version__)
    if found not in VERIFIED:
        raise UnverifiedFaust(
            f"faust-streaming {found} is installed, but tracker's worker was verified on {', '.join(VERIFIED)} only"
            " (tracker/kafka/_faust_patch.py overrides its internals): install faust-streaming=="
            f"{VERIFIED[-1]}, or verify the patch on {found} with the Kafka tests and add it to VERIFIED"
        )


def busy(app: Any) -> bool:
    """Whether ``app`` is rebalancing or recovering its tables from their changelogs (nothing moves meanwhile)."""
    return bool(app.rebalancing or app.tables.recovery.in_recovery)


def make_current(event: Any) -> None:
    """Make ``event`` the current event of the running task, as Faust does for an agent's ``async for``.

    A table write goes to the changelog partition of the current event's
    partition.  An agent that takes a batch of events
    (``stream.take_events``) runs in another task than the one that read
    them, so it names each event before writing what that event led to.
    """
    faust.streams._current_event.set(weakref.ref(event))


def raw_producer(app: Any) -> Any:
    """The started ``AIOKafkaProducer`` under Faust's producer (settings, credentials and all).

    The worker produces its records with it a batch per partition
    (:mod:`tracker.kafka.batches`) instead of one Faust ``send`` each.
    ``Producer.flush`` flushes it too.
    """
    producer = app.producer._producer
    assert producer is not None, "Faust starts its producer before any agent runs"
    return producer


def table_store(table: Any) -> Any:
    """The mapping under a Faust table: read and written without Faust's per-key work.

    Writing ``table[key] = value`` also produces the key's changelog record
    (one Faust ``send`` each) and reading ``table.get(key)`` runs a sensor
    and, for a missing key, raises and catches ``KeyError``.  The worker
    reads the store and writes it directly, and produces the changelog
    records itself (the same key and value bytes, to the changelog partition
    Faust would pick: the record's results partition), a batch at a time.
    Recovery reads the changelog as before.  With the worker's in-memory
    store that mapping is the store's own ``dict``.
    """
    store = table.data
    return store.data if isinstance(store, MemoryStore) else store


class Consumer(faust_kafka.Consumer):
    """Faust's Kafka consumer, committing results offsets by :class:`Progress`.

    Faust 0.15.3 drops records fetched around a rebalance, and its commit
    arithmetic can pass over them: it counts a jump in offsets as acknowledged
    records (a "gap", meant for compacted topics) and lets the first run of
    acknowledged offsets start one past the committed offset.  For the results
    topic the committed offset is instead the end of what the agent processed,
    and stalled partitions are sought back (see :meth:`_watch`).
    """

    def _new_consumer_thread(self) -> ConsumerThread:
        return ConsumerThread(self, loop=self.loop, beacon=self.beacon)

    def _app(self) -> App:
        app = self.app
        assert isinstance(app, App)
        return app

    def _new_offset(self, tp: TP) -> int | None:
        if tp.topic != RESULTS:
            return super()._new_offset(tp)
        with ack_lock:
            self._acked[tp].clear()
            self._acked_index[tp].clear()
        progress = self._app().progress
        return None if progress is None else progress.committable(tp)

    async def _add_gap(self, tp: TP, offset_from: int, offset_to: int) -> None:
        if tp.topic != RESULTS:  # results offsets are contiguous: a jump means records missed, not acknowledged
            await super()._add_gap(tp, offset_from, offset_to)

    async def on_start(self) -> None:
        await super().on_start()
        self.add_future(self._watch())

    async def _watch(self) -> None:
        """Seek back a results partition whose fetched records stopped short of the agent.

        When the agent has handled no record of a partition for a whole
        interval, is not stuck on a record, and the fetch position is still
        beyond the next record to apply, those records were fetched and
        dropped: nothing else would bring them back.
        """
        interval = max(1.0, 2 * self.app.conf.broker_commit_interval)
        last: dict[TP, tuple[int, int, int, int]] = {}
        while not self.should_stop:
            progress = self._app().progress
            before = None if progress is None else dict(progress.activity)
            await self.sleep(interval)
            generation = self.app.consumer_generation_id
            if progress is None or self.app.rebalancing:
                last.clear()
                continue
            stuck = progress.in_hand is not None and progress.activity == before
            try:
                for tp in self.assignment():
                    if tp.topic != RESULTS or stuck or tp == progress.in_hand:
                        last.pop(tp, None)
                        continue
                    position = await self.position(tp) or 0
                    expected = await progress.peek(tp)
                    if self.app.rebalancing or self.app.consumer_generation_id != generation:
                        last.clear()
                        break
                    mark = (generation, position, expected, progress.activity.get(tp, 0))
                    if position > expected and last.get(tp) == mark:
                        log.warning(
                            "records %d to %d of %s did not reach the agent: seeking back", expected, position - 1, tp
                        )
                        await progress.seek(tp, expected)
                        last.pop(tp, None)
                    else:
                        last[tp] = mark
            except Exception:  # a rebalance under way: it seeks itself, and this runs again
                log.info("checking for stalled partitions failed", exc_info=True)
                last.clear()


class ConsumerThread(faust_kafka.AIOKafkaConsumerThread):
    """Faust's consumer thread, whose aiokafka consumer waits :data:`FETCH_WAIT_MS` for a fetch."""

    def _create_worker_consumer(self, transport: Any) -> Any:
        consumer = super()._create_worker_consumer(transport)
        consumer._fetch_max_wait_ms = FETCH_WAIT_MS  # read when it starts its fetcher
        return consumer


class Transport(faust_kafka.Transport):
    Consumer = Consumer


class App(faust.App):
    """A Faust app whose consumer is class:`Consumer`, with the :class:`Progress` of its agent."""

    progress: Progress | None = None

    def _new_transport(self) -> Transport:
        return Transport(self.conf.broker_consumer, self)
