"""``tracker replay --broker`` waits for the workers' verdicts, as the websocket path does (issue 28, item 8).

Reproduction: it exited 0 with "produced N events" before any worker had applied an event, so a file no
worker would ever apply (no worker running) or one a worker refused looked replayed.  Now it exits 0 once
a worker applied every event, 1 with the worker's reasons for a refusal, and 3 with one sentence when no
verdict came in time.  A real Tansu broker and a real ``tracker worker``.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import data_file
from tests.kafka_fixtures import Broker, kafka_broker  # noqa: F401  (a fixture)
from tracker.formats.files import read_file

pytestmark = pytest.mark.kafka

RR6 = data_file("fide-tec-exercise16-rr6.trf")
SINQUEFIELD = data_file("sinquefield-cup-2021.trf")
CLI = [sys.executable, "-m", "tracker.cli"]


def replay(broker: Broker, path: object, tournament: str, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [*CLI, "replay", str(path), "--broker", broker.url, "--tournament", tournament, *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=240)


def test_replay_without_a_worker_says_that_no_worker_applied_the_events(kafka_broker: Broker) -> None:  # noqa: F811
    # --worker-wait 1: with nobody to join, the default (60 s) was waited out in full before the 3 s began
    done = replay(kafka_broker, RR6, "nobody-home", "--verdict-wait", "3", "--worker-wait", "1")
    assert done.returncode == 3, done
    assert "no worker applied or rejected" in done.stderr and "within 3 s" in done.stderr, done.stderr
    assert "a worker had 1 s to join" in done.stderr, done.stderr
    assert "is a worker running?" in done.stderr and done.stderr.count("\n") == 1, "one sentence"


def test_replay_waits_for_the_worker_and_reports_its_refusals(kafka_broker: Broker) -> None:  # noqa: F811
    kafka_broker.worker()
    events = 1 + len(read_file(str(RR6)).events)
    first = replay(kafka_broker, RR6, "verdicts", "--verdict-wait", "120")  # generous: the worker may be busy
    assert first.returncode == 0, first
    assert f"a worker applied all {events} of {events}" in first.stdout and f"produced {events} events" in first.stdout
    again = replay(kafka_broker, RR6, "verdicts", "--verdict-wait", "120")  # re-deliveries: applied before
    assert again.returncode == 0, again
    other = replay(kafka_broker, SINQUEFIELD, "verdicts", "--verdict-wait", "120")  # other content, same ids
    assert other.returncode == 1, other
    assert "rejected by a worker (id-reused)" in other.stderr, other.stderr
