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
does: appended to the protocol's outgoing writes, after anything already
queued there (a pong), and flushed by the connection's ``send_data``.  That
is one ``transport.write``, so asyncio's write flow control and
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

from websockets.asyncio.server import ServerConnection
from websockets.asyncio.server import broadcast as websockets_broadcast
from websockets.extensions.permessage_deflate import PerMessageDeflate
from websockets.frames import Frame, Opcode
from websockets.protocol import OPEN

Parameters = tuple[int, tuple[tuple[str, object], ...]]
"""How the server compresses for a connection: (window bits, sorted zlib settings); window bits 0: not at all."""

UNCOMPRESSED: Parameters = (0, ())


def parameters(conn: ServerConnection) -> Parameters | None:
    """How ``conn``'s messages are compressed, or ``None`` when it may not share a pre-built frame.

    ``None`` for a connection that is not open, is sending a fragmented
    message, or negotiated extensions whose output depends on what it sent
    before (see the module docstring).
    """
    protocol = conn.protocol
    if protocol.state is not OPEN or protocol.expect_continuation_frame or conn.send_in_progress is not None:
        return None
    extensions = protocol.extensions
    if not extensions:
        return UNCOMPRESSED
    if len(extensions) == 1:
        deflate = extensions[0]
        if type(deflate) is PerMessageDeflate and deflate.local_no_context_takeover:
            return deflate.local_max_window_bits, tuple(sorted(deflate.compress_settings.items()))
    return None


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
    """
    groups: dict[Parameters, list[ServerConnection]] = {}
    others: list[ServerConnection] = []
    for conn in conns:
        compression = parameters(conn)
        if compression is None:
            others.append(conn)
        else:
            groups.setdefault(compression, []).append(conn)
    for compression, members in groups.items():
        data = frame(message, compression)
        for conn in members:
            try:
                conn.protocol.writes.append(data)  # after a pong still queued, as send_text would
                conn.send_data()
            except Exception as exc:  # as websockets.broadcast: one failed write never stops the others
                conn.logger.warning(
                    "skipped broadcast: failed to write message: %s",
                    traceback.format_exception_only(exc)[0].strip(),
                )
    if others:
        websockets_broadcast(others, message, text=True)
