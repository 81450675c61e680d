"""The worker's per-record logic, without a broker: table entries, outputs, batches, re-delivery, takeover."""

from __future__ import annotations

import json

import msgspec
import pytest

from tests.builders import TID, bye, correct, fold_all, game, opened, withdraw
from tracker.core.apply import apply
from tracker.core.events import Event, encode_event
from tracker.core.standings import standings
from tracker.kafka.feed import Feed, KafkaBackend
from tracker.kafka.processing import (
    Outcome,
    Processor,
    decode_dead_letter,
    entry_key,
    parse_entry_key,
    read_entries,
    rebuild,
    stored_entries,
)
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
    """What the agent does with one record: handle, then store the new entry."""
    outcome = processor.handle(key, encode_event(event), table)
    if outcome.entry is not None:
        table[outcome.entry[0]] = outcome.entry[1]
    return outcome


def run_one(processor: Processor, table: dict[bytes, bytes], event: Event) -> tuple[Outcome, bytes | None]:
    """One record as a batch of its own: its outcome and the snapshot produced for the batch."""
    outcome = run(processor, table, event)
    snapshots = dict(processor.snapshots())
    assert set(snapshots) <= {event.tournament}
    return outcome, snapshots.get(event.tournament)


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
    handled = [run_one(processor, table, event) for event in events]
    assert [(o.update, snapshot) for o, snapshot in handled] == expected_messages(events)
    assert all(o.dead_letter is None and o.tournament == TID for o, _ in handled)


def test_the_table_holds_one_entry_per_accepted_event_and_they_fold_back_to_the_same_state() -> None:
    events = scenario()
    table: dict[bytes, bytes] = {}
    processor = Processor()
    for event in events:
        run(processor, table, event)
    assert set(table) == {entry_key(TID, seq) for seq in range(1, len(events) + 1)}
    assert read_entries(stored_entries(table, TID)) == events
    rebuilt = rebuild(stored_entries(table, TID))
    assert rebuilt is not None
    assert rebuilt.seq == len(events)
    assert standings(rebuilt) == standings(fold_all(events))


def test_each_accepted_event_writes_only_its_own_bytes_however_long_the_tournament() -> None:
    players = list(range(1, 11))
    events: list[Event] = [opened(10)]
    for round_ in range(1, 10):  # a round robin by the circle method: 45 games
        events += [game(round_, players[k], players[-1 - k], "1-0") for k in range(5)]
        players = [players[0], players[-1], *players[1:-1]]
    table: dict[bytes, bytes] = {}
    processor = Processor()
    for seq, event in enumerate(events, 1):
        outcome = run(processor, table, event)
        assert outcome.entry == (entry_key(TID, seq), encode_event(event))  # O(1) changelog bytes per event


def test_a_batch_produces_one_snapshot_per_tournament_at_its_latest_standings_and_every_update() -> None:
    other = "other-tournament"
    events = scenario()
    others = [msgspec.structs.replace(e, tournament=other) for e in (opened(4), game(1, 1, 2, "1-0"))]
    table: dict[bytes, bytes] = {}
    processor = Processor()
    batch = [*events[:3], others[0], *events[3:], others[1]]
    outcomes = [run(processor, table, event, event.tournament.encode()) for event in batch]
    assert [o.update for o in outcomes if o.tournament == TID] == [u for u, _ in expected_messages(events)]
    assert [o.update for o in outcomes if o.tournament == other] == [u for u, _ in expected_messages(others)]
    assert dict(processor.snapshots()) == {
        TID: expected_messages(events)[-1][1],
        other: expected_messages(others)[-1][1],
    }
    assert processor.snapshots() == []  # each batch produces its own


def test_a_batch_redelivered_after_a_crash_that_stored_part_of_it_produces_every_update_again() -> None:
    events = scenario()
    expected = [u for u, _ in expected_messages(events)]
    table: dict[bytes, bytes] = {}
    for event in events[:6]:
        run(Processor(), table, event)  # the crash came after the entries of events[3:6] reached the changelog
    recovered = {key: bytes(value) for key, value in table.items()}
    processor = Processor()  # a new worker: nothing in memory
    outcomes = [run(processor, recovered, event) for event in events[3:]]  # the batch from events[3] again
    assert [o.update for o in outcomes] == expected[3:]
    assert [o.entry is None for o in outcomes] == [True] * 3 + [False] * (len(events) - 6)
    assert dict(processor.snapshots()) == {TID: expected_messages(events)[-1][1]}


def test_a_redelivered_event_changes_nothing_and_its_update_is_produced_again_byte_for_byte() -> None:
    events = scenario()
    table: dict[bytes, bytes] = {}
    processor = Processor()
    handled = [run_one(processor, table, event) for event in events]
    table_before = dict(table)
    for k in (0, 3, len(events) - 1):
        again, snapshot = run_one(processor, table, events[k])
        assert again.entry is None and again.dead_letter is None
        assert again.update == handled[k][0].update
        assert snapshot == handled[-1][1]  # the current standings, never an older snapshot
    assert table == table_before


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
    recovered = {key: bytes(value) for key, value in table.items()}  # equal bytes, not the same objects
    outcome = run(Processor(), recovered, events[6])
    assert outcome.update == expected_messages(events)[6][0]


def test_a_rejected_event_becomes_a_dead_letter_with_the_cores_code_and_reason() -> None:
    table: dict[bytes, bytes] = {}
    processor = Processor()
    run(processor, table, opened(4))
    run(processor, table, game(1, 1, 2, "1-0"))
    processor.snapshots()
    table_before = dict(table)
    cases = {
        "unknown-player": game(1, 3, 9, "1-0"),
        "invalid-pairing": game(1, 1, 3, "1-0"),  # player 1 already has a round-1 game
        "unchanged": correct(1, 1, 2, "1-0", id="same-result"),
        "already-open": opened(4),
    }
    for code, event in cases.items():
        outcome = run(processor, table, event)
        assert outcome.entry is None and outcome.update is None
        assert processor.snapshots() == []  # nothing changed: no snapshot either
        assert outcome.dead_letter is not None
        letter = decode_dead_letter(outcome.dead_letter)
        assert (letter["code"], letter["id"], letter["tournament"]) == (code, event.id, TID)
        assert letter["reason"]
        assert letter["event"] == json.loads(encode_event(event))
    assert table == table_before
    assert rebuild(stored_entries(table, TID)) is not None


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
    processor = Processor()
    outcome = processor.handle(key, value, {})
    assert outcome.entry is None and outcome.update is None
    assert processor.snapshots() == []
    assert outcome.dead_letter is not None
    assert decode_dead_letter(outcome.dead_letter)["code"] == code


def test_a_damaged_table_entry_is_a_dead_letter_not_a_crash() -> None:
    outcome = Processor().handle(KEY, encode_event(game(1, 1, 2, "1-0")), {entry_key(TID, 1): b"[{damaged"})
    assert outcome.dead_letter is not None
    assert decode_dead_letter(outcome.dead_letter)["code"] == "internal-error"


def test_entry_keys_name_the_tournament_and_the_seq_and_nothing_else_parses_as_one() -> None:
    assert entry_key("open-2026.a_b", 17) == b"open-2026.a_b/17"
    assert parse_entry_key(entry_key("open-2026.a_b", 17)) == ("open-2026.a_b", 17)
    for key in (b"open-2026", b"open-2026/", b"/17", b"open/x", b"0"):
        assert parse_entry_key(key) is None
    assert rebuild([]) is None


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


def test_the_gateway_folds_the_entries_it_read_from_the_changelog_and_refolds_after_a_new_one() -> None:
    events = scenario()
    table: dict[bytes, bytes] = {}
    processor = Processor()
    for event in events:
        run(processor, table, event)
    backend = KafkaBackend(producer=None)
    assert backend.state(TID) is None
    for key, value in table.items():
        parsed = parse_entry_key(key)
        assert parsed is not None
        if parsed[1] != 4:
            backend.record_entry(*parsed, value)
    partial = backend.state(TID)  # entry 4 not read yet: the entries before the hole
    assert partial is not None and partial.seq == 3
    backend.record_entry(TID, 4, table[entry_key(TID, 4)])
    whole = backend.state(TID)
    assert whole is not None and whole.seq == len(events)
    assert standings(whole) == standings(fold_all(events))
    assert backend.state(TID) is whole  # folded once until another entry comes


def older_log(events: list[Event]) -> bytes:
    """A table value in the layout before one entry per event: the whole log, a JSON array, under the id."""
    return b"[" + b",".join(encode_event(e) for e in events) + b"]"


def test_a_table_recovered_from_the_older_whole_log_layout_keeps_its_tournaments_and_goes_on_from_them() -> None:
    events = scenario()
    before, after = events[:6], events[6:]
    table: dict[bytes, bytes] = {KEY: older_log(before)}  # what an older worker's changelog restores
    processor = Processor()
    for event in after:
        run(processor, table, event)
    # the next events continue the seq of the older log: nothing was lost, nothing re-numbered
    assert set(table) == {KEY} | {entry_key(TID, seq) for seq in range(len(before) + 1, len(events) + 1)}
    assert read_entries(stored_entries(table, TID)) == events
    assert run(Processor(), table, before[2]).update == expected_messages(events[:3])[2][0]  # a re-delivery
    fresh = Processor()  # a restarted worker
    outcome = run(fresh, table, game(4, 2, 5, "1-0"))
    assert outcome.dead_letter is None and outcome.entry == (entry_key(TID, len(events) + 1), outcome.entry[1])


def test_the_gateway_reads_a_changelog_record_in_the_older_layout_as_the_tournaments_first_entries() -> None:
    events = scenario()
    backend = KafkaBackend(producer=None)

    class Record:
        def __init__(self, key: bytes, value: bytes) -> None:
            self.key, self.value = key, value

    feed = object.__new__(Feed)
    feed.backend = backend
    feed._changelog(Record(KEY, older_log(events[:6])))
    feed._changelog(Record(entry_key(TID, 7), encode_event(events[6])))
    feed._changelog(Record(b"other", b"not json"))  # neither layout: skipped, with a warning
    state = backend.state(TID)
    assert state is not None and state.seq == 7
    assert standings(state) == standings(fold_all(events[:7]))
