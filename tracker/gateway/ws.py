"""Websocket protocol v1 at ``/ws``: a short recipe per message.

decode → (authenticate) → subscribe or submit → stream.  Subscribing hands
the connection to the hub (snapshot or missed updates first, then every
update); submitting hands the event to the backend and answers ``ack`` once
it is durable, or ``rejected`` with the reason.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import suppress
from dataclasses import dataclass, field
from functools import partial
from typing import Final

from websockets.asyncio.server import ServerConnection, broadcast
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode
from websockets.typing import Data

from tracker.config import ServerConfig
from tracker.core.checks import check_board_values
from tracker.core.errors import DecodeError, EventRejected
from tracker.core.events import BoardUpdated, Event, Teams
from tracker.core.phrases import Said, phrase, render
from tracker.formats.fen import fen_problem
from tracker.gateway.auth import Bucket, TokenGuard, Verdict, address_of
from tracker.gateway.backend import Backend
from tracker.gateway.desk import Desk
from tracker.gateway.hub import Hub
from tracker.gateway.metrics import Metrics
from tracker.protocol import (
    ClientMessage,
    Submit,
    Subscribe,
    Unsubscribe,
    ack_message,
    decode_client,
    error_message,
    notices_message,
    rejected_message,
    schedule_message,
)

POLICY_VIOLATION = CloseCode.POLICY_VIOLATION  # 1008
TOO_MANY_SUBMITS = phrase("rejected.too_many_submits", "too many submits per second")


ARBITER: Final = 1  # subscribed with the arbiter token
STAKES: Final = 2  # subscribed with "stakes": true
BOARDS: Final = 4  # subscribed with "boards": true
KINDS: Final = (ARBITER, STAKES, BOARDS)


@dataclass(slots=True)
class Client:
    """What one connection has subscribed to, and where it proved to be an arbiter.

    ``subscriptions``: each tournament subscribed to, with what was asked for it (:data:`ARBITER`,
    :data:`STAKES`, :data:`BOARDS`, or none of them): one small dict, not a set per kind, for the tens of
    thousands of connections a gateway holds.
    """

    subscriptions: dict[str, int] = field(default_factory=dict)
    subscribes: Bucket | None = None
    said: bool = False  # subscribed with "updates": "delta" once (v1.1): its rejections carry reason_said
    proven: bool = False  # showed the right token once: exempt from the guessing throttle (auth.py)
    events_in_flight: dict[str, set[asyncio.Task[None]]] = field(default_factory=dict)  # submits not answered

    def of(self, tournament: str, kind: int) -> bool:
        """Whether ``tournament`` is subscribed to with ``kind`` (:data:`ARBITER`, :data:`STAKES`, :data:`BOARDS`)."""
        return bool(self.subscriptions.get(tournament, 0) & kind)


class Websockets:
    """Serves the websocket protocol for one hub and one backend."""

    def __init__(
        self,
        config: ServerConfig,
        hub: Hub,
        backend: Backend,
        metrics: Metrics,
        *,
        arbiter_joined: Callable[[ServerConnection, str], None] = lambda conn, tournament: None,
        stakes_joined: Callable[[ServerConnection, str], None] = lambda conn, tournament: None,
        boards_joined: Callable[[ServerConnection, str], None] = lambda conn, tournament: None,
    ) -> None:
        self.config = config
        self.hub = hub
        self.backend = backend
        self.metrics = metrics
        self.arbiter_joined = arbiter_joined
        self.stakes_joined = stakes_joined
        self.boards_joined = boards_joined
        self.clients: dict[ServerConnection, Client] = {}
        self._buckets: dict[str, Bucket] = {}  # results' submits per token
        self._board_buckets: dict[tuple[str, str], Bucket] = {}  # boards per token and per tournament
        self._per_address: Counter[str] = Counter()  # open connections per client address
        self._by_address: dict[str, dict[ServerConnection, None]] = {}  # each address's connections, oldest first
        self.leaving: set[ServerConnection] = set()  # closed to make room for another address, not gone yet
        self._closing: set[asyncio.Task[None]] = set()
        self._joins: dict[str, Bucket] = {}  # stakes and boards joins per client address
        # per (tournament, kind): the connections subscribed with it, in the order they asked. The derived feeds
        # ask at every update (arbiters(), stakes_subscribers(), boards_subscribers()); a walk over every client
        # there cost about a microsecond per subscriber per update, most of them asking for none of these
        self._kinds: dict[tuple[str, int], dict[ServerConnection, None]] = {}
        self.guard = TokenGuard.of_limits(config.token, config.limits, metrics=metrics)
        self.desk = Desk()
        metrics.gauges["tracker_connections"] = lambda: len(self.clients)

    def arbiters(self, tournament: str) -> list[ServerConnection]:
        """The connections subscribed to ``tournament`` with the arbiter token."""
        return list(self._kinds.get((tournament, ARBITER), ()))

    def stakes_subscribers(self, tournament: str) -> list[ServerConnection]:
        """The connections subscribed to ``tournament`` with ``"stakes": true``."""
        return list(self._kinds.get((tournament, STAKES), ()))

    def boards_subscribers(self, tournament: str) -> list[ServerConnection]:
        """The connections subscribed to ``tournament`` with ``"boards": true``."""
        return list(self._kinds.get((tournament, BOARDS), ()))

    def _mark(self, conn: ServerConnection, client: Client, tournament: str, kinds: int | None) -> None:
        """Record what ``conn`` asked of ``tournament`` (:data:`KINDS` or'ed; ``None``: not subscribed to it any
        more) in its client and in the index per kind that :meth:`arbiters` and the others read."""
        before = client.subscriptions.get(tournament, 0)
        if kinds is None:
            client.subscriptions.pop(tournament, None)
            kinds = 0
        else:
            client.subscriptions[tournament] = kinds
        for kind in KINDS:
            if kinds & kind and not before & kind:
                self._kinds.setdefault((tournament, kind), {})[conn] = None
            elif before & kind and not kinds & kind:
                members = self._kinds[(tournament, kind)]
                del members[conn]
                if not members:
                    del self._kinds[(tournament, kind)]

    async def handler(self, conn: ServerConnection) -> None:
        address = address_of(conn.remote_address)
        cap = self.config.limits.max_connections_per_address
        if self._per_address[address] >= cap:
            self.metrics.inc("tracker_connections_refused_total")
            await conn.close(POLICY_VIOLATION, f"too many connections from this address (at most {cap})")
            return
        self._per_address[address] += 1
        self._by_address.setdefault(address, {})[conn] = None
        try:
            await self._serve(conn)
        finally:
            self.leaving.discard(conn)
            self._per_address[address] -= 1
            del self._by_address[address][conn]
            if not self._per_address[address]:
                del self._per_address[address]
                del self._by_address[address]

    def open_connections(self) -> int:
        """The connections open and staying (those closed to make room are on their way out)."""
        return len(self.clients) - len(self.leaving & self.clients.keys())

    def make_room(self, address: str) -> bool:
        """At the global cap, let ``address`` in: the address holding the most connections gives up its oldest
        idle one (no subscription; else its oldest), closed 1008 with the reason.  Only when that address holds
        at least two more than ``address`` does, so the set converges to a fair share and a hog never makes
        room for itself.  Returns whether one was closed."""
        if not self._per_address:
            return False
        top, held = max(self._per_address.items(), key=lambda item: item[1])
        if held - self._per_address.get(address, 0) < 2:
            return False
        conns = [c for c in self._by_address[top] if c not in self.leaving]
        if not conns:
            return False
        idle = [c for c in conns if (client := self.clients.get(c)) is not None and not client.subscriptions]
        victim = (idle or conns)[0]
        self.leaving.add(victim)
        task = asyncio.create_task(
            victim.close(
                POLICY_VIOLATION,
                f"server full: the oldest idle connection of {top}, the address holding "
                "the most, makes room for another address",
            ),
            name="make-room",
        )
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)
        return True

    async def _serve(self, conn: ServerConnection) -> None:
        client = self.clients[conn] = Client()
        messages = aiter(conn)
        try:
            async for raw in messages:
                message = await self._decoded(conn, raw)
                if isinstance(message, Submit):
                    await self._serve_submits(conn, client, message, messages)
                    break
                if message is not None:
                    await self._follow(conn, client, message)
        except* ConnectionClosed:
            pass  # the client went away (also from inside a submit task): nothing to clean up but below
        finally:
            self.hub.unsubscribe(conn)
            for tid in list(client.subscriptions):
                self._mark(conn, client, tid, None)
            del self.clients[conn]

    async def _serve_submits(
        self, conn: ServerConnection, client: Client, first: Submit, messages: AsyncIterator[Data]
    ) -> None:
        """Serve ``first`` and the connection's messages after it, each submit in a task of the connection's own.

        Made at a connection's first submit, not when it opens: most connections never submit (a task
        group and a semaphore are half a KiB for each of tens of thousands of subscribers).
        """
        # a client that submits without reading the replies must not pile up tasks: past the bound the
        # server stops reading this connection, and TCP pushes back on the client alone
        pending = asyncio.Semaphore(self.config.limits.max_pending_submits)
        message: ClientMessage | None = first
        async with asyncio.TaskGroup() as tasks:
            while True:
                if isinstance(message, Submit):
                    # started in arrival order: the backend applies in that order
                    await pending.acquire()
                    tid = message.event.tournament
                    events = client.events_in_flight.setdefault(tid, set())
                    if isinstance(message.event, BoardUpdated):  # after the events sent before it are decided
                        task = tasks.create_task(self._submit(conn, message, after=list(events)))
                    else:
                        task = tasks.create_task(self._submit(conn, message))
                        events.add(task)
                    task.add_done_callback(partial(self._settled, client, tid, pending))
                elif message is not None:
                    await self._follow(conn, client, message)
                try:
                    raw = await anext(messages)
                except StopAsyncIteration:
                    return
                message = await self._decoded(conn, raw)

    async def _decoded(self, conn: ServerConnection, raw: Data) -> ClientMessage | None:
        """The message ``raw`` holds, or ``None`` when it holds none (the client is told: ``bad-message``)."""
        try:
            return decode_client(raw)
        except DecodeError as exc:
            self.metrics.inc("tracker_messages_invalid_total")
            await conn.send(error_message("bad-message", str(exc)).decode())
            return None

    async def _follow(self, conn: ServerConnection, client: Client, message: Subscribe | Unsubscribe) -> None:
        """A subscribe or an unsubscribe."""
        if isinstance(message, Subscribe):
            await self._subscribe(conn, client, message)
        else:
            self._mark(conn, client, message.tournament, None)
            self.hub.unsubscribe(conn, message.tournament)

    async def _subscribe(self, conn: ServerConnection, client: Client, message: Subscribe) -> None:
        tid = message.tournament
        limits = self.config.limits
        if client.subscribes is None:
            client.subscribes = Bucket(float(limits.subscribe_burst), time.monotonic())
        if not client.subscribes.take(limits.subscribes_per_second, limits.subscribe_burst):
            self.metrics.inc("tracker_subscribes_throttled_total")
            await conn.send(
                error_message(
                    "rate-limited", f"at most {limits.subscribes_per_second:g} subscribes per second per connection"
                ).decode()
            )
            return
        if tid not in client.subscriptions and len(client.subscriptions) >= self.config.limits.max_subscriptions:
            await conn.send(
                error_message(
                    "too-many-subscriptions", f"at most {self.config.limits.max_subscriptions} per connection"
                ).decode()
            )
            return
        if message.token is not None:
            if (verdict := self.check(conn, message.token)) is not Verdict.OK:
                await conn.send(error_message(verdict.value, verdict.reason).decode())
                return
            self._mark(conn, client, tid, client.subscriptions.get(tid, 0) | ARBITER)
        self._mark(conn, client, tid, client.subscriptions.get(tid, 0) & ARBITER)  # stakes and boards as asked below
        if message.updates == "delta":
            client.said = True
        await self.hub.subscribe(conn, tid, message.since, message.delay, delta=message.updates == "delta")
        if client.of(tid, ARBITER):
            state = self.backend.state(tid)
            schedule = state.opened.schedule if state is not None else None
            rounds = [[(w, b) for w, b in pairs] for pairs in schedule or ()]
            gone = (
                []
                if state is None
                else [(state.start_nos[i], state.withdrawn_from[i]) for i in range(state.n) if state.withdrawn[i]]
            )
            teams = state.opened.teams if state is not None else None
            setup = teams if isinstance(teams, Teams) else None  # a team event: the arbiter page's match entry
            await conn.send(schedule_message(tid, rounds, gone, setup).decode())
            await conn.send(notices_message(tid, self.desk.notices(tid)).decode())
            self.arbiter_joined(conn, tid)
        if (message.stakes or message.boards) and not self._may_join(conn):
            self.metrics.inc("tracker_stakes_joins_throttled_total")
            await conn.send(
                error_message(
                    "rate-limited",
                    f"at most {limits.stakes_joins_per_second:g} subscribes with stakes or boards per second from "
                    "one address: subscribed to the updates only, ask again in a second",
                ).decode()
            )
            return
        if message.stakes:
            self._mark(conn, client, tid, client.subscriptions.get(tid, 0) | STAKES)
            self.stakes_joined(conn, tid)
        if message.boards:
            self._mark(conn, client, tid, client.subscriptions.get(tid, 0) | BOARDS)
            self.boards_joined(conn, tid)

    @staticmethod
    def _settled(client: Client, tid: str, pending: asyncio.Semaphore, task: asyncio.Task[None]) -> None:
        pending.release()
        events = client.events_in_flight.get(tid)
        if events is not None:
            events.discard(task)
            if not events:
                del client.events_in_flight[tid]

    async def _submit(
        self, conn: ServerConnection, message: Submit, after: list[asyncio.Task[None]] | None = None
    ) -> None:
        started = time.perf_counter()
        event = message.event
        if after:  # a board waits for this connection's earlier events of its tournament (its opening, say)
            await asyncio.wait(after)
        if (verdict := self.check(conn, message.token)) is not Verdict.OK:
            self.metrics.inc("tracker_events_rejected_total", code=verdict.value)
            await reply(conn, self._rejected(conn, event.id, verdict.value, verdict.reason, message.ref, verdict.said))
            return
        if not (
            self._allow_board(message.token, event.tournament)
            if isinstance(event, BoardUpdated)
            else self._allow(message.token)
        ):
            self.metrics.inc("tracker_events_rejected_total", code="rate-limited")
            said = TOO_MANY_SUBMITS()
            await reply(conn, self._rejected(conn, event.id, "rate-limited", render(said, str), message.ref, said))
            return
        if message.propose is not None and not isinstance(event, BoardUpdated):
            # a proposal (a void a followed source made): the desk's, not the standings'
            proposed = EventRejected(message.propose, code="proposed")
            await reply(conn, self._rejected(conn, event.id, "proposed", proposed.reason, message.ref, None))
            self._noted(event, proposed)
            return
        try:
            if isinstance(event, BoardUpdated):
                check_board_values(event, fen_problem(event.fen))  # read as chess, as a result is
                seq = await self.backend.board(event)  # kept apart from the results: never journalled
            else:
                seq = await self.backend.submit(event)
        except EventRejected as exc:
            self.metrics.inc("tracker_events_rejected_total", code=exc.code)
            await reply(conn, self._rejected(conn, event.id, exc.code, exc.reason, message.ref, exc.said))
            if not isinstance(event, BoardUpdated):  # a feed's board refused is no arbiter's business
                self._noted(event, exc)
            return
        self.metrics.inc("tracker_events_accepted_total")
        await reply(conn, ack_message(event.id, event.tournament, seq, message.ref))
        self.metrics.ack_latency.observe(time.perf_counter() - started)

    def _rejected(
        self, conn: ServerConnection, event_id: str, code: str, reason: str, ref: str | None, said: Said | None
    ) -> bytes:
        """The ``rejected`` reply: with the reason as a phrase for a v1.1 connection, v1's bytes for another."""
        client = self.clients.get(conn)
        return rejected_message(event_id, code, reason, ref, said if client is not None and client.said else None)

    def _noted(self, event: Event, exc: EventRejected) -> None:
        """Keep the rejection on the desk and send the new notice to each of the tournament's arbiters."""
        notice = self.desk.note(event, exc.code, exc.reason, exc.said)
        data = notices_message(event.tournament, [notice], added=True).decode()
        broadcast(self.arbiters(event.tournament), data)  # never waits; a closed connection is skipped

    def check(self, conn: ServerConnection, token: str) -> Verdict:
        """The arbiter token check for ``conn``'s address (constant time, throttled: tracker/gateway/auth.py)."""
        client = self.clients.get(conn)
        verdict = self.guard.check(token, address_of(conn.remote_address), proven=client is not None and client.proven)
        if client is not None and verdict is Verdict.OK:
            client.proven = True
        return verdict

    def _may_join(self, conn: ServerConnection) -> bool:
        """Whether ``conn``'s address may ask for stakes or boards now (derived work costs a worker's time)."""
        limits = self.config.limits
        address = address_of(conn.remote_address)
        bucket = self._joins.get(address)
        if bucket is None:
            if len(self._joins) > 10_000:  # bounded: the addresses not seen for a while start afresh
                self._joins.clear()
            bucket = self._joins[address] = Bucket(float(limits.stakes_join_burst), time.monotonic())
        return bucket.take(limits.stakes_joins_per_second, limits.stakes_join_burst)

    def _allow(self, token: str) -> bool:
        limits = self.config.limits
        bucket = self._buckets.setdefault(token, Bucket(float(limits.submit_burst), time.monotonic()))
        return bucket.take(limits.submits_per_second, limits.submit_burst)

    def _allow_board(self, token: str, tournament: str) -> bool:
        """Whether a board may be submitted now: boards have budgets of their own, per token and per tournament
        (each the rate and burst of submits), so a board storm slows boards, never a result, nor another
        tournament's boards."""
        limits = self.config.limits
        now = time.monotonic()
        if len(self._board_buckets) > 10_000:  # bounded: tournaments and tokens not seen for a while start afresh
            self._board_buckets.clear()
        buckets = [
            self._board_buckets.setdefault(key, Bucket(float(limits.submit_burst), now))
            for key in (("token", token), ("tournament", tournament))
        ]
        for bucket in buckets:
            bucket.refill(now, limits.submits_per_second, limits.submit_burst)
        if any(bucket.tokens < 1 for bucket in buckets):
            return False
        for bucket in buckets:
            bucket.tokens -= 1
        return True


async def reply(conn: ServerConnection, data: bytes) -> None:
    """Send ``data`` to one client; a client that went away changes nothing (the event's fate is decided)."""
    with suppress(ConnectionClosed):
        await conn.send(data.decode())
