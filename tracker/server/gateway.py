"""The gateway: websocket protocol v1 at ``/ws`` and HTTP GET pages, one port.

The same gateway serves the embedded deployment (backend: the in-process
processor) and the distributed one (backend: Kafka).  A websocket handler
is a short recipe: decode → (authenticate) → subscribe or submit → stream.
HTTP GET requests for any other path are answered by :meth:`process_request`
before the websocket handshake.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import time
from contextlib import suppress
from dataclasses import dataclass, field
from http import HTTPStatus
from importlib import resources
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.typing import Origin

from tracker import __version__
from tracker.config import ServerConfig
from tracker.core.errors import DecodeError, EventRejected
from tracker.protocol import (
    Submit,
    Subscribe,
    ack_message,
    decode_client,
    error_message,
    projection_message,
    rejected_message,
)
from tracker.server.hub import Hub
from tracker.server.metrics import Metrics
from tracker.server.processor import Backend
from tracker.server.projecting import Projector

PAGES = {"": "index.html", "overlay": "overlay.html", "t": "spectator.html", "arbiter": "arbiter.html"}
PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'"
)
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript",
    ".css": "text/css",
    ".png": "image/png",
    ".svg": "image/svg+xml",
    ".ico": "image/x-icon",
}


@dataclass(slots=True)
class _Bucket:
    tokens: float
    stamp: float


@dataclass(slots=True)
class _Client:
    subscriptions: set[str] = field(default_factory=set)
    arbiter_of: set[str] = field(default_factory=set)


class Gateway:
    """Serves one hub and one backend on one port."""

    def __init__(self, config: ServerConfig, hub: Hub, backend: Backend, metrics: Metrics) -> None:
        self.config = config
        self.hub = hub
        self.backend = backend
        self.metrics = metrics
        self.clients: dict[ServerConnection, _Client] = {}
        self._buckets: dict[str, _Bucket] = {}
        self._projecting: dict[str, asyncio.Task[None]] = {}
        self._projector = Projector()
        self.started = time.time()
        metrics.gauges["tracker_connections"] = lambda: len(self.clients)

    # -- websocket ----------------------------------------------------------

    async def handler(self, conn: ServerConnection) -> None:
        client = self.clients[conn] = _Client()
        # a client that submits without reading the replies must not pile up tasks: past the bound the
        # server stops reading this connection, and TCP pushes back on the client alone
        pending = asyncio.Semaphore(self.config.limits.max_pending_submits)
        try:
            async with asyncio.TaskGroup() as tasks:
                async for raw in conn:
                    try:
                        message = decode_client(raw)
                    except DecodeError as exc:
                        self.metrics.inc("tracker_messages_invalid_total")
                        await conn.send(error_message("bad-message", str(exc)).decode())
                        continue
                    if isinstance(message, Subscribe):
                        await self._subscribe(conn, client, message)
                    elif isinstance(message, Submit):
                        # started in arrival order: the backend applies in that order
                        await pending.acquire()
                        task = tasks.create_task(self._submit(conn, message))
                        task.add_done_callback(lambda _: pending.release())
                    else:
                        client.subscriptions.discard(message.tournament)
                        client.arbiter_of.discard(message.tournament)
                        self.hub.unsubscribe(conn, message.tournament)
        except* ConnectionClosed:
            pass  # the client went away (also from inside a submit task): nothing to clean up but below
        finally:
            self.hub.unsubscribe(conn)
            del self.clients[conn]

    async def _subscribe(self, conn: ServerConnection, client: _Client, message: Subscribe) -> None:
        tid = message.tournament
        if tid not in client.subscriptions and len(client.subscriptions) >= self.config.limits.max_subscriptions:
            await conn.send(
                error_message(
                    "too-many-subscriptions", f"at most {self.config.limits.max_subscriptions} per connection"
                ).decode()
            )
            return
        if message.token is not None:
            if not self.authorized(message.token):
                await conn.send(error_message("unauthorized", "wrong arbiter token").decode())
                return
            client.arbiter_of.add(tid)
        first = self.hub.subscribe(conn, tid, message.since)
        client.subscriptions.add(tid)
        for data in first:
            await conn.send(data.decode())
        if tid in client.arbiter_of:
            self._schedule_projection(tid, delay=0.0)

    async def _submit(self, conn: ServerConnection, message: Submit) -> None:
        started = time.perf_counter()
        event = message.event
        if not self.authorized(message.token):
            self.metrics.inc("tracker_events_rejected_total")
            await self._reply(
                conn, rejected_message(event.id, "unauthorized", "a valid arbiter token is required", message.ref)
            )
            return
        if not self._allow(message.token):
            self.metrics.inc("tracker_events_rejected_total")
            await self._reply(
                conn, rejected_message(event.id, "rate-limited", "too many submits per second", message.ref)
            )
            return
        try:
            seq = await self.backend.submit(event)
        except EventRejected as exc:
            self.metrics.inc("tracker_events_rejected_total")
            await self._reply(conn, rejected_message(event.id, exc.code, exc.reason, message.ref))
            return
        self.metrics.inc("tracker_events_accepted_total")
        await self._reply(conn, ack_message(event.id, event.tournament, seq, message.ref))
        self.metrics.ack_latency.observe(time.perf_counter() - started)

    @staticmethod
    async def _reply(conn: ServerConnection, data: bytes) -> None:
        with suppress(ConnectionClosed):  # the event's fate does not depend on the client still listening
            await conn.send(data.decode())

    def authorized(self, token: str) -> bool:
        """Constant-time comparison with the arbiter token."""
        expected = self.config.token
        return bool(expected) and hmac.compare_digest(token.encode(), expected.encode())

    def _allow(self, token: str) -> bool:
        limits = self.config.limits
        now = time.monotonic()
        bucket = self._buckets.setdefault(token, _Bucket(float(limits.submit_burst), now))
        bucket.tokens = min(
            float(limits.submit_burst), bucket.tokens + (now - bucket.stamp) * limits.submits_per_second
        )
        bucket.stamp = now
        if bucket.tokens < 1:
            return False
        bucket.tokens -= 1
        return True

    # -- arbiter projections (debounced, off the hot path) ------------------------

    def updated(self, tournament: str) -> None:
        """Called after each published update; schedules a projection for arbiters."""
        if any(tournament in c.arbiter_of for c in self.clients.values()):
            self._schedule_projection(tournament, delay=self.config.projection_delay)

    def _schedule_projection(self, tournament: str, delay: float) -> None:
        if tournament in self._projecting:
            return
        task = asyncio.create_task(self._project(tournament, delay), name=f"project-{tournament}")
        self._projecting[tournament] = task
        task.add_done_callback(lambda _: self._projecting.pop(tournament, None))

    async def _project(self, tournament: str, delay: float) -> None:
        await asyncio.sleep(delay)
        state = self.backend.state(tournament)
        if state is None:
            return
        result = await self._projector.project(state)  # pickled before the first await: a consistent copy
        if result is None:
            return
        data = projection_message(result)
        for conn, client in list(self.clients.items()):
            if tournament in client.arbiter_of:
                await self._reply(conn, data)

    async def aclose(self) -> None:
        for task in list(self._projecting.values()):
            task.cancel()
        await asyncio.gather(*self._projecting.values(), return_exceptions=True)
        self._projector.close()
        await self.hub.aclose()

    # -- HTTP -------------------------------------------------------------------

    def process_request(self, conn: ServerConnection, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == "/ws":
            if len(self.clients) >= self.config.limits.max_connections:
                return _text(HTTPStatus.SERVICE_UNAVAILABLE, "too many connections\n")
            return None
        parts = [p for p in path.split("/") if p]
        if parts[:1] == ["api"]:
            return self._api(parts[1:])
        if path == "/healthz":
            return _json({"status": "ok", "version": __version__, "tournaments": len(self.hub.open_channels())})
        if path == "/metrics":
            return _text(HTTPStatus.OK, self.metrics.render(), "text/plain; version=0.0.4")
        if parts[:1] == ["static"] and len(parts) == 2:
            return _static(parts[1])
        page = PAGES.get(parts[0] if parts else "")
        if page is not None and len(parts) <= 2:
            return _static(page)
        return _text(HTTPStatus.NOT_FOUND, "not found\n")

    def _api(self, parts: list[str]) -> Response:
        if parts == ["tournaments"]:
            rows = [
                {
                    "id": tid,
                    "name": payload["name"],
                    "rounds": payload["rounds"],
                    "games_played": payload["games_played"],
                    "seq": payload["seq"],
                }
                for tid, payload in sorted(self.hub.open_channels().items())
            ]
            return _json({"tournaments": rows})
        if len(parts) == 3 and parts[0] == "tournaments":
            tid, what = parts[1], parts[2]
            payload = self.hub.open_channels().get(tid)
            if payload is None:
                return _json({"error": f"no tournament {tid!r}"}, HTTPStatus.NOT_FOUND)
            if what == "standings":
                return _json(payload)
            if what == "trf":
                try:
                    trf = self.backend.trf(tid)
                except ValueError as exc:  # TRF's fixed columns cannot hold every live score
                    return _json({"error": f"no TRF export: {exc}"}, HTTPStatus.CONFLICT)
                if trf is not None:
                    return _text(HTTPStatus.OK, trf, "text/plain; charset=utf-8")
        return _json({"error": "not found"}, HTTPStatus.NOT_FOUND)

    # -- lifecycle ----------------------------------------------------------------

    def server(self) -> Any:
        """The websockets ``serve`` context manager for this gateway."""
        limits = self.config.limits
        return serve(
            self.handler,
            self.config.host,
            self.config.port,
            process_request=self.process_request,
            max_size=limits.max_frame,
            # browsers always send Origin; scripts and `tracker replay` send none and are let through
            origins=[*(Origin(o) for o in self.config.allowed_origins), None] if self.config.allowed_origins else None,
            ping_interval=20,
            ping_timeout=20,
            close_timeout=5,
            server_header=f"tracker/{__version__}",
        )


def bound_port(server: Server) -> int:
    """The TCP port a server listens on (useful with port 0)."""
    for sock in server.sockets:
        return int(sock.getsockname()[1])
    raise RuntimeError("server has no socket")


def _response(status: HTTPStatus, body: bytes, content_type: str) -> Response:
    headers = Headers(
        [
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            ("Cache-Control", "no-store"),
            ("X-Content-Type-Options", "nosniff"),
            ("Connection", "close"),
        ]
    )
    return Response(status.value, status.phrase, headers, body)


def _json(obj: object, status: HTTPStatus = HTTPStatus.OK) -> Response:
    return _response(status, json.dumps(obj).encode(), "application/json")


def _text(status: HTTPStatus, text: str, content_type: str = "text/plain; charset=utf-8") -> Response:
    return _response(status, text.encode(), content_type)


def _static(name: str) -> Response:
    suffix = name[name.rfind(".") :] if "." in name else ""
    if "/" in name or name.startswith(".") or suffix not in CONTENT_TYPES:
        return _text(HTTPStatus.NOT_FOUND, "not found\n")
    try:
        data = resources.files("tracker.web").joinpath(name).read_bytes()
    except (FileNotFoundError, ModuleNotFoundError, IsADirectoryError):
        return _text(HTTPStatus.NOT_FOUND, "not found\n")
    response = _response(HTTPStatus.OK, data, CONTENT_TYPES[suffix])
    if suffix == ".html":
        # the pages' own policy again as headers; no frame restriction: OBS shows the overlay in a frame
        response.headers["Content-Security-Policy"] = PAGE_POLICY
        response.headers["Referrer-Policy"] = "no-referrer"
    return response
