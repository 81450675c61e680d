"""Delivery guarantees against a real ``tracker up``, tried as unlucky and hostile clients would.

- an ``ack`` means durable: a retry of an event still being written waits for
  the original and shares its fate (acked after it, or rejected with it);
- what was committed is published, whatever the submitter's connection does
  (an abrupt TCP reset mid-pipeline leaves no seq gap);
- a resume delivers the missed updates, then every update, in seq order
  (no live update lands in the middle of the missed ones);
- a resume too big to replay is answered with a snapshot, and re-subscribing
  in a loop is throttled;
- an event id reused for other content is rejected with its own code.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import socket
import sqlite3
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from websockets.asyncio.client import connect

from tests.builders import TID, berger, game, opened, schedule_of
from tests.conftest import RunningTracker, data_file
from tests.gateway.test_abuse import ping_bystander, slower_than
from tests.gateway.test_hostile import RawWs, frame, http_json
from tests.gateway.test_limits import rss_mib
from tests.reliability_log import record
from tracker.config import Limits
from tracker.core.events import Event, ResultRecorded, encode_event
from tracker.formats import state_from
from tracker.formats.files import read_file
from tracker.formats.trf import export_trf

N = 24  # players: an update is ~9 KB, so a few dozen missed updates outgrow the socket buffers


def submit_frame(event: Event, ref: str, token: str) -> bytes:
    body = encode_event(event).decode()
    return frame(0x1, f'{{"type":"submit","token":{json.dumps(token)},"event":{body},"ref":"{ref}"}}'.encode())


def subscribe_frame(tournament: str, since: int | None = None) -> bytes:
    message: dict[str, Any] = {"type": "subscribe", "tournament": tournament}
    if since is not None:
        message["since"] = since
    return frame(0x1, json.dumps(message).encode())


def messages(ws: RawWs) -> Iterator[dict[str, Any]]:
    """The server's text messages, in order, until the socket times out or closes."""
    while True:
        try:
            opcode, payload = ws.read_frame()
        except (EOFError, TimeoutError, ConnectionResetError):
            return
        if opcode == 0x1:
            yield json.loads(payload)
        elif opcode == 0x8:
            return


def replies(ws: RawWs, count: int) -> list[dict[str, Any]]:
    """The next ``count`` acks or rejections (other messages skipped)."""
    out: list[dict[str, Any]] = []
    for message in messages(ws):
        if message["type"] in ("ack", "rejected"):
            out.append(message)
            if len(out) == count:
                break
    assert len(out) == count, f"expected {count} replies, got {out}"
    return out


def journal_ids(data_dir: Path) -> set[str]:
    db = sqlite3.connect(data_dir / "journal.sqlite3", timeout=10)
    try:
        return {row[0] for row in db.execute("SELECT id FROM events")}
    finally:
        db.close()


def settle(check: Callable[[], bool], timeout: float = 10) -> None:
    """Wait until ``check()`` holds (the server finishes what it was doing), failing after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the server did not settle"
        time.sleep(0.05)


def schedule_events(n: int = N) -> tuple[Event, list[Event]]:
    rounds = berger(n)
    opening = opened(n, schedule=schedule_of(rounds), id=f"{TID}/open")
    games = [
        game(r.number, w, b, ("1-0", "1/2-1/2", "0-1")[(r.number + w) % 3], id=f"{TID}/r{r.number}/{w}-{b}")
        for r in rounds
        for w, b in r.pairs
    ]
    return opening, games


@pytest.fixture
def arena(tracker_factory: Callable[..., RunningTracker]) -> tuple[RunningTracker, list[Event]]:
    """A tracker with a 24-player round robin opened; the games not submitted yet."""
    tracker = tracker_factory()
    opening, games = schedule_events()
    ws = RawWs(tracker.port)
    ws.send(submit_frame(opening, "open", tracker.token))
    assert replies(ws, 1)[0]["type"] == "ack"
    ws.close()
    return tracker, games


def test_a_retry_sent_with_the_original_is_acked_after_it_and_only_once_it_is_durable(
    arena: tuple[RunningTracker, list[Event]],
) -> None:
    tracker, games = arena
    ws = RawWs(tracker.port)
    ws.sock.settimeout(10)
    early = 0
    for event in games[:20]:
        # the same new event three times in one TCP write: the original and two retries
        ws.send(b"".join(submit_frame(event, ref, tracker.token) for ref in ("original", "retry-1", "retry-2")))
        got = []
        for reply in replies(ws, 3):
            got.append(reply)
            if reply["type"] == "ack" and event.id not in journal_ids(tracker.data_dir):
                early += 1  # acknowledged before the journal had it
        assert [r["type"] for r in got] == ["ack"] * 3, got
        assert [r["ref"] for r in got] == ["original", "retry-1", "retry-2"], "a retry was acked before the original"
        assert len({r["seq"] for r in got}) == 1
    assert early == 0
    ws.close()


def test_a_retry_shares_the_fate_of_an_original_the_journal_could_not_write(
    tracker_factory: Callable[..., RunningTracker], tmp_path: Path
) -> None:
    # the journal's files may not grow past 160 KiB: soon every commit fails as on a full disk
    limited = tmp_path / "limited"
    limited.mkdir()
    wrapper = limited / "tracker-up-with-a-file-size-limit.py"
    wrapper.write_text(
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (160 * 1024, 160 * 1024))\n"
        "from tracker.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    tracker = start_limited(wrapper, tmp_path / "data")
    try:
        opening, games = schedule_events()
        ws = RawWs(tracker.port)
        ws.sock.settimeout(10)
        ws.send(submit_frame(opening, "open", tracker.token))
        assert replies(ws, 1)[0]["type"] == "ack"
        fates: list[list[dict[str, Any]]] = []
        for event in games:
            ws.send(b"".join(submit_frame(event, ref, tracker.token) for ref in ("original", "retry-1", "retry-2")))
            got = replies(ws, 3)
            fates.append(got)
            if any(r["type"] == "rejected" for r in got):
                break
        last = fates[-1]
        assert any(r["type"] == "rejected" for r in last), "the journal never filled up"
        assert {(r["type"], r.get("code")) for r in last} == {("rejected", "not-durable")}, last
        acked = {e.id for e, got in zip(games, fates, strict=False) if got[0]["type"] == "ack"}
        ws.close()
    finally:
        tracker.stop()
    assert journal_ids(tmp_path / "data") >= acked  # nothing acknowledged is missing from the journal


def start_limited(wrapper: Path, data_dir: Path) -> RunningTracker:
    from tests.conftest import TOKEN
    from tests.processes import spawn

    cmd = [sys.executable, str(wrapper), "up", "--port", "0", "--data-dir", str(data_dir), "--token", TOKEN]
    process = spawn("tracker up (file size limit)", cmd, {"PYTHONPATH": str(Path.cwd())})
    port = int(process.expect(r"listening on http://127\.0\.0\.1:(\d+)/", timeout=30).group(1))
    return RunningTracker(process.proc, port, data_dir, output=process.output)


def test_an_abrupt_disconnect_mid_pipeline_leaves_no_seq_gap(tracker_factory: Callable[..., RunningTracker]) -> None:
    tracker = tracker_factory("--max-resume-bytes", str(8 << 20))  # the check below replays ~1.3 MB of updates
    opening, games = schedule_events()
    ws = RawWs(tracker.port)
    ws.sock.settimeout(10)
    ws.send(submit_frame(opening, "open", tracker.token))
    replies(ws, 1)
    ws = RawWs(tracker.port)
    ws.sock.settimeout(10)
    # at most 101 updates, so that their deltas fit the default history (256 KiB) and a resume from seq 1 gets every
    # update; beyond, it gets a snapshot by design (141 fitted until each delta carried its summary as a phrase too)
    ws.send(b"".join(submit_frame(event, f"r{k}", tracker.token) for k, event in enumerate(games[:100])))
    replies(ws, 1)  # the first is durable; the others are somewhere between received and acknowledged
    # reset the TCP connection: no close frame, and the server's pending writes fail
    ws.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    ws.sock.close()
    page = f"/api/tournaments/{TID}/standings"

    def published_everything_journalled() -> bool:
        return int(http_json(tracker.port, page)["seq"]) == len(journal_ids(tracker.data_dir))

    settle(published_everything_journalled)
    seq = int(http_json(tracker.port, page)["seq"])
    assert seq > 1, "nothing of the pipeline was applied: the reset came too early to test anything"
    reader = RawWs(tracker.port)
    reader.sock.settimeout(5)
    reader.send(subscribe_frame(TID, since=1))
    seen = []
    for message in messages(reader):
        assert message["type"] == "update", message
        seen.append(message["seq"])
        if message["seq"] == seq:
            break
    assert seen == list(range(2, seq + 1))
    reader.close()


def test_missed_updates_come_first_then_live_ones_in_seq_order(arena: tuple[RunningTracker, list[Event]]) -> None:
    # end to end; tests/gateway/test_hub.py holds the resume on a blocked write to pin the order down exactly
    tracker, games = arena
    arbiter = RawWs(tracker.port)
    arbiter.sock.settimeout(30)
    arbiter.send(b"".join(submit_frame(event, "", tracker.token) for event in games[:100]))
    replies(arbiter, 100)
    late = RawWs(tracker.port)
    late.send(subscribe_frame(TID, since=1))  # 100 missed updates of ~9 KB
    arbiter.send(b"".join(submit_frame(event, "", tracker.token) for event in games[100:110]))
    replies(arbiter, 10)
    late.sock.settimeout(30)
    seen = []
    for message in messages(late):
        seen.append((message["type"], message["seq"]))
        if message["seq"] == 111:
            break
    assert [kind for kind, _ in seen] == ["update"] * len(seen)
    assert [seq for _, seq in seen] == list(range(2, 112))
    arbiter.close()
    late.close()


def test_a_resume_bigger_than_the_cap_gets_a_snapshot(tracker_factory: Callable[..., RunningTracker]) -> None:
    tracker = tracker_factory("--max-resume-bytes", "20000")
    opening, games = schedule_events()
    ws = RawWs(tracker.port)
    ws.sock.settimeout(10)
    ws.send(b"".join(submit_frame(event, "", tracker.token) for event in [opening, *games[:12]]))
    replies(ws, 13)
    ws.send(subscribe_frame(TID, since=1))  # 12 updates of ~9 KB: over the cap
    first = next(messages(ws))
    assert first["type"] == "snapshot" and first["seq"] == 13
    ws.send(subscribe_frame(TID, since=11))  # 2 updates: under it
    # range first: zip stops on it without asking the socket for a third message (which waited out the timeout)
    assert [m["seq"] for _, m in zip(range(2), messages(ws), strict=False)] == [12, 13]
    ws.close()


def test_resubscribing_in_a_loop_is_throttled(arena: tuple[RunningTracker, list[Event]]) -> None:
    tracker, _ = arena
    ws = RawWs(tracker.port)
    ws.sock.settimeout(60)  # generous: a busy machine; what is checked is the count of each answer
    ws.send(b"".join(subscribe_frame(TID, since=0) for _ in range(200)))
    kinds: dict[str, int] = {}
    for _, message in zip(range(200), messages(ws), strict=False):  # range first: no 201st read to wait out
        key = message["type"] if message["type"] != "error" else f"error:{message['code']}"
        kinds[key] = kinds.get(key, 0) + 1
    assert kinds.get("error:rate-limited", 0) > 0, kinds
    assert kinds.get("snapshot", 0) <= 60, kinds
    ws.close()


def test_a_reused_id_with_other_content_is_rejected_with_its_own_code(
    arena: tuple[RunningTracker, list[Event]],
) -> None:
    tracker, games = arena
    ws = RawWs(tracker.port)
    ws.sock.settimeout(10)
    first = games[0]
    assert isinstance(first, ResultRecorded)
    other = msgspec.structs.replace(first, result="1-0" if first.result != "1-0" else "0-1")
    ws.send(submit_frame(first, "first", tracker.token))
    ws.send(submit_frame(other, "other", tracker.token))
    ws.send(submit_frame(first, "again", tracker.token))
    got = replies(ws, 3)
    assert [r["type"] for r in got] == ["ack", "rejected", "ack"]
    assert got[1]["code"] == "id-reused"
    ws.close()


def test_replaying_a_corrected_file_says_which_result_differs_and_fails(
    tracker_factory: Callable[..., RunningTracker], tmp_path: Path
) -> None:
    tracker = tracker_factory()
    source = data_file("fide-tec-exercise16-rr6.trf")
    first = replay_cli(source, tracker)
    assert first.returncode == 0, first.stderr
    # the same file with one result changed: the same game id now carries another result
    tf = read_file(str(source))
    k, event = next((k, e) for k, e in enumerate(tf.events) if isinstance(e, ResultRecorded) and e.result == "1-0")
    events = list(tf.events)
    events[k] = msgspec.structs.replace(event, result="1/2-1/2")
    text = export_trf(state_from(dataclasses.replace(tf, events=tuple(events))))
    corrected = tmp_path / "corrected.trf"
    corrected.write_text(text, encoding="utf-8")
    second = replay_cli(corrected, tracker)
    assert second.returncode == 1
    assert "id-reused" in second.stderr and "already used for a different event" in second.stderr, second.stderr


def replay_cli(path: Path, tracker: RunningTracker) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "tracker.cli", "replay", str(path), "--url", tracker.ws_url]
    return subprocess.run([*command, "--token", tracker.token], capture_output=True, text=True, timeout=120)


def test_compressed_resumes_in_a_loop_neither_grow_the_server_nor_delay_a_bystander(
    tracker_factory: Callable[..., RunningTracker],
) -> None:
    """A client without the token resumes ~1 MiB of history with permessage-deflate, as fast as it is let."""
    tracker = tracker_factory()
    opening, games = schedule_events()
    arbiter = RawWs(tracker.port)
    arbiter.sock.settimeout(30)
    arbiter.send(b"".join(submit_frame(event, "", tracker.token) for event in [opening, *games[:110]]))
    replies(arbiter, 111)  # ~110 updates of ~9 KB: the most a resume replays (1 MiB) before it is a snapshot
    arbiter.close()
    pid = tracker.proc.pid
    before = rss_mib(pid)
    resumed = refused = 0

    async def resumer(until: float) -> float:
        """Resume as fast as it is let until ``until``; returns the seconds it ran."""
        nonlocal resumed, refused
        started = time.monotonic()
        async with connect(tracker.ws_url, max_size=2**24, compression="deflate") as ws:
            while time.monotonic() < until:
                await ws.send(json.dumps({"type": "subscribe", "tournament": TID, "since": 1}))
                first = json.loads(await ws.recv())
                if first["type"] == "error":
                    refused += 1
                    continue
                resumed += 1
                while first["seq"] < 111:
                    first = json.loads(await ws.recv())
        return time.monotonic() - started

    async def both() -> tuple[float, list[float], float]:
        until = time.monotonic() + 4
        ran, (rtts, peak) = await asyncio.gather(resumer(until), ping_bystander(tracker.ws_url, pid, until, every=0.05))
        return ran, rtts, peak

    baseline, _ = asyncio.run(ping_bystander(tracker.ws_url, pid, time.monotonic() + 2, every=0.05))
    ran, rtts, peak = asyncio.run(both())
    # the throttle's contract, whatever the machine's speed: at most the burst plus the rate × the time accepted
    # (a busy machine resumes more slowly than the throttle lets it: then it is never refused, and need not be)
    limits = Limits()
    allowed = limits.subscribe_burst + limits.subscribes_per_second * ran + 1
    assert resumed > 10 and resumed <= allowed, (resumed, refused, allowed)
    assert refused > 0 or resumed + refused <= allowed, (resumed, refused)  # faster than allowed: refused
    assert peak - before < 64, f"the server grew by {peak - before:.1f} MiB"
    assert (why := slower_than(baseline, rtts)) is None, why
    record(
        "limits",
        "compressed 1 MiB resumes in a loop for 4 s (no token)",
        tried=resumed + refused,
        unit="subscribes",
        outcome=(
            f"{resumed} resumed, {refused} throttled; server RSS +{peak - before:.1f} MiB, "
            f"worst bystander ping {max(rtts) * 1000:.1f} ms"
        ),
    )


def test_replay_with_a_wrong_token_stops_at_the_first_rejection(tracker_server: RunningTracker) -> None:
    path = data_file("sinquefield-cup-2021.trf")
    command = [sys.executable, "-m", "tracker.cli", "replay", str(path), "--url", tracker_server.ws_url]
    result = subprocess.run(
        [*command, "--token", "a-wrong-token-of-16-chars"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if "rejected" in line]
    assert len(lines) == 1 and "unauthorized" in lines[0], result.stderr
