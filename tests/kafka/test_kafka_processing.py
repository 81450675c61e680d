"""The worker's per-record logic, without a broker: table value, outputs, re-delivery, takeover."""

from __future__ import annotations

import json

import msgspec
import pytest

from tests.builders import TID, bye, correct, fold_all, game, opened, withdraw
from tracker.core.apply import apply
from tracker.core.events import Event, encode_event
from tracker.core.standings import standings
from tracker.kafka.processing import EMPTY_LOG, Outcome, Processor, append, decode_dead_letter, read_log, rebuild
from tracker.kafka.topics import BrokerError, bootstrap_servers, faust_broker
from tracker.protocol import snapshot_message, standings_payload, update_message

KEY = TID.encode()


def scenario() -> list[Event]:
    """A 5-player round robin with a forfeit, a double forfeit, byes, a correction and a withdrawal."""
    return [
        opened(5),
        game(1, 1, 2, "1-0"),
        game(1, 3, 4, "+-"),
        bye(1, 5),
        game(2, 2, 3, "--"),
        game(2, 4, 5, "1/2-1/2"),
        bye(2, 1, "half"),
        correct(1, 1, 2, "0-1"),
        withdraw(3),
        game(3, 1, 4, "1-0"),
    ]


def run(processor: Processor, table: dict[bytes, bytes], event: Event, key: bytes = KEY) -> Outcome:
    """What the agent does with one record: handle, then store the new log."""
    outcome = processor.handle(key, encode_event(event), table.get(key))
    if outcome.log is not None:
        table[key] = outcome.log
    return outcome


def expected_messages(events: list[Event]) -> list[tuple[bytes, bytes]]:
    """(update, snapshot) per event, straight from the core, as the embedded tracker makes them."""
    state = None
    out = []
    for event in events:
        state, update = apply(state, event)
        assert update is not None
        out.append((update_message(update), snapshot_message(standings_payload(update.standings))))
    return out


def test_each_accepted_event_produces_the_embedded_trackers_update_and_snapshot() -> None:
    events = scenario()
    table: dict[bytes, bytes] = {}
    processor = Processor()
    outcomes = [run(processor, table, event) for event in events]
    assert [(o.update, o.snapshot) for o in outcomes] == expected_messages(events)
    assert all(o.dead_letter is None and o.tournament == TID for o in outcomes)


def test_the_table_value_is_the_log_of_accepted_events_and_folds_back_to_the_same_state() -> None:
    events = scenario()
    table: dict[bytes, bytes] = {}
    processor = Processor()
    for event in events:
        run(processor, table, event)
    assert read_log(table[KEY]) == events
    rebuilt = rebuild(table[KEY])
    assert rebuilt is not None
    assert rebuilt.seq == len(events)
    assert standings(rebuilt) == standings(fold_all(events))


def test_a_redelivered_event_changes_nothing_and_its_update_is_produced_again_byte_for_byte() -> None:
    events = scenario()
    table: dict[bytes, bytes] = {}
    processor = Processor()
    outcomes = [run(processor, table, event) for event in events]
    log_before = table[KEY]
    for k in (0, 3, len(events) - 1):
        again = run(processor, table, events[k])
        assert again.log is None and again.dead_letter is None
        assert again.update == outcomes[k].update
        assert again.snapshot == outcomes[-1].snapshot  # the current standings, never an older snapshot
    assert table[KEY] == log_before


def test_a_worker_taking_a_partition_back_rebuilds_from_the_table_not_from_its_stale_cache() -> None:
    events = scenario()
    table: dict[bytes, bytes] = {}
    first, second = Processor(), Processor()
    for event in events[:4]:
        run(first, table, event)
    for event in events[4:7]:  # the partition moved to another worker meanwhile
        run(second, table, event)
    outcomes = [run(first, table, event) for event in events[7:]]  # and came back
    assert [o.update for o in outcomes] == [u for u, _ in expected_messages(events)[7:]]


def test_a_restarted_worker_rebuilds_from_the_recovered_table() -> None:
    events = scenario()
    table: dict[bytes, bytes] = {}
    for event in events[:6]:
        run(Processor(), table, event)  # a fresh cache for every record
    recovered = {KEY: bytes(table[KEY])}  # equal bytes, not the same object
    outcome = run(Processor(), recovered, events[6])
    assert outcome.update == expected_messages(events)[6][0]


def test_a_rejected_event_becomes_a_dead_letter_with_the_cores_code_and_reason() -> None:
    table: dict[bytes, bytes] = {}
    processor = Processor()
    run(processor, table, opened(4))
    run(processor, table, game(1, 1, 2, "1-0"))
    log_before = table[KEY]
    cases = {
        "unknown-player": game(1, 3, 9, "1-0"),
        "invalid-pairing": game(1, 1, 3, "1-0"),  # player 1 already has a round-1 game
        "unchanged": correct(1, 1, 2, "1-0", id="same-result"),
        "already-open": opened(4),
    }
    for code, event in cases.items():
        outcome = run(processor, table, event)
        assert outcome.log is None and outcome.update is None and outcome.snapshot is None
        assert outcome.dead_letter is not None
        letter = decode_dead_letter(outcome.dead_letter)
        assert (letter["code"], letter["id"], letter["tournament"]) == (code, event.id, TID)
        assert letter["reason"]
        assert letter["event"] == json.loads(encode_event(event))
    assert table[KEY] == log_before
    assert rebuild(table[KEY]) is not None


def test_an_event_for_a_tournament_not_opened_is_a_dead_letter() -> None:
    outcome = run(Processor(), {}, game(1, 1, 2, "1-0"))
    assert outcome.dead_letter is not None
    assert decode_dead_letter(outcome.dead_letter)["code"] == "unknown-tournament"


@pytest.mark.parametrize(
    ("key", "value", "code"),
    [
        (KEY, b"{not json", "bad-event"),
        (KEY, b'{"type": "result_recorded", "id": "x"}', "bad-event"),
        (b"another-tournament", encode_event(game(1, 1, 2, "1-0", id="misrouted")), "wrong-key"),
        (None, encode_event(game(1, 1, 2, "1-0", id="keyless")), "wrong-key"),
        (KEY, None, "bad-event"),
    ],
)
def test_undecodable_or_misrouted_records_become_dead_letters(
    key: bytes | None, value: bytes | None, code: str
) -> None:
    outcome = Processor().handle(key, value, None)
    assert outcome.log is None and outcome.update is None
    assert outcome.dead_letter is not None
    assert decode_dead_letter(outcome.dead_letter)["code"] == code


def test_a_damaged_table_value_is_a_dead_letter_not_a_crash() -> None:
    outcome = Processor().handle(KEY, encode_event(game(1, 1, 2, "1-0")), b"[{damaged")
    assert outcome.dead_letter is not None
    assert decode_dead_letter(outcome.dead_letter)["code"] == "internal-error"


def test_append_builds_a_json_array_of_the_event_bodies() -> None:
    a, b = encode_event(opened(3)), encode_event(game(1, 1, 2, "1-0"))
    assert append(None, a) == append(EMPTY_LOG, a) == b"[" + a + b"]"
    assert msgspec.json.decode(append(append(None, a), b)) == [json.loads(a), json.loads(b)]
    assert rebuild(EMPTY_LOG) is None


@pytest.mark.parametrize(
    ("url", "servers"),
    [
        ("kafka://127.0.0.1:9092", ["127.0.0.1:9092"]),
        ("kafka://k1:9092;kafka://k2:9093", ["k1:9092", "k2:9093"]),
        ("k1:9092,k2:9093", ["k1:9092", "k2:9093"]),
    ],
)
def test_broker_urls_name_bootstrap_servers(url: str, servers: list[str]) -> None:
    assert bootstrap_servers(url) == servers
    assert faust_broker(url) == [f"kafka://{s}" for s in servers]


@pytest.mark.parametrize("url", ["", "http://k1:9092", "kafka://k1", "kafka://:9092"])
def test_a_bad_broker_url_is_refused_with_a_reason(url: str) -> None:
    with pytest.raises(BrokerError, match="broker"):
        bootstrap_servers(url)
