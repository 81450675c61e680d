"""A broadcast that compresses each message once per set of compression parameters, not once per subscriber.

How this works
--------------

``websockets.broadcast`` calls every connection's ``send_text``: with
permessage-deflate, each connection compresses its own copy of the same
bytes (about 48 µs per subscriber for a full 16-player update, most of the
broadcast).  Here a message is compressed once per group of connections
that can be written the very same frame, and that frame is written to each.

**One stream per feed.** The gateway negotiates permessage-deflate with
context takeover allowed (:func:`tracker.gateway.serve.deflate`) and gives
every connection a :class:`SharedDeflate`: the connection's own messages
(acks, snapshots, what a resume sends) are each compressed alone, as without
context takeover, and mark the connection as off any stream; except that, to
a connection on a stream, those of at most :data:`PLAIN_LIMIT` bytes go
uncompressed, which leaves its window as it was (an arbiter's acks do not
disturb the feed it follows).  A feed (one tournament's full updates, or its
deltas) has a :class:`Stream`: one zlib compressor with context takeover per
set of compression parameters, whose successive messages are written, as the
same frames, to every connection of the feed that shares those parameters.
A client's inflater keeps the bytes it decompressed (its window), so a
stream's message may refer back to the stream's earlier messages for a
client that has all of them and nothing compressed in between; each frame
the stream writes is a new position, and a connection remembers the position
its window ends at.  A connection not at the stream's position (it just
subscribed, it was sent a big message of its own, it missed one) is written
the message compressed alone, until the stream starts afresh (a new
compressor: the frame refers to nothing before it, valid for every
connection, which all get it and are at the new position); :class:`Stream`
says when.  A 16-player delta then takes about two fifths of its size
compressed alone (median 200 B against 517 B: ``make bench``, workload 9).

**Connections without a stream** (a client that asked for
``server_no_context_takeover``, messages that are not a feed's, stakes and
cues) get frames compressed alone (a connection on a stream gets one of at
most :data:`PLAIN_LIMIT` bytes uncompressed, as above). Then a message's
compressed bytes depend only on the message and on the parameters the server
compresses with (its window bits and zlib settings; RFC 7692 §7.1.1.1),
never on what the connection sent before, so connections that negotiated the
same parameters can be written the very same frame.

:func:`broadcast` groups the connections by those parameters (no
compression is one more group), builds each group's frame once (with
websockets' own ``Frame.serialize`` and ``PerMessageDeflate`` encoder for a
frame compressed alone: raw deflate, the trailing ``00 00 ff ff`` stripped,
RSV1 set), and gives the same bytes to each connection of the group the
way websockets' own send path does: after anything still queued in the
protocol's outgoing writes (a pong), through the connection's
``send_data``, or, with nothing queued, the one ``transport.write`` that
comes to.  So asyncio's write flow control and
:class:`~tracker.gateway.connection.BoundedConnection` (which stops reading
a client that does not read) see it like any other write.

Bypassing ``send_text`` is safe only for a connection where it would have
done exactly that, so a connection gets a pre-built frame only when

- its protocol is ``OPEN`` (not closing: nothing may follow a close frame);
- neither the protocol nor the connection is in the middle of a fragmented
  message (a data frame in between would corrupt it);
- its extensions are none, or exactly one ``PerMessageDeflate`` without
  local context takeover (a :class:`SharedDeflate` is one): that encoder
  is made new for every message websockets sends, so its later sends do
  not depend on ours.

Any other connection is handed to ``websockets.broadcast``, which decides for
itself (it skips connections that are not open or are mid-fragment); it
falls off its stream, which starts afresh when it next comes to it.
"""

from __future__ import annotations

import traceback
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.asyncio.server import broadcast as websockets_broadcast
from websockets.extensions.permessage_deflate import PerMessageDeflate, ServerPerMessageDeflateFactory
from websockets.frames import CTRL_OPCODES, Frame, Opcode
from websockets.protocol import OPEN
from websockets.typing import ExtensionParameter

Parameters = tuple[int, tuple[tuple[str, object], ...]]
"""How the server compresses for a connection: (window bits, sorted zlib settings); window bits 0: not at all."""

UNCOMPRESSED: Parameters = (0, ())
NOT_SHAREABLE = -1


PLAIN_LIMIT = 2048
"""Bytes up to which a message of a connection's own goes uncompressed to a connection on a stream.

An uncompressed message (RSV1 clear) leaves the client's window as it was
(RFC 7692: the window is that of the compressed messages), so an ack or a
stakes message keeps the connection on its feed's stream; compressing it
alone would save that one client a few hundred bytes at most, and would
make the stream start afresh for every follower of the feed at its next
update (about 300 more bytes each for a 16-player delta).
"""


class SharedDeflate(PerMessageDeflate):
    """permessage-deflate whose connection may follow a :class:`Stream`.

    ``takeover``: the client allowed the server context takeover, so the
    connection may follow a stream at all.  ``position``: the stream
    position the client's window ends at, if any.  Whatever websockets sends
    this connection itself goes uncompressed when the connection is on a
    stream and the message is at most :data:`PLAIN_LIMIT` bytes; otherwise it
    is compressed alone (a new compressor per message, as
    ``local_no_context_takeover`` makes it, which the client accepts whether
    or not it allowed context takeover), and the connection is off any
    stream: the client's window then holds bytes no stream wrote.  Nor is
    an inflater kept between the client's messages, only the window they may
    refer back to (:meth:`decode`).
    """

    def __init__(self, negotiated: PerMessageDeflate) -> None:
        super().__init__(
            negotiated.remote_no_context_takeover,
            True,
            negotiated.remote_max_window_bits,
            negotiated.local_max_window_bits,
            negotiated.compress_settings,
        )
        self.takeover = not negotiated.local_no_context_takeover
        self.position: object | None = None
        self._plain = False  # the message being sent goes uncompressed (its continuation frames too)
        # what the client's messages may refer back to (its context takeover): the end of what they inflated to
        self._window = b""
        if not self.remote_no_context_takeover:
            del self.decoder  # made for each message from the window (decode), not kept between messages

    def decode(self, frame: Frame, *, max_size: int | None = None) -> Frame:
        """websockets' decoding, with no inflater kept between the client's messages.

        With the client's context takeover, an inflater between messages
        holds nothing but its window, the last ``2 ** remote_max_window_bits``
        bytes it inflated (a message ends on a flushed, byte-aligned block:
        RFC 7692 §7.2.1); zlib's own state is about 7 KiB and its window
        4 KiB, for every connection, most of which never send a second
        message.  So only the window's bytes are kept (as many as the client
        sent, at most the window) and each message is inflated by an
        inflater made afresh with them as its dictionary, which decodes the
        very bytes the long-lived one would have.  Raises what websockets
        raises (``ProtocolError``, ``PayloadTooBig``).
        """
        if self.remote_no_context_takeover or frame.opcode in CTRL_OPCODES:
            return super().decode(frame, max_size=max_size)  # websockets makes and drops one per message itself
        if frame.opcode is Opcode.CONT:
            if not self.decode_cont_data:
                return frame
        elif not frame.rsv1:
            return frame  # not compressed: not in the window either (RFC 7692 §6.2)
        else:
            bits = -self.remote_max_window_bits
            self.decoder = zlib.decompressobj(bits, zdict=self._window) if self._window else zlib.decompressobj(bits)
        decoded = super().decode(frame, max_size=max_size)
        size = 1 << max(self.remote_max_window_bits, 9)  # zlib inflates a window of 8 bits as one of 9
        self._window = (self._window + decoded.data)[-size:]
        if frame.fin:
            del self.decoder
        return decoded

    def plain(self, size: int) -> bool:
        """Whether a message of ``size`` bytes, not of its stream, goes uncompressed (:data:`PLAIN_LIMIT`)."""
        return self.position is not None and size <= PLAIN_LIMIT

    def encode(self, frame: Frame) -> Frame:
        if frame.opcode in CTRL_OPCODES:
            return frame
        if frame.opcode is not Opcode.CONT:
            self._plain = self.plain(len(frame.data))
        if self._plain:
            return frame
        self.position = None
        return super().encode(frame)


class SharedDeflateFactory(ServerPerMessageDeflateFactory):
    """The server's permessage-deflate negotiation, unchanged, giving each connection a :class:`SharedDeflate`."""

    def process_request_params(
        self, params: Sequence[ExtensionParameter], accepted_extensions: Sequence[Any]
    ) -> tuple[list[ExtensionParameter], SharedDeflate]:
        response, negotiated = super().process_request_params(params, accepted_extensions)
        return response, SharedDeflate(negotiated)


@dataclass(slots=True)
class Run:
    """A stream's compressor since it last started afresh, the position after its last frame, the debt so far.

    ``debt`` counts the frames written compressed alone to followers off the stream since it started
    afresh; ``frame`` is the last frame :meth:`Stream.advance` built.
    """

    encoder: PerMessageDeflate
    position: object
    debt: int = 0
    frame: bytes = b""


class Stream:
    """One feed's deflate stream with context takeover, per set of compression parameters (see the module docstring).

    **When it starts afresh.**  A follower not at the stream's position (it
    just subscribed, it was sent a big message of its own, it missed a frame)
    cannot decode the stream's next frame.  Starting afresh lets it in, but
    costs every follower one frame compressed alone; not starting afresh
    costs the ones off the stream a frame compressed alone each, at every
    update until it does.  So the off ones are written a frame compressed
    alone (one more compression, for all of them) and their frames are
    counted; once that count reaches the number of followers on the stream,
    it starts afresh (the rent-or-buy rule: never more than twice the
    frames compressed alone that the best choice in hindsight would have
    written).  With ten thousand followers and joins at every update, the
    stream keeps going for dozens of updates, not one.
    """

    __slots__ = ("_runs",)

    def __init__(self) -> None:
        self._runs: dict[Parameters, Run] = {}

    def frames(
        self, message: bytes, compression: Parameters, followers: list[ServerConnection]
    ) -> list[tuple[bytes, object | None, list[ServerConnection]]]:
        """``(frame, position after it, the followers to write it to)`` carrying ``message`` to ``followers``.

        Followers at the stream's position get its next frame, which may
        refer back to its earlier ones; the others get ``message`` compressed
        alone (position ``None``), or, when the stream starts afresh, everyone
        gets its first frame.  Built by websockets' own encoder, which keeps
        its compressor between frames.
        """
        run = self._runs.get(compression)
        on: list[ServerConnection] = []
        off: list[ServerConnection] = []
        for conn in followers:
            (on if run is not None and _deflate(conn).position is run.position else off).append(conn)
        if run is None or run.debt + len(off) >= len(on):
            run = self._runs[compression] = _fresh(compression)
            on, off = followers, []
        run.debt += len(off)
        run.position = object()
        out: list[tuple[bytes, object | None, list[ServerConnection]]] = [
            (Frame(Opcode.TEXT, message).serialize(mask=False, extensions=[run.encoder]), run.position, on)
        ]
        if off:
            out.append((frame(message, compression), None, off))
        return out

    def position(self, compression: Parameters) -> object | None:
        """Where a follower's window must end to be written the stream's next frame (``None``: no stream yet)."""
        run = self._runs.get(compression)
        return None if run is None else run.position

    def advance(self, message: bytes, compression: Parameters, on: int, off: int) -> tuple[Run, object | None]:
        """Build the stream's next frame carrying ``message`` for ``compression``: ``(run, prior)``.

        ``on`` followers are at :meth:`position`, ``off`` followers are not (they would be written the
        message compressed alone): the same rent-or-buy rule as :meth:`frames`.  The frame is
        ``run.frame``, the position after it ``run.position``.  ``prior`` is the position a follower's
        window must end at to be written it; ``None`` when the stream started afresh (the frame refers
        to nothing before it: every follower may be written it).  For a feed that writes its followers
        a slice at a time (:mod:`tracker.gateway.fanout`).
        """
        run = self._runs.get(compression)
        prior: object | None
        if run is None or run.debt + off >= on:
            run = self._runs[compression] = _fresh(compression)
            prior = None
        else:
            prior = run.position
            run.debt += off
        run.position = object()
        run.frame = Frame(Opcode.TEXT, message).serialize(mask=False, extensions=[run.encoder])
        return run, prior


def _fresh(compression: Parameters) -> Run:
    """A stream's run started afresh: a new compressor with context takeover, no frame yet."""
    bits, settings = compression
    # remote_no_context_takeover: no decoder is made; local context takeover: one compressor for every frame
    return Run(PerMessageDeflate(True, False, 15, bits, dict(settings)), None)


_SHAREABLE = (PerMessageDeflate, SharedDeflate)


def window(conn: ServerConnection) -> int:
    """The window bits ``conn``'s messages are compressed with (0: none), or :data:`NOT_SHAREABLE`.

    Not shareable (it may not be written a pre-built frame): a connection that is not open, is sending a fragmented
    message, or negotiated extensions whose output depends on what it sent
    before (see the module docstring).  A compressing connection's zlib
    settings are its only extension's ``compress_settings``.
    """
    protocol = conn.protocol
    if protocol.state is not OPEN or protocol.expect_continuation_frame or conn.send_in_progress is not None:
        return NOT_SHAREABLE
    return _bits(protocol.extensions)


def _bits(extensions: Sequence[object]) -> int:
    """The window bits of a connection's negotiated extensions (0: none), or :data:`NOT_SHAREABLE`."""
    if not extensions:
        return 0
    if len(extensions) == 1:
        deflate = extensions[0]
        if isinstance(deflate, PerMessageDeflate) and type(deflate) in _SHAREABLE and deflate.local_no_context_takeover:
            return int(deflate.local_max_window_bits)
    return NOT_SHAREABLE


def parameters(conn: ServerConnection) -> Parameters | None:
    """How ``conn``'s messages are compressed, or ``None`` when it may not share a pre-built frame (:func:`window`)."""
    if window(conn) == NOT_SHAREABLE:
        return None
    return negotiated(conn)


def negotiated(conn: ServerConnection) -> Parameters | None:
    """How ``conn``'s messages are compressed as its handshake settled it, or ``None`` when its extensions never let
    it share a pre-built frame: :func:`parameters` without what holds only for now (the connection open, no
    message of its own half sent), which whoever writes it a pre-built frame checks at the time."""
    extensions = conn.protocol.extensions
    bits = _bits(extensions)
    if bits == NOT_SHAREABLE:
        return None
    if bits == 0:
        return UNCOMPRESSED
    deflate = extensions[0]
    assert isinstance(deflate, PerMessageDeflate)
    return bits, tuple(sorted(deflate.compress_settings.items()))


def frame(message: bytes, compression: Parameters) -> bytes:
    """The unmasked text frame carrying ``message`` (UTF-8), compressed as ``compression`` says, ready to write.

    Built by websockets itself: the same bytes ``send_text`` writes to a
    connection that negotiated these parameters without server context
    takeover.
    """
    bits, settings = compression
    if not bits:
        return Frame(Opcode.TEXT, message).serialize(mask=False)
    # remote_no_context_takeover: no decoder is made, this extension only encodes
    deflate = PerMessageDeflate(True, True, 15, bits, dict(settings))
    return Frame(Opcode.TEXT, message).serialize(mask=False, extensions=[deflate])


def broadcast(conns: Iterable[ServerConnection], message: bytes, stream: Stream | None = None) -> None:
    """Send ``message`` (UTF-8 text) to every one of ``conns`` that is open, without waiting.

    Compresses and frames it once per distinct set of compression
    parameters among them, on ``stream`` (a feed's) for the connections
    that may follow it; connections that cannot share a frame go through
    ``websockets.broadcast``.  Like it, a write that fails is logged and
    skipped and never stops the others; it applies no back-pressure (the
    hub bounds unsent bytes before calling this).

    The per-connection work is kept to checks and the write: connections
    are grouped by window bits (and whether they follow the stream), and a
    group's zlib settings are the first member's, shared by identity (one
    server factory makes them all) or equal; a connection with other
    settings at the same window goes through ``websockets.broadcast``.
    """
    groups: dict[tuple[int, bool], tuple[dict[str, Any], list[ServerConnection]]] = {}
    others: list[ServerConnection] = []
    for conn in conns:
        bits = window(conn)
        if bits == NOT_SHAREABLE:
            others.append(conn)
            continue
        deflate = _deflate(conn) if bits else None
        if stream is None and isinstance(deflate, SharedDeflate) and deflate.plain(len(message)):
            bits, deflate = 0, None  # kept on its stream: see PLAIN_LIMIT
        settings = deflate.compress_settings if isinstance(deflate, PerMessageDeflate) else NO_SETTINGS
        key = (bits, stream is not None and isinstance(deflate, SharedDeflate) and deflate.takeover)
        group = groups.get(key)
        if group is None:
            groups[key] = (settings, [conn])
        elif group[0] is settings or group[0] == settings:
            group[1].append(conn)
        else:
            others.append(conn)
    for (bits, shared), (settings, members) in groups.items():
        compression = (bits, tuple(sorted(settings.items())))
        if shared:
            assert stream is not None
            writes = stream.frames(message, compression, members)
        else:
            writes = [(frame(message, compression), None, members)]
        for data, position, conns in writes:
            for conn in conns:
                deflate = _deflate(conn) if bits else None
                if isinstance(deflate, SharedDeflate):
                    deflate.position = position  # a frame compressed alone leaves the client's window off any stream
                try:
                    write(conn, data)
                except Exception as exc:  # as websockets.broadcast: one failed write never stops the others
                    if isinstance(deflate, SharedDeflate):
                        deflate.position = None
                    conn.logger.warning(
                        "skipped broadcast: failed to write message: %s",
                        traceback.format_exception_only(exc)[0].strip(),
                    )
    if others:
        websockets_broadcast(others, message, text=True)


def _deflate(conn: ServerConnection) -> Any:
    return conn.protocol.extensions[0]


NO_SETTINGS: dict[str, Any] = {}


def unsettle(conn: ServerConnection) -> None:
    """Every feed's follower of ``conn`` gets its next visit checked in full (:class:`tracker.gateway.fanout.Follower`):
    something besides the feeds' walks is written to it.  A stand-in connection keeps no ``followers``."""
    for follower in getattr(conn, "followers", ()):
        follower.settled = False


def write(conn: ServerConnection, data: bytes) -> None:
    """Write a serialized frame to an open ``conn`` as its ``send_text`` + ``send_data`` would.

    Behind anything still queued in the protocol's outgoing writes (a pong),
    through the connection's ``send_data``; with nothing queued, that is
    exactly one ``transport.write(data)``, made directly.
    """
    unsettle(conn)  # written besides its feeds' walks
    writes = conn.protocol.writes
    if writes:
        writes.append(data)
        conn.send_data()
    else:
        conn.transport.write(data)
