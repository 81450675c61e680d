"""Where results come from: a PGN or TRF over HTTP(S) with conditional requests, or a local file."""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import suppress
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import Final, Protocol

from tracker.follow.errors import SourceError

MAX_BODY: Final = 64 * 1024 * 1024  # bytes of a PGN/TRF source we accept
HTTP_TIMEOUT: Final = 20.0


class Source(Protocol):
    """Where the results come from.  ``name`` is used for messages and to tell PGN from TRF."""

    name: str

    async def read(self) -> str | None:
        """The source's text when it changed since the last read, ``None`` when it did not.

        Raises :class:`SourceError` when it cannot be read.
        """
        ...


def _decode(data: bytes, charset: str | None = None) -> str:
    """Text of a PGN/TRF: the given charset, else UTF-8, else Latin-1 (older arbiter programs)."""
    for encoding in (charset, "utf-8"):
        if encoding:
            with suppress(UnicodeDecodeError, LookupError):
                return data.decode(encoding)
    return data.decode("latin-1")


@dataclass(slots=True)
class _Response:
    status: int
    body: bytes = b""
    headers: Message | None = None


class HttpSource:
    """A PGN (or TRF) published over HTTP(S), polled with conditional requests.

    Sends ``If-None-Match`` (the last ``ETag``) and ``If-Modified-Since``
    (the last ``Last-Modified``); a ``304`` or a body whose hash has not
    changed reads as "unchanged".  Accepts gzip.  The blocking request runs
    in a thread, bounded by ``timeout``.
    """

    def __init__(self, url: str, *, timeout: float = HTTP_TIMEOUT) -> None:
        self.url = url
        self.name = urllib.parse.urlsplit(url).path or url
        self.timeout = timeout
        self.etag: str | None = None
        self.last_modified: str | None = None
        self.digest: str | None = None

    async def read(self) -> str | None:
        response = await asyncio.to_thread(self._fetch)
        if response.status == 304 or response.headers is None:
            return None
        digest = hashlib.sha256(response.body).hexdigest()
        self.etag = response.headers.get("ETag") or None
        self.last_modified = response.headers.get("Last-Modified") or None
        if digest == self.digest:
            return None
        self.digest = digest
        return _decode(response.body, response.headers.get_content_charset())

    def _fetch(self) -> _Response:
        request = urllib.request.Request(self.url, headers={"User-Agent": "tracker-follow", "Accept-Encoding": "gzip"})
        if self.etag:
            request.add_header("If-None-Match", self.etag)
        if self.last_modified:
            request.add_header("If-Modified-Since", self.last_modified)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as reply:
                body = reply.read(MAX_BODY + 1)
                headers: Message = reply.headers
        except urllib.error.HTTPError as exc:
            if exc.code == 304:
                return _Response(304)
            raise SourceError(f"{self.url}: HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            raise SourceError(f"{self.url}: {reason}") from None
        if len(body) > MAX_BODY:
            raise SourceError(f"{self.url}: larger than {MAX_BODY} bytes")
        if (headers.get("Content-Encoding") or "").lower() == "gzip":
            try:
                body = gzip.decompress(body)
            except (OSError, EOFError) as exc:
                raise SourceError(f"{self.url}: bad gzip body ({exc})") from None
        return _Response(200, body, headers)


class FileSource:
    """A local PGN or TRF file, rewritten in place by a broadcast tool or an arbiter program.

    A read is skipped while size, mtime and inode are those of the last read
    (unless that read was so close to the mtime that a later write could
    keep the same timestamp); otherwise the file is read and its hash
    compared.  A file that changes while being read is read again at the
    next poll rather than parsed half-written.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.name = str(path)
        self.stamp: tuple[int, int, int] | None = None
        self.digest: str | None = None
        self.racy = True

    async def read(self) -> str | None:
        return await asyncio.to_thread(self._read)

    def _read(self) -> str | None:
        try:
            before = self._stat()
            if before == self.stamp and not self.racy:
                return None
            data = self.path.read_bytes()
            after = self._stat()
        except OSError as exc:
            raise SourceError(f"{self.path}: {exc.strerror or exc}") from None
        if before != after:
            return None  # being written: read it again next time
        if len(data) > MAX_BODY:
            raise SourceError(f"{self.path}: larger than {MAX_BODY} bytes")
        self.stamp = after
        # a write within the same timestamp tick would leave the stamp unchanged: trust it only later
        self.racy = abs(time.time_ns() - after[1]) < 2_000_000_000
        digest = hashlib.sha256(data).hexdigest()
        if digest == self.digest:
            return None
        self.digest = digest
        return _decode(data)

    def _stat(self) -> tuple[int, int, int]:
        st = self.path.stat()
        return (st.st_size, st.st_mtime_ns, st.st_ino)


def source_for(location: str) -> Source:
    """An :class:`HttpSource` for ``http://``/``https://`` URLs, a :class:`FileSource` for anything else."""
    if location.lower().startswith(("http://", "https://")):
        return HttpSource(location)
    return FileSource(location)


def _is_pgn(text: str, name: str) -> bool:
    """The reader :func:`read_tournament_text` picks: by extension, else by the first character."""
    lower = name.lower()
    if lower.endswith(".pgn"):
        return True
    if lower.endswith((".trf", ".txt")):
        return False
    return text.lstrip("\ufeff \t\r\n").startswith("[")
