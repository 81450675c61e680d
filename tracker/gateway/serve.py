"""One gateway, one lifecycle, for both deployments.

:class:`Gateway` puts the pieces together on one port: the hub (fan-out),
the websocket protocol, HTTP, and arbiters' projections; it is the
:class:`~tracker.gateway.backend.Sink` its backend publishes into.

:func:`serve` is the whole life of a server: attach the backend (which
installs the standings it already holds), listen, run the deployment's
start-up work if it has any (Kafka: wait for the topics, read the
snapshots) while ``/healthz`` already answers and ``/readyz``, ``/ws`` and
the API say 503 with the reason, then its background work (the Kafka feed,
the demo), and on SIGTERM or SIGINT stop accepting, stop the background
work, close clients with 1001 (going away), stop the projections and wait
for slow clients being dropped.  The
deployment's own resources (journal, Kafka clients) are opened and closed by
its caller around :func:`serve`.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Coroutine
from contextlib import suppress
from typing import Any, Final

from websockets.asyncio.server import Server, ServerConnection
from websockets.asyncio.server import serve as websockets_serve
from websockets.extensions.permessage_deflate import ServerPerMessageDeflateFactory
from websockets.http11 import Request, Response

from tracker import __version__
from tracker.config import ServerConfig
from tracker.core.boards import Change
from tracker.derived.arbiters import ArbiterProjections
from tracker.derived.boards import LiveBoards
from tracker.derived.pool import Pool
from tracker.derived.search import Memories
from tracker.derived.stakes import StakesFeed
from tracker.gateway.auth import address_of
from tracker.gateway.backend import Backend
from tracker.gateway.connection import bounded_connection
from tracker.gateway.frames import SharedDeflateFactory
from tracker.gateway.http import Http
from tracker.gateway.hub import Hub
from tracker.gateway.metrics import Metrics
from tracker.gateway.ws import Websockets, reply
from tracker.protocol import StandingsPayload

#: Connections the kernel may hold established but not yet accepted (capped by ``net.core.somaxconn``).  asyncio's
#: default, 100, overflows in a storm of arrivals while the loop is busy with handshakes: the kernel then drops
#: the SYNs beyond it, and their clients retry after 1, 3, 7 s, past their handshake timeouts.
BACKLOG: Final = 4096


class Gateway:
    """Serves one hub and one backend on one port; the backend's sink."""

    def __init__(self, config: ServerConfig, backend: Backend, metrics: Metrics | None = None) -> None:
        self.config = config
        self.backend = backend
        self.metrics = metrics = metrics if metrics is not None else Metrics()
        limits = config.limits
        self.hub = Hub(
            metrics,
            history=limits.history,
            history_bytes=limits.history_bytes,
            max_buffer=limits.max_buffer,
            max_resume=limits.max_resume,
        )
        self.ws = Websockets(
            config,
            self.hub,
            backend,
            metrics,
            arbiter_joined=self._arbiter_joined,
            stakes_joined=self._stakes_joined,
            boards_joined=self._boards_joined,
        )
        self.http = Http(config, self.hub, backend, metrics, connections=lambda: self.ws.open_connections())
        # one pool of worker processes for all derived work: projections, stakes, live chances
        self.pool = Pool(config.limits)
        # one search per seq for arbiters and spectators, from the last seq's (tracker.derived.search)
        memories = Memories()
        self.projections = ArbiterProjections(
            backend.state,
            self.ws.arbiters,
            reply,
            delay=config.projection_delay,
            pool=self.pool,
            memories=memories,
            spectators=lambda tournament: self.stakes.wanted(tournament),
            stakes_found=lambda tournament, seq, found: self.stakes.found(tournament, seq, found),
        )
        self.live = LiveBoards(
            self.pool,
            backend.state,
            backend.boards,
            lambda tournament: self.stakes.latest(tournament),
            self.ws.boards_subscribers,
            self.hub.deliver,
            interval=config.live_interval,
            stale_after=config.stale_after,
        )
        self.stakes = StakesFeed(
            self.pool,
            backend.state,
            self.ws.stakes_subscribers,
            self.hub.deliver,
            delay=config.projection_delay,
            wanted=self.live.wanted,
            computed=self.live.stakes_computed,
            memories=memories,
            after=self.projections.runner,
        )

    # -- the sink -------------------------------------------------------------------

    def publish(self, payload: StandingsPayload, message: bytes) -> bool:
        if not self.hub.publish(payload, message):
            return False
        self.projections.updated(payload["tournament"])
        self.stakes.updated(payload["tournament"])
        self.live.updated(payload["tournament"])
        return True

    def install(self, payload: StandingsPayload) -> None:
        if payload["seq"] > self.hub.seq(payload["tournament"]):
            self.hub.install(payload)

    def seq(self, tournament: str) -> int:
        return self.hub.seq(tournament)

    def boards_changed(self, tournament: str, change: Change) -> None:
        self.live.changed(tournament, change)

    def _arbiter_joined(self, conn: ServerConnection, tournament: str) -> None:
        self.projections.joined(conn, tournament)

    def _stakes_joined(self, conn: ServerConnection, tournament: str) -> None:
        self.stakes.joined(conn, tournament)

    def _boards_joined(self, conn: ServerConnection, tournament: str) -> None:
        self.live.joined(conn, tournament)
        self.stakes.runner.join(tournament)  # the boards' sentences say what their games decide

    # -- serving ----------------------------------------------------------------------

    def process_request(self, conn: ServerConnection, request: Request) -> Response | None:
        if (
            request.path.split("?", 1)[0] == "/ws"
            and self.ws.open_connections() >= self.config.limits.max_connections
            and self.http.started
        ):
            self.ws.make_room(address_of(conn.remote_address))  # a new address gets in: see Websockets.make_room
        return self.http.respond(request)

    def server(self, *, reuse_port: bool = False) -> Any:
        """The websockets ``serve`` context manager for this gateway (``reuse_port``: ``SO_REUSEPORT``, for
        :mod:`tracker.gateway.processes`)."""
        limits = self.config.limits
        return websockets_serve(
            self.ws.handler,
            self.config.host,
            self.config.port,
            process_request=self.process_request,
            max_size=limits.max_frame,
            # Origin is checked by Http.respond (same origin or --allow-origin; none for scripts): see auth.py
            ping_interval=20,
            ping_timeout=20,
            close_timeout=5,
            server_header=f"tracker/{__version__}",
            create_connection=bounded_connection(limits.max_buffer),
            extensions=[deflate()],
            reuse_port=reuse_port,
            backlog=BACKLOG,
        )

    async def aclose(self) -> None:
        self.live.close()
        await self.projections.aclose()
        await self.pool.aclose()
        await self.hub.aclose()


async def serve(
    config: ServerConfig,
    backend: Backend,
    *,
    name: str,
    say: Callable[[str], None] = print,
    metrics: Metrics | None = None,
    background: Callable[[int], Coroutine[Any, Any, object]] | None = None,
    starting: Callable[[int], Coroutine[Any, Any, object]] | None = None,
    readiness: Callable[[], str | None] | None = None,
    reuse_port: bool = False,
) -> None:
    """Serve ``backend`` until SIGTERM/SIGINT (see the module docstring).

    ``reuse_port``: listen with ``SO_REUSEPORT``, beside the other processes of a gateway
    (:mod:`tracker.gateway.processes`).

    ``starting``, when given, runs with the bound port once it is bound and before the
    server serves (``listening on`` is printed after it); if it fails, the
    server shuts down and its exception is raised.  ``readiness`` says why
    the server is not ready (``None``: ready) for ``/readyz``, once started.
    ``background``, when given, is started with the bound port once the
    server serves and cancelled on shutdown, before clients are closed; if
    it fails, the server shuts down and its exception is raised.
    """
    gateway = Gateway(config, backend, metrics)
    if readiness is not None:
        gateway.http.readiness = readiness
    backend.attach(gateway)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        async with gateway.server(reuse_port=reuse_port) as server:
            port = bound_port(server)
            if starting is not None:
                try:
                    serving = await _started(gateway, starting(port), stop)
                except BaseException:
                    await _shut(server, gateway)
                    raise
                if not serving:  # SIGTERM while starting
                    await _shut(server, gateway)
                    return
            say(f"{name}: listening on http://{config.host}:{port}/ (websocket ws://{config.host}:{port}/ws)")
            task = asyncio.create_task(background(port), name=f"{name}-background") if background else None
            if task is not None:  # background work that fails stops the server, and its error is raised
                task.add_done_callback(lambda t: None if t.cancelled() or t.exception() is None else stop.set())
            await stop.wait()
            say(f"{name}: shutting down (closing clients)")
            if task is not None:
                task.cancel()
                with suppress(asyncio.CancelledError):
                    await task
            await _shut(server, gateway)
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)


async def _shut(server: Server, gateway: Gateway) -> None:
    server.close(close_connections=True)
    await server.wait_closed()
    await gateway.aclose()


async def _started(gateway: Gateway, starting: Coroutine[Any, Any, object], stop: asyncio.Event) -> bool:
    """Run ``starting`` while the HTTP side says the gateway is starting; ``False`` when stopped meanwhile.

    Raises what ``starting`` raised.
    """
    gateway.http.started = False
    task = asyncio.create_task(starting, name="gateway-starting")
    stopped = asyncio.create_task(stop.wait(), name="gateway-stop")
    try:
        await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
    if not task.done():
        task.cancel()
        with suppress(asyncio.CancelledError):
            await task
        return False
    task.result()  # raises what starting raised
    gateway.http.started = True
    return True


def deflate() -> ServerPerMessageDeflateFactory:
    """permessage-deflate as websockets negotiates it by default; each connection gets a ``SharedDeflate``.

    websockets' defaults (4 KiB windows both ways, zlib memory level 5, the
    server's context takeover allowed unless the client asks otherwise):
    the hub compresses a feed's updates once, on the feed's own stream with
    context takeover, for all the subscribers that share these settings
    (:mod:`tracker.gateway.frames`); whatever a connection is sent of its
    own is compressed alone (or, when small, not at all), so no connection
    keeps a compressor between messages.
    """
    return SharedDeflateFactory(
        server_max_window_bits=12,
        client_max_window_bits=12,
        compress_settings={"memLevel": 5},
    )


def bound_port(server: Server) -> int:
    """The TCP port a server listens on (useful with port 0)."""
    for sock in server.sockets:
        return int(sock.getsockname()[1])
    raise RuntimeError("server has no socket")
