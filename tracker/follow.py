"""``tracker follow``: turn a live PGN source or an arbiter program's TRF file into events.

How this works
--------------

A :class:`Follower` polls a :class:`Source` — a PGN over HTTP(S), fetched
with ``If-None-Match``/``If-Modified-Since`` (:class:`HttpSource`), or a
local PGN/TRF file gated by its size, mtime and content hash
(:class:`FileSource`) — and parses every new version with
:func:`tracker.formats.read_tournament_text`.  The source's players are
matched **by name** to the tournament's start list (:class:`StartList`:
"Last, First" = "First Last", case, spacing, punctuation and diacritics
ignored; a name that matches nobody, or several players, is reported and
its games are left out, never guessed).  That gives a :class:`View`: the
results keyed by ``(round, white, black)`` and the byes keyed by
``(round, player)``, in the tournament's start numbers.

A :class:`Ledger` holds what the tracker has: read from the tracker's
snapshot when the follower (re)connects, then kept up to date with every
acknowledged event.  :meth:`Ledger.changes` compares a view with it and
emits only the differences, voids first:

- a game the tracker lacks → ``result_recorded``; a different result →
  ``result_corrected``;
- a game seen in the previous read that is gone now, or a tracker entry in a
  slot (round, player) the source fills differently → ``result_voided``;
- byes alike: ``bye_recorded``, ``bye_voided`` (a changed kind is voided and
  recorded again).

Games are voided only when they disappear from the source, never because the
tracker has games the source never listed (an arbiter's manual entries, or
rounds before the broadcast started).  Re-reading an unchanged source emits
nothing.

Event ids are deterministic: ``{tournament}/follow/r{round}/{white}-{black}/{verb}-{digest}``
where the digest hashes the change (old and new result), the tracker's seq
when the ledger was read and how many times this follower changed that game
before.  A retry after a lost connection re-sends the same ids (the tracker
acknowledges them again and changes nothing); a restarted follower reads the
tracker's state first, so it does not submit again what is already there;
a result changed back and forth gets a new id each time.

Submitting goes through a websocket with acknowledgements
(:class:`WebsocketTracker`: one request at a time, each event acknowledged
before the next is sent) or, with ``--broker``, to the results topic
(:class:`KafkaTracker`, via :func:`tracker.kafka.producer.produce_events`,
imported lazily).
Without ``--url`` a broker follower cannot read the tracker's state: it
starts from an empty ledger (first recordings keep their ids across
restarts, so re-sending them is harmless) and opens the tournament from
the source.  The first read of a source opens the tournament when the
tracker does not have it yet.

Errors (HTTP status, unreachable tracker, unreadable file) are logged and
retried with exponential back-off (:func:`backoff`); ``--once`` reads once,
submits once and exits non-zero on any error, rejection or unmatched name.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import logging
import re
import signal
import time
import unicodedata
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from email.message import Message
from pathlib import Path
from typing import Final, Protocol

import msgspec
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from tracker.core.codes import RESULT_OF_CODES
from tracker.core.errors import FormatError, TrackerError
from tracker.core.events import (
    ByeKind,
    ByeRecorded,
    ByeVoided,
    Event,
    GameResult,
    Player,
    ResultCorrected,
    ResultRecorded,
    ResultVoided,
    TournamentOpened,
)
from tracker.formats import TournamentFile, read_tournament_text
from tracker.protocol import (
    AckMessage,
    ErrorMessage,
    RejectedMessage,
    SnapshotMessage,
    Submit,
    Subscribe,
    Unsubscribe,
    encode,
)

log = logging.getLogger("tracker.follow")

GameKey = tuple[int, int, int]  # (round, white, black), start numbers
ByeKey = tuple[int, int]  # (round, player)
Outcome = tuple[GameResult, bool]  # (result, short)

MAX_BACKOFF: Final = 60.0  # seconds between retries at most (or the interval, when longer)
MAX_BODY: Final = 64 * 1024 * 1024  # bytes of a PGN/TRF source we accept
HTTP_TIMEOUT: Final = 20.0
REPLY_TIMEOUT: Final = 30.0

_ROW_BYES: Final[dict[str, ByeKind]] = {"F": "full", "H": "half", "Z": "zero", "U": "pab"}


class FollowError(TrackerError):
    """Something ``tracker follow`` cannot do now; the message says what.  The follower retries."""


class SourceError(FollowError):
    """The source could not be read: HTTP error status, network failure, missing file."""


class TrackerUnavailable(FollowError):
    """The tracker could not be reached, closed the connection or did not answer in time.

    ``replies`` are the answers received before that, aligned with the
    first events submitted.
    """

    def __init__(self, message: str, replies: Sequence[Reply] = ()) -> None:
        super().__init__(message)
        self.replies = tuple(replies)


# -- names --------------------------------------------------------------------------------------

_FOLD: Final = str.maketrans({"ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "æ": "ae", "œ": "oe", "ı": "i"})
_APOSTROPHES: Final = re.compile(r"['’`´]")
_SEPARATORS: Final = re.compile(r"[^\w,]+|_")


def _plain(text: str) -> str:
    """Case-folded, without diacritics, punctuation turned to spaces (commas kept)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c)).translate(_FOLD)
    return _SEPARATORS.sub(" ", _APOSTROPHES.sub("", stripped))


def name_key(name: str) -> str:
    """A name in "first last" order, plain: ``"Vachier-Lagrave, Maxime"`` → ``"maxime vachier lagrave"``.

    "Last, First" is turned around at the first comma; everything
    :func:`_plain` ignores is ignored.  Returns ``""`` for a name with no
    letters or digits.
    """
    plain = _plain(name)
    last, comma, first = plain.partition(",")
    ordered = f"{first} {last}" if comma else plain
    return " ".join(ordered.replace(",", " ").split())


def token_key(name: str) -> str:
    """The name's words in alphabetical order: the same for "Last, First" and "First Last" whatever the order."""
    return " ".join(sorted(name_key(name).split()))


class StartList:
    """The tournament's players, looked up by name.

    A name matches a player when their :func:`name_key` are equal, or else
    when their :func:`token_key` are equal and no other player shares that
    key.  Nothing else matches: initials, nicknames and typos are reported.
    """

    def __init__(self, players: Iterable[tuple[int, str]]) -> None:
        self.names: dict[int, str] = {}
        self._exact: dict[str, set[int]] = {}
        self._tokens: dict[str, set[int]] = {}
        for start_no, name in players:
            self.names[start_no] = name
            self._exact.setdefault(name_key(name), set()).add(start_no)
            self._tokens.setdefault(token_key(name), set()).add(start_no)

    @classmethod
    def of(cls, players: Iterable[Player]) -> StartList:
        """The start list of a ``tournament_opened`` event's players."""
        return cls((p.start_no, p.name) for p in players)

    def match(self, name: str) -> int | None:
        """The start number of the one player called ``name``; ``None`` when nobody or several are."""
        for index, key in ((self._exact, name_key(name)), (self._tokens, token_key(name))):
            found = index.get(key, set())
            if len(found) == 1:
                return next(iter(found))
            if len(found) > 1:
                return None
        return None

    def why_not(self, name: str) -> str:
        """Why :meth:`match` found no player for ``name``, in one phrase."""
        several = self._exact.get(name_key(name)) or self._tokens.get(token_key(name))
        if several and len(several) > 1:
            listed = ", ".join(f"{no} {self.names[no]}" for no in sorted(several))
            return f"{name!r} could be any of {listed}"
        return f"{name!r} is not in the start list"

    def short(self, start_no: int) -> str:
        """The player's family name for messages (the part before a comma), or the start number."""
        name = self.names.get(start_no)
        return (name.split(",")[0].strip() or name) if name else str(start_no)


# -- views and the ledger -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class View:
    """Results and byes in the tournament's start numbers.

    ``knows_short`` is false for PGN, which cannot say that a game lasted
    less than one move (TRF's W/D/L): such a view never changes ``short``.
    """

    games: dict[GameKey, Outcome] = field(default_factory=dict)
    byes: dict[ByeKey, ByeKind] = field(default_factory=dict)
    knows_short: bool = True


def view_of(tf: TournamentFile, start: StartList, *, knows_short: bool = True) -> tuple[View, tuple[str, ...]]:
    """The file's results in the start list's numbers, and the names that matched no one (sorted).

    Games and byes of an unmatched player are left out of the view.
    """
    number: dict[int, int | None] = {p.start_no: start.match(p.name) for p in tf.opened.players}
    unmatched = sorted({p.name for p in tf.opened.players if number[p.start_no] is None})
    games: dict[GameKey, Outcome] = {}
    byes: dict[ByeKey, ByeKind] = {}
    for event in tf.events:
        if isinstance(event, ResultRecorded):
            white, black = number.get(event.white), number.get(event.black)
            if white is not None and black is not None:
                games[(event.round, white, black)] = (event.result, event.short)
        elif isinstance(event, ByeRecorded):
            player = number.get(event.player)
            if player is not None:
                byes[(event.round, player)] = event.kind
    return View(games, byes, knows_short), tuple(unmatched)


def view_of_rows(rows: Iterable[tuple[int, Sequence[tuple[int, int, str, str]]]]) -> View:
    """The results in standings rows: ``(start_no, [(round, opponent or 0, colour, TRF code), …])``.

    Raises :class:`FollowError` for a pair of codes that makes no result
    (the tracker would never send one).
    """
    line: dict[tuple[int, int], tuple[int, str, str]] = {}
    for start_no, results in rows:
        for round_, opponent, colour, code in results:
            line[(start_no, round_)] = (opponent, colour, code.upper())
    games: dict[GameKey, Outcome] = {}
    byes: dict[ByeKey, ByeKind] = {}
    for (start_no, round_), (opponent, colour, code) in line.items():
        if opponent == 0:
            kind = _ROW_BYES.get(code)
            if kind is None:
                raise FollowError(f"the tracker's row {start_no} has bye code {code!r} in round {round_}")
            byes[(round_, start_no)] = kind
        elif colour == "w":
            other = line.get((opponent, round_))
            outcome = RESULT_OF_CODES.get((code, other[2])) if other is not None else None
            if outcome is None:
                raise FollowError(f"the tracker's rows {start_no} and {opponent} disagree about round {round_}")
            games[(round_, start_no, opponent)] = outcome
    return View(games, byes)


def _digest(*parts: object) -> str:
    return hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=6).hexdigest()


@dataclass(slots=True)
class Ledger:
    """What the tracker holds for one tournament, as far as this follower knows.

    ``seq`` is the tracker's seq when the ledger was read (0 when it could
    not be read); ``revisions`` counts the changes this follower made to each
    game or bye.  Both go into event ids (see the module docstring).
    """

    tournament: str
    seq: int = 0
    games: dict[GameKey, Outcome] = field(default_factory=dict)
    byes: dict[ByeKey, ByeKind] = field(default_factory=dict)
    revisions: Counter[GameKey | ByeKey] = field(default_factory=Counter)

    def _game_id(self, verb: str, key: GameKey, old: Outcome | None, new: Outcome | None) -> str:
        r, w, b = key
        digest = _digest(verb, key, old, new, self.seq, self.revisions[key])
        return f"{self.tournament}/follow/r{r}/{w}-{b}/{verb}-{digest}"

    def _bye_id(self, verb: str, key: ByeKey, old: ByeKind | None, new: ByeKind | None) -> str:
        r, p = key
        digest = _digest(verb, key, old, new, self.seq, self.revisions[key])
        return f"{self.tournament}/follow/r{r}/bye-{p}/{verb}-{digest}"

    def changes(self, previous: View | None, new: View) -> list[Event]:
        """The events that turn the tracker's state into ``new``, as far as the source speaks; voids first.

        ``previous`` is the view of the source's previous read (``None`` for
        the first read): only what disappeared since then is voided, besides
        tracker entries that are in the way of the new view's games and byes.
        """
        tid = self.tournament
        slots: set[tuple[int, int]] = {(r, p) for r, w, b in new.games for p in (w, b)} | set(new.byes)
        voids: list[Event] = []
        for key in sorted(self.games):
            if key in new.games:
                continue
            gone = previous is not None and key in previous.games
            r, w, b = key
            if gone or (r, w) in slots or (r, b) in slots:
                voids.append(
                    ResultVoided(
                        id=self._game_id("voided", key, self.games[key], None),
                        tournament=tid,
                        round=r,
                        white=w,
                        black=b,
                    )
                )
        for bye in sorted(self.byes):
            kind = new.byes.get(bye)
            gone = previous is not None and bye in previous.byes and kind is None
            in_the_way = kind is None and bye in slots
            if gone or in_the_way or (kind is not None and kind != self.byes[bye]):
                voids.append(
                    ByeVoided(
                        id=self._bye_id("voided", bye, self.byes[bye], None),
                        tournament=tid,
                        round=bye[0],
                        player=bye[1],
                    )
                )
        corrections: list[Event] = []
        recordings: list[tuple[tuple[int, int, int], Event]] = []
        for key, (result, short) in sorted(new.games.items()):
            r, w, b = key
            old = self.games.get(key)
            if old is None:
                outcome = (result, short if new.knows_short else False)
                event_id = self._game_id("recorded", key, None, outcome)
                recordings.append(((r, w, 0), ResultRecorded(event_id, tid, r, w, b, outcome[0], outcome[1])))
            elif old[0] != result or (new.knows_short and old[1] != short):
                outcome = (result, short if new.knows_short else old[1])
                event_id = self._game_id("corrected", key, old, outcome)
                corrections.append(ResultCorrected(event_id, tid, r, w, b, outcome[0], outcome[1]))
        for bye, kind in sorted(new.byes.items()):
            if self.byes.get(bye) != kind:
                event_id = self._bye_id("recorded", bye, None, kind)
                recordings.append(((bye[0], bye[1], 1), ByeRecorded(event_id, tid, bye[0], bye[1], kind)))
        return voids + corrections + [event for _, event in sorted(recordings, key=lambda pair: pair[0])]

    def apply(self, event: Event) -> None:
        """Note an event the tracker acknowledged (a ``tournament_opened`` changes nothing here)."""
        if isinstance(event, ResultRecorded | ResultCorrected):
            key: GameKey = (event.round, event.white, event.black)
            self.games[key] = (event.result, event.short)
            self.revisions[key] += 1
        elif isinstance(event, ResultVoided):
            key = (event.round, event.white, event.black)
            self.games.pop(key, None)
            self.revisions[key] += 1
        elif isinstance(event, ByeRecorded):
            self.byes[(event.round, event.player)] = event.kind
            self.revisions[(event.round, event.player)] += 1
        elif isinstance(event, ByeVoided):
            self.byes.pop((event.round, event.player), None)
            self.revisions[(event.round, event.player)] += 1


def describe(event: Event, start: StartList) -> str:
    """A log line for an event: ``"round 3: Caruana–So 1/2-1/2 recorded"``."""
    if isinstance(event, TournamentOpened):
        return f"{event.name} opened as {event.tournament!r} with {len(event.players)} players"
    if isinstance(event, ResultRecorded | ResultCorrected):
        verb = "recorded" if isinstance(event, ResultRecorded) else "corrected"
        pair = f"{start.short(event.white)}–{start.short(event.black)}"
        return f"round {event.round}: {pair} {event.result}{' (short)' if event.short else ''} {verb}"
    if isinstance(event, ResultVoided):
        return f"round {event.round}: {start.short(event.white)}–{start.short(event.black)} voided"
    if isinstance(event, ByeRecorded):
        return f"round {event.round}: {start.short(event.player)} {event.kind} bye recorded"
    if isinstance(event, ByeVoided):
        return f"round {event.round}: {start.short(event.player)}'s bye voided"
    return f"{event.id}"


# -- sources ----------------------------------------------------------------------------------------


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


# -- trackers -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Acked:
    """The tracker has the event durably (or already had it); ``seq`` when the tracker says it."""

    seq: int | None


@dataclass(frozen=True, slots=True)
class Rejected:
    """The tracker refused the event and changed nothing."""

    code: str
    reason: str


Reply = Acked | Rejected


@dataclass(frozen=True, slots=True)
class Baseline:
    """A tournament as the tracker has it: its seq, its start list and its results."""

    seq: int
    players: tuple[tuple[int, str], ...]
    view: View


class Tracker(Protocol):
    """Where events go.  Two implementations: :class:`WebsocketTracker`, :class:`KafkaTracker`."""

    @property
    def can_read(self) -> bool:
        """Whether :meth:`baseline` can tell what the tracker holds."""
        ...

    async def baseline(self, tournament: str) -> Baseline | None:
        """The tournament as the tracker holds it; ``None`` when it is not open (or cannot be known).

        Raises :class:`TrackerUnavailable`.
        """
        ...

    async def submit(self, events: Sequence[Event]) -> list[Reply]:
        """Submit ``events`` in order; return one reply per event.

        Raises :class:`TrackerUnavailable` carrying the replies received
        before the failure.
        """
        ...

    async def aclose(self) -> None:
        """Close connections; idempotent."""
        ...


class _Envelope(msgspec.Struct):
    type: str


_envelope = msgspec.json.Decoder(_Envelope)


class WebsocketTracker:
    """A tracker (or gateway) reached at ``ws://…/ws``: submit, wait for the ack, next.

    One request at a time: the event is sent, then messages are read until
    its ``ack`` or ``rejected`` (anything else, such as updates already in
    flight, is skipped).  The connection is opened on first use and again
    after it is lost.
    """

    def __init__(self, url: str, token: str, *, timeout: float = REPLY_TIMEOUT) -> None:
        self.url = url
        self.token = token
        self.timeout = timeout
        self._ws: ClientConnection | None = None

    @property
    def can_read(self) -> bool:
        return True

    async def _connection(self) -> ClientConnection:
        if self._ws is None:
            try:
                self._ws = await connect(self.url, max_size=2**24, open_timeout=self.timeout)
            except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as exc:
                raise TrackerUnavailable(f"cannot connect to {self.url}: {exc}") from None
        return self._ws

    async def _drop(self) -> None:
        ws, self._ws = self._ws, None
        if ws is not None:
            with suppress(Exception):  # closing a broken connection: nothing to report
                await ws.close()

    async def _send(self, message: Submit | Subscribe | Unsubscribe) -> ClientConnection:
        ws = await self._connection()
        try:
            await ws.send(encode(message).decode())
        except ConnectionClosed as exc:
            await self._drop()
            raise TrackerUnavailable(f"{self.url} closed the connection ({exc})") from None
        return ws

    async def _receive(self, ws: ClientConnection, wanted: tuple[str, ...]) -> tuple[str, bytes]:
        """The next message whose type is in ``wanted`` (its type and raw bytes)."""
        try:
            async with asyncio.timeout(self.timeout):
                while True:
                    raw = await ws.recv(decode=False)
                    try:
                        kind = _envelope.decode(raw).type
                    except msgspec.DecodeError:
                        continue  # not ours to judge; keep waiting for the reply
                    if kind in wanted:
                        return kind, raw
        except ConnectionClosed as exc:
            await self._drop()
            raise TrackerUnavailable(f"{self.url} closed the connection ({exc})") from None
        except TimeoutError:
            await self._drop()
            raise TrackerUnavailable(f"{self.url} did not answer within {self.timeout:g} s") from None

    async def baseline(self, tournament: str) -> Baseline | None:
        ws = await self._send(Subscribe(tournament=tournament))
        kind, raw = await self._receive(ws, ("snapshot", "error"))
        if kind == "error":
            error = msgspec.json.decode(raw, type=ErrorMessage)
            if error["code"] == "unknown-tournament":
                return None
            raise FollowError(f"the tracker refused to subscribe to {tournament!r}: {error['reason']}")
        # updates are not needed: the ledger follows the acknowledgements
        await self._send(Unsubscribe(tournament=tournament))
        try:
            snapshot = msgspec.json.decode(raw, type=SnapshotMessage)
        except msgspec.ValidationError as exc:
            raise FollowError(f"unexpected snapshot from {self.url}: {exc}") from None
        rows = snapshot["standings"]
        if snapshot["seq"] == 0 or not rows:
            return None  # the gateway's empty snapshot of a tournament not open yet
        return Baseline(
            seq=snapshot["seq"],
            players=tuple((row["start_no"], row["name"]) for row in rows),
            view=view_of_rows((row["start_no"], row["results"]) for row in rows),
        )

    async def submit(self, events: Sequence[Event]) -> list[Reply]:
        replies: list[Reply] = []
        for event in events:
            try:
                ws = await self._send(Submit(token=self.token, event=event))
                replies.append(await self._reply(ws, event.id))
            except TrackerUnavailable as exc:
                raise TrackerUnavailable(str(exc), replies) from None
        return replies

    async def _reply(self, ws: ClientConnection, event_id: str) -> Reply:
        while True:
            kind, raw = await self._receive(ws, ("ack", "rejected", "error"))
            if kind == "ack":
                ack = msgspec.json.decode(raw, type=AckMessage)
                if ack["id"] == event_id:
                    return Acked(ack["seq"])
            elif kind == "rejected":
                rejected = msgspec.json.decode(raw, type=RejectedMessage)
                if rejected["id"] == event_id:
                    return Rejected(rejected["code"], rejected["reason"])
            else:  # the submit itself was refused before it became an event
                error = msgspec.json.decode(raw, type=ErrorMessage)
                return Rejected(error["code"], error["reason"])

    async def aclose(self) -> None:
        await self._drop()


class KafkaTracker:
    """The results topic of a distributed deployment, via :func:`tracker.kafka.producer.produce_events`.

    Produced means acknowledged (the worker validates later and dead-letters
    what it rejects).  ``reader``, when given (``--url`` next to
    ``--broker``), tells what the tracker holds.
    """

    def __init__(self, broker: str, reader: WebsocketTracker | None = None) -> None:
        self.broker = broker
        self.reader = reader

    @property
    def can_read(self) -> bool:
        return self.reader is not None

    async def baseline(self, tournament: str) -> Baseline | None:
        return None if self.reader is None else await self.reader.baseline(tournament)

    async def submit(self, events: Sequence[Event]) -> list[Reply]:
        # imported here: aiokafka is only needed with --broker
        from tracker.kafka.producer import produce_events
        from tracker.kafka.topics import BrokerError

        try:
            await produce_events(events, self.broker)
        except (BrokerError, OSError, TimeoutError) as exc:
            # nothing counts as produced: the same ids are produced again at the next poll, harmlessly
            raise TrackerUnavailable(f"cannot produce to {self.broker}: {exc}") from None
        return [Acked(None) for _ in events]

    async def aclose(self) -> None:
        if self.reader is not None:
            await self.reader.aclose()


# -- the follower ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PollResult:
    """What one poll did.

    ``changed``: whether the source had a new version; ``acked``: events the
    tracker acknowledged (the tournament's opening included); ``rejected``:
    events refused, with code and reason; ``unmatched``: names found in no
    start list (each reported once per follower).
    """

    changed: bool = False
    acked: tuple[Event, ...] = ()
    rejected: tuple[tuple[Event, str, str], ...] = ()
    unmatched: tuple[str, ...] = ()


class Follower:
    """Follows one source into one tournament.  :meth:`poll` once, or :meth:`run` until stopped."""

    def __init__(self, source: Source, tournament: str, tracker: Tracker) -> None:
        self.source = source
        self.tournament = tournament
        self.tracker = tracker
        self.latest: TournamentFile | None = None
        self.latest_is_pgn = False
        self.settled = True  # every change of ``latest`` has been submitted
        self.previous: View | None = None
        self.ledger: Ledger | None = None
        self.start: StartList | None = None
        self.stale = False  # re-read the tracker's state before the next diff
        self.refused: set[str] = set()
        self.reported: set[str] = set()

    async def poll(self) -> PollResult:
        """Read the source once and submit what changed.

        Returns what was done.  Raises :class:`SourceError` (source
        unreadable), :class:`~tracker.core.errors.FormatError` (a version of
        the source that cannot be read as a round robin; nothing of it is
        submitted), :class:`TrackerUnavailable` (what was not acknowledged
        is submitted again, with the same ids, at the next poll) and
        :class:`FollowError` (the tracker refused to open the tournament).
        """
        text = await self.source.read()
        if text is not None:
            self.latest = read_tournament_text(text, self.source.name, self.tournament)
            self.latest_is_pgn = _is_pgn(text, self.source.name)
            self.settled = False
        if self.latest is None or self.settled:
            return PollResult(changed=text is not None)
        tf = self.latest
        opened_now: list[Event] = []
        if self.ledger is None or self.stale:
            opened_now = await self._read_tracker(tf)
        assert self.ledger is not None and self.start is not None
        view, unmatched = view_of(tf, self.start, knows_short=not self.latest_is_pgn)
        for name in unmatched:
            if name not in self.reported:
                self.reported.add(name)
                log.error(
                    "follow: %s: %s; the games of that player are not submitted",
                    self.source.name,
                    self.start.why_not(name),
                )
        events = [e for e in self.ledger.changes(self.previous, view) if e.id not in self.refused]
        try:
            replies = await self.tracker.submit(events) if events else []
        except TrackerUnavailable as exc:
            self._note(events, exc.replies)
            raise
        acked, rejected = self._note(events, replies)
        self.previous = view
        self.settled = True
        return PollResult(True, tuple(opened_now) + acked, rejected, unmatched)

    async def _read_tracker(self, tf: TournamentFile) -> list[Event]:
        """Load the ledger and start list from the tracker, opening the tournament if it has none."""
        baseline = await self.tracker.baseline(self.tournament)
        if baseline is not None:
            self.start = StartList(baseline.players)
            self.ledger = Ledger(self.tournament, baseline.seq, dict(baseline.view.games), dict(baseline.view.byes))
            self.stale = False
            return []
        if self.ledger is not None and not self.tracker.can_read:
            self.stale = False
            return []
        (reply,) = await self.tracker.submit([tf.opened])
        if isinstance(reply, Rejected):
            if reply.code == "already-open":  # opened by someone else meanwhile: read it next time
                self.stale = True
            raise FollowError(f"the tracker refused to open {self.tournament!r}: {reply.reason} ({reply.code})")
        self.start = StartList.of(tf.opened.players)
        self.ledger = Ledger(self.tournament, reply.seq or 0)
        self.stale = False
        log.info("follow: %s (seq %s)", describe(tf.opened, self.start), reply.seq)
        return [tf.opened]

    def _note(
        self, events: Sequence[Event], replies: Sequence[Reply]
    ) -> tuple[tuple[Event, ...], tuple[tuple[Event, str, str], ...]]:
        """Apply acknowledged events to the ledger, remember refused ones; log both."""
        assert self.ledger is not None and self.start is not None
        acked: list[Event] = []
        rejected: list[tuple[Event, str, str]] = []
        for event, reply in zip(events, replies, strict=False):
            if isinstance(reply, Acked):
                self.ledger.apply(event)
                acked.append(event)
                seq = "" if reply.seq is None else f" (seq {reply.seq})"
                log.info("follow: %s%s", describe(event, self.start), seq)
            else:
                self.refused.add(event.id)
                rejected.append((event, reply.code, reply.reason))
                # the tracker's state is not what the ledger says: read it again before the next diff
                self.stale = self.tracker.can_read
                log.error("follow: %s rejected (%s): %s", describe(event, self.start), reply.code, reply.reason)
        return tuple(acked), tuple(rejected)

    async def run(self, interval: float, stop: asyncio.Event) -> None:
        """Poll every ``interval`` seconds until ``stop`` is set; back off exponentially on errors.

        Never raises for a failed poll: the error is logged with the delay
        before the next try.
        """
        failures = 0
        while not stop.is_set():
            try:
                await self.poll()
            except (FollowError, FormatError) as exc:
                failures += 1
                delay = backoff(failures, interval)
                log.warning("follow: %s; retrying in %.3g s (failure %d)", exc, delay, failures)
            else:
                if failures:
                    log.info("follow: recovered after %d failed attempt(s)", failures)
                failures = 0
                delay = interval
            with suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await stop.wait()


def backoff(failures: int, interval: float) -> float:
    """Seconds to wait after ``failures`` failed polls in a row: 2×, 4×, 8× … the interval, at most a minute.

    Never less than ``interval`` and never more than ``max(interval, 60)``.
    """
    return min(interval * (1 << min(failures, 32)), max(interval, MAX_BACKOFF))


# -- the command ----------------------------------------------------------------------------------


def run_follow(
    source: str,
    tournament: str,
    *,
    url: str | None,
    token: str,
    broker: str | None,
    interval: float,
    once: bool,
) -> int:
    """``tracker follow``: follow ``source`` into ``tournament``; return the exit code.

    ``url`` (with ``token``) submits over websockets; ``broker`` produces to
    Kafka (then ``url``, when also given, is only read for the tournament's
    state).  With ``once``: read once, submit, exit 0 when everything was
    acknowledged and every name matched, 1 otherwise.  Without: follow until
    SIGINT/SIGTERM, then exit 0.  Returns 2 for unusable options.  Raises
    nothing a user could cause: errors are logged.
    """
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    if not url and not broker:
        log.error("tracker follow: give --url ws://HOST:PORT/ws (with --token) or --broker kafka://HOST:PORT")
        return 2
    if url and not broker and not token:
        log.error("tracker follow: submitting over websockets needs the arbiter token (--token or $TRACKER_TOKEN)")
        return 2
    if interval <= 0:
        log.error("tracker follow: --interval must be positive")
        return 2
    reader = WebsocketTracker(url, token) if url else None
    tracker: Tracker
    if broker:
        tracker = KafkaTracker(broker, reader)
    else:
        assert reader is not None  # checked above: url or broker
        tracker = reader
    follower = Follower(source_for(source), tournament, tracker)
    if once:
        return asyncio.run(_once(follower))
    return asyncio.run(_forever(follower, interval))


async def _once(follower: Follower) -> int:
    try:
        result = await follower.poll()
    except (FollowError, FormatError) as exc:
        log.error("follow: %s", exc)
        return 1
    finally:
        await follower.tracker.aclose()
    kinds = Counter(type(e).__name__ for e in result.acked)
    summary = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items())) or "nothing new"
    log.info("follow: %s → %s: %s", follower.source.name, follower.tournament, summary)
    return 1 if result.rejected or result.unmatched else 0


async def _forever(follower: Follower, interval: float) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        log.info("follow: %s → %s every %g s (Ctrl-C to stop)", follower.source.name, follower.tournament, interval)
        await follower.run(interval, stop)
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        await follower.tracker.aclose()
    return 0


__all__ = [
    "Acked",
    "Baseline",
    "FileSource",
    "FollowError",
    "Follower",
    "HttpSource",
    "KafkaTracker",
    "Ledger",
    "PollResult",
    "Rejected",
    "SourceError",
    "StartList",
    "TrackerUnavailable",
    "View",
    "WebsocketTracker",
    "backoff",
    "name_key",
    "run_follow",
    "source_for",
    "token_key",
    "view_of",
    "view_of_rows",
]
