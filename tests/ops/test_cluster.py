"""``tracker cluster`` (``make cluster``): broker, worker, two gateways; a result on one reaches the other.

The command itself runs, in its own process, as ``make cluster`` runs it;
the test reads the URLs and the token it prints, subscribes on the second
gateway, opens a tournament and records a result on the first, and waits
for the update on the second.  Ctrl-C (SIGINT) then stops everything: the
command exits 0 and nothing listens on the ports it printed any more.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import socket
import sys

import pytest

from tests.builders import TID, game, opened
from tests.kafka_fixtures import spawn
from tracker.core.events import encode_event


def refused(url: str) -> bool:
    host, port = re.match(r"\w+://([^:/]+):(\d+)", url).groups()  # type: ignore[union-attr]
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError:
        return True
    return False


@pytest.mark.kafka
async def test_a_result_submitted_on_one_gateway_reaches_a_subscriber_of_the_other_and_ctrl_c_stops_all() -> None:
    from websockets.asyncio.client import connect

    cluster = spawn("cluster", [sys.executable, "-m", "tracker.cli", "cluster", "--port", "0"])
    try:
        summary = await asyncio.to_thread(cluster.expect, r"tracker cluster: up: broker (kafka://\S+),", 120)
        first = (await asyncio.to_thread(cluster.expect, r"gateway 1: (http://\S+)")).group(1)
        second = (await asyncio.to_thread(cluster.expect, r"gateway 2: (http://\S+)")).group(1)
        health = (await asyncio.to_thread(cluster.expect, r"worker health: (http://\S+)")).group(1)
        token = (await asyncio.to_thread(cluster.expect, r"arbiter token: (\S+)")).group(1)
        assert first != second and summary.group(1).startswith("kafka://127.0.0.1:")

        tid = TID  # the cluster's broker starts empty
        start = opened(4)
        async with (
            connect(second.replace("http", "ws") + "ws") as watcher,
            connect(first.replace("http", "ws") + "ws") as arbiter,
        ):
            for event in (start, game(1, 1, 4, "1-0")):
                body = json.loads(encode_event(event))
                await arbiter.send(json.dumps({"type": "submit", "token": token, "event": body}))
                async with asyncio.timeout(60):
                    while (reply := json.loads(await arbiter.recv()))["type"] not in ("ack", "rejected"):
                        pass
                assert reply["type"] == "ack", reply
                if event is start:  # subscribed once the tournament exists everywhere: the first gateway acked it
                    await watcher.send(json.dumps({"type": "subscribe", "tournament": tid}))
            async with asyncio.timeout(60):  # the second gateway may see the opening after the subscribe: seq 1 first
                while (message := json.loads(await watcher.recv())).get("seq") != 2:
                    pass
            assert message["type"] in ("update", "snapshot") and message["tournament"] == tid, message

        cluster.proc.send_signal(signal.SIGINT)
        assert await asyncio.to_thread(cluster.proc.wait, 60) == 0, "".join(cluster.output[-40:])
        assert all(refused(url) for url in (first, second, health, summary.group(1))), "".join(cluster.output)
    finally:
        cluster.stop()
