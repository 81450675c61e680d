"""The distributed deployment end to end: a real Kafka-protocol broker, real workers and gateways.

One broker, one ``tracker worker`` and one ``tracker gateway`` serve the
whole module (each test uses its own tournament ids).  Websocket clients
wait for the message they expect under a timeout; nothing sleeps.

Tansu answers a fetch only when its wait runs out, not when data arrives,
so every hop costs up to the consumer's fetch wait (Faust's is 1.5 s): the
tests pipeline their submits instead of waiting for each reply in turn.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal
from typing import Any

import msgspec
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from tests.builders import berger, schedule_of
from tests.conftest import TEST_DATA, RunningTracker, data_file
from tests.kafka_fixtures import Broker, Gateway, kafka_module_broker  # noqa: F401  (a fixture)
from tests.wsclient import Message, recv, recv_until, send
from tracker.core.events import (
    ByeRecorded,
    ByeVoided,
    Event,
    GameResult,
    Player,
    PlayerWithdrawn,
    ResultCorrected,
    ResultRecorded,
    ResultVoided,
    Scoring,
    TournamentOpened,
    encode_event,
)
from tracker.core.standings import standings
from tracker.formats import TournamentFile, state_from
from tracker.formats.files import read_file
from tracker.formats.trf import export_trf
from tracker.kafka.producer import produce_events
from tracker.protocol import standings_json

pytestmark = pytest.mark.kafka

SINQUEFIELD = data_file("sinquefield-cup-2021.trf")
TIMEOUT = 60


@pytest.fixture(scope="module")
def deployment(kafka_module_broker: Broker) -> Iterator[tuple[Broker, Gateway]]:  # noqa: F811
    """One worker and one gateway on the module's broker."""
    kafka_module_broker.worker()
    yield kafka_module_broker, kafka_module_broker.gateway()


def offline_rows(tf: TournamentFile) -> list[dict[str, Any]]:
    """The rows ``tracker standings FILE --format json`` prints: the file folded through the core."""
    rows: list[dict[str, Any]] = json.loads(json.dumps(standings_json(standings(state_from(tf)))["standings"]))
    return rows


def http_get(gateway: Gateway, path: str) -> bytes:
    with urllib.request.urlopen(gateway.http_url + path, timeout=10) as response:
        body: bytes = response.read()
        return body


async def follow(
    broker: Broker, url: str, tid: str, last_seq: int, subscribed: asyncio.Event | None = None
) -> list[Message]:
    """Subscribe to ``tid`` and collect the snapshot and updates until ``last_seq`` (``subscribed`` is set once
    the snapshot is in)."""
    seen: list[Message] = []
    async with connect(url) as ws:
        await send(ws, {"type": "subscribe", "tournament": tid})
        message: Message = {"seq": -1}
        try:
            async with asyncio.timeout(TIMEOUT):
                while message["seq"] < last_seq:
                    message = await recv(ws, TIMEOUT)
                    seen.append(message)
                    if subscribed is not None:
                        subscribed.set()
        except TimeoutError:
            got = [(m["type"], m["seq"]) for m in seen]
            raise AssertionError(f"{tid}: seq {last_seq} never came; got {got}\n{broker.report()}") from None
    return seen


# -- end to end -------------------------------------------------------------------


async def test_a_replayed_file_reaches_websocket_subscribers_with_the_offline_standings(
    deployment: tuple[Broker, Gateway],
) -> None:
    broker, gateway = deployment
    tf = read_file(str(SINQUEFIELD), "e2e-sinquefield")
    last = 1 + len(tf.events)
    async with connect(gateway.ws_url) as ws:
        await send(ws, {"type": "subscribe", "tournament": "e2e-sinquefield"})
        first = await recv(ws)
        assert (first["type"], first["seq"], first["standings"]) == ("snapshot", 0, [])
        replay = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tracker.cli", "replay", str(SINQUEFIELD),
            "--broker", broker.url, "--tournament", "e2e-sinquefield",
            stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, _ = await replay.communicate()
        assert replay.returncode == 0, out
        assert f"produced {last} events" in out.decode()
        updates = [await recv(ws, TIMEOUT) for _ in range(last)]
    assert [u["type"] for u in updates] == ["update"] * last
    assert [u["seq"] for u in updates] == list(range(1, last + 1))
    assert [u["event"]["id"] for u in updates] == [e.id for e in (tf.opened, *tf.events)]
    assert updates[-1]["standings"] == offline_rows(tf)
    assert updates[-1]["provisional"] is False
    page = json.loads(http_get(gateway, "/api/tournaments/e2e-sinquefield/standings"))
    assert (page["seq"], page["standings"]) == (last, updates[-1]["standings"])
    listing = json.loads(http_get(gateway, "/api/tournaments"))["tournaments"]
    assert {"id": "e2e-sinquefield", "name": "Sinquefield Cup 2021", "rounds": 9, "games_played": 45, "seq": last} in (
        listing
    )
    trf = await wait_for(lambda: http_get(gateway, "/api/tournaments/e2e-sinquefield/trf"))
    assert trf.decode() == export_trf(state_from(tf))


async def wait_for(read: Callable[[], bytes]) -> bytes:
    """The gateway's TRF page once it has the table's changelog (it follows it beside the standings)."""
    async with asyncio.timeout(TIMEOUT):
        while True:
            try:
                return await asyncio.to_thread(read)
            except urllib.error.HTTPError as exc:  # 404 until the gateway has the tournament's event log
                if exc.code != 404:
                    raise
            await asyncio.sleep(0.1)  # the changelog record is on its way: poll the page


async def test_a_gateway_started_later_serves_the_latest_standings_from_the_snapshots(
    deployment: tuple[Broker, Gateway],
) -> None:
    broker, gateway = deployment
    tf = read_file(str(data_file("fide-tec-exercise16-rr6.trf")), "late-gateway")
    last = 1 + len(tf.events)
    assert await produce_events([tf.opened, *tf.events], broker.url) == last
    seen = await follow(broker, gateway.ws_url, "late-gateway", last)
    late = broker.gateway()
    async with connect(late.ws_url) as ws:
        await send(ws, {"type": "subscribe", "tournament": "late-gateway"})
        snapshot = await recv(ws)
    assert (snapshot["type"], snapshot["seq"]) == ("snapshot", last)
    assert snapshot["standings"] == seen[-1]["standings"] == offline_rows(tf)
    late.process.stop()


async def test_a_restarted_worker_recovers_the_table_and_redelivered_events_change_nothing(
    deployment: tuple[Broker, Gateway],
) -> None:
    broker, gateway = deployment
    tf = read_file(str(TEST_DATA / "double.trf"), "restart-double")
    events = [tf.opened, *tf.events]
    half = len(events) // 2
    await produce_events(events[:half], broker.url)
    await follow(broker, gateway.ws_url, "restart-double", half)
    (worker,) = [p for p in broker.started if p.name.startswith("worker")]
    assert worker.stop() == 0  # SIGTERM: a clean stop
    broker.started.remove(worker)
    broker.worker()
    await produce_events(events, broker.url)  # the first half again: re-deliveries
    seen = await follow(broker, gateway.ws_url, "restart-double", len(events))
    assert seen[-1]["seq"] == len(events)
    assert seen[-1]["standings"] == offline_rows(tf)


async def test_a_worker_restarted_after_a_burst_goes_on_from_every_entry_of_it(
    deployment: tuple[Broker, Gateway],
) -> None:
    """A burst's entries reach the changelog as multi-record batches; a restarted worker recovers every one.

    Only the events after the restart are produced, so an entry the new worker
    did not recover would leave the tournament short of the seq it had reached
    and its later events at the wrong seqs (Tansu reports a partition's end
    offset as its last batch's first offset + 1).
    """
    broker, gateway = deployment
    tf = read_file(str(data_file("fide-tec-exercise16-rr6.trf")), "restart-burst")
    events = [tf.opened, *tf.events]
    half = len(events) // 2
    await produce_events(events[:half], broker.url)
    await follow(broker, gateway.ws_url, "restart-burst", half)
    (worker,) = [p for p in broker.started if p.name.startswith("worker")]
    assert worker.stop() == 0
    broker.started.remove(worker)
    broker.worker()
    # subscribed before the rest is produced, so every update after the restart is seen (subscribing after,
    # a loaded machine's slow connect found them all applied: a snapshot at the end and no update)
    subscribed = asyncio.Event()
    watching = asyncio.create_task(follow(broker, gateway.ws_url, "restart-burst", len(events), subscribed))
    await asyncio.wait_for(subscribed.wait(), TIMEOUT)
    await produce_events(events[half:], broker.url)
    seen = await watching
    assert (seen[0]["type"], seen[0]["seq"]) == ("snapshot", half)
    assert [m["seq"] for m in seen if m["type"] == "update"] == list(range(half + 1, len(events) + 1))
    assert seen[-1]["standings"] == offline_rows(tf)


# -- submit at a gateway ------------------------------------------------------------------


async def test_submit_is_acknowledged_with_the_seq_the_worker_gave_it_or_rejected_with_its_reason(
    deployment: tuple[Broker, Gateway],
) -> None:
    _, gateway = deployment
    tid = "submit-at-gateway"
    events = [opening(tid, 4), game(tid, "g1", 1, 1, 4, "1-0"), game(tid, "bad", 1, 1, 9, "1-0")]
    replies, _ = await run_scenario(gateway.ws_url, gateway.token, {tid: events})
    assert replies[tid] == [("ack", 1), ("ack", 2), ("rejected", "unknown-player")]
    async with connect(gateway.ws_url) as ws:
        wrong = {"type": "submit", "token": "not-the-token", "event": json.loads(encode_event(events[1]))}
        await send(ws, wrong)
        reply = await recv(ws)
    assert (reply["type"], reply["code"]) == ("rejected", "unauthorized")


# -- conformance: the embedded and the distributed tracker give the same stream -------------


def opening(tid: str, n: int, **options: Any) -> TournamentOpened:
    players = tuple(Player(start_no=k, name=f"Player {k}", rating=2000 + 10 * k) for k in range(1, n + 1))
    return TournamentOpened(id=f"{tid}/open", tournament=tid, name=f"Conformance {tid}", players=players, **options)


def game(tid: str, id: str, rnd: int, white: int, black: int, result: GameResult) -> ResultRecorded:
    return ResultRecorded(id=id, tournament=tid, round=rnd, white=white, black=black, result=result)


def classic(tid: str) -> list[Event]:
    """Forfeits, a double forfeit, byes, corrections, voids, a withdrawal, and rejected events."""
    return [
        opening(tid, 5),
        game(tid, "r1a", 1, 1, 2, "1-0"),
        game(tid, "r1b", 1, 3, 4, "+-"),
        ByeRecorded(id="r1bye", tournament=tid, round=1, player=5),
        game(tid, "r2a", 2, 2, 3, "--"),
        game(tid, "r2b", 2, 4, 5, "1/2-1/2"),
        ByeRecorded(id="r2bye", tournament=tid, round=2, player=1, kind="half"),
        ResultCorrected(id="fix1", tournament=tid, round=1, white=1, black=2, result="0-1"),
        ResultCorrected(id="fix1", tournament=tid, round=1, white=1, black=2, result="0-1"),  # re-sent
        ResultCorrected(id="fix2", tournament=tid, round=1, white=1, black=2, result="0-1"),  # unchanged
        game(tid, "twice", 2, 1, 4, "1-0"),  # 1 has a bye in round 2
        game(tid, "nobody", 3, 1, 9, "1-0"),  # no player 9
        ResultVoided(id="void", tournament=tid, round=2, white=4, black=5),
        game(tid, "r2b-again", 2, 4, 5, "0-1"),
        PlayerWithdrawn(id="quit", tournament=tid, player=3, reason="illness"),
        PlayerWithdrawn(id="quit-again", tournament=tid, player=3),
        game(tid, "r3a", 3, 1, 4, "-+"),
        ByeVoided(id="unbye", tournament=tid, round=2, player=1),
        game(tid, "r3b", 3, 2, 5, "1-0"),
        game(tid, "r9", 9, 2, 4, "1-0"),  # beyond the last round
        msgspec.structs.replace(opening(tid, 5), id="reopen"),  # opened twice
        game(tid, "r1a", 1, 1, 2, "1-0"),  # re-sent long after: acknowledged with the current seq
    ]


def football(tid: str) -> list[Event]:
    """3-1-0 scoring, a double round robin with its schedule, extended Koya; off-schedule games rejected."""
    rounds = berger(4, cycles=2)
    scoring = Scoring(win=Decimal(3), draw=Decimal(1), loss=Decimal(0))
    opened = opening(
        tid, 4, format="double", scoring=scoring, tiebreaks=("PTS", "DE", "SB", "KS", "KS/L+1", "KS/L-2"),
        schedule=tuple(tuple(pairs) for pairs in schedule_of(rounds)),
    )  # fmt: skip
    results: Sequence[GameResult] = ("1-0", "1/2-1/2", "0-1", "+-", "-+", "--")
    events: list[Event] = [opened]
    for r in rounds[:4]:
        for k, (white, black) in enumerate(r.pairs):
            events.append(
                game(tid, f"r{r.number}-{white}-{black}", r.number, white, black, results[(r.number + k) % 6])
            )
    w, b = rounds[0].pairs[0]  # they meet in rounds 1 and 4 (colours reversed), never in round 5
    events.append(game(tid, "off-schedule", 5, w, b, "1-0"))
    events.append(ResultCorrected(id="fix", tournament=tid, round=1, white=w, black=b, result="--"))
    return events


def never_opened(tid: str) -> list[Event]:
    return [game(tid, "orphan", 1, 1, 2, "1-0")]


Replies = dict[str, list[tuple[str, Any]]]
Updates = dict[str, list[Message]]


async def run_scenario(url: str, token: str, scenarios: dict[str, list[Event]]) -> tuple[Replies, Updates]:
    """Subscribe to every tournament, submit every event (pipelined, in order), collect replies and updates."""
    replies: Replies = {tid: [] for tid in scenarios}
    updates: Updates = {tid: [] for tid in scenarios}
    expected = sum(len(events) for events in scenarios.values())
    async with connect(url) as ws:
        for tid in scenarios:
            await send(ws, {"type": "subscribe", "tournament": tid})
            snapshot = await recv(ws)
            assert (snapshot["type"], snapshot["seq"]) == ("snapshot", 0)
        order: dict[str, list[tuple[str, str]]] = {}
        for tid, events in scenarios.items():
            for n, event in enumerate(events):
                ref = f"{tid}#{n}"
                order.setdefault(tid, []).append((event.id, ref))
                body = {"type": "submit", "token": token, "event": json.loads(encode_event(event)), "ref": ref}
                await send(ws, body)
        by_ref: dict[str, tuple[str, Any]] = {}
        acked_seqs: dict[str, set[int]] = {tid: set() for tid in scenarios}
        async with asyncio.timeout(TIMEOUT):
            while len(by_ref) < expected or any(
                len({u["seq"] for u in updates[tid]}) < len(acked_seqs[tid]) for tid in scenarios
            ):
                message = await recv(ws, TIMEOUT)
                if message["type"] == "update":
                    updates[message["tournament"]].append(message)
                elif message["type"] == "ack":
                    by_ref[message["ref"]] = ("ack", message["seq"])
                    acked_seqs[message["tournament"]].add(message["seq"])
                elif message["type"] == "rejected":
                    by_ref[message["ref"]] = ("rejected", message["code"])
    for tid in scenarios:
        replies[tid] = [by_ref[ref] for _, ref in order[tid]]
    return replies, updates


SCENARIOS: dict[str, Callable[[str], list[Event]]] = {
    "conf-classic": classic,
    "conf-football": football,
    "conf-never-opened": never_opened,
}


async def test_the_embedded_and_the_kafka_deployment_give_the_same_standings_stream(
    deployment: tuple[Broker, Gateway], tracker_factory: Callable[..., RunningTracker]
) -> None:
    _, gateway = deployment
    embedded = tracker_factory()
    scenarios = {tid: make(tid) for tid, make in SCENARIOS.items()}
    local_replies, local_updates = await run_scenario(embedded.ws_url, embedded.token, scenarios)
    kafka_replies, kafka_updates = await run_scenario(gateway.ws_url, gateway.token, scenarios)
    for tid in scenarios:
        assert kafka_replies[tid] == local_replies[tid], tid
    for tid in scenarios:
        assert [u["seq"] for u in kafka_updates[tid]] == [u["seq"] for u in local_updates[tid]]
        for mine, theirs in zip(kafka_updates[tid], local_updates[tid], strict=True):
            assert mine == theirs  # seq, event, rows, what changed and why: update by update
    # the scenarios exercise what they claim to
    codes = {code for replies in local_replies.values() for kind, code in replies if kind == "rejected"}
    assert codes >= {"unchanged", "invalid-pairing", "unknown-player", "already-withdrawn", "already-open"}
    assert "unknown-tournament" in codes
    assert ("rejected", "invalid-pairing") in local_replies["conf-football"]  # the game off the schedule
    assert all(local_updates[tid] for tid in ("conf-classic", "conf-football"))


# -- shutdown ---------------------------------------------------------------------------------


async def test_sigterm_closes_gateway_clients_with_going_away_and_exits_cleanly(
    deployment: tuple[Broker, Gateway],
) -> None:
    broker, _ = deployment
    doomed = broker.gateway()
    async with connect(doomed.ws_url) as ws:
        await send(ws, {"type": "subscribe", "tournament": "conf-classic"})
        await recv(ws)
        doomed.process.proc.send_signal(signal.SIGTERM)
        with pytest.raises(ConnectionClosed) as closed:
            await recv_until(ws, lambda m: False, TIMEOUT)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001
    assert await asyncio.to_thread(doomed.process.proc.wait, 15) == 0
    doomed.process.expect("shutting down")


def test_replay_to_a_bad_broker_url_says_so_in_one_sentence() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tracker.cli", "replay", str(SINQUEFIELD), "--broker", "http://nowhere"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1
    assert "only kafka:// is supported" in out.stderr
    assert "Traceback" not in out.stderr
