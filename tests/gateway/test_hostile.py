"""Hostile input against one running ``tracker up``: nothing crashes, nobody else notices, nothing changes.

How this works
--------------

One real ``tracker up`` process serves the whole module (the *arena*).  Two
tournaments are open in it: ``hostile-cup``, the target of every hostile
message, and ``bystander-cup``, whose results keep flowing.  A *bystander*
client, connected from the start to the end of the module on a background
event loop, subscribes to both and must see every ``bystander-cup`` update
in order, with no gap and no close.

Each Hypothesis example opens a fresh connection, sends one hostile frame and
then checks three things: the sender got an ``error`` or ``rejected`` with a
code and a reason (or, for frame-level violations, a close with the right
code); the server process is alive and the bystander keeps receiving (a
*heartbeat* result is submitted by the arbiter and must reach it); and the
state is unchanged (``hostile-cup``'s standings JSON, the tournament list and
the journal's rows for everything but the heartbeats are byte-for-byte the
same as before).

The same module fuzzes the TRF and PGN readers (only ``FormatError``, never
another exception) and checks access: only the arbiter token changes
results, spectators never submit, the token appears nowhere, and browser
origins are checked.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hmac
import json
import os
import socket
import sqlite3
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.conftest import TEST_DATA, TOKEN, RunningTracker, data_file, start_tracker
from tests.reliability_log import Counter, record
from tests.wsclient import Message, recv, recv_until, reply_to, send
from tracker.core.errors import FormatError
from tracker.formats import state_from
from tracker.formats.pgn import parse_pgn
from tracker.formats.trf import export_trf, parse_trf

T = TypeVar("T")

HOSTILE = "hostile-cup"
BYSTANDER = "bystander-cup"
MAX_FRAME = 64 * 1024  # the default limit (tracker/config.py Limits.max_frame)
FLIPS = ("0-1", "1/2-1/2", "1-0")  # bystander-cup's round 1 game cycles through these (it starts as 1-0)
HYPOTHESIS = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)


def four_players(tid: str, name: str) -> dict[str, Any]:
    return {
        "type": "tournament_opened",
        "id": f"{tid}/open",
        "tournament": tid,
        "name": name,
        "players": [{"start_no": i, "name": f"Player {i}", "rating": 2500 + i} for i in range(1, 5)],
        "schedule": [[[1, 4], [2, 3]], [[4, 3], [1, 2]], [[2, 4], [3, 1]]],
    }


def result(
    tid: str, event_id: str, rnd: int, white: int, black: int, res: str, kind: str = "result_recorded"
) -> dict[str, Any]:
    return {
        "type": kind,
        "id": event_id,
        "tournament": tid,
        "round": rnd,
        "white": white,
        "black": black,
        "result": res,
    }


def http_get(port: int, path: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status), bytes(response.read())
    except urllib.error.HTTPError as exc:
        return int(exc.code), bytes(exc.read())


def http_json(port: int, path: str) -> Any:
    status, body = http_get(port, path)
    assert status == 200, (path, status, body[:200])
    return json.loads(body)


def journal_rows(data_dir: Path) -> dict[str, int]:
    """Rows per tournament in a live journal (read while the server writes: WAL allows it)."""
    db = sqlite3.connect(data_dir / "journal.sqlite3", timeout=10)
    try:
        return dict(db.execute("SELECT tournament, count(*) FROM events GROUP BY tournament").fetchall())
    finally:
        db.close()


# -- a raw websocket client, for what a polite library refuses to send ------------------------------


def mask_payload(payload: bytes, mask: bytes) -> bytes:
    n = len(payload)
    if not n:
        return b""
    repeated = (mask * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(n, "big")


def frame(opcode: int, payload: bytes, *, fin: bool = True, rsv: int = 0, masked: bool = True) -> bytes:
    """One websocket frame as a client would send it (RFC 6455 §5.2)."""
    first = (0x80 if fin else 0) | (rsv << 4) | opcode
    bit = 0x80 if masked else 0
    n = len(payload)
    if n < 126:
        header = bytes([first, bit | n])
    elif n < 1 << 16:
        header = bytes([first, bit | 126]) + n.to_bytes(2, "big")
    else:
        header = bytes([first, bit | 127]) + n.to_bytes(8, "big")
    if not masked:
        return header + payload
    mask = os.urandom(4)
    return header + mask + mask_payload(payload, mask)


class RawWs:
    """A websocket client on a plain socket: handshake, send any bytes, read frames and the close code."""

    def __init__(self, port: int, *, origin: str | None = None, extra: str = "") -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            + (f"Origin: {origin}\r\n" if origin else "")
            + extra
            + "\r\n"
        )
        self.sock.sendall(request.encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(4096)
            if not chunk:
                break
            self.buffer += chunk
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        self.status = int(head.split(b" ", 2)[1]) if head else 0

    def send(self, data: bytes) -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.sock.sendall(data)

    def _exact(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def read_frame(self) -> tuple[int, bytes]:
        b0, b1 = self._exact(2)
        n = b1 & 0x7F
        if n == 126:
            n = int.from_bytes(self._exact(2), "big")
        elif n == 127:
            n = int.from_bytes(self._exact(8), "big")
        return b0 & 0x0F, self._exact(n)

    def read_close(self) -> tuple[int | None, list[bytes]]:
        """Read until the server's close frame: its code (None if the socket ended without one) and the data frames."""
        frames: list[bytes] = []
        try:
            while True:
                opcode, payload = self.read_frame()
                if opcode == 0x8:
                    return (int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1005), frames
                frames.append(payload)
        except (EOFError, ConnectionResetError):
            return None, frames

    def close(self) -> None:
        self.sock.close()


# -- the arena: one server, a bystander and an arbiter on a background event loop ---------------------


class Arena:
    """The module's running tracker, its bystander, and the checks every example ends with."""

    def __init__(self, server: RunningTracker) -> None:
        self.server = server
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="arena-loop", daemon=True)
        self.thread.start()
        self.seqs: list[int] = []  # bystander-cup seqs the bystander received
        self.hostile_updates: list[int] = []  # hostile-cup updates the bystander received (must stay empty)
        self.bystander_closed: BaseException | None = None
        self.received = asyncio.Event()
        self.beats = 0
        self.replies: list[str] = []  # every reply a hostile client got, to grep for the token
        self.run(self._start())
        self.before = self.state()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def _start(self) -> None:
        self.arbiter = await connect(self.server.ws_url, max_size=2**24)
        for opening, first in (
            (four_players(HOSTILE, "Hostile Cup"), result(HOSTILE, "h/r1/1-4", 1, 1, 4, "1-0")),
            (four_players(BYSTANDER, "Bystander Cup"), result(BYSTANDER, "b/r1/1-4", 1, 1, 4, "1-0")),
        ):
            for event in (opening, first):
                await send(self.arbiter, {"type": "submit", "token": TOKEN, "event": event})
                assert (await reply_to(self.arbiter, event["id"]))["type"] == "ack"
        self.bystander = await connect(self.server.ws_url, max_size=2**24)
        for tid in (BYSTANDER, HOSTILE):
            await send(self.bystander, {"type": "subscribe", "tournament": tid})
            snapshot = await recv(self.bystander)
            assert snapshot["type"] == "snapshot" and snapshot["tournament"] == tid
            if tid == BYSTANDER:
                self.seqs.append(snapshot["seq"])
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            async for raw in self.bystander:
                message = json.loads(raw)
                if message["type"] == "update" and message["tournament"] == BYSTANDER:
                    self.seqs.append(message["seq"])
                    self.received.set()
                elif message["type"] == "update":
                    self.hostile_updates.append(message["seq"])
            self.bystander_closed = ConnectionError("the server ended the bystander's connection")
        except ConnectionClosed as exc:
            self.bystander_closed = exc
        self.received.set()

    async def _heartbeat(self) -> None:
        k = self.beats
        event = result(BYSTANDER, f"beat-{k}", 1, 1, 4, FLIPS[k % 3], kind="result_corrected")
        await send(self.arbiter, {"type": "submit", "token": TOKEN, "event": event})
        reply = await reply_to(self.arbiter, event["id"])
        assert reply["type"] == "ack", reply
        self.beats += 1
        async with asyncio.timeout(10):
            while self.seqs[-1] < reply["seq"] and self.bystander_closed is None:
                self.received.clear()
                await self.received.wait()

    def heartbeat(self) -> None:
        """A result reaches the bystander: it is still connected and saw every seq in order."""
        assert self.server.proc.poll() is None, "the server died:\n" + "".join(self.server.output[-40:])
        self.run(self._heartbeat())
        assert self.bystander_closed is None, f"the bystander was disconnected: {self.bystander_closed!r}"
        assert self.seqs == list(range(self.seqs[0], self.seqs[0] + len(self.seqs))), "the bystander missed a seq"
        assert not self.hostile_updates, "hostile input changed hostile-cup"

    def state(self) -> tuple[Any, ...]:
        """Everything hostile input must not change (heartbeats only touch bystander-cup)."""
        port = self.server.port
        listing = [t for t in http_json(port, "/api/tournaments")["tournaments"] if t["id"] != BYSTANDER]
        rows = journal_rows(self.server.data_dir)
        beats = rows.pop(BYSTANDER, 0) - 2
        assert beats == self.beats, f"the journal holds {beats} heartbeats, {self.beats} were acknowledged"
        return http_get(port, f"/api/tournaments/{HOSTILE}/standings")[1], listing, rows

    def check(self, beat: bool = True) -> None:
        """The server lives, the state is what it was, and (when ``beat``) the bystander still receives."""
        assert self.server.proc.poll() is None, "the server died:\n" + "".join(self.server.output[-40:])
        assert self.state() == self.before, "hostile input changed the state"
        if beat:
            self.heartbeat()

    async def exchange(self, data: str | bytes, *, probe: bool = True) -> Message:
        """Send one hostile message on a fresh connection; return the error/rejection it got.

        With ``probe`` the same connection then subscribes, which must still
        work: a bad message never costs a client its connection.
        """
        async with connect(self.server.ws_url, max_size=2**24) as ws:
            await ws.send(data)
            if probe:
                await send(ws, {"type": "subscribe", "tournament": HOSTILE})
            answer: Message | None = None
            snapshot = not probe
            async with asyncio.timeout(10):
                while answer is None or not snapshot:
                    raw = await ws.recv()
                    self.replies.append(str(raw))
                    message = json.loads(raw)
                    if message["type"] in ("error", "rejected"):
                        assert answer is None, f"two answers to one message: {answer} then {message}"
                        answer = message
                    elif message["type"] == "snapshot":
                        snapshot = True
                    else:
                        raise AssertionError(f"unexpected reply to a hostile message: {message}")
        assert isinstance(answer.get("code"), str) and answer["code"], answer
        assert isinstance(answer.get("reason"), str) and answer["reason"], answer
        assert TOKEN not in answer["reason"]
        return answer

    def close(self) -> None:
        async def stop() -> None:
            self.reader.cancel()
            await asyncio.gather(self.reader, return_exceptions=True)
            await self.bystander.close()
            await self.arbiter.close()

        with contextlib.suppress(Exception):
            self.run(stop(), timeout=15)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    server = start_tracker(tmp_path_factory.mktemp("hostile") / "data")
    arena = Arena(server)
    try:
        yield arena
        arena.check()  # the whole module long: nothing changed, the bystander saw everything
        assert TOKEN not in "".join(server.output), "the arbiter token appeared in the server's output"
    finally:
        arena.close()
        server.stop()


# -- strategies: messages that are wrong in every way a client can be wrong ---------------------------

SUBSCRIBE = {"type": "subscribe", "tournament": HOSTILE, "since": 1}
UNSUBSCRIBE = {"type": "unsubscribe", "tournament": HOSTILE}
# Submits carry the *valid* token, so only the message's own faults stop them; the events are also ones the
# core would refuse (a pairing outside the schedule, an already open tournament, an unknown tournament),
# so even a mutation that somehow stayed valid could not change the state.
SUBMITS = [
    {"type": "submit", "token": TOKEN, "ref": "r1", "event": result(HOSTILE, "h-x1", 1, 1, 2, "1-0")},
    {"type": "submit", "token": TOKEN, "event": four_players(HOSTILE, "Again")},
    {
        "type": "submit",
        "token": TOKEN,
        "event": {"type": "bye_recorded", "id": "h-x2", "tournament": HOSTILE, "round": 1, "player": 1, "kind": "half"},
    },
    {
        "type": "submit",
        "token": TOKEN,
        "event": {"type": "player_withdrawn", "id": "h-x3", "tournament": "no-such-cup", "player": 2, "reason": "ill"},
    },
    {
        "type": "submit",
        "token": TOKEN,
        "event": {"type": "result_voided", "id": "h-x4", "tournament": HOSTILE, "round": 2, "white": 1, "black": 3},
    },
]
TEMPLATES: list[dict[str, Any]] = [SUBSCRIBE, UNSUBSCRIBE, *SUBMITS]

# every number field of the templates is an int with a range; none accepts any of these
HUGE = [
    str(2**64),
    str(-(2**64)),
    str(2**63),
    str(2**53 + 1),
    "1" + "0" * 400,
    "1e400",
    "-1e400",
    "1e-400",
    "1.5",
    "-0.0",
]
JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20))
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
OPTIONAL = {"since", "token", "ref", "kind", "reason", "rating", "schedule"}  # fields whose absence or null is fine


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every (path, value) inside a JSON value, the root included."""
    yield prefix, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from paths(item, (*prefix, i))


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = replaced(value[path[0]], path[1:], new)
    return copy


class Raw:
    """A JSON fragment spliced in verbatim (numbers json.dumps cannot write, deep nesting)."""

    def __init__(self, text: str) -> None:
        self.text = text


def dumps(value: Any) -> str:
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    return json.dumps(value)


def wrong_values(original: Any) -> st.SearchStrategy[Any]:
    """JSON values of a type the field does not accept (a bool is not an int, an int is not a string)."""
    if isinstance(original, bool):
        return st.one_of(st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=2))
    if isinstance(original, int):
        return st.one_of(
            st.text(max_size=5),
            st.booleans(),
            st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer()),
            st.lists(st.integers(), max_size=2),
            st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        )
    if isinstance(original, str):
        return st.one_of(
            st.integers(),
            st.booleans(),
            st.floats(allow_nan=False),
            st.lists(st.text(max_size=3), max_size=2),
            st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        )
    if isinstance(original, list):
        return st.one_of(
            st.text(max_size=5),
            st.integers(),
            st.booleans(),
            st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        )
    return st.one_of(st.text(max_size=5), st.integers(), st.booleans(), st.lists(st.integers(), max_size=2))


@st.composite
def wrong_type(draw: st.DrawFn) -> tuple[str, str]:
    template = draw(st.sampled_from(TEMPLATES))
    candidates = [(p, v) for p, v in paths(template) if p and not (p[-1] in OPTIONAL and v is None)]
    path, value = draw(st.sampled_from(candidates))
    if path[-1] in OPTIONAL:
        new = draw(wrong_values(value).filter(lambda x: x is not None))
    else:
        new = draw(wrong_values(value))
    return "wrong type", dumps(replaced(template, path, new))


@st.composite
def huge_number(draw: st.DrawFn) -> tuple[str, str]:
    template = draw(st.sampled_from([t for t in TEMPLATES if t is not UNSUBSCRIBE]))
    numbers = [p for p, v in paths(template) if isinstance(v, int) and not isinstance(v, bool)]
    path = draw(st.sampled_from(numbers))
    return "huge number", dumps(replaced(template, path, Raw(draw(st.sampled_from(HUGE)))))


@st.composite
def unknown_field(draw: st.DrawFn) -> tuple[str, str]:
    template = draw(st.sampled_from(TEMPLATES))
    objects = [(p, v) for p, v in paths(template) if isinstance(v, dict)]
    path, obj = draw(st.sampled_from(objects))
    key = draw(st.text(min_size=1, max_size=12).filter(lambda k: k not in obj))
    return "unknown field", dumps(replaced(template, path, {**obj, key: draw(JSON_VALUES)}))


@st.composite
def out_of_range_string(draw: st.DrawFn) -> tuple[str, str]:
    template = draw(st.sampled_from(TEMPLATES))
    choices = {
        "tournament": ["", "-starts-with-a-dash", "has space", "x" * 65, "ünïcode"],
        "id": ["", "i" * 129],
        "token": ["t" * 257],
        "name": ["n" * 201],
        "result": ["2-0", "½-½", "", "1-0 "],
        "kind": ["quarter", ""],
        "type": ["Subscribe", "", "submit ", "dance"],
        "ref": ["r" * 129],
    }
    found = [(p, p[-1]) for p, _ in paths(template) if p and p[-1] in choices]
    path, key = draw(st.sampled_from(found))
    return "value out of range", dumps(replaced(template, path, draw(st.sampled_from(choices[key]))))


@st.composite
def truncated(draw: st.DrawFn) -> tuple[str, str]:
    text = dumps(draw(st.sampled_from(TEMPLATES)))
    return "truncated JSON", text[: draw(st.integers(0, len(text) - 1))]


@st.composite
def deep_nesting(draw: st.DrawFn) -> tuple[str, str]:
    """Nesting thousands deep where the decoder can refuse at the first bracket (the type tag comes first)."""
    opening, closing = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
    depth = draw(st.integers(100, (MAX_FRAME - 1000) // (len(opening) + len(closing))))  # under the frame limit
    nest = Raw(opening * depth + "0" + closing * depth)
    template = draw(st.sampled_from(TEMPLATES))
    where = draw(st.sampled_from(["root", "field", "unknown"]))
    if where == "root":  # an object at the root has no tag first: that case has its own test below
        return "deep nesting", "[" * depth + "0" + "]" * depth
    if where == "unknown":
        return "deep nesting", dumps({**template, "zz": nest})
    fields = [p for p, v in paths(template) if p and p[-1] != "type" and not isinstance(v, dict)]
    return "deep nesting", dumps(replaced(template, draw(st.sampled_from(fields)), nest))


@st.composite
def malformed(draw: st.DrawFn) -> tuple[str, str]:
    text = dumps(draw(st.sampled_from(TEMPLATES)))
    at = draw(st.integers(0, len(text)))
    junk = draw(
        st.sampled_from(
            ["}", "{", ",", ":", '"', "]", "NaN", "Infinity", "undefined", "'", "\\", "\x00", "// c", "tru"]
        )
    )
    candidate = text[:at] + junk + text[at:]
    try:
        json.loads(candidate)
    except ValueError:
        return "malformed JSON", candidate
    return "malformed JSON", candidate + "}"  # still valid JSON after the insertion: add a trailing brace


def valid_json_wrong_shape() -> st.SearchStrategy[tuple[str, str]]:
    return JSON_VALUES.filter(lambda v: not (isinstance(v, dict) and "type" in v)).map(
        lambda v: ("JSON of the wrong shape", json.dumps(v))
    )


TEXT_MESSAGES = st.one_of(
    wrong_type(),
    huge_number(),
    unknown_field(),
    out_of_range_string(),
    truncated(),
    malformed(),
    deep_nesting(),
    valid_json_wrong_shape(),
    st.text(max_size=200).map(lambda t: ("random text", t)),
)


@st.composite
def invalid_utf8_binary(draw: st.DrawFn) -> tuple[str, bytes]:
    """A JSON message sent as a binary frame with bytes that are not UTF-8, inside a string or outside."""
    text = dumps(draw(st.sampled_from(TEMPLATES))).encode()
    bad = draw(st.sampled_from([b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80", b"\xe2\x82"]))
    quotes = [i + 1 for i, c in enumerate(text) if c == ord('"')]
    at = draw(st.sampled_from(quotes)) if draw(st.booleans()) else draw(st.integers(0, len(text)))
    return "invalid UTF-8 in a binary frame", text[:at] + bad + text[at:]


BINARY_MESSAGES = st.one_of(
    invalid_utf8_binary(),
    st.binary(max_size=300).map(lambda b: ("random bytes in a binary frame", b)),
)


# -- hostile wire input ------------------------------------------------------------------------------------


def test_every_malformed_message_gets_an_error_with_a_reason_and_changes_nothing(arena: Arena) -> None:
    counter = Counter()

    @settings(HYPOTHESIS, max_examples=1000)
    @given(TEXT_MESSAGES)
    def example(case: tuple[str, str]) -> None:
        kind, text = case
        answer = arena.run(arena.exchange(text))
        assert answer["type"] == "error" and answer["code"] == "bad-message", (kind, text[:200], answer)
        counter.add(kind)
        arena.check(beat=counter.total() % 4 == 0)

    example()
    arena.check()
    for kind, n in sorted(counter.counts.items()):
        record(
            "hostile input",
            f"text frame: {kind}",
            tried=n,
            unit="messages",
            outcome="error bad-message with a reason; connection kept; state and bystander unchanged",
        )


def test_binary_frames_and_invalid_utf8_get_an_error_and_change_nothing(arena: Arena) -> None:
    counter = Counter()

    @settings(HYPOTHESIS, max_examples=300)
    @given(BINARY_MESSAGES)
    def example(case: tuple[str, bytes]) -> None:
        kind, data = case
        answer = arena.run(arena.exchange(data))
        assert answer["type"] == "error" and answer["code"] == "bad-message", (kind, data[:200], answer)
        counter.add(kind)
        arena.check(beat=counter.total() % 4 == 0)

    example()
    arena.check()
    for kind, n in sorted(counter.counts.items()):
        record(
            "hostile input", kind, tried=n, unit="messages", outcome="error bad-message with a reason; nothing changed"
        )


def invalid_utf8() -> st.SearchStrategy[bytes]:
    def broken(b: bytes) -> bool:
        try:
            b.decode("utf-8")
        except UnicodeDecodeError:
            return True
        return False

    prefix = st.sampled_from([b"", b'{"type":"subscribe","tournament":"', b'{"type":"submit","token":"'])
    bad = st.sampled_from(
        [b"\xff", b"\xfe\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80\x80", b"\xe2\x82"]
    )
    return (
        st.tuples(prefix, st.binary(max_size=20), bad, st.binary(max_size=20)).map(lambda t: b"".join(t)).filter(broken)
    )


def test_text_frames_with_invalid_utf8_close_1007_and_disturb_nobody(arena: Arena) -> None:
    counter = Counter()

    @settings(HYPOTHESIS, max_examples=60)
    @given(invalid_utf8(), st.booleans())
    def example(payload: bytes, fragmented: bool) -> None:
        raw = RawWs(arena.server.port)
        try:
            assert raw.status == 101
            if fragmented and len(payload) > 1:
                half = len(payload) // 2
                raw.send(frame(0x1, payload[:half], fin=False) + frame(0x0, payload[half:]))
            else:
                raw.send(frame(0x1, payload))
            code, _ = raw.read_close()
        finally:
            raw.close()
        assert code == 1007, payload
        counter.add("x")
        arena.check(beat=counter.total() % 4 == 0)

    example()
    arena.check()
    record(
        "hostile input",
        "text frame with invalid UTF-8 (whole or fragmented)",
        tried=counter.total(),
        unit="frames",
        outcome="close 1007 (invalid data); nothing changed",
    )


def test_frames_over_the_size_limit_close_1009_and_disturb_nobody(arena: Arena) -> None:
    counter = Counter()

    async def oversized(size: int, fragments: int, binary: bool) -> int | None:
        body = b'{"type":"subscribe","tournament":"' + b"x" * size + b'"}'
        async with connect(arena.server.ws_url, max_size=None) as ws:
            data: Any = body if binary else body.decode()
            with contextlib.suppress(ConnectionClosed):  # the server may close before the last byte is sent
                if fragments > 1:
                    step = len(data) // fragments + 1
                    await ws.send(iter([data[i : i + step] for i in range(0, len(data), step)]))
                else:
                    await ws.send(data)
            with pytest.raises(ConnectionClosed) as closed:
                await recv(ws)
        return None if closed.value.rcvd is None else closed.value.rcvd.code

    @settings(HYPOTHESIS, max_examples=40)
    @given(st.integers(MAX_FRAME - 30, 4 * MAX_FRAME), st.integers(1, 8), st.booleans())
    def example(size: int, fragments: int, binary: bool) -> None:
        assert arena.run(oversized(size, fragments, binary)) == 1009
        counter.add("x")
        arena.check(beat=counter.total() % 4 == 0)

    example()
    arena.check()
    record(
        "hostile input",
        "message over the 64 KiB frame limit (whole or fragmented)",
        tried=counter.total(),
        unit="messages",
        outcome="close 1009 (message too big); nothing changed",
    )


PROTOCOL_VIOLATIONS: list[tuple[str, bytes, int]] = [
    ("unmasked client frame", frame(0x1, b'{"type":"subscribe","tournament":"x"}', masked=False), 1002),
    ("reserved bits set", frame(0x1, b"{}", rsv=0b100), 1002),
    ("reserved opcode 3", frame(0x3, b"{}"), 1002),
    ("reserved control opcode 11", frame(0xB, b""), 1002),
    ("continuation without a start", frame(0x0, b"{}"), 1002),
    ("ping longer than 125 bytes", frame(0x9, b"p" * 200), 1002),
    ("fragmented ping", frame(0x9, b"p", fin=False), 1002),
    ("close with a one-byte payload", frame(0x8, b"\x03"), 1002),
    ("close with a reserved code", frame(0x8, (1004).to_bytes(2, "big")), 1002),
    ("close with invalid UTF-8 reason", frame(0x8, (1000).to_bytes(2, "big") + b"\xff"), 1007),
    ("new message inside a fragmented one", frame(0x1, b"{", fin=False) + frame(0x1, b"}"), 1002),
]


@pytest.mark.parametrize(("what", "data", "code"), PROTOCOL_VIOLATIONS, ids=[p[0] for p in PROTOCOL_VIOLATIONS])
def test_websocket_protocol_violations_get_a_clear_close_code(arena: Arena, what: str, data: bytes, code: int) -> None:
    raw = RawWs(arena.server.port)
    try:
        assert raw.status == 101
        raw.send(data)
        got, _ = raw.read_close()
    finally:
        raw.close()
    assert got == code, what
    arena.check()
    record(
        "hostile input",
        f"websocket protocol violation: {what}",
        tried=1,
        unit="connections",
        outcome=f"close {code}; nothing changed",
    )


HTTP_JUNK: list[tuple[str, bytes]] = [
    ("not HTTP at all", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + os.urandom(64)),
    ("garbage request line", b"GARBAGE\r\n\r\n"),
    ("header line of 100 KB", b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n"),
    ("300 headers", b"GET / HTTP/1.1\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(300)) + b"\r\n"),
    ("upgrade without a key", b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"),
    (
        "websocket version 8",
        b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAAAA==\r\nSec-WebSocket-Version: 8\r\n\r\n",
    ),
    ("path traversal", b"GET /static/../../../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("encoded traversal", b"GET /static/..%2f..%2fetc%2fpasswd HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("NUL in the path", b"GET /api/tournaments/%00/standings HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("POST with a body", b"POST /api/tournaments HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"),
    (
        "request smuggling headers",
        b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    ),
]


@pytest.mark.parametrize(("what", "data"), HTTP_JUNK, ids=[h[0] for h in HTTP_JUNK])
def test_junk_http_requests_get_a_4xx_or_a_close_never_a_500(arena: Arena, what: str, data: bytes) -> None:
    sock = socket.create_connection(("127.0.0.1", arena.server.port), timeout=10)
    try:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)  # nothing more is coming: the server need not wait for its handshake timeout
        answer = b""
        with contextlib.suppress(ConnectionResetError, TimeoutError):
            while chunk := sock.recv(65536):
                answer += chunk
    finally:
        sock.close()
    if answer:
        status = int(answer.split(b" ", 2)[1])
        assert status < 500, (what, answer[:200])
        assert status >= 400 or what == "request smuggling headers", (what, answer[:200])
        assert b"root:" not in answer
    arena.check()
    record(
        "hostile input", f"HTTP: {what}", tried=1, unit="requests", outcome="4xx or connection closed; nothing changed"
    )


def test_a_flood_of_subscribes_hits_the_subscription_limit_and_leaves_nothing_behind(arena: Arena) -> None:
    limit = 32  # Limits.max_subscriptions
    flood = 3000

    async def flood_one_connection() -> dict[str, int]:
        counts: dict[str, int] = {}
        async with connect(arena.server.ws_url, max_size=2**24) as ws:
            for i in range(limit):
                await send(ws, {"type": "subscribe", "tournament": f"flood-{i}"})
                assert (await recv(ws))["type"] == "snapshot"
            await send(ws, {"type": "subscribe", "tournament": f"flood-{limit}"})
            over = await recv(ws)
            assert over["type"] == "error" and over["code"] == "too-many-subscriptions" and str(limit) in over["reason"]
            # pipelined: thousands of subscribes, old and new ids, without reading; each gets exactly one answer
            for k in range(flood):
                await send(ws, {"type": "subscribe", "tournament": f"flood-{k % (limit + 40)}"})
            async with asyncio.timeout(30):
                for _ in range(flood):
                    kind = json.loads(await ws.recv())
                    key = kind["type"] if kind["type"] != "error" else kind["code"]
                    counts[key] = counts.get(key, 0) + 1
            await send(ws, {"type": "unsubscribe", "tournament": "flood-0"})
            async with asyncio.timeout(10):  # room again after an unsubscribe, once the throttle lets it through
                while True:
                    await send(ws, {"type": "subscribe", "tournament": "flood-new"})
                    answer = await recv(ws)
                    if answer["type"] == "snapshot":
                        break
                    assert answer["code"] == "rate-limited", answer
                    await asyncio.sleep(0.1)
        return counts

    async def many_connections(n: int) -> None:
        conns = [await connect(arena.server.ws_url) for _ in range(n)]
        for ws in conns:
            for i in range(limit):
                await send(ws, {"type": "subscribe", "tournament": f"wide-{i}"})
        for ws in conns:
            async with asyncio.timeout(20):
                for _ in range(limit):
                    assert json.loads(await ws.recv())["type"] == "snapshot"
        await asyncio.gather(*(ws.close() for ws in conns))

    def subscribers() -> int:
        metrics = http_get(arena.server.port, "/metrics")[1].decode()
        return int(
            float(next(line.split()[1] for line in metrics.splitlines() if line.startswith("tracker_subscribers ")))
        )

    baseline = subscribers()
    counts = arena.run(flood_one_connection())
    cycle = limit + 40
    most = (flood // cycle) * limit + min(flood % cycle, limit)  # ids already subscribed may be re-subscribed
    assert sum(counts.values()) == flood  # each got exactly one answer
    assert set(counts) <= {"snapshot", "too-many-subscriptions", "rate-limited"}, counts
    assert counts.get("snapshot", 0) <= most
    # re-subscribing is throttled per connection (Limits: burst 40, 10 per second): most of the flood is refused
    assert counts["rate-limited"] >= flood - 400, counts
    arena.heartbeat()
    arena.run(many_connections(40))
    arena.check()
    deadline = time.monotonic() + 10
    while subscribers() != baseline and time.monotonic() < deadline:
        arena.heartbeat()  # disconnect clean-up runs on the server's loop; a round trip lets it finish
    assert subscribers() == baseline, "subscriptions of closed connections were left behind"
    assert http_json(arena.server.port, "/healthz")["tournaments"] == 2
    record(
        "hostile input",
        "flood of subscribes (3,000 pipelined on one connection, 40 connections × 32)",
        tried=flood + 40 * limit + limit + 1,
        unit="subscribes",
        outcome="snapshot up to 32 per connection, then too-many-subscriptions or rate-limited; nothing left after",
    )


@pytest.mark.parametrize(
    "text",
    [
        '{"tournament":' + "[" * 20_000 + "]" * 20_000 + ',"type":"subscribe"}',
        '{"zz":' + '{"a":' * 9_000 + "0" + "}" * 9_000 + ',"type":"subscribe","tournament":"x"}',
        '{"type":"submit","token":"t","event":{"id":' + "[" * 20_000 + "]" * 20_000 + ',"type":"result_recorded"}}',
    ],
    ids=["before the tag", "unknown field before the tag", "event tag last"],
)
def test_deep_nesting_before_the_type_tag_gets_an_error_not_an_internal_error(arena: Arena, text: str) -> None:
    """msgspec must skip a value to find the tag; 20,000 levels raise RecursionError inside the decoder.

    Before decode_client turned it into a DecodeError the handler died with it: the client was closed with
    1011 (internal error) and the traceback landed in the log, instead of an ``error`` with a reason.
    """
    try:
        answer = arena.run(arena.exchange(text))
    except ConnectionClosed as exc:
        pytest.fail(f"the connection was closed ({exc.rcvd}) instead of an error message")
    finally:
        arena.check()
    assert answer["type"] == "error" and answer["code"] == "bad-message"
    record("hostile input", "deep nesting before the type tag", tried=1, unit="messages", outcome="error bad-message")


# -- access --------------------------------------------------------------------------------------------------


def near_miss_tokens() -> st.SearchStrategy[str]:
    near = [
        "",
        TOKEN[:-1],
        TOKEN + "x",
        TOKEN.upper(),
        " " + TOKEN,
        TOKEN + " ",
        TOKEN + "\x00",
        TOKEN.replace("-", "‐"),  # a Unicode hyphen
        TOKEN[1:] + TOKEN[0],
        "t" * 256,
    ]
    return st.one_of(st.sampled_from(near), st.text(max_size=256).filter(lambda t: t != TOKEN))


def test_only_the_arbiter_token_changes_results(arena: Arena) -> None:
    counter = Counter()

    @settings(HYPOTHESIS, max_examples=300)
    @given(near_miss_tokens(), st.integers(0, 2))
    def example(token: str, which: int) -> None:
        # events the valid token would get acknowledged: only the token stands between them and the state
        event = [
            result(HOSTILE, f"steal-{counter.total()}", 2, 4, 3, "0-1"),
            {"type": "player_withdrawn", "id": f"steal-w-{counter.total()}", "tournament": HOSTILE, "player": 2},
            four_players(f"stolen-{counter.total()}", "Stolen Cup"),
        ][which]
        answer = arena.run(arena.exchange(json.dumps({"type": "submit", "token": token, "event": event})))
        # faster than 100 wrong tokens a second from one address, the later ones are refused uncompared
        assert answer["type"] == "rejected" and answer["code"] in ("unauthorized", "rate-limited"), answer
        counter.add(answer["code"])
        arena.check(beat=counter.total() % 4 == 0)

    example()
    arena.check()
    record(
        "access",
        "submit with a wrong token (near misses and random strings)",
        tried=counter.total(),
        unit="submits",
        outcome="rejected "
        + ", ".join(f"{n} {code}" for code, n in sorted(counter.counts.items()))
        + "; nothing changed",
    )


SPECTATOR_SUBMITS: list[tuple[str, dict[str, Any]]] = [
    ("no token field", {"type": "submit", "event": result(HOSTILE, "spec-1", 2, 4, 3, "0-1")}),
    ("null token", {"type": "submit", "token": None, "event": result(HOSTILE, "spec-2", 2, 4, 3, "0-1")}),
    ("empty token", {"type": "submit", "token": "", "event": result(HOSTILE, "spec-3", 2, 4, 3, "0-1")}),
    ("token in the event", {"type": "submit", "event": {**result(HOSTILE, "spec-4", 2, 4, 3, "0-1"), "token": TOKEN}}),
    ("token as the ref", {"type": "submit", "ref": TOKEN, "event": result(HOSTILE, "spec-5", 2, 4, 3, "0-1")}),
]


@pytest.mark.parametrize(("what", "message"), SPECTATOR_SUBMITS, ids=[s[0] for s in SPECTATOR_SUBMITS])
def test_a_spectator_connection_can_never_submit(arena: Arena, what: str, message: dict[str, Any]) -> None:
    async def spectate_then_submit() -> Message:
        async with connect(arena.server.ws_url) as ws:
            await send(ws, {"type": "subscribe", "tournament": HOSTILE})  # a spectator: no token
            assert (await recv(ws))["type"] == "snapshot"
            await send(ws, {"type": "subscribe", "tournament": HOSTILE, "token": "guess"})
            refused = await recv(ws)
            assert refused["type"] == "error" and refused["code"] in ("unauthorized", "rate-limited")
            await send(ws, message)
            answer, _ = await recv_until(ws, lambda m: m["type"] in ("error", "rejected"))
            return answer

    answer = arena.run(spectate_then_submit())
    refusals = (("error", "bad-message"), ("rejected", "unauthorized"), ("rejected", "rate-limited"))
    assert (answer["type"], answer["code"]) in refusals, answer
    assert TOKEN not in answer["reason"]
    arena.check()
    record(
        "access",
        f"spectator submits ({what})",
        tried=1,
        unit="submits",
        outcome=f"{answer['type']} {answer['code']}; nothing changed",
    )


async def arbiter_subscribed(ws: Any, tournament: str) -> None:
    """Subscribe with the arbiter token and wait for the snapshot.

    Earlier tests of this module guess tokens from the same address (127.0.0.1): until that address's
    allowance of wrong guesses refills, the server refuses every check uncompared ("rate-limited").
    """
    async with asyncio.timeout(10):
        while True:
            await send(ws, {"type": "subscribe", "tournament": tournament, "token": TOKEN})
            answer, _ = await recv_until(ws, lambda m: m["type"] in ("snapshot", "error"))
            if answer["type"] == "snapshot":
                return
            assert answer["code"] == "rate-limited", answer
            await asyncio.sleep(0.1)


def test_an_arbiter_subscription_does_not_make_later_submits_authorized(arena: Arena) -> None:
    async def arbiter_then_tokenless_submit() -> Message:
        async with connect(arena.server.ws_url, max_size=2**24) as ws:
            await arbiter_subscribed(ws, HOSTILE)
            await send(ws, {"type": "submit", "token": "", "event": result(HOSTILE, "after-auth", 2, 4, 3, "0-1")})
            answer, _ = await recv_until(ws, lambda m: m["type"] in ("error", "rejected"))
            return answer

    answer = arena.run(arbiter_then_tokenless_submit())
    assert answer["type"] == "rejected" and answer["code"] == "unauthorized"
    arena.check()
    record(
        "access",
        "tokenless submit on a connection that subscribed as arbiter",
        tried=1,
        unit="submits",
        outcome="rejected unauthorized",
    )


def test_the_token_never_appears_in_pages_api_metrics_replies_or_the_journal(arena: Arena) -> None:
    async def arbiter_traffic() -> list[str]:
        seen: list[str] = []
        async with connect(arena.server.ws_url, max_size=2**24) as ws:
            await arbiter_subscribed(ws, HOSTILE)
            await send(ws, {"type": "submit", "token": TOKEN, "event": result(HOSTILE, "leak-1", 1, 1, 2, "1-0")})
            await send(
                ws,
                {
                    "type": "submit",
                    "token": TOKEN,
                    "event": {**result(HOSTILE, "leak-2", 1, 1, 2, "1-0"), "round": "x"},
                },
            )
            await send(ws, {"type": "submit", "token": TOKEN + "!", "event": result(HOSTILE, "leak-3", 1, 1, 2, "1-0")})
            async with asyncio.timeout(10):
                while len([s for s in seen if '"type":"projection"' not in s]) < 3:  # three replies
                    seen.append(str(await ws.recv()))
        return seen

    replies = arena.run(arbiter_traffic())
    port = arena.server.port
    pages = [
        "/",
        f"/t/{HOSTILE}",
        f"/overlay/{HOSTILE}",
        f"/arbiter/{HOSTILE}",
        "/api/tournaments",
        f"/api/tournaments/{HOSTILE}/standings",
        f"/api/tournaments/{HOSTILE}/trf",
        "/healthz",
        "/metrics",
        "/nope",
    ]
    bodies = [http_get(port, page)[1] for page in pages]
    for name in ("arbiter.js", "index.js", "live.js", "overlay.js", "spectator.js", "overlay.css", "site.css"):
        bodies.append(http_get(port, f"/static/{name}")[1])
    journal = b"".join(p.read_bytes() for p in arena.server.data_dir.glob("journal.sqlite3*"))
    for where, blob in [
        ("replies", "\n".join(replies + arena.replies).encode()),
        ("pages", b"\n".join(bodies)),
        ("journal", journal),
        ("output", "".join(arena.server.output).encode()),
    ]:
        assert TOKEN.encode() not in blob, f"the token appeared in the {where}"
    arena.check()
    record(
        "access",
        "token searched in replies, 15 pages and API responses, metrics, journal, server output",
        tried=len(replies) + len(arena.replies) + len(bodies) + 2,
        unit="documents",
        outcome="token found nowhere",
    )


@pytest.mark.parametrize("given", ["environment", "file"])
def test_a_token_from_the_environment_or_a_file_is_not_printed_nor_in_ps(tmp_path: Path, given: str) -> None:
    """``TRACKER_TOKEN`` or ``--token-file`` give the token without showing it: not in ps, never echoed."""
    import subprocess
    import sys

    secret = f"{given}-token-" + base64.urlsafe_b64encode(os.urandom(12)).decode()
    cmd = [sys.executable, "-m", "tracker.cli", "up", "--port", "0", "--data-dir", str(tmp_path / "data")]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("TRACKER_TOKEN", None)
    if given == "file":
        token_file = tmp_path / "token"
        token_file.write_text(secret + "\n", encoding="utf-8")
        cmd += ["--token-file", str(token_file)]
    else:
        env["TRACKER_TOKEN"] = secret
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    assert proc.stdout is not None
    lines: list[str] = []
    try:
        for line in proc.stdout:
            lines.append(line)
            if "listening on http://" in line:
                port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
                break
        else:
            raise AssertionError("tracker up did not start:\n" + "".join(lines))

        async def use_it() -> tuple[Message, Message]:
            async with connect(f"ws://127.0.0.1:{port}/ws") as ws:
                await send(ws, {"type": "submit", "token": secret, "event": four_players("env-cup", "Env Cup")})
                ok = await reply_to(ws, "env-cup/open")
                await send(ws, {"type": "submit", "token": secret[:-1], "event": four_players("env-2", "Env 2")})
                bad = await reply_to(ws, "env-2/open")
                return ok, bad

        ok, bad = asyncio.run(use_it())
        assert ok["type"] == "ack" and bad["type"] == "rejected"
        assert secret not in http_get(port, "/api/tournaments")[1].decode()
        assert secret.encode() not in Path(f"/proc/{proc.pid}/cmdline").read_bytes()
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=15)
        lines.append(out)
    assert secret not in "".join(lines)
    record(
        "access",
        f"token given in {'TRACKER_TOKEN' if given == 'environment' else '--token-file'}: output, replies, API, ps",
        tried=1,
        unit="runs",
        outcome="token never printed or echoed",
    )


def test_the_token_is_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    from tracker.gateway.auth import TokenGuard, Verdict

    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)  # the gateway looks it up on the module at each call
    guard = TokenGuard(TOKEN)
    assert guard.check(TOKEN, "10.0.0.1") is Verdict.OK
    assert guard.check(TOKEN[:-1], "10.0.0.1") is Verdict.WRONG and guard.check("", "10.0.0.1") is Verdict.WRONG
    assert len(calls) == 3  # every comparison, right or wrong, went through hmac.compare_digest
    assert TokenGuard("").check("", "10.0.0.1") is Verdict.WRONG  # a server without a token accepts nobody
    record(
        "access",
        "token comparison goes through hmac.compare_digest; an empty server token accepts nobody",
        tried=4,
        unit="comparisons",
        outcome="constant-time, fail closed",
    )


def origin_handshake(port: int, origin: str | None) -> int:
    raw = RawWs(port, origin=origin)
    raw.close()
    return raw.status


def test_browser_origins_outside_the_allowlist_are_refused_with_403(
    tracker_factory: Callable[..., RunningTracker],
) -> None:
    server = tracker_factory("--allow-origin", "https://good.example", "--allow-origin", "https://also.example")
    assert origin_handshake(server.port, "https://evil.example") == 403
    assert origin_handshake(server.port, "https://good.example.evil.example") == 403
    assert origin_handshake(server.port, "http://good.example") == 403  # the scheme is part of the origin
    assert origin_handshake(server.port, "null") == 403
    assert origin_handshake(server.port, "https://good.example") == 101
    assert origin_handshake(server.port, "https://also.example") == 101

    async def evil_library_client() -> int:
        with pytest.raises(InvalidStatus) as refused:
            async with connect(server.ws_url, origin="https://evil.example"):  # type: ignore[arg-type]
                pass
        return refused.value.response.status_code

    assert asyncio.run(evil_library_client()) == 403
    open_server = tracker_factory(data_dir=server.data_dir.parent / "open")
    assert origin_handshake(open_server.port, "https://evil.example") == 403  # no allowlist: same origin only
    assert origin_handshake(open_server.port, f"http://127.0.0.1:{open_server.port}") == 101
    record(
        "access",
        "websocket handshakes from origins outside --allow-origin",
        tried=5,
        unit="handshakes",
        outcome="HTTP 403; listed origins accepted",
    )


def test_clients_without_an_origin_header_still_connect_when_an_allowlist_is_set(
    tracker_factory: Callable[..., RunningTracker],
) -> None:
    """Origin is a browser's header: the allowlist stops other sites' pages, not ``tracker replay``.

    A server started with ``--allow-origin`` used to refuse every non-browser client with 403
    ("missing Origin header"), so the arbiter's own ``tracker replay`` could not submit.
    """
    server = tracker_factory("--allow-origin", "https://good.example")
    assert origin_handshake(server.port, None) == 101
    assert origin_handshake(server.port, "https://evil.example") == 403
    record(
        "access",
        "websocket handshake without an Origin header (scripts, tracker replay) when --allow-origin is set",
        tried=1,
        unit="handshakes",
        outcome="accepted; browsers from other origins still get 403",
    )


# -- the arbiter's own numbers: huge scoring values ----------------------------------------------------------


@pytest.mark.timeout(90)
def test_extreme_scoring_values_are_rejected_and_never_leave_an_orphan_tournament(
    tracker_factory: Callable[..., RunningTracker],
) -> None:
    """Even with the valid token, ``"pab": 1e400`` must be refused, not half-applied.

    Today the opening is applied to the in-memory state, then encoding its update raises (the Decimal does
    not fit a float), the connection dies with 1011 and the journal never gets the opening.  The
    tournament lives on in memory only: the next result for it is *acknowledged* and journalled, and
    the tracker then refuses to start ("no tournament 'scoring-0' is open").  With ``"win": 1e999999999``
    the event loop hangs converting the Decimal to a Fraction, freezing every client; ``"win": "NaN"``
    raises decimal.InvalidOperation inside the core, again closing the arbiter with 1011.
    """
    server = tracker_factory()

    async def try_scoring(field: str, value: str, tid: str) -> tuple[Message, Message]:
        opening = json.dumps(four_players(tid, "Scoring Cup"))
        opening = opening.replace('"players"', f'"scoring":{{"{field}":{value}}},"players"')
        async with connect(server.ws_url) as ws:
            await ws.send(f'{{"type":"submit","token":"{TOKEN}","event":{opening}}}')
            answer = await reply_to(ws, f"{tid}/open")
        async with connect(server.ws_url) as ws:
            await send(ws, {"type": "submit", "token": TOKEN, "event": result(tid, f"{tid}/r1", 1, 1, 4, "1-0")})
            after = await reply_to(ws, f"{tid}/r1")
        return answer, after

    cases = [
        ("pab", "1e400"),
        ("win", "1e400"),
        ("forfeit_loss", "-1e400"),
        ("win", "1" + "0" * 30),
        ("draw", "1e-400"),
        ("win", "0.3333333333333333333"),
        ("win", '"NaN"'),  # msgspec reads a Decimal from a JSON string too
        ("draw", '"Infinity"'),
        ("loss", '"sNaN"'),
        ("win", "1e999999999"),
    ]
    for k, (field, value) in enumerate(cases):
        answer, after = asyncio.run(asyncio.wait_for(try_scoring(field, value, f"scoring-{k}"), 10))
        assert answer["type"] == "rejected" and answer["code"] == "invalid-tournament" and answer["reason"], answer
        assert after["type"] == "rejected" and after["code"] == "unknown-tournament", after
    assert http_json(server.port, "/api/tournaments") == {"tournaments": []}
    assert journal_rows(server.data_dir) == {}
    server.stop()
    again = tracker_factory(data_dir=server.data_dir)  # and the journal still replays
    assert http_json(again.port, "/api/tournaments") == {"tournaments": []}
    record(
        "hostile input",
        "arbiter opens a tournament with extreme scoring values",
        tried=len(cases),
        unit="events",
        outcome="rejected invalid-tournament; no orphan state",
    )


def test_a_score_too_wide_for_trf_gets_a_sentence_on_the_trf_page_not_a_500(
    tracker_factory: Callable[..., RunningTracker],
) -> None:
    """TRF's points column is four characters: 9999.5 points (a legal scoring value) cannot be written.

    Today ``export_trf`` raises ValueError inside the HTTP handler: the page answers 500 and the traceback
    lands in the server's log.
    """
    server = tracker_factory()

    async def open_and_play() -> None:
        opening = json.dumps(four_players("wide-cup", "Wide Cup"))
        opening = opening.replace('"players"', '"scoring":{"win":9999.5},"players"')
        async with connect(server.ws_url) as ws:
            await ws.send(f'{{"type":"submit","token":"{TOKEN}","event":{opening}}}')
            assert (await reply_to(ws, "wide-cup/open"))["type"] == "ack"
            await send(ws, {"type": "submit", "token": TOKEN, "event": result("wide-cup", "w1", 1, 1, 4, "1-0")})
            assert (await reply_to(ws, "w1"))["type"] == "ack"

    asyncio.run(open_and_play())
    status, body = http_get(server.port, "/api/tournaments/wide-cup/trf")
    assert 400 <= status < 500 and b"points" in body, (status, body[:200])
    assert "Traceback" not in "".join(server.output)
    record(
        "hostile input",
        "TRF page of a tournament whose score TRF cannot hold",
        tried=1,
        unit="requests",
        outcome=f"HTTP {status} with a sentence",
    )


# -- the file readers -------------------------------------------------------------------------------------------

TRF_BASES = [
    data_file("sinquefield-cup-2021.trf"),
    data_file("fide-tec-exercise16-rr6.trf"),
    *sorted(TEST_DATA.glob("*.trf")),
]
TRF_HEADERS = [
    "XXR 0",
    "XXR 1000",
    "XXR 99999999999999999999",
    "XXR -3",
    "XXR 1e400",
    "162 W 9999.999 D -9999.999 L 0",
    "162 W 0 D 0",
    "162 W 1e400",
    "162 W 1.0 W 2.0",
    "XXS WW=9999 BW=-1 D=0.001",
    "XXS ZZZ=1",
    "202 KS/L+99999",
    "212 " + ",".join(["KS"] * 40),
    "212 PTS,DE,SB,KS,WON,XYZ",
    "092 Individual: Double round robin",
    "192 BERGER_DOUBLEROUNDROBIN_G7",
    "012 " + "n" * 300,
    "012 ",
    "001",
    "001 " + "9" * 200,
    "XXC white1",
    "132 99/99/99",
]
TRF_ALPHABET = "0123456789 =+-wbWDLHFUZ.\nx-?*\t\r"


@st.composite
def damaged_trf(draw: st.DrawFn) -> str:
    lines = draw(st.sampled_from(TRF_BASES)).read_text(encoding="utf-8").splitlines()
    for _ in range(draw(st.integers(1, 6))):
        op = draw(
            st.sampled_from(["delete", "duplicate", "swap", "header", "splice", "unicode", "columns", "truncate"])
        )
        at = draw(st.integers(0, max(0, len(lines) - 1)))
        if not lines:
            lines = [""]
        if op == "delete" and len(lines) > 1:
            del lines[at]
        elif op == "duplicate":
            lines.insert(at, lines[at])
        elif op == "swap":
            other = draw(st.integers(0, len(lines) - 1))
            lines[at], lines[other] = lines[other], lines[at]
        elif op == "header":
            lines.insert(at, draw(st.sampled_from(TRF_HEADERS)))
        elif op == "splice":
            line = lines[at]
            col = draw(st.integers(0, len(line)))
            lines[at] = line[:col] + draw(st.text(TRF_ALPHABET, max_size=12)) + line[col + draw(st.integers(0, 12)) :]
        elif op == "unicode":
            line = lines[at]
            col = draw(st.integers(0, len(line)))
            lines[at] = line[:col] + draw(st.text(max_size=8)) + line[col:]
        elif op == "columns":
            line = lines[at]
            col = draw(st.sampled_from([4, 9, 14, 48, 53, 80, 85, 89, 91, 95, 97, 99]))
            lines[at] = line[:col] + draw(st.text("0123456789 .-", min_size=1, max_size=6)) + line[col + 4 :]
        else:
            lines = lines[: at + 1]
            lines[-1] = lines[-1][: draw(st.integers(0, len(lines[-1])))]
    return draw(st.sampled_from(["\n", "\r\n", "\r"])).join(lines)


def read_or_format_error(read: Callable[[], Any]) -> str:
    """``ok`` (and then the file folds, ranks and exports) or ``refused`` (a FormatError); anything else fails."""
    try:
        tf = read()
    except FormatError as exc:
        assert exc.path and exc.problem
        return "refused"
    state = state_from(tf)  # whatever reads must fold
    return "ok" if state is not None else "refused"


def test_the_trf_reader_raises_only_format_error() -> None:
    counter = Counter()

    @settings(HYPOTHESIS, max_examples=1000)
    @given(st.one_of(damaged_trf(), st.text(max_size=400), st.binary(max_size=400).map(lambda b: b.decode("latin-1"))))
    def example(text: str) -> None:
        counter.add(read_or_format_error(lambda: parse_trf(text, "fuzz.trf")))

    example()
    record(
        "file formats",
        "TRF reader: damaged real files (line/column edits, extreme headers) and random text",
        tried=counter.total(),
        unit="files",
        outcome=(
            f"FormatError or a valid tournament ({counter.counts.get('ok', 0)} read, "
            f"{counter.counts.get('refused', 0)} refused); no other exception"
        ),
    )


PGN_TAG_VALUES = {
    "Round": ["1", "2.1", "999", "1000", "0", "-1", "1.2.3", "", "1e400", "99999999999999999999", "?", "-"],
    "Result": ["1-0", "0-1", "1/2-1/2", "*", "½-½", "2-0", "", "1-0 "],
    "White": ["Alpha", "Beta", "", "Alpha", "a" * 300, "Alpha\tBeta"],
    "Black": ["Gamma", "Delta", "", "Beta", "Gamma"],
    "Event": ["Fuzz Open", "Other Event", "", "e" * 300],
    "FideId": ["1503014", "abc", "", "1503014"],
    "WhiteFideId": ["1503014", "x" * 40, "-1"],
    "WhiteElo": ["2800", "-5", "99999999999", "x"],
    "FEN": ["8/8/8/8/8/8/8/8 w - - 0 1", "not a fen", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"],
    "SetUp": ["1", "0"],
}
PGN_MOVES = [
    "1. e4 e5",
    "1. e4 {a {nested} comment} e5",
    "1. e9",
    "1. e4 (1. d4 d5) e5",
    "1... e5",
    "$1 $999999",
    "",
    "1. O-O-O-O",
    "%escape\n1. e4",
    ";comment\n",
]


@st.composite
def damaged_pgn(draw: st.DrawFn) -> str:
    games = []
    names = ["Alpha", "Beta", "Gamma", "Delta"]
    for k in range(draw(st.integers(1, 8))):
        white, black = draw(st.permutations(names))[:2]
        tags = {
            "Event": "Fuzz Open",
            "Round": str(k // 2 + 1),
            "White": white,
            "Black": black,
            "Result": draw(st.sampled_from(["1-0", "0-1", "1/2-1/2", "*"])),
        }
        for _ in range(draw(st.integers(0, 3))):
            tag = draw(st.sampled_from(sorted(PGN_TAG_VALUES)))
            tags[tag] = draw(st.sampled_from(PGN_TAG_VALUES[tag]))
        if draw(st.booleans()) and len(tags) > 1:
            del tags[draw(st.sampled_from(sorted(tags)))]
        text = (
            "".join(f'[{t} "{v}"]\n' for t, v in tags.items())
            + "\n"
            + draw(st.sampled_from(PGN_MOVES))
            + f" {tags.get('Result', '*')}\n\n"
        )
        if draw(st.integers(0, 9)) == 0:
            at = draw(st.integers(0, len(text)))
            text = text[:at] + draw(st.text(max_size=10)) + text[at:]
        games.append(text)
    text = "".join(games)
    if draw(st.integers(0, 4)) == 0:
        text = text[: draw(st.integers(0, len(text)))]
    return text


def test_the_pgn_reader_raises_only_format_error() -> None:
    counter = Counter()

    @settings(HYPOTHESIS, max_examples=800)
    @given(st.one_of(damaged_pgn(), st.text(max_size=300)))
    def example(text: str) -> None:
        counter.add(read_or_format_error(lambda: parse_pgn(text, "fuzz.pgn")))

    example()
    record(
        "file formats",
        "PGN reader: generated games with hostile tags, moves, comments, truncation, random text",
        tried=counter.total(),
        unit="files",
        outcome=(
            f"FormatError or a valid tournament ({counter.counts.get('ok', 0)} read, "
            f"{counter.counts.get('refused', 0)} refused); no other exception"
        ),
    )


def test_every_trf_the_reader_accepts_exports_again() -> None:
    """What the reader accepts the live ``/trf`` page and ``tracker standings --format trf`` must write back."""
    counter = Counter()

    @settings(HYPOTHESIS, max_examples=400)
    @given(damaged_trf())
    def example(text: str) -> None:
        try:
            tf = parse_trf(text, "fuzz.trf")
        except FormatError:
            counter.add("refused")
            return
        export_trf(state_from(tf))
        counter.add("exported")

    example()
    record(
        "file formats",
        "TRF export of every damaged file the reader accepted",
        tried=counter.counts.get("exported", 0),
        unit="files",
        outcome="exported without an exception",
    )
