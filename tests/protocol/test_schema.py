"""The published JSON Schemas: generated from the code, checked in, and true to what is sent.

Server messages are validated against a *closed* copy of their schema
(``additionalProperties: false`` on every object), so a field added to or
removed from a message without the schema following fails here.
"""

from __future__ import annotations

import asyncio
import copy
import json
import subprocess
import sys
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any
from urllib.request import urlopen

import jsonschema  # type: ignore[import-untyped]  # no stubs in the venv; only used by tests
import msgspec
import pytest
from websockets.asyncio.client import connect

from tests.conftest import REPO, RunningTracker, data_file
from tests.wsclient import recv, recv_until, reply_to, send, submit
from tracker.core.apply import apply
from tracker.core.events import (
    BoardUpdated,
    ByeVoided,
    Evaluation,
    Event,
    GameResult,
    PlayerWithdrawn,
    ResultCorrected,
    ResultRecorded,
    ResultVoided,
    Scoring,
    encode_board,
    encode_event,
)
from tracker.core.projection import project
from tracker.core.standings import standings
from tracker.formats import TournamentFile, state_from
from tracker.formats.trf import parse_trf
from tracker.gateway.desk import summary
from tracker.protocol import (
    NoticeJSON,
    Submit,
    Subscribe,
    Unsubscribe,
    ack_message,
    encode,
    error_message,
    notices_message,
    projection_json,
    rejected_message,
    schedule_message,
    snapshot_message,
    standings_payload,
    update_message,
    v1_update,
)
from tracker.schema import main as schema_main
from tracker.schema import render, schemas, stale_files

SCHEMA_DIR = REPO / "docs" / "schema"
TRF_FILES = [
    data_file("sinquefield-cup-2021.trf"),
    data_file("fide-tec-exercise16-rr6.trf"),
    *sorted((REPO / "tests" / "data").glob("*.trf")),
]
SERVER_TYPES = (
    "snapshot",
    "update",
    "ack",
    "rejected",
    "error",
    "projection",
    "stakes",
    "cue",
    "schedule",
    "notices",
    "boards",
    "live",
)


def _closed(node: Any) -> Any:
    if isinstance(node, list):
        return [_closed(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _closed(value) for key, value in node.items()}
    if out.get("type") == "object" and isinstance(out.get("properties"), dict):
        out.setdefault("additionalProperties", False)
    return out


@cache
def validator(name: str, *, closed: bool = False) -> jsonschema.Draft202012Validator:
    """A validator for ``docs/schema/{name}`` as generated from the code (closed: no unknown fields)."""
    schema = schemas()[name]
    return jsonschema.Draft202012Validator(_closed(copy.deepcopy(schema)) if closed else schema)


def check_server_message(message: dict[str, Any] | bytes | str, *, union: bool = False) -> dict[str, Any]:
    """Validate one message the server sent against its own schema (``server-{type}.json``), closed.

    With ``union``, also against ``server.json`` (the same definitions
    behind a discriminator; twice the time on big updates).  Returns the
    message as a dict.  Raises ``jsonschema.ValidationError``.
    """
    body: dict[str, Any] = message if isinstance(message, dict) else json.loads(message)
    assert body.get("type") in SERVER_TYPES, body
    name = "update-delta" if body.get("delta") is True else body["type"]  # a v1.1 delta is an update too
    validator(f"server-{name}.json", closed=True).validate(body)
    if union:
        validator("server.json", closed=True).validate(body)
    return body


def is_valid(name: str, instance: object) -> bool:
    return bool(validator(name).is_valid(instance))


def reference_events() -> list[Event]:
    """Every event kind, from the reference files and built on them."""
    events: list[Event] = []
    for path in TRF_FILES:
        tf = parse_trf(path.read_text(encoding="utf-8"), str(path))
        events += [tf.opened, *tf.events]
    tid = "held"
    events += [
        ResultCorrected(id="c", tournament=tid, round=4, white=5, black=6, result="--", short=False),
        ResultVoided(id="v", tournament=tid, round=4, white=5, black=6),
        ByeVoided(id="bv", tournament=tid, round=1, player=3),
        PlayerWithdrawn(id="w", tournament=tid, player=2, reason="ill"),
    ]
    return events


# -- the files ---------------------------------------------------------------------------------


def test_checked_in_schema_files_are_exactly_what_the_code_generates() -> None:
    assert stale_files(SCHEMA_DIR) == [], "run: python -m tracker.schema docs/schema"


def test_schema_module_writes_a_directory_and_check_mode_flags_a_stale_file(tmp_path: Path) -> None:
    out = tmp_path / "schema"
    assert schema_main([str(out)]) == 0
    assert sorted(p.name for p in out.glob("*.json")) == sorted(schemas())
    assert schema_main(["--check", str(out)]) == 0
    (out / "server-ack.json").write_text("{}\n", encoding="utf-8")
    (out / "event-old_kind.json").write_text("{}\n", encoding="utf-8")
    assert stale_files(out) == ["event-old_kind.json", "server-ack.json"]
    done = subprocess.run(
        [sys.executable, "-m", "tracker.schema", "--check", str(out)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1 and "server-ack.json: out of date" in done.stderr
    assert schema_main([str(out)]) == 0 and stale_files(out) == []
    assert not (out / "event-old_kind.json").exists()


def test_every_file_is_a_valid_draft_2020_12_schema_with_a_title_and_description() -> None:
    for name, schema in schemas().items():
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["title"] and schema["description"], name
        assert render(schema).endswith("}\n")


def test_there_is_one_file_per_message_and_event_kind() -> None:
    names = set(schemas())
    assert {f"server-{t}.json" for t in SERVER_TYPES} <= names
    assert {"client-subscribe.json", "client-unsubscribe.json", "client-submit.json"} <= names
    kinds = {json.loads(encode_event(e))["type"] for e in reference_events()}
    assert {f"event-{k}.json" for k in kinds} <= names
    assert len(kinds) == 7
    assert "event-board_updated.json" in names  # a board is submitted as an event, never stored as one


# -- events and client messages ---------------------------------------------------------------


def test_every_event_of_the_reference_files_validates_as_sent_on_the_wire() -> None:
    for event in reference_events():
        body = json.loads(encode_event(event))
        validator("event.json").validate(body)
        validator(f"event-{body['type']}.json").validate(body)


def test_scoring_points_are_numbers_on_the_wire_and_strings_are_accepted_too() -> None:
    opened = parse_trf(TRF_FILES[0].read_text(encoding="utf-8"), "s.trf").opened
    body = json.loads(encode_event(msgspec.structs.replace(opened, scoring=Scoring(win=Decimal(3), draw=Decimal(1)))))
    assert body["scoring"]["win"] == 3
    assert is_valid("event.json", body)
    body["scoring"]["win"] = "3"
    assert is_valid("event.json", body)


@pytest.mark.parametrize(
    "body",
    [
        {"type": "result_recorded", "id": "x", "tournament": "t", "round": 1, "white": 1, "black": 2, "result": "2-0"},
        {"type": "result_recorded", "id": "x", "tournament": "t", "round": 1, "white": 1, "black": 2},
        {"type": "result_recorded", "id": "", "tournament": "t", "round": 1, "white": 1, "black": 2, "result": "1-0"},
        {"type": "result_recorded", "id": "x", "tournament": "t", "round": 0, "white": 1, "black": 2, "result": "1-0"},
        {"type": "bye_recorded", "id": "x", "tournament": "t", "round": 1, "player": 1, "kind": "double"},
        {"type": "bye_recorded", "id": "x", "tournament": "t", "round": 1, "player": 1, "colour": "w"},
        {"type": "result_deleted", "id": "x", "tournament": "t", "round": 1, "white": 1, "black": 2},
        {"type": "player_withdrawn", "id": "x" * 129, "tournament": "t", "player": 1},
        {"type": "player_withdrawn", "id": "x", "tournament": "bad id", "player": 1},
    ],
)
def test_the_schema_refuses_what_the_decoder_refuses(body: dict[str, Any]) -> None:
    from tracker.core.errors import DecodeError
    from tracker.core.events import decode_event

    with pytest.raises(DecodeError):
        decode_event(json.dumps(body))
    assert not is_valid("event.json", body)


def test_client_messages_validate_and_malformed_ones_do_not() -> None:
    event = reference_events()[1]
    for message in (
        Subscribe(tournament="sinq"),
        Subscribe(tournament="sinq", since=12, token="t"),
        Unsubscribe(tournament="sinq"),
        Submit(token="t", event=event, ref="r1"),
    ):
        body = json.loads(encode(message))
        validator("client.json").validate(body)
        validator(f"client-{body['type']}.json").validate(body)
    for bad in (
        {"type": "subscribe"},
        {"type": "subscribe", "tournament": "sinq", "colour": "w"},
        {"type": "publish", "tournament": "sinq"},
        {"type": "submit", "token": "t", "event": {"type": "result_recorded"}},
    ):
        assert not is_valid("client.json", bad), bad


# -- server messages, as built by tracker.protocol --------------------------------------------------


def test_deltas_of_real_tournaments_match_the_closed_delta_schema_and_not_the_full_one() -> None:
    from tests.protocol.feeds import feed
    from tracker.gateway.channel import empty_payload
    from tracker.protocol import standings_digest, update_delta

    for path in TRF_FILES:
        tf = parse_trf(path.read_text(encoding="utf-8"), str(path), "t")
        previous: Any = empty_payload("t")
        for payload, message in feed([tf.opened, *tf.events]):
            delta = check_server_message(
                update_delta(previous, payload, message, standings_digest(payload)), union=True
            )
            assert not validator("server-update.json", closed=True).is_valid(delta)
            previous = payload


def test_messages_built_by_the_protocol_module_match_the_closed_server_schemas() -> None:
    """Drift check: every builder of tracker.protocol, on real tournaments, against the schemas."""
    for path in TRF_FILES:
        tf = parse_trf(path.read_text(encoding="utf-8"), str(path), "t")
        state, update = apply(None, tf.opened)
        assert update is not None
        check_server_message(v1_update(update_message(update)), union=True)
        for event in tf.events:
            state, update = apply(state, event)
            assert update is not None
            check_server_message(v1_update(update_message(update)), union=True)
        check_server_message(snapshot_message(standings_payload(standings(state))), union=True)
        body = json.loads(
            encode({"type": "projection", "tournament": "t", "seq": state.seq, **projection_json(project(state))})
        )
        check_server_message(body, union=True)
    first = parse_trf(TRF_FILES[1].read_text(encoding="utf-8"), "x.trf", "held")
    state = state_from(TournamentFile(first.opened, first.events[:-3]))
    for event in (
        ResultCorrected(id="c", tournament="held", round=1, white=2, black=6, result="0-1"),
        ResultVoided(id="v", tournament="held", round=1, white=2, black=6),
        PlayerWithdrawn(id="w", tournament="held", player=2),
    ):
        state, update = apply(state, event)
        assert update is not None and update.event is event
        check_server_message(v1_update(update_message(update)), union=True)
    check_server_message(ack_message("e1", "held", 7), union=True)
    check_server_message(ack_message("e1", "held", 7, ref="mine"), union=True)
    check_server_message(rejected_message("e1", "unknown-player", "no player 12", ref=None), union=True)
    check_server_message(rejected_message(None, "bad-message", "not JSON"), union=True)
    check_server_message(error_message("unknown-tournament", "no tournament 'x'"), union=True)
    check_server_message(schedule_message("held", [[(1, 2), (3, 4)], []]), union=True)
    notice: NoticeJSON = {"id": 3, "at": 1.5, "code": "scheduled-game", "reason": "r", "event": summary(tf.events[0])}
    check_server_message(notices_message("held", [notice]), union=True)
    check_server_message(notices_message("held", [notice], added=True), union=True)


def test_a_message_with_a_field_the_schema_does_not_know_fails_the_drift_check() -> None:
    body = json.loads(ack_message("e1", "held", 7))
    body["latency_ms"] = 3
    with pytest.raises(jsonschema.ValidationError):
        check_server_message(body)
    del body["latency_ms"]
    del body["seq"]
    with pytest.raises(jsonschema.ValidationError):
        check_server_message(body)


# -- server messages, as sent by a real gateway ---------------------------------------------------------


async def test_every_message_a_real_gateway_sends_matches_the_schema(tracker_server: RunningTracker) -> None:
    tf = parse_trf(TRF_FILES[0].read_text(encoding="utf-8"), "s.trf", "schema-live")
    token = tracker_server.token
    seen: set[str] = set()

    def check(message: dict[str, Any]) -> dict[str, Any]:
        seen.add(message["type"])
        return check_server_message(message, union=True)

    async with connect(tracker_server.ws_url) as ws, connect(tracker_server.ws_url) as watcher:
        await watcher.send("{not json")
        check(await recv(watcher))
        await send(watcher, {"type": "hello"})
        assert check(await recv(watcher))["code"] == "bad-message"
        await send(watcher, {"type": "subscribe", "tournament": "schema-live", "token": "wrong"})
        assert check(await recv(watcher))["code"] == "unauthorized"
        await send(watcher, {"type": "subscribe", "tournament": "schema-live"})
        assert check(await recv(watcher))["type"] == "snapshot"

        await submit(ws, "wrong-token", tf.opened)
        assert check(await reply_to(ws, tf.opened.id))["type"] == "rejected"
        await submit(ws, token, tf.opened, ref="open")
        assert check(await reply_to(ws, tf.opened.id))["type"] == "ack"
        for event in tf.events[:8]:
            await submit(ws, token, event)
            assert check(await reply_to(ws, event.id))["type"] == "ack"
        duplicate = msgspec.structs.replace(tf.events[0], id="again")
        await submit(ws, token, duplicate)
        assert check(await reply_to(ws, "again"))["code"] == "duplicate-result"
        last = tf.events[7]
        assert isinstance(last, ResultRecorded)
        correction = ResultCorrected(
            id="fix", tournament="schema-live", round=last.round, white=last.white, black=last.black, result="--"
        )
        await submit(ws, token, correction)
        assert check(await reply_to(ws, "fix"))["type"] == "ack"
        updates = 0
        while updates < 10:
            message = check(await recv(watcher))
            updates += message["type"] == "update"

        await send(ws, {"type": "subscribe", "tournament": "schema-live", "token": token})
        projection, before = await recv_until(ws, lambda m: m["type"] == "projection", timeout=30)
        for message in (*before, projection):
            check(message)
        await send(ws, {"type": "subscribe", "tournament": "schema-live", "since": 3})
        _, resumed = await recv_until(ws, lambda m: m["type"] == "update" and m["seq"] == 10)
        for message in resumed:
            check(message)

        # stakes (and, once the leader changes, a cue) for a subscriber who asks
        await send(watcher, {"type": "subscribe", "tournament": "schema-live", "stakes": True})
        stakes, _ = await recv_until(watcher, lambda m: m["type"] == "stakes", timeout=30)
        check(stakes)
        standings = json.loads(urlopen(f"{tracker_server.http_url}/api/tournaments/schema-live/standings").read())
        leader = standings["standings"][0]["start_no"]
        lost = next(e for e in tf.events[:7] if isinstance(e, ResultRecorded) and leader in (e.white, e.black))
        result: GameResult = "0-1" if lost.white == leader else "1-0"
        fix = ResultCorrected(
            id="lead", tournament="schema-live", round=lost.round, white=lost.white, black=lost.black, result=result
        )
        await submit(ws, token, fix)
        assert check(await reply_to(ws, "lead"))["type"] == "ack"
        cue, _ = await recv_until(watcher, lambda m: m["type"] == "cue", timeout=30)
        check(cue)

        # the boards of games in progress, and what they make of the tournament, for a subscriber who asks
        await send(watcher, {"type": "subscribe", "tournament": "schema-live", "boards": True})
        pending = next(
            (r, w, b)
            for r, pairs in enumerate(tf.opened.schedule or (), start=1)
            for w, b in pairs
            if not any(
                isinstance(e, ResultRecorded) and (e.round, e.white, e.black) == (r, w, b) for e in tf.events[:8]
            )
        )
        board = BoardUpdated(
            "board", "schema-live", *pending, ply=12, evaluation=Evaluation(cp=-150, wdl=(100, 300, 600))
        )
        await send(ws, {"type": "submit", "token": token, "event": json.loads(encode_board(board))})
        assert check(await reply_to(ws, "board"))["type"] == "ack"
        boards, _ = await recv_until(watcher, lambda m: m["type"] == "boards", timeout=30)
        check(boards)
        live, _ = await recv_until(watcher, lambda m: m["type"] == "live", timeout=30)
        check(live)
    assert seen == set(SERVER_TYPES)


# -- the documented client example ---------------------------------------------------------------


def doc_snippet(language: str, index: int = 0) -> str:
    """The ``index``-th fenced ``language`` block of docs/protocol.md."""
    text = (REPO / "docs" / "protocol.md").read_text(encoding="utf-8")
    blocks = [part.split("```", 1)[0] for part in text.split(f"```{language}\n")[1:]]
    return blocks[index]


async def test_the_documented_python_spectator_follows_a_tournament(
    tracker_server: RunningTracker, tmp_path: Path
) -> None:
    script = tmp_path / "spectate.py"
    script.write_text(doc_snippet("python"), encoding="utf-8")
    assert len(script.read_text(encoding="utf-8").splitlines()) <= 20
    tf = parse_trf(TRF_FILES[0].read_text(encoding="utf-8"), "s.trf", "doc-example")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(script), tracker_server.ws_url, "doc-example", stdout=asyncio.subprocess.PIPE
    )
    assert proc.stdout is not None
    try:
        async with asyncio.timeout(30):
            assert (await proc.stdout.readline()).decode().startswith("0 snapshot | leader: -")
            async with connect(tracker_server.ws_url) as ws:
                for event in (tf.opened, tf.events[0]):
                    await submit(ws, tracker_server.token, event)
                    assert (await reply_to(ws, event.id))["type"] == "ack"
            assert (await proc.stdout.readline()).decode().startswith("1 Sinquefield Cup 2021 opened with 10 players")
            line = (await proc.stdout.readline()).decode()
            assert line.startswith("2 Caruana–Shankland 1–0 (round 1)") and "| leader: Caruana, Fabiano" in line
    finally:
        proc.kill()
        await proc.wait()
