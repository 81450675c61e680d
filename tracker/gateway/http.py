"""HTTP GET on the gateway's port: the JSON API, health, metrics and the pages.

websockets answers a request for any path but ``/ws`` with the
:class:`~websockets.http11.Response` that :meth:`Http.respond` returns,
before any websocket handshake.  Everything here is read-only: the
tournaments' standings as the hub has them, and the TRF of the backend's
live state.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from http import HTTPStatus
from importlib import resources

from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from tracker import __version__
from tracker.config import ServerConfig
from tracker.gateway.auth import handshake_origin_allowed
from tracker.gateway.backend import Backend
from tracker.gateway.hub import Hub
from tracker.gateway.metrics import CONTENT_TYPE, Metrics

RECENT = 30  # updates in /api/tournaments/{id}/recent
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


class Http:
    """Answers the gateway's HTTP requests from its hub, backend and metrics."""

    def __init__(
        self, config: ServerConfig, hub: Hub, backend: Backend, metrics: Metrics, connections: Callable[[], int]
    ) -> None:
        self.config = config
        self.hub = hub
        self.backend = backend
        self.metrics = metrics
        self.connections = connections
        self._recent_cache: dict[str, tuple[int, bytes]] = {}  # tournament → (seq, body of /recent)

    def respond(self, request: Request) -> Response | None:
        """The response to ``request``; ``None`` lets a websocket handshake on ``/ws`` go on.

        Only GET and HEAD are served (405 with ``Allow`` otherwise); HEAD gets
        GET's status and headers, ``Content-Length`` included, without the body.
        """
        if request.method not in ("GET", "HEAD"):
            return method_not_allowed("GET, HEAD")
        response = self._get(request)
        if request.method == "HEAD":
            if response is None:  # a websocket is opened with GET only
                return method_not_allowed("GET")
            return Response(response.status_code, response.reason_phrase, response.headers, b"")
        return response

    def _get(self, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == "/ws":
            if not handshake_origin_allowed(request, self.config.allowed_origins):
                return text(HTTPStatus.FORBIDDEN, "websocket connections from this page's origin are not allowed\n")
            if self.connections() >= self.config.limits.max_connections:
                return text(HTTPStatus.SERVICE_UNAVAILABLE, "too many connections\n")
            return None
        parts = [p for p in path.split("/") if p]
        if parts[:1] == ["api"]:
            return self._api(parts[1:])
        if path == "/healthz":
            return as_json({"status": "ok", "version": __version__, "tournaments": len(self.hub.open_channels())})
        if path == "/metrics":
            return text(HTTPStatus.OK, self.metrics.render(), CONTENT_TYPE)
        if parts[:1] == ["static"] and len(parts) == 2:
            return static(parts[1])
        page = PAGES.get(parts[0] if parts else "")
        if page is not None and len(parts) <= 2:
            return static(page)
        return text(HTTPStatus.NOT_FOUND, "not found\n")

    def _api(self, parts: list[str]) -> Response:
        if parts == ["tournaments"]:
            return as_json({"tournaments": self.hub.listing()})
        if len(parts) == 3 and parts[0] == "tournaments":
            tid, what = parts[1], parts[2]
            payload = self.hub.open_channels().get(tid)
            if payload is None:
                return as_json({"error": f"no tournament {tid!r}"}, HTTPStatus.NOT_FOUND)
            if what == "standings":
                return as_json(payload)
            if what == "trf":
                return self._trf(tid)
            if what == "recent":
                return self._recent(tid, payload["seq"])
        return as_json({"error": "not found"}, HTTPStatus.NOT_FOUND)

    def _recent(self, tournament: str, seq: int) -> Response:
        """The last :data:`RECENT` updates' summaries (what a page's "what changed" feed starts with).

        ``{"tournament", "seq", "updates": [{"seq", "at", "summary"}, …]}``, oldest first, from the
        updates the hub still keeps for resumes; worked out once per seq.
        """
        cached = self._recent_cache.get(tournament)
        if cached is not None and cached[0] == seq:
            return _response(HTTPStatus.OK, cached[1], "application/json")
        updates = []
        for number, message, at in self.hub.recent(tournament, RECENT):
            update = json.loads(message)
            updates.append({"seq": number, "at": round(at, 3), "summary": update.get("summary", "")})
        body = json.dumps({"tournament": tournament, "seq": seq, "updates": updates}).encode()
        self._recent_cache[tournament] = (seq, body)
        return _response(HTTPStatus.OK, body, "application/json")

    def _trf(self, tournament: str) -> Response:
        from tracker.formats.trf import export_trf

        state = self.backend.state(tournament)
        if state is None:
            return as_json({"error": "not found"}, HTTPStatus.NOT_FOUND)
        try:
            return text(HTTPStatus.OK, export_trf(state), "text/plain; charset=utf-8")
        except ValueError as exc:  # TRF's fixed columns cannot hold every live score
            return as_json({"error": f"no TRF export: {exc}"}, HTTPStatus.CONFLICT)


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


def method_not_allowed(allow: str) -> Response:
    response = text(HTTPStatus.METHOD_NOT_ALLOWED, f"only {allow} here\n")
    response.headers["Allow"] = allow
    return response


def as_json(obj: object, status: HTTPStatus = HTTPStatus.OK) -> Response:
    return _response(status, json.dumps(obj).encode(), "application/json")


def text(status: HTTPStatus, body: str, content_type: str = "text/plain; charset=utf-8") -> Response:
    return _response(status, body.encode(), content_type)


def static(name: str) -> Response:
    """A file of :mod:`tracker.web`; the pages carry their content security policy as headers too."""
    suffix = name[name.rfind(".") :] if "." in name else ""
    if "/" in name or name.startswith(".") or suffix not in CONTENT_TYPES:
        return text(HTTPStatus.NOT_FOUND, "not found\n")
    try:
        data = resources.files("tracker.web").joinpath(name).read_bytes()
    except (FileNotFoundError, ModuleNotFoundError, IsADirectoryError):
        return text(HTTPStatus.NOT_FOUND, "not found\n")
    response = _response(HTTPStatus.OK, data, CONTENT_TYPES[suffix])
    if suffix == ".html":
        # the pages' own policy again as headers; no frame restriction: OBS shows the overlay in a frame
        response.headers["Content-Security-Policy"] = PAGE_POLICY
        response.headers["Referrer-Policy"] = "no-referrer"
    return response
