"""A team event live on the Kafka deployment (issue 35): ``tracker replay --broker`` of a team file into a
real Tansu broker, a real ``tracker worker`` and ``tracker gateway``; the HTTP standings page, the last full
websocket update and the standings a delta subscriber rebuilds carry the ``"teams"`` rows ``tracker
standings FILE --format json`` gives offline (the embedded deployment: tests/gateway/test_team_live.py).
The broker is this test's own (port from a free-port helper), so it runs beside others under xdist.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from tests.gateway.test_team_live import TEAM_FILE, check_team_rows, follow, http_json, offline_teams
from tests.kafka_fixtures import Broker, kafka_broker  # noqa: F401  (a fixture)
from tracker.formats.files import read_file

pytestmark = pytest.mark.kafka

CLI = [sys.executable, "-m", "tracker.cli"]


async def test_a_team_file_replayed_to_the_broker_gives_the_offline_team_rows_on_every_payload(
    kafka_broker: Broker,  # noqa: F811
) -> None:
    kafka_broker.worker()
    # every payload is followed by clients that read them all (a whole replay's full updates, about 30 KB each):
    # one held back by a loaded machine must not be dropped as slow, which is another test's subject
    gateway = kafka_broker.gateway("--max-buffer", str(64 << 20))
    tid = "kafka-teams"
    last = 1 + len(read_file(str(TEAM_FILE), tid).events)
    expected = offline_teams(TEAM_FILE)
    full = asyncio.create_task(follow(gateway.ws_url, {"type": "subscribe", "tournament": tid}, last))
    deltas = asyncio.create_task(
        follow(gateway.ws_url, {"type": "subscribe", "tournament": tid, "updates": "delta"}, last)
    )
    await asyncio.sleep(0.5)  # both subscribed before the first event
    replay = await asyncio.create_subprocess_exec(
        *CLI,
        "replay",
        str(TEAM_FILE),
        "--tournament",
        tid,
        "--broker",
        kafka_broker.url,
        "--verdict-wait",
        "120",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(replay.communicate(), 240)
    assert replay.returncode == 0, (out, err, kafka_broker.report())
    full_messages, delta_messages = await asyncio.wait_for(asyncio.gather(full, deltas), 180)
    check_team_rows(tid, expected, full_messages, delta_messages)
    page = http_json(gateway.http_url, f"/api/tournaments/{tid}/standings")
    assert page["teams"] == expected
    assert page["standings"] == full_messages[-1]["standings"]
