"""HTTP GET on the gateway's port: the JSON API, health, readiness, metrics and the pages.

websockets answers a request for any path but ``/ws`` with the
:class:`~websockets.http11.Response` that :meth:`Http.respond` returns,
before any websocket handshake.  Everything here is read-only: the
tournaments' standings as the hub has them, and the TRF of the backend's
live state.

**Probes.**  ``/healthz`` answers as soon as the port is open (the process
is alive); ``/readyz`` answers 200 only once the gateway has started (on
Kafka: the topics are there and the snapshots read) and while its backend
says it is ready (on Kafka: the broker answers), else 503 with the reason.
While the gateway is starting, ``/ws`` and the API answer 503 too.

**Caching.**  Every static file (scripts, styles, images of
:mod:`tracker.web`) is also served under a name with its content hash,
``/static/live.3f2a9c0d1e4b.js``, with ``Cache-Control: public,
max-age=31536000, immutable``: a CDN or a browser keeps it for a year and
never asks again, and a new release has new names.  The pages and the
files are served with every ``/static/NAME`` they mention rewritten to the
hashed name (the files in :mod:`tracker.web` stay as written: there is no
build step), and the pages with an ``ETag`` and ``Cache-Control:
no-cache`` (a cache keeps them but asks each time; an unchanged page costs
a 304).  A file's hash covers its own bytes and those of every file it
mentions, directly or not, so a change anywhere below a script renames it.
The unhashed names still answer, like the pages (``no-cache``, ``ETag``).
The API, health and metrics are never cached (``no-store``).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from http import HTTPStatus
from importlib import resources
from typing import TYPE_CHECKING, Final
from urllib.parse import parse_qs

from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from tracker import __version__
from tracker.config import ServerConfig
from tracker.gateway.auth import handshake_origin_allowed
from tracker.gateway.backend import Backend
from tracker.gateway.hub import Hub
from tracker.gateway.metrics import CONTENT_TYPE, Metrics
from tracker.i18n import LANGUAGES, page_catalogue
from tracker.protocol import MAX_DELAY

if TYPE_CHECKING:
    from tracker.formats.trf.write import TrfEncoding

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


IMMUTABLE: Final = "public, max-age=31536000, immutable"
REVALIDATE: Final = "no-cache"
_MENTION: Final = re.compile(rb"/static/([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.[a-z]+)")


class Http:
    """Answers the gateway's HTTP requests from its hub, backend and metrics.

    ``readiness`` says why the backend is not ready (``None``: it is);
    ``started`` is ``False`` while the deployment starts (see :func:`tracker.gateway.serve.serve`).
    """

    def __init__(
        self, config: ServerConfig, hub: Hub, backend: Backend, metrics: Metrics, connections: Callable[[], int]
    ) -> None:
        self.config = config
        self.hub = hub
        self.backend = backend
        self.metrics = metrics
        self.connections = connections
        self.readiness: Callable[[], str | None] = lambda: None
        self.started = True
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
        if not self.started and (path == "/ws" or path.startswith("/api/")):
            return _not_ready(f"starting: {self.readiness() or 'not serving yet'}")
        if path == "/ws":
            if not handshake_origin_allowed(request, self.config.allowed_origins):
                return text(HTTPStatus.FORBIDDEN, "websocket connections from this page's origin are not allowed\n")
            if self.connections() >= self.config.limits.max_connections:
                return text(HTTPStatus.SERVICE_UNAVAILABLE, "too many connections\n")
            return None
        parts = [p for p in path.split("/") if p]
        query = request.path.partition("?")[2]
        if parts[:1] == ["api"]:
            return self._api(parts[1:], query)
        if path == "/healthz":
            return as_json({"status": "ok", "version": __version__, "tournaments": len(self.hub.open_channels())})
        if path == "/readyz":
            return self._ready()
        if path == "/metrics":
            return text(HTTPStatus.OK, self.metrics.render(), CONTENT_TYPE)
        if parts[:1] == ["static"] and len(parts) == 2:
            return static(parts[1], request)
        if parts[:2] == ["static", "i18n"] and len(parts) == 3:
            return catalogue(parts[2], request)
        page = PAGES.get(parts[0] if parts else "")
        if page is not None and len(parts) <= 2:
            return static(page, request)
        return text(HTTPStatus.NOT_FOUND, "not found\n")

    def _ready(self) -> Response:
        """``/readyz``: 200 once started while the backend is ready, else 503 with the reason."""
        reason = self.readiness()
        if not self.started:
            reason = f"starting: {reason or 'not serving yet'}"
        if reason is not None:
            return _not_ready(reason)
        return as_json({"status": "ready", "version": __version__})

    def _api(self, parts: list[str], query: str = "") -> Response:
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
                return self._trf(tid, "utf-8" if "utf-8" in parse_qs(query).get("encoding", []) else "latin-1")
            if what == "recent":
                return self._recent(tid, payload["seq"], _delay(query))
        return as_json({"error": "not found"}, HTTPStatus.NOT_FOUND)

    def _recent(self, tournament: str, seq: int, delay: float = 0.0) -> Response:
        """The last :data:`RECENT` updates' summaries (what a page's "what changed" feed starts with).

        ``{"tournament", "seq", "updates": [{"seq", "at", "summary", "summary_said"}, …]}``, oldest first, from the
        updates the hub still keeps for resumes; worked out once per seq.  With ``?delay=N`` (a page
        with a spoiler delay) only the updates published at least N seconds ago, and ``seq`` the last
        of them: the backfill shows nothing its delayed standings do not.
        """
        if delay > 0:
            return as_json(self._recent_body(tournament, seq, time.time() - delay))
        cached = self._recent_cache.get(tournament)
        if cached is not None and cached[0] == seq:
            return _response(HTTPStatus.OK, cached[1], "application/json")
        body = json.dumps(self._recent_body(tournament, seq, None)).encode()
        self._recent_cache[tournament] = (seq, body)
        return _response(HTTPStatus.OK, body, "application/json")

    def _recent_body(self, tournament: str, seq: int, before: float | None) -> dict[str, object]:
        updates = []
        for number, message, at in self.hub.recent(tournament, RECENT):
            if before is not None and at > before:
                continue
            update = json.loads(message)
            entry = {"seq": number, "at": round(at, 3), "summary": update.get("summary", "")}
            if "summary_said" in update:
                entry["summary_said"] = update["summary_said"]
            updates.append(entry)
        last = seq if before is None else (updates[-1]["seq"] if updates else 0)
        return {"tournament": tournament, "seq": last, "updates": updates}

    def _trf(self, tournament: str, encoding: TrfEncoding) -> Response:
        """The live state as a TRF file: Latin-1 (what the FIDE TEC server reads), UTF-8 with ``?encoding=utf-8``."""
        from tracker.formats.trf.write import trf_bytes

        state = self.backend.state(tournament)
        if state is None:
            return as_json({"error": "not found"}, HTTPStatus.NOT_FOUND)
        try:
            charset = "iso-8859-1" if encoding == "latin-1" else "utf-8"
            return _response(HTTPStatus.OK, trf_bytes(state, encoding), f"text/plain; charset={charset}")
        except ValueError as exc:  # TRF's fixed columns cannot hold every live score
            return as_json({"error": f"no TRF export: {exc}"}, HTTPStatus.CONFLICT)


def _response(status: HTTPStatus, body: bytes, content_type: str, cache: str = "no-store") -> Response:
    headers = Headers(
        [
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            ("Cache-Control", cache),
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


def _delay(query: str) -> float:
    """The ``delay`` of a query string (seconds, 0 to the protocol's bound; 0 when absent or unreadable)."""
    for value in parse_qs(query).get("delay", []):
        try:
            return max(0.0, min(float(value), MAX_DELAY))
        except ValueError:
            return 0.0
    return 0.0


def _not_ready(reason: str) -> Response:
    response = as_json({"status": "not ready", "reason": reason}, HTTPStatus.SERVICE_UNAVAILABLE)
    response.headers["Retry-After"] = "5"
    return response


@dataclass(frozen=True, slots=True)
class Asset:
    """A file of :mod:`tracker.web` as served: its bytes (mentions rewritten), content type, ETag, hashed name."""

    name: str
    body: bytes
    content_type: str
    etag: str
    hashed: str | None
    """``stem.HASH.ext`` for a static file, ``None`` for a page (pages keep their addresses)."""


def _suffix(name: str) -> str:
    return name[name.rfind(".") :] if "." in name else ""


@cache
def assets() -> dict[str, Asset]:
    """Every servable file of :mod:`tracker.web`, by its name and (static files) by its hashed name.

    Read once per process: a release's files do not change under a running server.
    """
    root = resources.files("tracker.web")
    return build_assets(
        {
            entry.name: entry.read_bytes()
            for entry in root.iterdir()
            if entry.is_file() and not entry.name.startswith(".") and _suffix(entry.name) in CONTENT_TYPES
        }
    )


def build_assets(raw: dict[str, bytes]) -> dict[str, Asset]:
    """The files ``raw`` (name → bytes) as served: by name and (static files) by hashed name."""
    mentions = {name: {m.decode() for m in _MENTION.findall(data)} & raw.keys() for name, data in raw.items()}

    def reachable(name: str) -> list[str]:
        seen, todo = {name}, [name]
        while todo:
            for other in mentions[todo.pop()]:
                if other not in seen:
                    seen.add(other)
                    todo.append(other)
        return sorted(seen)

    hashed: dict[str, str] = {}
    for name in raw:
        if _suffix(name) != ".html":
            digest = hashlib.sha256()
            for part in reachable(name):  # this file's bytes and those of every file it mentions, directly or not
                digest.update(part.encode() + b"\0" + raw[part] + b"\0")
            stem, suffix = name[: -len(_suffix(name))], _suffix(name)
            hashed[name] = f"{stem}.{digest.hexdigest()[:12]}{suffix}"

    def rewrite(match: re.Match[bytes]) -> bytes:
        name = match.group(1).decode()
        return f"/static/{hashed[name]}".encode() if name in hashed else match.group(0)

    found: dict[str, Asset] = {}
    for name, data in raw.items():
        body = _MENTION.sub(rewrite, data)
        asset = Asset(
            name, body, CONTENT_TYPES[_suffix(name)], f'"{hashlib.sha256(body).hexdigest()[:16]}"', hashed.get(name)
        )
        found[name] = asset
        if asset.hashed is not None:
            found[asset.hashed] = asset
    return found


def static_url(name: str) -> str:
    """The address a page uses for the static file ``name`` (its hashed name).  Raises ``KeyError`` for none."""
    hashed = assets()[name].hashed
    if hashed is None:
        raise KeyError(f"{name} is a page, not a static file")
    return f"/static/{hashed}"


def static(name: str, request: Request | None = None) -> Response:
    """A file of :mod:`tracker.web` (see the module docstring for its caching); the pages carry their CSP as headers.

    ``request``'s ``If-None-Match`` gets a 304 when it names the file's ETag.
    """
    asset = assets().get(name) if "/" not in name and not name.startswith(".") else None
    if asset is None:
        return text(HTTPStatus.NOT_FOUND, "not found\n")
    return _serve(asset, name, request)


def catalogue(name: str, request: Request | None = None) -> Response:
    """``/static/i18n/<code>.json``: a language's catalogue for the pages (:func:`tracker.i18n.page_catalogue`).

    Its address names the language, not the release, so it is revalidated (ETag) like a page; a language
    tracker does not speak is a 404, which the pages take as "try the next one".
    """
    code = name.removesuffix(".json")
    if not name.endswith(".json") or code not in LANGUAGES:
        return text(HTTPStatus.NOT_FOUND, "not found\n")
    return _serve(_catalogue_asset(code), name, request)


@cache
def _catalogue_asset(code: str) -> Asset:
    body = page_catalogue(code)
    return Asset(f"i18n/{code}.json", body, "application/json", f'"{hashlib.sha256(body).hexdigest()[:16]}"', None)


def _serve(asset: Asset, name: str, request: Request | None) -> Response:
    immutable = asset.hashed == name
    if request is not None and not immutable and asset.etag in _etags(request.headers.get("If-None-Match", "")):
        headers = Headers([("ETag", asset.etag), ("Cache-Control", REVALIDATE), ("Connection", "close")])
        return Response(HTTPStatus.NOT_MODIFIED.value, HTTPStatus.NOT_MODIFIED.phrase, headers, b"")
    response = _response(HTTPStatus.OK, asset.body, asset.content_type, IMMUTABLE if immutable else REVALIDATE)
    response.headers["ETag"] = asset.etag
    if _suffix(name) == ".html":
        # the pages' own policy again as headers; no frame restriction: OBS shows the overlay in a frame
        response.headers["Content-Security-Policy"] = PAGE_POLICY
        response.headers["Referrer-Policy"] = "no-referrer"
    return response


def _etags(header: str) -> set[str]:
    """The entity tags of an ``If-None-Match`` header (weak ones compared as strong: the bodies are exact)."""
    return {tag.strip().removeprefix("W/") for tag in header.split(",") if tag.strip()}
