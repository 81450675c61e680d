"""A broadcast that compresses each message once per set of compression parameters, not once per subscriber.

How this works
--------------

``websockets.broadcast`` calls every connection's ``send_text``: with
permessage-deflate, each connection compresses its own copy of the same
bytes (about 48 µs per subscriber for a full 16-player update, most of the
broadcast).  The gateway negotiates permessage-deflate with
``server_no_context_takeover`` (:func:`tracker.gateway.serve.deflate`), so
the server compresses every message afresh (RFC 7692 §7.1.1.1): a message's
compressed bytes then depend only on the message and on the parameters the
server compresses with (its window bits and zlib settings), never on what
the connection sent before.  Connections that negotiated the same
parameters can be written the very same frame.

:func:`broadcast` groups the connections by those parameters (no
compression is one more group), builds each group's frame once with
websockets' own ``Frame.serialize`` and ``PerMessageDeflate`` encoder (raw
deflate, the trailing ``00 00 ff ff`` stripped, RSV1 set), and gives the same
bytes to each connection of the group the way websockets' own send path
does: after anything still queued in the protocol's outgoing writes (a
pong), through the connection's ``send_data``, or, with nothing queued, the
one ``transport.write`` that comes to.  So asyncio's write flow control and
:class:`~tracker.gateway.connection.BoundedConnection` (which stops reading
a client that does not read) see it like any other write.

Bypassing ``send_text`` is safe only for a connection where it would have
done exactly that, so a connection gets the shared frame only when

- its protocol is ``OPEN`` (not closing: nothing may follow a close frame);
- neither the protocol nor the connection is in the middle of a fragmented
  message (a data frame in between would corrupt it);
- its extensions are none, or exactly one ``PerMessageDeflate`` without
  local context takeover: that encoder is made new for every message
  websockets sends, so its later sends do not depend on ours.

Any other connection is handed to ``websockets.broadcast``, which decides for
itself (it skips connections that are not open or are mid-fragment).
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.asyncio.server import broadcast as websockets_broadcast
from websockets.extensions.permessage_deflate import PerMessageDeflate
from websockets.frames import Frame, Opcode
from websockets.protocol import OPEN

Parameters = tuple[int, tuple[tuple[str, object], ...]]
"""How the server compresses for a connection: (window bits, sorted zlib settings); window bits 0: not at all."""

UNCOMPRESSED: Parameters = (0, ())
NOT_SHAREABLE = -1


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
    extensions = protocol.extensions
    if not extensions:
        return 0
    if len(extensions) == 1:
        deflate = extensions[0]
        if type(deflate) is PerMessageDeflate and deflate.local_no_context_takeover:
            return deflate.local_max_window_bits
    return NOT_SHAREABLE


def parameters(conn: ServerConnection) -> Parameters | None:
    """How ``conn``'s messages are compressed, or ``None`` when it may not share a pre-built frame (:func:`window`)."""
    bits = window(conn)
    if bits == NOT_SHAREABLE:
        return None
    if bits == 0:
        return UNCOMPRESSED
    deflate = conn.protocol.extensions[0]
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


def broadcast(conns: Iterable[ServerConnection], message: bytes) -> None:
    """Send ``message`` (UTF-8 text) to every one of ``conns`` that is open, without waiting.

    Compresses and frames it once per distinct set of compression
    parameters among them; connections that cannot share a frame go
    through ``websockets.broadcast``.  Like it, a write that fails is logged
    and skipped and never stops the others; it applies no back-pressure
    (the hub bounds unsent bytes before calling this).

    The per-connection work is kept to checks and the write: connections
    are grouped by window bits, and a group's zlib settings are the first
    member's, shared by identity (one server factory makes them all) or
    equal; a connection with other settings at the same window goes
    through ``websockets.broadcast``.
    """
    groups: dict[int, tuple[dict[str, Any], list[ServerConnection]]] = {}
    others: list[ServerConnection] = []
    for conn in conns:
        bits = window(conn)
        if bits == NOT_SHAREABLE:
            others.append(conn)
            continue
        deflate = conn.protocol.extensions[0] if bits else None
        settings = deflate.compress_settings if isinstance(deflate, PerMessageDeflate) else NO_SETTINGS
        group = groups.get(bits)
        if group is None:
            groups[bits] = (settings, [conn])
        elif group[0] is settings or group[0] == settings:
            group[1].append(conn)
        else:
            others.append(conn)
    for bits, (settings, members) in groups.items():
        data = frame(message, (bits, tuple(sorted(settings.items()))))
        for conn in members:
            try:
                write(conn, data)
            except Exception as exc:  # as websockets.broadcast: one failed write never stops the others
                conn.logger.warning(
                    "skipped broadcast: failed to write message: %s",
                    traceback.format_exception_only(exc)[0].strip(),
                )
    if others:
        websockets_broadcast(others, message, text=True)


NO_SETTINGS: dict[str, Any] = {}


def write(conn: ServerConnection, data: bytes) -> None:
    """Write a serialized frame to an open ``conn`` as its ``send_text`` + ``send_data`` would.

    Behind anything still queued in the protocol's outgoing writes (a pong),
    through the connection's ``send_data``; with nothing queued, that is
    exactly one ``transport.write(data)``, made directly.
    """
    writes = conn.protocol.writes
    if writes:
        writes.append(data)
        conn.send_data()
    else:
        conn.transport.write(data)
