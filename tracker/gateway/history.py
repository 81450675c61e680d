"""One tournament's recent updates, kept as field deltas for resumes: bounded in count and in bytes.

A resume with ``since`` gets the updates it missed from here (a delta
subscriber the deltas as they were sent, a full subscriber the full updates
rebuilt from them), or a snapshot when they are no longer all kept.  The
newest deltas are kept as they are; older ones are compressed a block at a
time, since consecutive deltas repeat each other's keys and names.
"""

from __future__ import annotations

import time
import zlib
from array import array
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import accumulate, islice
from typing import Any, Final

import msgspec

from tracker.protocol import StandingsPayload, apply_delta, encode, full_update

_plain: Final = msgspec.json.Decoder()  # untyped: numbers keep their JSON kind, so re-encoding gives the same bytes


BLOCK: Final = 8  # deltas compressed together (zlib) once newer ones follow: about a fifth of their bytes


@dataclass(slots=True, frozen=True)
class _Block:
    """Deltas ``first``, ``first + 1``, … compressed together: ``ends``, each one's end in the text; ``at``, when
    each was published (Unix s)."""

    first: int
    ends: array[int]
    at: array[float]
    data: bytes

    @classmethod
    def seal(cls, entries: list[tuple[int, bytes, float]]) -> _Block:
        ends = array("I", accumulate(len(data) for _, data, _ in entries))
        at = array("d", (published for _, _, published in entries))
        return cls(entries[0][0], ends, at, zlib.compress(b"".join(data for _, data, _ in entries)))

    def entries(self) -> list[tuple[int, bytes, float]]:
        """The deltas, oldest first: (seq, message, published at)."""
        text = zlib.decompress(self.data)
        starts = (0, *self.ends[:-1])
        return [(self.first + k, text[starts[k] : end], self.at[k]) for k, end in enumerate(self.ends)]


@dataclass(slots=True)
class History:
    """The recent updates of one tournament as deltas: at most ``count`` of them and ``size`` bytes.

    ``base`` is the encoded standings at ``base_seq``, the seq before the first delta kept: the full
    updates are rebuilt from it (:meth:`full_after`), so a full subscriber's resume costs no more memory
    than a delta subscriber's.  ``None`` once the tournament is compacted (full resumes get a snapshot).
    The newest deltas are kept as they are (``kept``, fewer than :data:`BLOCK` older than the newest);
    older ones are compressed :data:`BLOCK` at a time (``sealed``): consecutive deltas of one tournament
    repeat each other's keys and names, so a block weighs about a fifth of its deltas, and a live
    tournament's history is most of what the hub holds for it.  ``size`` and ``weight`` count the
    deltas' own bytes (what a resume sends), not the compressed ones.  Trimming drops the oldest deltas
    down to three quarters of the bound at once and folds them into ``base``: one decode and encode of
    the standings per trim, not per update.
    """

    count: int
    size: int
    base: bytes | None = None
    base_seq: int = 0
    base_at: float = 0.0  # when the standings at base_seq were published (Unix s)
    sealed: deque[_Block] = field(default_factory=deque)
    kept: list[tuple[int, bytes, float]] = field(default_factory=list)  # (seq, delta, published at, Unix s)
    weight: int = 0  # bytes of the deltas kept
    held: int = 0  # how many deltas are kept

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        """The deltas kept, oldest first: (seq, message)."""
        return ((seq, data) for seq, data, _ in self._oldest_first())

    def _oldest_first(self) -> Iterator[tuple[int, bytes, float]]:
        for block in list(self.sealed):
            yield from block.entries()
        yield from list(self.kept)

    def _newest_first(self) -> Iterator[tuple[int, bytes, float]]:
        yield from reversed(list(self.kept))
        for block in reversed(list(self.sealed)):
            yield from reversed(block.entries())

    @property
    def first(self) -> int | None:
        """The seq of the oldest delta kept (``None``: none is)."""
        return self.sealed[0].first if self.sealed else self.kept[0][0] if self.kept else None

    def reset(self, payload: StandingsPayload | None, seq: int) -> None:
        """Forget every delta; full updates rebuild from ``payload`` (at ``seq``) on, or never (``None``)."""
        self.base = None if payload is None else encode(payload)
        self.base_seq = seq
        self.base_at = time.time() if seq else 0.0
        self.sealed.clear()
        self.kept = []
        self.weight = self.held = 0

    def append(self, seq: int, delta: bytes) -> None:
        if len(self.kept) >= BLOCK:
            self.sealed.append(_Block.seal(self.kept))
            self.kept = []
        self.kept.append((seq, delta, time.time()))
        self.weight += len(delta)
        self.held += 1
        if self.held > self.count or self.weight > self.size:
            self._trim(min(self.count * 3 // 4, self.held - 1), self.size * 3 // 4)

    def _trim(self, count: int, size: int) -> None:
        """Drop the oldest deltas until at most ``count`` of them and ``size`` bytes are kept (at least one)."""
        dropped: list[bytes] = []
        while self.held > 1 and (self.held > count or self.weight > size):
            entries = self.sealed.popleft().entries() if self.sealed else self.kept
            while entries and self.held > 1 and (self.held > count or self.weight > size):
                seq, data, at = entries.pop(0)
                self.weight -= len(data)
                self.held -= 1
                dropped.append(data)
                self.base_seq, self.base_at = seq, at
            if entries and entries is not self.kept:
                self.sealed.appendleft(_Block.seal(entries))
        if self.base is not None and dropped:
            payload: dict[str, Any] = _plain.decode(self.base)
            for data in dropped:
                payload = apply_delta(payload, _plain.decode(data))
            self.base = encode(payload)

    def keep_last(self, size: int) -> None:
        """Keep only the newest deltas that fit in ``size`` bytes (at least one), and no ``base``."""
        self.base = None
        self._trim(self.held, size)

    def recent(self, n: int) -> list[tuple[int, bytes, float]]:
        """The last ``n`` deltas kept, oldest first: (seq, message, published at)."""
        newest = list(islice(self._newest_first(), max(n, 0)))
        newest.reverse()
        return newest

    def deltas_after(self, since: int, cap: int) -> list[bytes] | None:
        """The deltas after ``since`` when all of them are kept and weigh at most ``cap`` bytes, else ``None``."""
        first = self.first
        if first is None or first > since + 1:
            return None
        missed: list[bytes] = []
        total = 0
        for seq, message, _ in self._newest_first():
            if seq <= since:
                break
            total += len(message)
            if total > cap:
                return None
            missed.append(message)
        missed.reverse()
        return missed

    def full_after(self, since: int, cap: int) -> list[bytes] | None:
        """The full updates after ``since``, rebuilt from ``base`` and the deltas, when they weigh at most
        ``cap`` bytes; ``None`` when they are not all kept (or the history has no base)."""
        if self.base is None or not self.held or since < self.base_seq:
            return None
        payload: dict[str, Any] = _plain.decode(self.base)
        missed: list[bytes] = []
        total = 0
        for seq, data, _ in self._oldest_first():
            delta = _plain.decode(data)
            payload = apply_delta(payload, delta)
            if seq > since:
                message = full_update(payload, delta)
                total += len(message)
                if total > cap:
                    return None
                missed.append(message)
        return missed

    def covers(self, since: int) -> bool:
        """Whether every delta after ``since`` is kept (or there is none after it)."""
        newest = self.kept[-1][0] if self.kept else self.base_seq
        first = self.first
        return since >= newest or (first is not None and first <= since + 1)

    def after(self, since: int) -> list[tuple[int, bytes, float]]:
        """The deltas kept after ``since``, oldest first: (seq, message, published at)."""
        newer = []
        for entry in self._newest_first():
            if entry[0] <= since:
                break
            newer.append(entry)
        newer.reverse()
        return newer

    def due(self, before: float) -> int | None:
        """The seq of the newest standings published at or before ``before`` (Unix s) that this history can
        rebuild (its base or a delta kept), ``None`` when even its base is newer."""
        for seq, _, at in self._newest_first():
            if at <= before:
                return seq
        return self.base_seq if self.base_at <= before else None

    def standings_at(self, seq: int) -> dict[str, Any] | None:
        """The standings payload at ``seq`` rebuilt from the base and the deltas, ``None`` when not kept."""
        if self.base is None or seq < self.base_seq:
            return None
        payload: dict[str, Any] = _plain.decode(self.base)
        if seq == self.base_seq:
            return payload
        for number, data, _ in self._oldest_first():
            payload = apply_delta(payload, _plain.decode(data))
            if number == seq:
                return payload
        return None

    def fulls_after(self, since: int, until: int) -> list[tuple[int, bytes, float]] | None:
        """The full updates after ``since`` up to ``until`` with their publish times, rebuilt from the base;
        ``None`` when they are not all kept (or the history has no base)."""
        if self.base is None or since < self.base_seq:
            return None
        payload: dict[str, Any] = _plain.decode(self.base)
        out = []
        for seq, data, at in self._oldest_first():
            if seq > until:
                break
            delta = _plain.decode(data)
            payload = apply_delta(payload, delta)
            if seq > since:
                out.append((seq, full_update(payload, delta), at))
        return out
