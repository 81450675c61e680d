"""Where results come from: a PGN or TRF over HTTP(S) with conditional requests, or a local file."""

from __future__ import annotations

import asyncio
import hashlib
import time
import urllib.parse
import zlib
from contextlib import suppress
from pathlib import Path
from typing import Final, Protocol

import aiohttp

from tracker.follow.errors import SourceError

MAX_BODY: Final = 64 * 1024 * 1024  # bytes of a PGN/TRF source we accept
INFLATE_STEP: Final = 1 << 20  # bytes of gzip output asked for at a time (bounded_body)
HTTP_TIMEOUT: Final = 20.0  # seconds for a whole read of an HTTP source (--read-deadline)


class Source(Protocol):
    """Where the results come from.  ``name`` is used for messages and to tell PGN from TRF."""

    name: str
    pushes: bool  # read() waits for the source's next version (a stream) rather than answering at once

    async def read(self) -> str | None:
        """The source's text when it changed since the last read, ``None`` when it did not.

        Raises :class:`SourceError` when it cannot be read.
        """
        ...

    async def aclose(self) -> None:
        """Close connections; idempotent."""
        ...


def _decode(data: bytes, charset: str | None = None) -> str:
    """Text of a PGN/TRF: the given charset, else UTF-8, else Latin-1 (older arbiter programs)."""
    for encoding in (charset, "utf-8"):
        if encoding:
            with suppress(UnicodeDecodeError, LookupError):
                return data.decode(encoding)
    return data.decode("latin-1")


class HttpSource:
    """A PGN (or TRF) published over HTTP(S), polled with conditional requests, bounded against any server.

    Sends ``If-None-Match`` (the last ``ETag``) and ``If-Modified-Since``
    (the last ``Last-Modified``); a ``304`` or a body whose hash has not
    changed reads as "unchanged".  Accepts gzip, decompressed as it arrives
    and refused once it passes :data:`MAX_BODY` (the cap holds for the
    decompressed text, not only for the bytes on the wire).  A whole read —
    connecting, headers, every byte of the body — must end within
    ``deadline`` seconds (one byte every few seconds does not keep it
    alive).  Every failure is one :class:`SourceError` line.
    """

    pushes = False

    def __init__(self, url: str, *, deadline: float = HTTP_TIMEOUT, limit: int = MAX_BODY) -> None:
        self.url = url
        self.name = urllib.parse.urlsplit(url).path or url
        self.deadline = deadline
        self.limit = limit
        self.etag: str | None = None
        self.last_modified: str | None = None
        self.digest: str | None = None
        self._session: aiohttp.ClientSession | None = None

    async def read(self) -> str | None:
        try:
            async with asyncio.timeout(self.deadline):
                return await self._read()
        except TimeoutError:
            raise SourceError(f"{self.url}: no whole answer within {self.deadline:g} s") from None
        except aiohttp.ClientError as exc:
            raise SourceError(f"{self.url}: {exc or type(exc).__name__}") from None
        except (OSError, ValueError) as exc:
            raise SourceError(f"{self.url}: {exc}") from None

    async def _read(self) -> str | None:
        headers = {"User-Agent": "tracker-follow", "Accept-Encoding": "gzip"}
        if self.etag:
            headers["If-None-Match"] = self.etag
        if self.last_modified:
            headers["If-Modified-Since"] = self.last_modified
        if self._session is None:
            self._session = aiohttp.ClientSession(auto_decompress=False)
        async with self._session.get(self.url, headers=headers, allow_redirects=True) as reply:
            if reply.status == 304:
                return None
            if reply.status >= 400:
                raise SourceError(f"{self.url}: HTTP {reply.status} {reply.reason or ''}".rstrip())
            body = await bounded_body(reply.content, reply.headers.get("Content-Encoding"), self.url, self.limit)
            etag = reply.headers.get("ETag") or None
            modified = reply.headers.get("Last-Modified") or None
            charset = reply.charset
        digest = hashlib.sha256(body).hexdigest()
        self.etag, self.last_modified = etag, modified
        if digest == self.digest:
            return None
        self.digest = digest
        return _decode(body, charset)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


async def bounded_body(content: aiohttp.StreamReader, encoding: str | None, url: str, limit: int) -> bytes:
    """The body, decompressed (gzip) as it arrives; :class:`SourceError` once it passes ``limit`` bytes.

    The compressed bytes are bounded too (by ``limit``): memory stays
    within about twice the limit whatever the server sends.
    """
    gzipped = (encoding or "").strip().lower() in ("gzip", "x-gzip")
    inflate = zlib.decompressobj(wbits=31) if gzipped else None
    parts: list[bytes] = []
    size = wire = 0
    too_large = f"{url}: larger than {limit} bytes{' once decompressed' if gzipped else ''}: refused"
    async for chunk in content.iter_chunked(1 << 16):
        wire += len(chunk)
        if wire > limit:
            raise SourceError(too_large)
        if inflate is None:
            size += len(chunk)
            parts.append(chunk)
        else:
            # at most a mebibyte of output at a time: one 64 KiB chunk of a gzip bomb inflates to the whole
            # budget, and zlib grows (and copies) one output buffer that big when asked for it at once
            data = chunk
            while data:
                try:
                    piece = inflate.decompress(data, INFLATE_STEP)
                except zlib.error as exc:
                    raise SourceError(f"{url}: bad gzip body ({exc})") from None
                size += len(piece)
                if size > limit:
                    raise SourceError(too_large)
                parts.append(piece)
                data = inflate.unconsumed_tail
        if size > limit:
            raise SourceError(too_large)
    if inflate is not None and not inflate.eof:
        raise SourceError(f"{url}: bad gzip body (cut short)")
    return b"".join(parts)


class FileSource:
    """A local PGN or TRF file, rewritten in place by a broadcast tool or an arbiter program.

    A read is skipped while size, mtime and inode are those of the last read
    (unless that read was so close to the mtime that a later write could
    keep the same timestamp); otherwise the file is read and its hash
    compared.  A file that changes while being read is read again at the
    next poll rather than parsed half-written.
    """

    pushes = False

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
            with self.path.open("rb") as file:
                data = file.read(MAX_BODY + 1)  # bounded: a runaway file is refused, not read whole
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

    async def aclose(self) -> None:
        pass

    def _stat(self) -> tuple[int, int, int]:
        st = self.path.stat()
        return (st.st_size, st.st_mtime_ns, st.st_ino)


def source_for(location: str, *, deadline: float = HTTP_TIMEOUT, stream: bool | None = None) -> Source:
    """The source at ``location``: a :class:`~tracker.follow.stream.StreamSource` for an HTTP(S) stream, an
    :class:`HttpSource` for another ``http://``/``https://`` URL, a :class:`FileSource` for anything else.

    ``stream`` forces (``True``) or refuses (``False``) reading the URL as a stream; ``None`` takes a URL whose
    path has a ``stream`` segment (lichess's ``/api/stream/broadcast/round/{id}.pgn``) as one.
    """
    if location.lower().startswith(("http://", "https://")):
        path = urllib.parse.urlsplit(location).path.lower().split("/")
        if stream or (stream is None and "stream" in path):
            from tracker.follow.stream import StreamSource  # here: stream imports this module's neighbours

            return StreamSource(location, deadline=deadline)
        return HttpSource(location, deadline=deadline)
    return FileSource(location)


def _is_pgn(text: str, name: str) -> bool:
    """The reader :func:`read_tournament_text` picks: by extension, else by the first character."""
    lower = name.lower()
    if lower.endswith(".pgn"):
        return True
    if lower.endswith((".trf", ".txt")):
        return False
    return text.lstrip("\ufeff \t\r\n").startswith("[")
