"""No viewer can hurt, round two (issue 37): each reproduction as the attack round ran it (without the token
where it needed none), against a real ``tracker up`` or the piece itself, then what holds instead.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from contextlib import suppress

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from tests.conftest import RunningTracker
from tests.gateway.test_hostile import result
from tests.gateway.test_limits import metric
from tests.gateway.test_viewers import fill, round_robin
from tests.wsclient import recv_until, reply_to, send, submit
from tracker.core.events import BoardUpdated, ResultRecorded, encode_board, encode_event


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def settled_cpu(pid: int) -> float:
    """The process's CPU time once it has stopped spending it (what it was given to do, it has done)."""
    last = cpu_seconds(pid)
    while True:
        await asyncio.sleep(0.3)
        now = cpu_seconds(pid)
        if now - last < 0.02:
            return now
        last = now


async def opened_and_answered(server: RunningTracker, count: int, message: dict[str, object]) -> list[ClientConnection]:
    """``count`` connections (over loopback addresses 127.0.0.2–9) that each sent ``message``, then a message the
    server answers with an error: once it answers, the server has handled the first."""
    conns = []
    for k in range(count):
        ws = await connect(server.ws_url, local_addr=(f"127.0.0.{2 + k % 8}", 0), max_size=None)
        await send(ws, message)
        await send(ws, {"type": "no-such-message"})
        conns.append(ws)
    for ws in conns:
        await recv_until(ws, lambda m: m["type"] == "error", timeout=120, check=False)
    return conns


async def test_three_hundred_delayed_subscribes_cost_about_what_plain_ones_do(tracker_server: RunningTracker) -> None:
    """Reproduction (item 1): 300 ``subscribe since=1 delay=600`` on a 30-player tournament with 300 updates cost
    20.8–21.7 s of server CPU against 0.3–0.4 s for 300 plain ones.  Now each delayed subscriber's cursor is
    looked at when its own data comes due: within 3× the plain ones, in the same test."""
    tid = "delayed-thirty"
    await fill(tracker_server, round_robin(tid, 30, 300))
    pid = tracker_server.proc.pid
    start = await settled_cpu(pid)
    plain = await opened_and_answered(tracker_server, 300, {"type": "subscribe", "tournament": tid, "since": 1})
    plain_cpu = await settled_cpu(pid) - start
    for ws in plain:
        await ws.close()
    start = await settled_cpu(pid)
    began = time.time()
    delayed = await opened_and_answered(
        tracker_server, 300, {"type": "subscribe", "tournament": tid, "since": 1, "delay": 600}
    )
    delayed_cpu = await settled_cpu(pid) - start
    try:
        early = []
        for ws in delayed[:20]:  # and none of them is sent anything 600 s early
            with suppress(TimeoutError):
                early.append(await asyncio.wait_for(ws.recv(), 0.05))
        assert not early, f"a delayed subscriber got {early[0][:80]!r} {time.time() - began:.0f} s after subscribing"
    finally:
        for ws in delayed:
            await ws.close()
    print(f"server CPU: 300 plain subscribes {plain_cpu:.2f} s, 300 delayed {delayed_cpu:.2f} s")
    assert delayed_cpu <= 3 * max(plain_cpu, 0.05), (
        f"300 delayed subscribes cost {delayed_cpu:.2f} s of server CPU, 300 plain ones {plain_cpu:.2f} s"
    )


async def guess_from(server: RunningTracker, address: str, stop: asyncio.Event, limited: asyncio.Event) -> int:
    """Send wrong-token submits from ``address`` as fast as the replies come back, until ``stop``; how many.
    ``limited`` is set once a guess is refused ``rate-limited``."""
    sent = 0
    async with connect(server.ws_url, local_addr=(address, 0)) as ws:
        while not stop.is_set():
            event = result("guessed-cup", f"guess-{address}-{sent}", 1, 1, 2, "1-0")
            for _ in range(20):
                await ws.send(json.dumps({"type": "submit", "token": f"guess-{sent:016d}", "event": event}))
            for _ in range(20):
                if json.loads(await ws.recv()).get("code") == "rate-limited":
                    limited.set()
            sent += 20
    return sent


async def test_the_right_token_on_a_fresh_connection_is_never_refused_for_others_guesses(
    tracker_server: RunningTracker,
) -> None:
    """Reproduction (item 2): with 4 addresses guessing (their 400 wrong tokens a second spend the global
    budget of 300), a fresh arbiter connection got 7–8 of 10 submits refused ``rate-limited``.  Now only wrong
    tokens spend budgets, and the global one stops only addresses that guessed wrong."""
    tid = "guarded-cup"
    events = round_robin(tid, 6, 9)
    stop, limited = asyncio.Event(), asyncio.Event()
    guessers = [asyncio.create_task(guess_from(tracker_server, f"127.0.0.{k}", stop, limited)) for k in range(2, 6)]
    try:
        async with asyncio.timeout(30):
            await limited.wait()  # the guessers are at it, and held
        codes = []
        for event in events[:10]:  # every submit on a fresh connection: a reload, a second device, a reconnect
            async with connect(tracker_server.ws_url, local_addr=("127.0.0.6", 0)) as ws:
                await submit(ws, tracker_server.token, event)
                codes.append((await reply_to(ws, event.id, timeout=30)).get("code", "ack"))
        refused_meanwhile = metric(tracker_server, "tracker_token_checks_refused_total")
    finally:
        stop.set()
        sent = sum(await asyncio.gather(*guessers))
    print(f"right-token submits: {codes.count('ack')} acked of {len(codes)}; guessers sent {sent}")
    assert refused_meanwhile > 100, "the guessers were refused meanwhile (the budgets did bite)"
    assert codes == ["ack"] * len(codes), codes


def test_the_global_guess_budget_holds_only_addresses_that_guessed_wrong() -> None:
    from tracker.gateway.auth import TokenGuard, Verdict

    now = [0.0]
    guard = TokenGuard("the-right-token-0123", clock=lambda: now[0])
    for k in range(4):  # four addresses spend the global budget (and their own)
        for _ in range(100):
            guard.check("wrong", f"192.0.2.{k}")
    assert guard.check("wrong", "192.0.2.9") is Verdict.WRONG  # a newcomer is compared once
    assert guard.check("wrong", "192.0.2.9") is Verdict.RATE_LIMITED  # then held by the global budget
    assert all(guard.check("the-right-token-0123", f"198.51.100.{k}") is Verdict.OK for k in range(10))
    now[0] = 30.0
    assert guard.check("the-right-token-0123", "192.0.2.9") is Verdict.OK  # refilled: the right token passes
    compared = guard.metrics.counters["tracker_token_checks_total"]
    assert compared == 300 + 1 + 1 + 10 + 1  # the global burst, the 4th and 5th addresses once each, the right ones


async def flood_boards(
    server: RunningTracker, tid: str, game: tuple[int, int], stop: asyncio.Event, limited: asyncio.Event
) -> int:
    """Send boards of one game on the arbiter token as fast as the replies come, until ``stop``; how many acked.
    ``limited`` is set once a board is refused ``rate-limited``."""
    acked = sent = 0
    async with connect(server.ws_url) as ws:
        while not stop.is_set():
            for _ in range(50):
                board = BoardUpdated(f"flood-{sent}", tid, 1, game[0], game[1], ply=sent % 300)
                await send(ws, {"type": "submit", "token": server.token, "event": json.loads(encode_board(board))})
                sent += 1
            for _ in range(50):
                reply = json.loads(await ws.recv())
                acked += reply["type"] == "ack"
                if reply.get("code") == "rate-limited":
                    limited.set()
    return acked


async def test_a_board_flood_on_the_arbiter_token_refuses_none_of_its_results(tracker_server: RunningTracker) -> None:
    """Reproduction (item 3): a board stream on the arbiter token got 2–6 of 12 of the arbiter's results refused
    ``rate-limited`` (boards spent the results' budget).  Now boards have their own, per token and tournament."""
    tid = "flooded-cup"
    events = round_robin(tid, 14, 91)
    opening, results = events[0], [e for e in events[1:] if isinstance(e, ResultRecorded) and e.round > 1][:12]
    game = next((e.white, e.black) for e in events[1:] if isinstance(e, ResultRecorded) and e.round == 1)
    await fill(tracker_server, [opening])
    stop, limited = asyncio.Event(), asyncio.Event()
    flood = asyncio.create_task(flood_boards(tracker_server, tid, game, stop, limited))
    try:
        async with asyncio.timeout(60):
            await limited.wait()  # the boards have spent their budget
        async with connect(tracker_server.ws_url) as arbiter:
            for event in results:
                await submit(arbiter, tracker_server.token, event)
            codes = [(await reply_to(arbiter, e.id, timeout=30)).get("code", "ack") for e in results]
    finally:
        stop.set()
        boards = await flood
    print(f"results during a board flood: {codes.count('ack')} acked of {len(codes)}; boards acked {boards}")
    assert codes == ["ack"] * 12, codes


INVALID_BOARDS = {
    "html in the fen": {"fen": "<img src=x onerror=alert(1)>"},
    "no kings": {"fen": "8/8/8/8/8/8/8/8 w - - 0 1"},
    "a wdl of 900/900/900": {"evaluation": {"wdl": [900, 900, 900]}},
    "html as the last move": {"last_move": "<b>e4</b>"},
}


async def test_boards_are_read_as_chess_and_refused_with_a_code(tracker_server: RunningTracker) -> None:
    """Reproduction (item 7): a ``fen`` with HTML in it and a ``wdl`` of 900/900/900 were acknowledged, and a
    board sent right after its tournament's opening was acknowledged before the opening was."""
    tid = "checked-boards"
    events = round_robin(tid, 4, 0)
    game = (1, 4)
    async with connect(tracker_server.ws_url) as ws:
        opening = json.loads(encode_event(events[0]))
        first = BoardUpdated("b-first", tid, 1, *game, ply=1, last_move="e4", fen=FIRST_MOVE)
        await send(ws, {"type": "submit", "token": tracker_server.token, "event": opening})
        await send(ws, {"type": "submit", "token": tracker_server.token, "event": json.loads(encode_board(first))})
        replies = [json.loads(await asyncio.wait_for(ws.recv(), 30)) for _ in range(2)]
        assert [(r["type"], r["id"]) for r in replies] == [("ack", events[0].id), ("ack", "b-first")], replies
        codes = {}
        for name, fields in INVALID_BOARDS.items():
            board = {**json.loads(encode_board(BoardUpdated(f"b-{len(codes)}", tid, 1, *game, ply=2))), **fields}
            await send(ws, {"type": "submit", "token": tracker_server.token, "event": board})
            reply = await reply_to(ws, board["id"])
            codes[name] = reply.get("code", "ack")
            assert "<" not in reply.get("reason", ""), reply  # what came in is not sent back
        assert codes == dict.fromkeys(INVALID_BOARDS, "invalid-board"), codes
        before = BoardUpdated("b-early", "not-open-yet", 1, *game, ply=2)
        await send(ws, {"type": "submit", "token": tracker_server.token, "event": json.loads(encode_board(before))})
        assert (await reply_to(ws, "b-early"))["code"] == "unknown-tournament"


FIRST_MOVE = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"


async def test_at_the_global_cap_a_new_address_gets_in(tracker_factory: Callable[..., RunningTracker]) -> None:
    """Reproduction (item 5): at ``--max-connections 300 --max-connections-per-address 100`` three addresses held
    all 300 and a fourth got HTTP 503.  Now the address holding the most gives up its oldest idle connection
    (the same shape at 30 and 10)."""
    server = tracker_factory("--max-connections", "30", "--max-connections-per-address", "10")
    hogs: dict[str, list[ClientConnection]] = {}
    for k in range(2, 5):
        address = f"127.0.0.{k}"
        hogs[address] = [await connect(server.ws_url, local_addr=(address, 0)) for _ in range(10)]
    try:
        for conns in hogs.values():  # all 30 served (a snapshot each answers their subscribe)
            for ws in conns[-1:]:
                await send(ws, {"type": "subscribe", "tournament": "any"})
                await recv_until(ws, lambda m: m["type"] == "snapshot")
        refused = None
        try:
            await connect(server.ws_url, local_addr=("127.0.0.2", 0))  # a hog makes no room for itself
        except InvalidStatus as exc:
            refused = exc.response.status_code
        assert refused == 503
        async with connect(server.ws_url, local_addr=("127.0.0.5", 0)) as newcomer:
            await send(newcomer, {"type": "subscribe", "tournament": "any"})
            message, _ = await recv_until(newcomer, lambda m: m["type"] == "snapshot")
            assert message["seq"] == 0
            # the server closed one hog's connection before it admitted the newcomer; that client learns of it
            # when its close frame is read, which can come after the newcomer's snapshot
            waits = [asyncio.ensure_future(ws.wait_closed()) for conns in hogs.values() for ws in conns]
            await asyncio.wait(waits, timeout=30, return_when=asyncio.FIRST_COMPLETED)
            for wait in waits:
                wait.cancel()
            closed = [ws for conns in hogs.values() for ws in conns if ws.close_code is not None]
            assert len(closed) == 1 and closed[0].close_code == 1008
            assert closed[0].close_reason is not None and "makes room for another address" in closed[0].close_reason
            assert closed[0] not in [conns[-1] for conns in hogs.values()], "an idle one, not one that subscribed"
    finally:
        for conns in hogs.values():
            for ws in conns:
                await ws.close()
