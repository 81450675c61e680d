"""The Kafka baseline: a bare aiokafka consume → produce loop.

``python -m bench.kafka_bare BROKER IN_TOPIC OUT_TOPIC`` consumes
``IN_TOPIC`` in a consumer group and produces every record's key and value,
unchanged, to ``OUT_TOPIC``; prints ``ready`` once it holds partitions.  It
uses the consumer settings Faust gives its own consumer (``fetch_max_wait_ms``
1500, no auto commit: offsets committed every 0.5 s like the workers'
``BROKER_COMMIT_INTERVAL``) and the producer's ``acks=all``, so the loop
differs from ``tracker worker`` only by doing no work per record.
Talks only to the broker given (127.0.0.1 in the benchmark).
"""

from __future__ import annotations

import asyncio
import sys
import time

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener


class _Ready(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self) -> None:
        self.announced = False

    async def on_partitions_revoked(self, revoked: object) -> None:
        return None

    async def on_partitions_assigned(self, assigned: object) -> None:
        if not self.announced and assigned:
            self.announced = True
            print("ready", flush=True)


async def main(broker: str, source: str, sink: str) -> None:
    servers = broker.removeprefix("kafka://")
    consumer = AIOKafkaConsumer(
        bootstrap_servers=servers,
        group_id="bench-bare-loop",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        fetch_max_wait_ms=1500,
    )
    producer = AIOKafkaProducer(bootstrap_servers=servers, acks="all")
    await producer.start()
    consumer.subscribe([source], listener=_Ready())
    await consumer.start()
    committed = time.monotonic()
    try:
        async for record in consumer:
            await producer.send(sink, record.value, key=record.key)
            if time.monotonic() - committed > 0.5:
                await producer.flush()
                await consumer.commit()
                committed = time.monotonic()
    finally:
        await consumer.stop()
        await producer.stop()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
