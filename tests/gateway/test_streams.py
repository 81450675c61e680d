"""A feed's deflate stream, against every order of joins, misses and messages of a connection's own.

Property: whatever happens between the frames (followers joining and
leaving, a broadcast that skips some of them, small and big messages of a
connection's own, messages of no feed), every client decodes exactly the
messages it was sent, in order, with a permessage-deflate inflater that
keeps its window between messages (what browsers and the websockets client
do).  The connections are stand-ins with the attributes
:func:`tracker.gateway.frames.broadcast` reads (an open protocol, its
:class:`~tracker.gateway.frames.SharedDeflate`, a transport) and the
clients decode the very bytes written, so the stream, the positions and
the rent-or-buy restarts are all exercised, without sockets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from websockets.extensions.permessage_deflate import PerMessageDeflate
from websockets.frames import Frame, Opcode
from websockets.protocol import OPEN

from tracker.gateway import frames

SETTINGS = {"memLevel": 5}


@dataclass
class Client:
    """One connection: the server's side (what broadcast reads and writes to) and the client's inflater."""

    inflater: PerMessageDeflate = field(default_factory=lambda: PerMessageDeflate(False, False, 12, 12))
    wire: bytearray = field(default_factory=bytearray)
    expected: list[str] = field(default_factory=list)
    conn: Any = None

    def __post_init__(self) -> None:
        negotiated = PerMessageDeflate(False, False, 12, 12, SETTINGS)  # context takeover allowed both ways
        deflate = frames.SharedDeflate(negotiated)
        protocol = SimpleNamespace(state=OPEN, expect_continuation_frame=False, extensions=[deflate], writes=[])
        transport = SimpleNamespace(write=self.wire.extend)
        self.conn = SimpleNamespace(protocol=protocol, send_in_progress=None, transport=transport)

    def own(self, text: str) -> None:
        """A message of its own, sent the way websockets' send_text does (through the extension)."""
        self.wire.extend(
            Frame(Opcode.TEXT, text.encode()).serialize(mask=False, extensions=self.conn.protocol.extensions)
        )
        self.expected.append(text)

    def received(self) -> list[str]:
        """Every message in the bytes written so far, decoded as the client does."""
        out = []
        data = bytes(self.wire)
        at = 0
        while at < len(data):
            head, length = data[at], data[at + 1] & 0x7F
            at += 2
            if length == 126:
                length, at = int.from_bytes(data[at : at + 2], "big"), at + 2
            elif length == 127:
                length, at = int.from_bytes(data[at : at + 8], "big"), at + 8
            assert head & 0x80 and head & 0x0F == Opcode.TEXT  # one final text frame per message
            frame = Frame(Opcode.TEXT, data[at : at + length], rsv1=bool(head & 0x40))
            out.append(self.inflater.decode(frame).data.decode())
            at += length
        return out


def update(seq: int, size: int) -> str:
    """An update-like message: most of its bytes repeat from one seq to the next, as standings do."""
    rows = [{"start_no": k, "points": (k * seq) % 5 / 2, "line": "1=0" * (k % 7)} for k in range(size)]
    return json.dumps({"type": "update", "seq": seq, "standings": rows})


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("join"), st.integers(0, 0)),
        st.tuples(st.just("leave"), st.integers(0, 9)),
        st.tuples(st.just("publish"), st.integers(1, 30)),  # the size of the update
        st.tuples(st.just("skip"), st.integers(0, 9)),  # publish, with that follower left out (as when it is busy)
        st.tuples(st.just("own small"), st.integers(0, 9)),
        st.tuples(st.just("own big"), st.integers(0, 9)),
        st.tuples(st.just("no feed"), st.integers(0, 9)),  # a small message of no feed to that one (stakes, a cue)
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_every_follower_decodes_every_message_it_was_sent(ops: list[tuple[str, int]]) -> None:
    stream = frames.Stream()
    followers: list[Client] = [Client()]
    everyone = list(followers)
    seq = 0

    def publish(to: list[Client], size: int) -> None:
        nonlocal seq
        seq += 1
        message = update(seq, size)
        frames.broadcast([c.conn for c in to], message.encode(), stream)
        for client in to:
            client.expected.append(message)

    for op, k in ops:
        target = followers[k % len(followers)] if followers else None
        if op == "join":
            joined = Client()
            joined.own(update(0, 12))  # its snapshot
            followers.append(joined)
            everyone.append(joined)
        elif op == "leave" and target is not None and len(followers) > 1:
            followers.remove(target)
        elif op == "publish":
            publish(followers, k)
        elif op == "skip" and target is not None:
            publish([c for c in followers if c is not target], 10)
        elif op == "own small" and target is not None:
            target.own('{"type":"ack","id":"e1","seq":1}')
        elif op == "own big" and target is not None:
            target.own(json.dumps({"type": "error", "detail": "x" * (frames.PLAIN_LIMIT + 1)}))
        elif op == "no feed" and target is not None:
            frames.broadcast([target.conn], b'{"type":"cue","seq":1}')
            target.expected.append('{"type":"cue","seq":1}')
    publish(followers, 16)  # one more, after whatever came last
    for client in everyone:
        assert client.received() == client.expected


def test_followers_that_stay_get_frames_referring_back() -> None:
    """The property above holds for frames compressed alone too: check the stream really refers back."""
    stream = frames.Stream()
    clients = [Client() for _ in range(3)]
    sizes = []
    for seq in range(1, 11):
        before = len(clients[0].wire)
        frames.broadcast([c.conn for c in clients], update(seq, 20).encode(), stream)
        sizes.append(len(clients[0].wire) - before)
    alone = [len(frames.frame(update(seq, 20).encode(), (12, tuple(SETTINGS.items())))) for seq in range(1, 11)]
    assert sizes[0] == alone[0]
    assert all(ours < single / 2 for ours, single in zip(sizes[1:], alone[1:], strict=True)), (sizes, alone)
    for client in clients:
        assert client.received() == [update(seq, 20) for seq in range(1, 11)]
