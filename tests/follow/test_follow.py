"""``tracker follow``: a live PGN over HTTP and a rewritten TRF file become exactly the events that changed.

The PGN is served by a real HTTP server on 127.0.0.1 (ETag, Last-Modified,
304, injected 500s); the tracker is a real ``tracker up``; a subscribed
websocket client checks the updates, and every message it receives is
validated against the published schema.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import msgspec
import pytest
from websockets.asyncio.client import ClientConnection, connect

from tests.conftest import REPO, RunningTracker, data_file
from tests.protocol.test_schema import check_server_message
from tests.wsclient import recv, reply_to, send, submit
from tracker.core.events import ByeRecorded, Event, ResultRecorded, TournamentOpened
from tracker.core.standings import standings
from tracker.follow import (
    AT_ONCE,
    FileSource,
    Follower,
    HttpSource,
    KafkaTracker,
    Ledger,
    SourceError,
    StartList,
    TrackerUnavailable,
    View,
    WebsocketTracker,
    backoff,
    name_key,
    token_key,
    view_of,
    view_of_rows,
)
from tracker.formats import state_from
from tracker.formats.pgn import parse_pgn
from tracker.formats.trf import parse_trf
from tracker.protocol import standings_json

SINQUEFIELD = data_file("sinquefield-cup-2021.trf")
BYES = REPO / "tests" / "data" / "byes.trf"

#: How a broadcast writes the Sinquefield players (the TRF says "Caruana, Fabiano" …).
BROADCAST_NAMES = {
    1: "Fabiano Caruana",
    2: "Leinier Domínguez Pérez",
    3: "MAMEDYAROV, Shakhriyar",
    4: "Richard  Rapport",
    5: "Shankland,Sam",
    6: "Wesley So",
    7: "peter svidler",
    8: "Dariusz Świercz",
    9: "Maxime Vachier-Lagrave",
    10: "Jeffery Xiong",
}

Game = tuple[int, int, int, str]  # round, white, black (TRF start numbers), PGN result or "*"


def trf_games(path: Path = SINQUEFIELD) -> dict[int, list[Game]]:
    """The file's games by round, as (round, white, black, PGN result)."""
    tf = parse_trf(path.read_text(encoding="utf-8"), str(path))
    rounds: dict[int, list[Game]] = {}
    for e in tf.events:
        assert isinstance(e, ResultRecorded)
        rounds.setdefault(e.round, []).append((e.round, e.white, e.black, e.result))
    return rounds


def pgn(games: list[Game], names: dict[int, str] = BROADCAST_NAMES) -> str:
    """A broadcast's PGN of these games (boards numbered in order within a round)."""
    out = []
    board: dict[int, int] = {}
    for r, w, b, result in games:
        board[r] = board.get(r, 0) + 1
        moves = "1. d4 d5 2. c4 e6" if result == "*" else f"1. e4 e5 {result}"
        out.append(
            f'[Event "Sinquefield Cup 2021"]\n[Site "Saint Louis USA"]\n[Round "{r}.{board[r]}"]\n'
            f'[White "{names[w]}"]\n[Black "{names[b]}"]\n[Result "{result}"]\n\n{moves}\n'
        )
    return "\n".join(out)


def pending(games: list[Game]) -> list[Game]:
    return [(r, w, b, "*") for r, w, b, _ in games]


# -- a live PGN source over HTTP -----------------------------------------------------------------------


@dataclass
class Broadcast:
    """What the test's HTTP server serves, and what it was asked."""

    body: bytes = b""
    version: int = 0
    fail: int = 0
    requests: list[tuple[int, str | None]] = field(default_factory=list)  # (status, If-None-Match)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def publish(self, text: str) -> None:
        with self.lock:
            self.body = text.encode("utf-8")
            self.version += 1

    @property
    def etag(self) -> str:
        return f'"v{self.version}"'


@pytest.fixture
def broadcast() -> Iterator[tuple[Broadcast, str]]:
    """A PGN served at ``http://127.0.0.1:PORT/live/games.pgn`` with ETag and Last-Modified."""
    state = Broadcast()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            with state.lock:
                inm = self.headers.get("If-None-Match")
                if state.fail:
                    state.fail -= 1
                    status, body, headers = 500, b"upstream hiccup\n", {}
                elif inm == state.etag:
                    status, body, headers = 304, b"", {"ETag": state.etag}
                else:
                    status, body = 200, state.body
                    headers = {
                        "ETag": state.etag,
                        "Last-Modified": formatdate(1_600_000_000 + state.version, usegmt=True),
                        "Content-Type": "application/x-chess-pgn; charset=utf-8",
                    }
                state.requests.append((status, inm))
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, name="pgn-server", daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}/live/games.pgn"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# -- helpers ---------------------------------------------------------------------------------------------


def shape(event: dict[str, Any] | Event) -> tuple[Any, ...]:
    """(type, round, white or player, black, result or kind) of an event, from the wire or typed."""
    body = event if isinstance(event, dict) else json.loads(msgspec.json.encode(event))
    return (
        body["type"],
        body.get("round"),
        body.get("white", body.get("player")),
        body.get("black"),
        body.get("result", body.get("kind")),
    )


async def updates(ws: ClientConnection, count: int, timeout: float = 20) -> list[tuple[Any, ...]]:
    """The next ``count`` updates' event shapes; every message read is checked against the schema."""
    got: list[tuple[Any, ...]] = []
    async with asyncio.timeout(timeout):
        while len(got) < count:
            message = check_server_message(await recv(ws, timeout))
            if message["type"] == "update":
                got.append(shape(message["event"]))
    return got


async def watch(server: RunningTracker, tid: str) -> ClientConnection:
    """A spectator subscribed to ``tid`` (an empty snapshot while it is not open)."""
    ws = await connect(server.ws_url)
    await send(ws, {"type": "subscribe", "tournament": tid})
    assert check_server_message(await recv(ws))["type"] == "snapshot"
    return ws


def http_json(server: RunningTracker, path: str) -> Any:
    with urllib.request.urlopen(server.http_url + path, timeout=10) as response:
        return json.loads(response.read())


def offline_rows(path: Path) -> list[dict[str, Any]]:
    """``tracker standings FILE --format json`` rows."""
    out = subprocess.run(
        [sys.executable, "-m", "tracker.cli", "standings", str(path), "--format", "json"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    rows: list[dict[str, Any]] = json.loads(out)["standings"]
    return rows


def comparable(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(r["rank"], r["start_no"], r["name"], r["points"], r["tiebreaks"], r["results"]) for r in rows]


def follow_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tracker.cli", "follow", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def recorded(games: list[Game], number: Callable[[int], int]) -> list[tuple[Any, ...]]:
    """The ``result_recorded`` shapes of these games in the follower's order: by round, then White's number."""
    shapes = [("result_recorded", r, number(w), number(b), res) for r, w, b, res in games]
    return sorted(shapes, key=lambda s: (s[1], s[2]))


def pgn_number(trf_no: int) -> int:
    """The start number a PGN of :data:`BROADCAST_NAMES` gives a player: alphabetical by name."""
    names = sorted(BROADCAST_NAMES.values(), key=lambda s: (s.casefold(), s))
    return names.index(BROADCAST_NAMES[trf_no]) + 1


# -- names ---------------------------------------------------------------------------------------------


def test_names_match_across_order_case_spacing_punctuation_and_diacritics() -> None:
    start = StartList([(1, "Caruana, Fabiano"), (2, "Dominguez Perez, Leinier"), (9, "Vachier-Lagrave, Maxime")])
    for name, number in [
        ("Fabiano Caruana", 1),
        ("  CARUANA ,  fabiano ", 1),
        ("Leinier Domínguez Pérez", 2),
        ("Domínguez Pérez,Leinier", 2),
        ("Maxime Vachier Lagrave", 9),
        ("vachier-lagrave, maxime", 9),
    ]:
        assert start.match(name) == number, name
    assert name_key("Świercz, Dariusz") == "dariusz swiercz"
    assert token_key("Dariusz Świercz") == token_key("Swiercz, Dariusz")
    for unknown in ("Caruana, F.", "F. Caruana", "Carlsen, Magnus", ""):
        assert start.match(unknown) is None
        assert "is not in the start list" in start.why_not(unknown)


def test_a_name_that_fits_two_players_is_reported_not_guessed() -> None:
    start = StartList([(1, "Wei, Yi"), (2, "Yi, Wei")])
    assert start.match("Wei, Yi") == 1 and start.match("Yi Wei") == 1  # the written order decides first
    twins = StartList([(1, "Smith, John"), (2, "Smith, John")])
    assert twins.match("John Smith") is None
    assert "could be any of 1 Smith, John, 2 Smith, John" in twins.why_not("John Smith")


# -- the ledger: changes and their ids ---------------------------------------------------------------------


def test_ledger_emits_voids_first_then_corrections_then_new_results_by_round() -> None:
    ledger = Ledger("t", seq=7, games={(1, 1, 2): ("1-0", False), (1, 3, 4): ("0-1", False), (2, 2, 3): ("--", False)})
    ledger.byes = {(1, 5): "half"}
    previous = View(dict(ledger.games), dict(ledger.byes))
    new = View(
        {
            (1, 1, 2): ("1/2-1/2", False),
            (2, 3, 2): ("1-0", False),
            (2, 1, 4): ("0-1", False),
            (1, 3, 4): ("0-1", False),
        },
        {(1, 5): "zero", (2, 5): "full"},
    )
    events = ledger.changes(previous, new)
    assert [shape(e) for e in events] == [
        ("result_voided", 2, 2, 3, None),  # colours swapped: the old game goes first
        ("bye_voided", 1, 5, None, None),  # a bye changing kind
        ("result_corrected", 1, 1, 2, "1/2-1/2"),
        ("bye_recorded", 1, 5, None, "zero"),
        ("result_recorded", 2, 1, 4, "0-1"),
        ("result_recorded", 2, 3, 2, "1-0"),
        ("bye_recorded", 2, 5, None, "full"),
    ]
    assert all(e.id.startswith("t/follow/r") and len(e.id) <= 128 for e in events)
    assert [e.id for e in events] == [
        e.id for e in Ledger("t", 7, dict(previous.games), dict(previous.byes)).changes(previous, new)
    ]
    for event in events:
        ledger.apply(event)
    assert ledger.changes(new, new) == []


def test_a_result_changed_back_and_forth_gets_a_new_id_each_time() -> None:
    ledger = Ledger("t", seq=3)
    ids = []
    views = [View({(1, 1, 2): (r, False)}) for r in ("1-0", "0-1", "1-0", "0-1")] + [View()]
    previous: View | None = None
    for view in [*views, views[0], View(), views[0]]:
        events = ledger.changes(previous, view)
        assert len(events) == 1
        ids.append(events[0].id)
        ledger.apply(events[0])
        previous = view
    assert len(set(ids)) == len(ids)


def test_first_read_does_not_void_what_the_source_never_listed_but_clears_its_way() -> None:
    ledger = Ledger("t", seq=9, games={(1, 1, 2): ("1-0", False), (2, 1, 3): ("1-0", False)}, byes={(3, 4): "zero"})
    new = View({(2, 1, 4): ("0-1", False), (3, 4, 2): ("1-0", False)})
    assert [shape(e) for e in ledger.changes(None, new)] == [
        ("result_voided", 2, 1, 3, None),
        ("bye_voided", 3, 4, None, None),
        ("result_recorded", 2, 1, 4, "0-1"),
        ("result_recorded", 3, 4, 2, "1-0"),
    ]


def test_a_pgn_view_never_changes_the_short_flag_of_a_trf_result() -> None:
    ledger = Ledger("t", games={(1, 1, 2): ("1-0", True)})
    assert ledger.changes(None, View({(1, 1, 2): ("1-0", False)}, knows_short=False)) == []
    (fix,) = ledger.changes(None, View({(1, 1, 2): ("0-1", False)}, knows_short=False))
    assert shape(fix) == ("result_corrected", 1, 1, 2, "0-1") and getattr(fix, "short", None) is True


def test_standings_rows_read_back_as_the_results_of_the_file() -> None:
    for path in (SINQUEFIELD, BYES, REPO / "tests" / "data" / "forfeits.trf"):
        tf = parse_trf(path.read_text(encoding="utf-8"), str(path))
        rows = standings(state_from(tf)).rows
        view = view_of_rows((row.start_no, row.results) for row in rows)
        assert view == view_of(tf, StartList.of(tf.opened.players))[0]


def test_backoff_doubles_from_the_interval_and_stops_at_a_minute() -> None:
    assert [backoff(n, 0.5) for n in range(1, 9)] == [1, 2, 4, 8, 16, 32, 60, 60]
    assert backoff(3, 120) == 120
    assert backoff(10_000, 0.1) == 60


# -- local files ----------------------------------------------------------------------------------------


async def test_file_source_reads_only_when_the_content_changed(tmp_path: Path) -> None:
    path = tmp_path / "live.trf"
    source = FileSource(path)
    with pytest.raises(SourceError, match=r"live\.trf"):
        await source.read()
    path.write_text("012 A\n", encoding="utf-8")
    assert await source.read() == "012 A\n"
    assert await source.read() is None
    path.write_text("012 A\n", encoding="utf-8")  # rewritten, same bytes
    assert await source.read() is None
    path.write_text("012 B\n", encoding="utf-8")
    assert await source.read() == "012 B\n"
    path.write_bytes("012 Café\n".encode("latin-1"))
    assert await source.read() == "012 Café\n"


# -- following a live PGN over HTTP -----------------------------------------------------------------------


async def test_following_a_growing_pgn_emits_exactly_the_changes_and_ends_with_the_final_standings(
    tracker_server: RunningTracker, broadcast: tuple[Broadcast, str], tmp_path: Path
) -> None:
    served, url = broadcast
    tid = "sinq-live"
    rounds = trf_games()
    games = [g for r in sorted(rounds) for g in rounds[r]]
    final_text = pgn(games)
    n = pgn_number
    follower = Follower(
        HttpSource(url), tid, WebsocketTracker(tracker_server.ws_url, tracker_server.token), confirm=AT_ONCE
    )
    spectator = await watch(tracker_server, tid)
    try:
        # round 1 finished, round 2 under way: the tournament is opened from the PGN
        served.publish(pgn(rounds[1] + pending(rounds[2])))
        result = await follower.poll()
        assert isinstance(result.acked[0], TournamentOpened) and result.acked[0].id == f"{tid}/opened"
        expected = [("tournament_opened", None, None, None, None), *recorded(rounds[1], n)]
        assert await updates(spectator, 6) == expected == [shape(e) for e in result.acked]

        # nothing new: a conditional request, a 304, no event
        result = await follower.poll()
        assert not result.changed and result.acked == ()
        assert served.requests[-1] == (304, served.etag)

        # three games of round 2 end
        served.publish(pgn(rounds[1] + rounds[2][:3] + pending(rounds[2][3:])))
        assert [shape(e) for e in (await follower.poll()).acked] == recorded(rounds[2][:3], n)
        assert await updates(spectator, 3) == recorded(rounds[2][:3], n)

        # round 1's first result is corrected; rounds 2 and 3 end
        r, w, b, _ = rounds[1][0]
        fixed = [(r, w, b, "1/2-1/2"), *rounds[1][1:]]
        served.publish(pgn(fixed + rounds[2] + rounds[3]))
        expected = [("result_corrected", r, n(w), n(b), "1/2-1/2"), *recorded(rounds[2][3:] + rounds[3], n)]
        assert [shape(e) for e in (await follower.poll()).acked] == expected
        assert await updates(spectator, len(expected)) == expected

        # the server fails twice: errors, no events; then a 304
        served.fail = 2
        for _ in range(2):
            with pytest.raises(SourceError, match="HTTP 500"):
                await follower.poll()
        assert (await follower.poll()).acked == ()
        assert [status for status, _ in served.requests[-3:]] == [500, 500, 304]

        # a game disappears from the broadcast, then comes back
        gone = rounds[3][2]
        served.publish(pgn(fixed + rounds[2] + [g for g in rounds[3] if g != gone]))
        (voided,) = (await follower.poll()).acked
        assert shape(voided) == ("result_voided", 3, n(gone[1]), n(gone[2]), None)
        served.publish(pgn(fixed + rounds[2] + rounds[3]))
        (back,) = (await follower.poll()).acked
        assert shape(back) == recorded([gone], n)[0]
        assert await updates(spectator, 2) == [shape(voided), shape(back)]

        # the rest of the event, and round 1's result restored
        served.publish(final_text)
        later = [g for k in range(4, 10) for g in rounds[k]]
        expected = [("result_corrected", r, n(w), n(b), rounds[1][0][3]), *recorded(later, n)]
        assert [shape(e) for e in (await follower.poll()).acked] == expected
        assert await updates(spectator, len(expected)) == expected

        # a restarted follower finds everything in place and submits nothing
        fresh = Follower(
            HttpSource(url), tid, WebsocketTracker(tracker_server.ws_url, tracker_server.token), confirm=AT_ONCE
        )
        try:
            result = await fresh.poll()
        finally:
            await fresh.aclose()
        assert result.changed and result.acked == () and result.rejected == ()
    finally:
        await follower.aclose()
        await spectator.close()

    page = http_json(tracker_server, f"/api/tournaments/{tid}/standings")
    assert page["seq"] == 1 + len(games) + 4 and page["provisional"] is False
    final = tmp_path / "final.pgn"
    final.write_text(final_text, encoding="utf-8")
    assert comparable(page["standings"]) == comparable(offline_rows(final))
    folded = standings_json(standings(state_from(parse_pgn(final_text, str(final), tid))))
    assert comparable(page["standings"]) == comparable(json.loads(json.dumps(folded["standings"])))


async def test_follow_once_matches_broadcast_names_to_the_start_list_and_reports_strangers(
    tracker_server: RunningTracker, broadcast: tuple[Broadcast, str]
) -> None:
    served, url = broadcast
    tid = "sinq-names"
    tf = parse_trf(SINQUEFIELD.read_text(encoding="utf-8"), str(SINQUEFIELD), tid)
    rounds = trf_games()
    names = {**BROADCAST_NAMES, 11: "Magnus Carlsen", 12: "Nakamura, Hikaru"}
    args = (url, "--tournament", tid, "--url", tracker_server.ws_url, "--token", tracker_server.token, "--once")
    async with connect(tracker_server.ws_url) as arbiter:
        await submit(arbiter, tracker_server.token, tf.opened)  # the arbiter's start list, no results yet
        assert (await reply_to(arbiter, tf.opened.id))["type"] == "ack"
    spectator = await watch(tracker_server, tid)
    try:
        served.publish(pgn([*rounds[1], (1, 11, 12, "1-0")], names))
        done = await asyncio.to_thread(follow_cli, *args)
        assert done.returncode == 1, done.stderr
        assert "'Magnus Carlsen' is not in the start list" in done.stderr
        assert "'Nakamura, Hikaru' is not in the start list" in done.stderr
        assert await updates(spectator, 5) == recorded(rounds[1], int)  # the TRF's own numbers

        again = await asyncio.to_thread(follow_cli, *args)  # a restart on the same source: nothing new
        assert again.returncode == 1 and "nothing new" in again.stderr
        assert http_json(tracker_server, f"/api/tournaments/{tid}/standings")["seq"] == 6

        served.publish(pgn(rounds[1] + rounds[2], names))
        done = await asyncio.to_thread(follow_cli, *args)
        assert done.returncode == 0, done.stderr
        assert await updates(spectator, 5) == recorded(rounds[2], int)
    finally:
        await spectator.close()


async def test_follow_cli_backs_off_on_errors_keeps_following_and_stops_on_sigterm(
    tracker_server: RunningTracker, broadcast: tuple[Broadcast, str]
) -> None:
    served, url = broadcast
    tid = "sinq-cli"
    rounds = trf_games()
    served.fail = 3
    served.publish(pgn(rounds[1]))
    spectator = await watch(tracker_server, tid)
    command = [sys.executable, "-m", "tracker.cli", "follow", url, "--tournament", tid, "--url", tracker_server.ws_url]
    proc = await asyncio.create_subprocess_exec(
        *command,
        "--interval",
        "0.05",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "TRACKER_TOKEN": tracker_server.token},
    )
    n = pgn_number
    try:
        first = await updates(spectator, 6, timeout=30)
        assert first == [("tournament_opened", None, None, None, None), *recorded(rounds[1], n)]
        served.publish(pgn(rounds[1] + rounds[2]))
        assert await updates(spectator, 5, timeout=30) == recorded(rounds[2], n)
    finally:
        await spectator.close()
        proc.send_signal(signal.SIGTERM)
        async with asyncio.timeout(20):
            _, err = await proc.communicate()
    stderr = err.decode()
    assert proc.returncode == 0, stderr
    assert stderr.count("HTTP 500") == 3
    for delay in ("retrying in 0.1 s (failure 1)", "retrying in 0.2 s (failure 2)", "retrying in 0.4 s (failure 3)"):
        assert delay in stderr
    assert "recovered after 3 failed attempt(s)" in stderr


def test_follow_cli_refuses_to_run_without_a_destination(tmp_path: Path) -> None:
    done = follow_cli(str(tmp_path / "x.pgn"), "--tournament", "t", "--once")
    assert done.returncode == 2 and "--url" in done.stderr
    done = follow_cli(
        str(tmp_path / "x.pgn"), "--tournament", "t", "--url", "ws://127.0.0.1:9/ws", "--token", "t", "--once"
    )
    assert done.returncode == 1 and "x.pgn" in done.stderr


# -- following a TRF file rewritten by an arbiter program ------------------------------------------------


def arbiter_trf(
    original: Path,
    done: AbstractSet[tuple[int, int]],
    paired: AbstractSet[int] = frozenset(),
    fix: dict[tuple[int, int], str] | None = None,
) -> str:
    """The file an arbiter program writes mid-event.

    ``done`` holds the (round, start number) blocks whose result is in; in
    the rounds of ``paired`` the other games show the pairing with a blank
    result and byes are in (they are known when the round is paired); any
    other block is left out.  ``fix`` overrides result codes.  The points
    column is recomputed (1-½-0; F and U count as wins, H as a draw).
    """
    value = {"1": 2, "+": 2, "W": 2, "F": 2, "U": 2, "=": 1, "D": 1, "H": 1}
    lines = []
    for line in original.read_text(encoding="utf-8").splitlines():
        if not line.startswith("001"):
            lines.append(line)
            continue
        start_no = int(line[4:8])
        blocks = []
        halves = 0
        for k, start in enumerate(range(91, len(line), 10), start=1):
            block = line[start : start + 10].ljust(10)
            code = (fix or {}).get((k, start_no), block[7])
            bye = block[:4] == "0000"
            if (k, start_no) in done or (k in paired and bye):
                blocks.append(block[:7] + code + "  ")
                halves += value.get(code, 0)
            elif k in paired and block[:4].strip():
                blocks.append(block[:7] + "   ")
            else:
                blocks.append(" " * 10)
        points = f"{halves // 2}.{5 if halves % 2 else 0}"
        lines.append((line[:80] + f"{points:>4}" + " " * 7 + "".join(blocks)).rstrip())
    return "\n".join(lines) + "\n"


def blocks_until(path: Path, last: int, extra: AbstractSet[tuple[int, int]] = frozenset()) -> set[tuple[int, int]]:
    """Every (round, start number) block of rounds 1 to ``last``, and ``extra``."""
    tf = parse_trf(path.read_text(encoding="utf-8"), str(path))
    return {(r, p) for r in range(1, last + 1) for p in range(1, tf.opened.players[-1].start_no + 1)} | extra


@pytest.mark.parametrize("ahead", ["next-round", "all-rounds"])
async def test_following_a_trf_file_rewritten_round_by_round_ends_with_the_files_standings(
    tracker_server: RunningTracker, tmp_path: Path, ahead: str
) -> None:
    """The arbiter program pairs the next round only, or the whole round robin up front (a schedule)."""
    tid = f"sinq-trf-{ahead}"
    live = tmp_path / "arbiter.trf"
    rounds = trf_games()

    def paired(last: int) -> set[int]:
        return set(range(1, 10)) if ahead == "all-rounds" else {last + 1}

    follower = Follower(
        FileSource(live), tid, WebsocketTracker(tracker_server.ws_url, tracker_server.token), confirm=AT_ONCE
    )
    spectator = await watch(tracker_server, tid)
    try:
        # round 1 done, round 2 paired with two games in
        half = {(2, p) for _, w, b, _ in rounds[2][:2] for p in (w, b)}
        live.write_text(arbiter_trf(SINQUEFIELD, blocks_until(SINQUEFIELD, 1, half), paired(1)), encoding="utf-8")
        result = await follower.poll()
        expected = [("tournament_opened", None, None, None, None), *recorded(rounds[1] + rounds[2][:2], int)]
        assert [shape(e) for e in result.acked] == expected
        opened = result.acked[0]
        assert isinstance(opened, TournamentOpened) and (opened.schedule is not None) == (ahead == "all-rounds")
        assert await updates(spectator, len(expected)) == expected
        for last in range(2, 10):
            live.write_text(arbiter_trf(SINQUEFIELD, blocks_until(SINQUEFIELD, last), paired(last)), encoding="utf-8")
            new = rounds[2][2:] if last == 2 else rounds[last]
            assert [shape(e) for e in (await follower.poll()).acked] == recorded(new, int)
            assert await updates(spectator, len(new)) == recorded(new, int)
        assert (await follower.poll()).acked == ()
    finally:
        await follower.aclose()
        await spectator.close()
    page = http_json(tracker_server, f"/api/tournaments/{tid}/standings")
    assert comparable(page["standings"]) == comparable(offline_rows(SINQUEFIELD))


async def test_trf_corrections_removed_results_and_bye_changes_become_corrected_voided_and_bye_events(
    tracker_server: RunningTracker, tmp_path: Path
) -> None:
    tid = "bye-cup"
    live = tmp_path / "bye-cup.trf"
    follower = Follower(
        FileSource(live), tid, WebsocketTracker(tracker_server.ws_url, tracker_server.token), confirm=AT_ONCE
    )
    spectator = await watch(tracker_server, tid)

    async def step(text: str, expected: list[tuple[Any, ...]]) -> None:
        live.write_text(text, encoding="utf-8")
        result = await follower.poll()
        assert [shape(e) for e in result.acked] == expected and result.rejected == ()
        assert await updates(spectator, len(expected)) == expected

    try:
        # round 1: Alpha has a half-point bye, Bravo–Echo 1-0, Charlie–Delta ½; round 2 paired (Delta's bye is known)
        await step(
            arbiter_trf(BYES, blocks_until(BYES, 1), {2}),
            [
                ("tournament_opened", None, None, None, None),
                ("bye_recorded", 1, 1, None, "half"),
                ("result_recorded", 1, 2, 5, "1-0"),
                ("result_recorded", 1, 3, 4, "1/2-1/2"),
                ("bye_recorded", 2, 4, None, "full"),
            ],
        )
        # the same file written again: nothing
        await step(arbiter_trf(BYES, blocks_until(BYES, 1), {2}), [])
        # round 2 in, round 3 paired; Alpha's bye becomes a zero bye, Charlie–Delta a win for Charlie
        fix = {(1, 1): "Z", (1, 3): "1", (1, 4): "0"}
        await step(
            arbiter_trf(BYES, blocks_until(BYES, 2), {3}, fix),
            [
                ("bye_voided", 1, 1, None, None),
                ("result_corrected", 1, 3, 4, "1-0"),
                ("bye_recorded", 1, 1, None, "zero"),
                ("result_recorded", 2, 1, 2, "1-0"),
                ("result_recorded", 2, 5, 3, "0-1"),
                ("bye_recorded", 3, 2, None, "pab"),
            ],
        )
        # the arbiter takes round 2's Echo–Charlie result back out (paired, not finished)
        await step(
            arbiter_trf(BYES, blocks_until(BYES, 2) - {(2, 3), (2, 5)}, {2, 3}, fix),
            [("result_voided", 2, 5, 3, None)],
        )
        # the final file: the corrections undone, everything else in (Charlie's empty round 5 is a zero bye)
        await step(
            BYES.read_text(encoding="utf-8"),
            [
                ("bye_voided", 1, 1, None, None),
                ("result_corrected", 1, 3, 4, "1/2-1/2"),
                ("bye_recorded", 1, 1, None, "half"),
                ("result_recorded", 2, 5, 3, "0-1"),
                ("result_recorded", 3, 3, 1, "1/2-1/2"),
                ("result_recorded", 3, 4, 5, "0-1"),
                ("result_recorded", 4, 1, 4, "1-0"),
                ("result_recorded", 4, 2, 3, "1/2-1/2"),
                ("bye_recorded", 4, 5, None, "zero"),
                ("bye_recorded", 5, 3, None, "zero"),
                ("result_recorded", 5, 4, 2, "0-1"),
                ("result_recorded", 5, 5, 1, "0-1"),
            ],
        )
    finally:
        await follower.aclose()
        await spectator.close()
    page = http_json(tracker_server, f"/api/tournaments/{tid}/standings")
    assert comparable(page["standings"]) == comparable(offline_rows(BYES))


# -- the broker path --------------------------------------------------------------------------------------


async def test_broker_follower_produces_the_opening_event_then_the_changes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import tracker.kafka.producer

    produced: list[tuple[Event, ...]] = []

    async def produce_events(events: Sequence[Event], broker: str, **_: object) -> int:
        assert broker == "kafka://127.0.0.1:9092"
        produced.append(tuple(events))
        return len(events)

    monkeypatch.setattr(tracker.kafka.producer, "produce_events", produce_events)
    live = tmp_path / "bye-cup.trf"
    live.write_text(arbiter_trf(BYES, blocks_until(BYES, 1)), encoding="utf-8")
    follower = Follower(FileSource(live), "bye-kafka", KafkaTracker("kafka://127.0.0.1:9092"), confirm=AT_ONCE)
    first = await follower.poll()
    kinds = ["TournamentOpened", "ByeRecorded", "ResultRecorded", "ResultRecorded"]
    assert [type(e).__name__ for e in first.acked] == kinds
    assert produced == [first.acked[:1], first.acked[1:]]
    assert isinstance(first.acked[1], ByeRecorded)
    # a restarted broker follower cannot read the tracker: it re-sends the same ids, which change nothing
    again = Follower(FileSource(live), "bye-kafka", KafkaTracker("kafka://127.0.0.1:9092"), confirm=AT_ONCE)
    assert [e.id for e in (await again.poll()).acked] == [e.id for e in first.acked]


async def test_a_broker_that_cannot_be_reached_is_retried_with_the_same_ids(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import tracker.kafka.producer
    from tracker.kafka.topics import BrokerError

    calls: list[list[str]] = []

    async def produce_events(events: Sequence[Event], broker: str, **_: object) -> int:
        calls.append([e.id for e in events])
        if len(calls) == 2:
            raise BrokerError("cannot reach the Kafka broker")
        return len(events)

    monkeypatch.setattr(tracker.kafka.producer, "produce_events", produce_events)
    live = tmp_path / "bye-cup.trf"
    live.write_text(arbiter_trf(BYES, blocks_until(BYES, 1)), encoding="utf-8")
    follower = Follower(FileSource(live), "bye-kafka", KafkaTracker("kafka://127.0.0.1:9092"), confirm=AT_ONCE)
    with pytest.raises(TrackerUnavailable, match="cannot reach"):
        await follower.poll()
    assert len((await follower.poll()).acked) == 3
    assert calls[1] == calls[2] and len(calls) == 3


async def test_following_a_local_pgn_file(tracker_server: RunningTracker, tmp_path: Path) -> None:
    tid = "sinq-pgn-file"
    live = tmp_path / "games.pgn"
    rounds = trf_games()
    follower = Follower(
        FileSource(live), tid, WebsocketTracker(tracker_server.ws_url, tracker_server.token), confirm=AT_ONCE
    )
    try:
        live.write_text(pgn(rounds[1] + pending(rounds[2])), encoding="utf-8")
        first = [shape(e) for e in (await follower.poll()).acked]
        assert first == [("tournament_opened", None, None, None, None), *recorded(rounds[1], pgn_number)]
        assert (await follower.poll()).acked == ()
        live.write_text(pgn(rounds[1] + rounds[2]), encoding="utf-8")
        assert [shape(e) for e in (await follower.poll()).acked] == recorded(rounds[2], pgn_number)
    finally:
        await follower.aclose()


async def test_follow_reports_a_conflict_with_an_arbiters_entry_and_leaves_it_unless_told_to_override(
    tracker_server: RunningTracker, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tid = "bye-conflict"
    live = tmp_path / "bye-conflict.trf"
    follower = Follower(
        FileSource(live), tid, WebsocketTracker(tracker_server.ws_url, tracker_server.token), confirm=AT_ONCE
    )
    try:
        live.write_text(arbiter_trf(BYES, blocks_until(BYES, 1), {2}), encoding="utf-8")
        assert len((await follower.poll()).acked) == 5
        # by hand, on the arbiter page: Alpha (1) has a half-point bye in round 2
        async with connect(tracker_server.ws_url) as ws:
            hand = ByeRecorded(id="by-hand", tournament=tid, round=2, player=1, kind="half")
            await submit(ws, tracker_server.token, hand)
            assert (await reply_to(ws, "by-hand"))["type"] == "ack"
        # the source then says Alpha–Bravo 1-0 in round 2: reported, the arbiter's bye left as it is
        live.write_text(arbiter_trf(BYES, blocks_until(BYES, 2), {3}), encoding="utf-8")
        with caplog.at_level(logging.WARNING, logger="tracker.follow"):
            first = await follower.poll()  # follow did not know of the bye yet: the tracker refuses the game
            assert [(shape(e), code) for e, code, _ in first.rejected] == [
                (("result_recorded", 2, 1, 2, "1-0"), "invalid-pairing")
            ]
            assert ("result_recorded", 2, 5, 3, "0-1") in [shape(e) for e in first.acked]
            # the next version of the source: follow reads the tracker again and sees the arbiter's bye
            live.write_text(arbiter_trf(BYES, blocks_until(BYES, 2), {3, 4}), encoding="utf-8")
            result = await follower.poll()
            again = await follower.poll()  # still in conflict: reported once
        assert [shape(e) for e in result.held] == [
            ("bye_voided", 2, 1, None, None),
            ("result_recorded", 2, 1, 2, "1-0"),
        ]
        assert again.acked == () and len(again.held) == 2
        conflicts = [r for r in caplog.records if "conflict" in r.getMessage()]
        assert len(conflicts) == 2 and all(r.levelno == logging.WARNING for r in conflicts)
        assert "--override" in conflicts[0].getMessage()
        rows = http_json(tracker_server, f"/api/tournaments/{tid}/standings")["standings"]
        alpha = next(r for r in rows if r["start_no"] == 1)
        assert [2, 0, "-", "H"] in alpha["results"], "the arbiter's bye is still there"
        # told to override: the source's result replaces the arbiter's bye
        follower.override = True
        forced = await follower.poll()
        assert [shape(e) for e in forced.acked] == [
            ("bye_voided", 2, 1, None, None),
            ("result_recorded", 2, 1, 2, "1-0"),
        ]
    finally:
        await follower.aclose()
