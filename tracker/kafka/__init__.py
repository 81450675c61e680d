"""The distributed deployment: Faust workers and Kafka-fed gateways.

How this works
--------------

Everything is partitioned by tournament id (the record key), so one
tournament's whole crosstable lives on one partition and is owned by one
worker at a time::

    tracker-results ──► worker (Faust agent: decode → apply → store → publish)
                          │  table "tournaments" (changelog: tracker-tournaments-changelog)
                          ├─► tracker-snapshots     compacted, latest standings per tournament
                          ├─► tracker-standings     every update, in seq order per tournament
                          └─► tracker-dead-letters  rejected events with the reason
    gateways: bootstrap from tracker-snapshots, then follow tracker-standings

- :mod:`tracker.kafka.topics`: topic names, broker URLs, topic creation.
- :mod:`tracker.kafka.processing`: what a worker does with one record,
  without Kafka (the table value, the records to produce).
- :mod:`tracker.kafka.worker`: the Faust app (``tracker worker``), whose
  agent is :mod:`tracker.kafka.agent` (decode → apply → store → publish, a
  batch at a time, testable without Faust) and whose health endpoint and
  metrics are :mod:`tracker.kafka.health`.
- :mod:`tracker.kafka.progress`, :mod:`tracker.kafka.publisher` and
  :mod:`tracker.kafka._faust_patch`: which records were applied, publishing
  after the flush, and the one place that touches Faust internals (import-linter
  lets only the worker import it).
- :mod:`tracker.kafka.feed`: the Kafka backend of the shared gateway, and
  :mod:`tracker.kafka.run` its life (``tracker gateway``), as
  :mod:`tracker.embedded.processor` and :mod:`tracker.embedded.run` are
  ``tracker up``'s.
- :mod:`tracker.kafka.producer`: producing events directly
  (``tracker replay --broker``).

``docs/distributed.md`` describes the topics, scaling, rebalancing and the
delivery guarantee for operators.
"""
