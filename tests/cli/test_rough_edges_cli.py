"""The CLI's rough edges a new operator tripped on (issue 38, items f and g).

Reproductions: ``--log-format json`` still printed plain lines on stdout (``journal …: 0 events replayed``,
``listening on …``); ``tracker up --port 99999`` printed a 38-line traceback after creating the journal; a
cluster or gateway on a taken port said "Address already in use" without the port; ``tracker replay``
without a token was refused by the server without saying that none was given; Ctrl-C on the demo printed
``Process SpawnProcess-N:`` and a traceback from the projection worker.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from tests.conftest import TOKEN, RunningTracker, data_file
from tests.processes import spawn, stop_process

CLI = [sys.executable, "-m", "tracker.cli"]
SINQUEFIELD = data_file("sinquefield-cup-2021.trf")


def _json_records(lines: list[str]) -> list[dict[str, object]]:
    """Every non-empty line as a JSON object; fails naming the first line that is not one."""
    records = []
    for line in lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise AssertionError(f"not a JSON line: {line!r}") from None
        assert isinstance(record, dict), line
        records.append(record)
    return records


def test_json_log_format_writes_only_json_lines_on_stdout(tmp_path: Path) -> None:
    cmd = [*CLI, "up", "--port", "0", "--data-dir", str(tmp_path / "data"), "--log-format", "json"]
    process = spawn("tracker up", cmd, {"TRACKER_TOKEN": TOKEN})  # stderr merged: both must be JSON lines
    try:
        process.expect(r"listening on http://127\.0\.0\.1:(\d+)/", timeout=60)
    finally:
        code = stop_process(process.proc)
    assert code in (0, -signal.SIGTERM), process.output
    records = _json_records(process.output)
    messages = [str(r["message"]) for r in records]
    assert any(m.startswith("journal ") and "0 events replayed" in m for m in messages), messages
    assert any("listening on http://127.0.0.1:" in m for m in messages), messages
    assert all({"time", "level", "logger", "message"} <= r.keys() for r in records), records


def test_a_port_out_of_range_is_one_sentence_and_creates_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    done = subprocess.run(
        [*CLI, "up", "--port", "99999", "--data-dir", str(data), "--token", TOKEN],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.strip() == (
        "tracker up: 99999 is not a TCP port: choose one from 1 to 65535 (0: any free port) with --port; "
        "nothing was created"
    ), done.stderr
    assert not data.exists(), "no journal, no folder"


def test_a_port_out_of_range_is_said_in_the_chosen_language(tmp_path: Path) -> None:
    done = subprocess.run(
        [*CLI, "up", "--port", "70000", "--data-dir", str(tmp_path / "d"), "--token", TOKEN, "--lang", "ru"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "70000" in done.stderr and "TCP" in done.stderr and "nothing was created" not in done.stderr


@pytest.mark.parametrize("command", ["cluster", "gateway"])
def test_a_taken_port_is_named_before_anything_starts(command: str, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        extra = ["--broker", "kafka://127.0.0.1:9"] if command == "gateway" else []
        done = subprocess.run(
            [*CLI, command, "--port", str(port), *extra],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "TRACKER_TOKEN": TOKEN},
            cwd=tmp_path,
        )
    assert done.returncode == 1, done
    assert done.stderr.strip() == (
        f"tracker {command}: port {port} on 127.0.0.1 is already in use (another tracker up?): stop it or choose "
        "another with --port; nothing was created"
    ), done.stderr
    assert "[broker]" not in done.stdout, "the broker was not started"


def test_a_cluster_whose_second_gateway_port_is_taken_names_that_port(tmp_path: Path) -> None:
    with socket.socket() as first, socket.socket() as second:
        first.bind(("127.0.0.1", 0))
        port = first.getsockname()[1]
        first.close()  # the first is free, the next one is taken
        try:
            second.bind(("127.0.0.1", port + 1))
        except OSError:
            pytest.skip(f"port {port + 1} is not free for the test")
        second.listen()
        done = subprocess.run(
            [*CLI, "cluster", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "TRACKER_TOKEN": TOKEN},
        )
    assert done.returncode == 1, done
    assert f"port {port + 1} on 127.0.0.1 is already in use" in done.stderr, done.stderr


def test_a_json_log_format_failure_is_a_json_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [*CLI, "up", "--port", "99999", "--data-dir", str(tmp_path / "d"), "--log-format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    (record,) = _json_records(done.stderr.splitlines())
    assert record["level"] == "ERROR" and "99999 is not a TCP port" in str(record["message"]), record


def test_replay_without_a_token_says_none_was_given(tracker_server: RunningTracker) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TRACKER_TOKEN"}
    done = subprocess.run(
        [*CLI, "replay", str(SINQUEFIELD), "--url", tracker_server.ws_url],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 2, done
    said = done.stderr.strip()
    assert said.startswith("tracker replay: no arbiter token was given"), said
    assert "--token-file" in said and "TRACKER_TOKEN" in said, said


async def _watch_projections(url: str) -> None:
    """Subscribe as the arbiter with stakes and boards, until a projection arrives (its worker then runs)."""
    async with connect(url) as ws:
        ask = {"type": "subscribe", "tournament": "sinquefield-cup-2021", "token": TOKEN, "stakes": True}
        await ws.send(json.dumps(ask))
        async with asyncio.timeout(120):
            while json.loads(await ws.recv())["type"] != "projection":
                pass


def test_ctrl_c_on_the_demo_stops_quietly(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    cmd = [*CLI, "up", "--demo", "--rate", "0.5", "--port", "0", "--token", TOKEN]
    process = spawn("tracker up --demo", cmd, {"TMPDIR": str(scratch)})
    try:
        port = int(process.expect(r"listening on http://127\.0\.0\.1:(\d+)/", timeout=60).group(1))
        asyncio.run(_watch_projections(f"ws://127.0.0.1:{port}/ws"))  # the projection worker process is up
        os.killpg(process.proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group
        code = process.proc.wait(timeout=60)
    finally:
        stop_process(process.proc, signal.SIGKILL)
    text = "".join(process.output)
    assert code in (0, 130), text
    assert "SpawnProcess" not in text and "Traceback" not in text and "KeyboardInterrupt" not in text, text


# -- e: the causes and the readers' notes in the chosen language ------------------------------------------------

WITHDRAWAL_BLANK = Path(__file__).resolve().parents[1] / "data" / "withdrawal-blank.trf"


def test_check_says_the_cause_in_the_chosen_language(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.builders import fold_all
    from tests.formats.test_check import _exercise, _exported, _values
    from tracker.cli import main
    from tracker.core.standings import standings

    events = _exercise()
    xxt = _values(standings(fold_all(events)), ("DE", "SB", "KS"))
    xxt[5] = xxt[5].replace(" 2.25 ", " 0.75 ")  # Helene's SB without her forfeit win
    path = _exported(tmp_path, events, "sb.trf", xxt)
    assert main(["check", str(path)]) == 1
    english = capsys.readouterr().out
    assert "forfeit handling: the official figures do not count forfeits as games" in english
    for lang, word in (("ru", "неяв"), ("es", "incomparecencia"), ("de", "kampflos")):
        assert main(["check", str(path), "--lang", lang]) == 1
        said = capsys.readouterr().out
        assert "forfeit handling" not in said and "official figures" not in said, said
        assert word in said.lower(), said


@pytest.mark.parametrize("final", [False, True])
def test_the_readers_notes_are_said_in_the_chosen_language(final: bool, capsys: pytest.CaptureFixture[str]) -> None:
    from tracker.cli import main

    args = ["standings", str(WITHDRAWAL_BLANK), *(["--final"] if final else [])]
    assert main(args) == 0
    english = capsys.readouterr().err
    assert "no result" in english and "read as unplayed" in english
    assert main([*args, "--lang", "ru"]) == 0
    russian = capsys.readouterr().err
    assert len(russian.splitlines()) == len(english.splitlines()) == 2
    assert "no result" not in russian and "read as" not in russian, russian
    assert "4–3" in russian and "2–4" in russian, russian


# -- f: replay --broker right after a worker starts ----------------------------------------------------------


def test_replay_to_the_broker_waits_for_a_worker_that_is_still_joining(tmp_path: Path) -> None:
    from tests.kafka_fixtures import start_broker

    broker = start_broker()
    try:
        broker.worker(wait=False)  # just started: it joins its group in seconds, longer than the verdict wait
        done = subprocess.run(
            [*CLI, "replay", str(SINQUEFIELD), "--broker", broker.url, "--verdict-wait", "3"],
            capture_output=True,
            text=True,
            timeout=240,
        )
    finally:
        report = broker.report()
        broker.stop()
    assert done.returncode == 0, f"{done.stdout}{done.stderr}\n{report}"
    assert "a worker applied all 46 of 46" in done.stdout, done.stdout
