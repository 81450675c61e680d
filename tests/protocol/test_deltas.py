"""Protocol v1.1 field deltas: every update of real tournaments round-trips, and the digest is JavaScript's.

For each update: the standings before + the delta == the standings after, the
digest of what was rebuilt is the delta's, and the full v1 update rebuilt from
it is the processor's message byte for byte (what a full subscriber resuming
from the hub's deltas receives).
"""

from __future__ import annotations

import random
import zlib
from pathlib import Path
from typing import Any

import msgspec
import pytest

from bench.scenario import tournament
from tests.conftest import TEST_DATA, data_file
from tests.protocol.feeds import feed
from tracker.core.events import Event, ResultCorrected, ResultVoided
from tracker.formats.files import read_file
from tracker.gateway.channel import empty_payload
from tracker.protocol import (
    Digester,
    apply_delta,
    decode_client,
    diff_standings,
    full_update,
    js_number,
    standings_digest,
    update_delta,
    v1_update,
)

TRF_FILES = [
    data_file("sinquefield-cup-2021.trf"),
    data_file("fide-tec-exercise16-rr6.trf"),
    *sorted(TEST_DATA.glob("*.trf")),
]


def synthetic(players: int) -> list[Event]:
    """A whole round robin, then a correction and a void late on: rows change places and lines shrink."""
    opened, results = tournament("delta-rr", players, seed=17)
    played = list(results)
    last = played[-1]
    flip = {"1-0": "0-1", "0-1": "1/2-1/2", "1/2-1/2": "1-0"}[last.result]
    played.append(ResultCorrected(f"{last.id}/fix", last.tournament, last.round, last.white, last.black, flip))
    early = random.Random(3).choice(played[:players])
    played.append(ResultVoided(f"{early.id}/void", early.tournament, early.round, early.white, early.black))
    return [opened, *played]


def trf_events(path: Path) -> list[Event]:
    tf = read_file(str(path))
    return [tf.opened, *tf.events]


def check_round_trip(events: list[Event]) -> int:
    """Apply every delta of ``events``' updates to the standings before it; return how many were checked."""
    updates = feed(events)
    previous: dict[str, Any] = dict(empty_payload(updates[0][0]["tournament"]))
    client = previous
    digester = Digester()
    for payload, message in updates:
        _, rows, _ = diff_standings(previous, payload)
        digest = digester.digest(payload, {row["start_no"]: row for row in rows})
        assert digest == standings_digest(payload)
        delta = msgspec.json.decode(update_delta(previous, payload, message, digest))
        assert delta["delta"] is True and delta["seq"] == payload["seq"]
        client = apply_delta(client, delta)
        assert msgspec.json.encode(client) == msgspec.json.encode(payload), f"seq {payload['seq']}"
        assert standings_digest(client) == delta["digest"]
        # rebuilt from the delta: protocol v1's bytes (the summary's phrases travel in deltas only)
        assert full_update(client, delta) == v1_update(message), (
            f"seq {payload['seq']}: the rebuilt full update differs"
        )
        said = msgspec.json.decode(message)["summary_said"]
        assert delta["summary_said"] == said and "summary_said" not in msgspec.json.decode(v1_update(message))
        previous = dict(payload)
    return len(updates)


@pytest.mark.parametrize("path", TRF_FILES, ids=lambda p: p.name)
def test_every_update_of_a_real_tournament_is_the_previous_standings_plus_its_delta(path: Path) -> None:
    assert check_round_trip(trf_events(path)) > 3


@pytest.mark.parametrize("players", [9, 16])
def test_deltas_round_trip_through_corrections_and_voids(players: int) -> None:
    assert check_round_trip(synthetic(players)) == 1 + players * (players - 1) // 2 + 2


def test_a_delta_carries_only_what_changed() -> None:
    updates = feed(synthetic(16))
    (before, _), (after, message) = updates[-5], updates[-4]
    delta = msgspec.json.decode(update_delta(before, after, message, standings_digest(after)))
    event = msgspec.json.decode(message)
    for key in ("event", "changed", "reached", "fell", "qualification", "summary"):
        assert delta[key] == event[key]
    assert "standings" not in delta and "name" not in delta and "codes" not in delta
    assert delta["games_played"] == after["games_played"]
    old = {row["start_no"]: row for row in before["standings"]}
    for row in delta["rows"]:
        full = next(r for r in after["standings"] if r["start_no"] == row["start_no"])
        for key, value in row.items():
            if key == "tiebreaks":
                assert value and all(old[row["start_no"]]["tiebreaks"][c] != v for c, v in value.items())
            elif key == "results":  # a result of the latest round: the line's one new entry
                assert row["results_from"] == len(old[row["start_no"]]["results"]) and len(value) == 1
                assert list(full["results"][-1]) == value[0]
            elif key not in ("start_no", "results_from"):
                assert msgspec.json.encode(value) != msgspec.json.encode(old[row["start_no"]][key])
                assert msgspec.json.encode(value) == msgspec.json.encode(full[key])
    with_results = [row["start_no"] for row in delta["rows"] if "results" in row]
    assert sorted(with_results) == sorted((event["event"]["white"], event["event"]["black"]))
    assert len(message) > 4 * len(update_delta(before, after, message, 0))


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (2.0, "2"),
        (0.5, "0.5"),
        (-0.0, "0"),
        (23.75, "23.75"),
        (1 / 3, "0.3333333333333333"),
        (1e21, "1e+21"),
        (1.5e21, "1.5e+21"),
        (1e20, "100000000000000000000"),
        (123456789012345680000.0, "123456789012345680000"),
        (1e16, "10000000000000000"),
        (0.000001, "0.000001"),
        (1e-7, "1e-7"),
        (-1.5e-10, "-1.5e-10"),
        (0.0001, "0.0001"),
        (2**53, "9007199254740992"),
        (True, "true"),
        (False, "false"),
    ],
)
def test_numbers_are_written_as_javascript_string_writes_them(value: object, text: str) -> None:
    assert js_number(value) == text


def test_the_digest_is_the_crc32_of_the_documented_canonical_text() -> None:
    payload = {
        "tournament": "t",
        "name": "Cup",
        "seq": 3,
        "rounds": 3,
        "games_played": 2,
        "provisional": True,
        "basis": "percentage",
        "max_basis": "games",
        "rules": "2026",
        "codes": ["SB", "KS"],
        "scoring": {"win": 1.0, "draw": 0.5},
        "standings": [
            {
                "rank": 1,
                "start_no": 2,
                "name": "Ding, Liren",
                "points": 1.5,
                "tiebreaks": {"SB": 1.25, "KS": 1.0},
                "games": 2,
                "withdrawn": False,
                "qualified": True,
                "line": 1.0,
                "results": [[1, 1, "w", "1"], [2, 3, "b", "="]],
            }
        ],
    }
    text = (
        "t|Cup|3|3|2|true|percentage|games|2026|SB,KS|draw=0.5,win=1\n"
        "1|2|Ding, Liren|1.5|2|false|true|1|1.25,1|1,1,w,1;2,3,b,="
    )
    assert standings_digest(payload) == zlib.crc32(text.encode())


def test_subscribe_takes_updates_full_or_delta_and_defaults_to_full() -> None:
    assert decode_client(b'{"type":"subscribe","tournament":"t"}').updates == "full"  # type: ignore[union-attr]
    assert decode_client(b'{"type":"subscribe","tournament":"t","updates":"delta"}').updates == "delta"  # type: ignore[union-attr]
    with pytest.raises(Exception, match="invalid message"):
        decode_client(b'{"type":"subscribe","tournament":"t","updates":"some"}')
