"""The one place that touches Faust's internals: a consumer that commits results offsets by :class:`Progress`.

Verified against faust-streaming 0.15.3 (the range pinned in pyproject.toml):
it overrides ``Consumer._new_offset``, ``Consumer._add_gap`` and
``Consumer._drain_messages`` (:meth:`Consumer._drain_messages`: Faust's
loop, one line changed), reads
``Consumer._acked``/``_acked_index`` under ``faust.types.tuples.ack_lock``,
replaces ``App._new_transport``, sets ``faust.streams._current_event``
(:func:`make_current`), and reaches Faust's aiokafka producer
(``Producer._producer``, :func:`raw_producer`) and a table's store
(``Table.data`` and a memory store's ``data``, :func:`table_store`).  A Faust release that renames any of
these breaks the worker's delivery guarantee, so the pin moves only after the
Kafka tests pass on the new release.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, cast

import faust
import faust.streams
from faust.stores.memory import Store as MemoryStore
from faust.transport.consumer import CONSUMER_FETCHING
from faust.transport.drivers import aiokafka as faust_kafka
from faust.types import TP
from faust.types.tuples import ack_lock
from mode import Service, ServiceT

from tracker.kafka.progress import Progress
from tracker.kafka.topics import (
    RESULTS,
)

log = logging.getLogger(__name__)


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

    async def _drain_messages(self, fetcher: ServiceT) -> None:  # pragma: no cover - Faust's loop
        """Faust 0.15.3's fetch loop, handing each message on without four tasks when it can.

        Faust hands every fetched message to the streams with
        ``wait_first(callback(message), suspend_flow.wait())`` (the callback
        is abandoned when the flow is suspended meanwhile): four tasks, an
        ``asyncio.wait`` and three cancellations per message, about 20 µs,
        a tenth of what a worker spends per result.  :meth:`_hand_on` starts
        the callback as a task and lets it run once; in the usual case it
        is done by then (the stream's buffer had room) and nothing more is
        needed.  Otherwise it waits exactly as Faust does.  The rest is
        Faust's loop unchanged.
        """
        callback = self.callback
        getmany = self.getmany
        consumer_should_stop = self._stopped.is_set
        fetcher_should_stop = cast(Service, fetcher)._stopped.is_set

        get_read_offset = self._read_offset.__getitem__
        set_read_offset = self._read_offset.__setitem__
        flag_consumer_fetching = CONSUMER_FETCHING
        set_flag = self.diag.set_flag
        unset_flag = self.diag.unset_flag
        commit_every = self._commit_every
        acks_enabled_for = self.app.topics.acks_enabled_for

        yield_every = 100
        num_since_yield = 0
        sleep = asyncio.sleep

        try:
            while not (consumer_should_stop() or fetcher_should_stop()):
                set_flag(flag_consumer_fetching)
                ait = cast(AsyncIterator[tuple[TP, Any]], getmany(timeout=1.0))
                await self.sleep(0)
                if not self.should_stop:
                    async for tp, message in ait:
                        num_since_yield += 1
                        if num_since_yield > yield_every:
                            await sleep(0)
                            num_since_yield = 0

                        offset = message.offset
                        r_offset = get_read_offset(tp)
                        if r_offset is None or offset >= r_offset:
                            gap = offset - (r_offset or 0)
                            if gap > 1 and r_offset:
                                acks_enabled = acks_enabled_for(message.topic)
                                if acks_enabled:
                                    await self._add_gap(tp, r_offset + 1, offset)
                            if commit_every is not None and self._n_acked >= commit_every:
                                self._n_acked = 0
                                await self.commit()
                            await self._hand_on(callback, message)  # Faust: await self.wait_first(...)
                            set_read_offset(tp, offset)
                        else:
                            self.log.dev("DROPPED MESSAGE ROFF %r: k=%r v=%r", offset, message.key, message.value)
                    unset_flag(flag_consumer_fetching)
        except self.consumer_stopped_errors:
            if self.transport.app.should_stop:
                self.log.info("Broker stopped consumer, shutting down...")
                return
            raise
        except asyncio.CancelledError:
            if self.transport.app.should_stop:
                self.log.info("Consumer shutting down for user cancel.")
                return
            raise
        except Exception as exc:
            self.log.exception("Drain messages raised: %r", exc)
            raise
        finally:
            unset_flag(flag_consumer_fetching)

    async def _hand_on(self, callback: Callable[[Any], Awaitable[Any]], message: Any) -> None:
        """``wait_first(callback(message), suspend_flow.wait())``, as Faust does, without it when the callback is quick.

        The callback runs as a task, as in ``wait_first``, and gets its first
        step before this goes on (the event loop runs ready callbacks in
        order); a callback that finished in it had nothing to be abandoned
        for.  One that did not (the stream's buffer is full) is waited for
        with ``wait_first``, which abandons it if the flow is suspended.
        """
        handing = asyncio.ensure_future(callback(message))
        await asyncio.sleep(0)
        if not handing.done():
            await self.wait_first(handing, self.suspend_flow.wait())
        elif not handing.cancelled() and handing.exception() is not None:
            handing.result()  # as wait_first does: the callback's exception goes on

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


class Transport(faust_kafka.Transport):
    Consumer = Consumer


class App(faust.App):
    """A Faust app whose consumer is class:`Consumer`, with the :class:`Progress` of its agent."""

    progress: Progress | None = None

    def _new_transport(self) -> Transport:
        return Transport(self.conf.broker_consumer, self)
