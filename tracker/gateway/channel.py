"""One tournament's channel as the hub keeps it: its standings, its history, its feeds and its waiting subscribers.

:class:`Channel` is the hub's per-tournament record (:mod:`tracker.gateway.hub`
says how publishing and subscribing use it); a finished tournament's channel
is compacted to its snapshot's bytes, read back on demand.  :class:`OpenChannels`
is the read-only view the HTTP pages list.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec
from websockets.asyncio.server import ServerConnection

from tracker.gateway.delay import Delays
from tracker.gateway.fanout import Feed
from tracker.gateway.frames import Parameters, frame
from tracker.gateway.history import History
from tracker.protocol import Digester, StandingsPayload, snapshot_message

_packed: Final = msgspec.json.Decoder(StandingsPayload)  # a compacted channel's snapshot, read back


class Backlog(list[bytes]):
    """What a subscriber still being sent what it missed will get next; ``delta``: it asked for deltas."""

    __slots__ = ("delta",)

    def __init__(self, delta: bool) -> None:
        super().__init__()
        self.delta = delta


@dataclass(slots=True)
class Channel:
    """One tournament's live state as the gateway sees it.

    ``payload`` is ``None`` while the tournament is not open yet: early
    subscribers (an overlay set up before the event) get an empty snapshot
    with seq 0 and then every update from seq 1 on.  ``resuming`` holds, per
    subscriber still being sent what it missed, the updates published since.
    ``subscribers`` get full updates, ``delta_subscribers`` deltas (each a
    :class:`~tracker.gateway.fanout.Feed` while someone follows it; a
    resuming one says which in its :class:`Backlog`, a delayed one in its
    cursor, :class:`~tracker.gateway.delay.Cursor`).  ``previous`` is the
    standings at the seq before the newest, while the newest update follows
    them (a merge starts from their snapshot).  ``published_at`` is
    when the newest standings were published or installed (Unix s).  A compacted channel (a finished tournament, see
    :meth:`Hub.compact`) keeps its standings only as the snapshot, encoded and
    zlib-compressed: ``payload`` and :meth:`snapshot` decode it when asked.
    """

    tournament: str
    _payload: StandingsPayload | None
    history: History
    resuming: dict[ServerConnection, Backlog] = field(default_factory=dict)
    delays: Delays | None = None
    digester: Digester | None = None
    published_at: float = 0.0
    compacted: bool = False
    _snapshot: bytes | None = None
    _seq: int = 0
    _listed: tuple[str, int, int] = ("", 0, 0)  # (name, rounds, games played): what a listing shows, kept compacted
    previous: StandingsPayload | None = None
    _previous_snapshot: bytes | None = None
    _full: Feed | None = None
    _deltas: Feed | None = None
    _snapshot_frames: dict[Parameters, bytes] | None = None  # the snapshot framed alone, per set of parameters

    @property
    def payload(self) -> StandingsPayload | None:
        if self._payload is None and self.compacted and self._snapshot is not None:
            return _packed.decode(self.snapshot())
        return self._payload

    def set_payload(self, payload: StandingsPayload, previous: StandingsPayload | None = None) -> None:
        self.previous = previous
        self._previous_snapshot = None
        self._payload = payload
        self.published_at = time.time()
        self._seq = payload["seq"]
        self._listed = (payload["name"], payload["rounds"], payload["games_played"])
        self._snapshot = None
        self._snapshot_frames = None
        self.compacted = False

    @property
    def seq(self) -> int:
        return self._seq

    @property
    def opened(self) -> bool:
        return self._payload is not None or self.compacted

    def snapshot(self) -> bytes:
        if self.compacted and self._snapshot is not None:
            return zlib.decompress(self._snapshot)
        if self._snapshot is None:
            self._snapshot = snapshot_message(self.payload or empty_payload(self.tournament))
        return self._snapshot

    def snapshot_frame(self, compression: Parameters) -> bytes:
        """The snapshot as one unmasked text frame compressed alone as ``compression`` says, ready to write.

        Built once per standings and set of parameters, for every subscriber that negotiated them: a frame
        compressed alone (a fresh compressor, nothing before it referred to) is what websockets' own send path
        writes such a connection (:class:`~tracker.gateway.frames.SharedDeflate` compresses every message of a
        connection's own alone), so the very same bytes fit each of them.  In a storm of arrivals the snapshot
        was compressed once per subscriber (issue 40: 8.7% of the server's time).  A compacted channel keeps
        none: it is kept small (its snapshot is decompressed for each subscriber anyway).
        """
        if self.compacted:
            return frame(self.snapshot(), compression)
        built = self._snapshot_frames
        if built is None:
            built = self._snapshot_frames = {}
        data = built.get(compression)
        if data is None:
            data = built[compression] = frame(self.snapshot(), compression)
        return data

    def compact(self, finished_bytes: int) -> None:
        """Keep only the snapshot (compressed) and the newest deltas within ``finished_bytes``."""
        self._snapshot = zlib.compress(self.snapshot(), 9)
        self._snapshot_frames = None
        self._payload = None
        self.previous = self._previous_snapshot = None
        self.compacted = True
        self.digester = None
        self.history.keep_last(finished_bytes)

    @property
    def subscribers(self) -> Feed | frozenset[ServerConnection]:
        """The full updates' followers (an empty set while nobody follows them)."""
        return self._full if self._full is not None else _NOBODY

    @property
    def delta_subscribers(self) -> Feed | frozenset[ServerConnection]:
        """The deltas' followers (an empty set while nobody follows them)."""
        return self._deltas if self._deltas is not None else _NOBODY

    def feeds(self) -> list[Feed]:
        return [feed for feed in (self._full, self._deltas) if feed is not None]

    def live(self, conn: ServerConnection) -> bool:
        return conn in self.subscribers or conn in self.delta_subscribers

    def leave(self, conn: ServerConnection) -> None:
        """``conn`` follows neither feed any more."""
        for feed in self.feeds():
            feed.discard(conn)

    def base(self) -> tuple[bytes, bool]:
        """What a merge starts from: the snapshot of ``previous`` (``True``), or of the newest when the
        standings before it are not known (``False``)."""
        if self.previous is None:
            return self.snapshot(), False
        if self._previous_snapshot is None:
            self._previous_snapshot = snapshot_message(self.previous)
        return self._previous_snapshot, True

    def release_feeds(self) -> None:
        """Let go of the feeds nobody follows any more (their compressors with them)."""
        if self._full is not None and not self._full:
            self._full.close()
            self._full = None
        if self._deltas is not None and not self._deltas:
            self._deltas.close()
            self._deltas = None

    def listed(self) -> dict[str, Any]:
        """What ``/api/tournaments`` shows of it, without decoding a compacted snapshot."""
        name, rounds, games_played = self._listed
        return {"id": self.tournament, "name": name, "rounds": rounds, "games_played": games_played, "seq": self._seq}


_NOBODY: Final[frozenset[ServerConnection]] = frozenset()


def empty_payload(tournament: str) -> StandingsPayload:
    """The standings of a tournament that is not open yet."""
    return {  # the keys in standings_payload's order: a delta from it rebuilds the first update byte for byte
        "tournament": tournament,
        "name": "",
        "seq": 0,
        "provisional": True,
        "basis": "",
        "max_basis": "",
        "rules": "",
        "standings": [],
        "rounds": 0,
        "games_played": 0,
        "codes": [],
        "scoring": {},
    }


class OpenChannels(Mapping[str, StandingsPayload]):
    """A read-only view of the open tournaments: counting or listing them decodes nothing, reading one
    decodes it only when it is compacted."""

    __slots__ = ("_channels",)

    def __init__(self, channels: dict[str, Channel]) -> None:
        self._channels = channels

    def __getitem__(self, tournament: str) -> StandingsPayload:
        channel = self._channels.get(tournament)
        payload = None if channel is None else channel.payload
        if payload is None:
            raise KeyError(tournament)
        return payload

    def __iter__(self) -> Iterator[str]:
        return (tid for tid, channel in list(self._channels.items()) if channel.opened)

    def __len__(self) -> int:
        return sum(1 for channel in self._channels.values() if channel.opened)
