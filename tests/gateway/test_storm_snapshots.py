"""A storm of subscribers, all handshakes in flight at once: every one served, every first snapshot right (issue 40).

The snapshot a subscriber gets first is framed once per set of compression parameters and written to every
connection that negotiated them (``Channel.snapshot_frame``), not compressed again for each.  So here clients
that negotiate different parameters (websockets' default offer, the server's context takeover refused, a smaller
server window, no compression at all) arrive together, hundreds in flight; each must complete its handshake, and
decode a snapshot whose text is the very text every other client decoded and whose standings are the API's.  Then
one result: each client must decode the update after the snapshot (its inflater is where the server believes).

Real pieces: ``tracker up``, websockets' own client (which inflates and checks every frame it reads).
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.extensions.base import ClientExtensionFactory
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory

from tests.builders import TID, game, opened
from tests.conftest import RunningTracker
from tests.wsclient import reply_to, submit

PER_KIND = 90  # connections per kind of compression, all opened at once
KINDS: dict[str, list[ClientExtensionFactory] | None] = {
    "default": [ClientPerMessageDeflateFactory(client_max_window_bits=True)],
    "no server takeover": [ClientPerMessageDeflateFactory(server_no_context_takeover=True)],
    "server window 10": [ClientPerMessageDeflateFactory(server_max_window_bits=10, client_max_window_bits=True)],
    "none": None,
}


async def _subscriber(url: str, extensions: list[ClientExtensionFactory] | None) -> tuple[ClientConnection, str]:
    ws = await connect(url, extensions=extensions, compression=None, open_timeout=60, ping_interval=None)
    await ws.send(json.dumps({"type": "subscribe", "tournament": TID}))
    async with asyncio.timeout(60):
        first = await ws.recv()
    assert isinstance(first, str)
    return ws, first


def _standings(tracker: RunningTracker) -> Any:
    with urllib.request.urlopen(f"{tracker.http_url}/api/tournaments/{TID}/standings", timeout=30) as resp:
        return json.loads(resp.read())


def test_a_storm_of_subscribers_all_get_the_same_snapshot_whatever_they_negotiated(
    tracker_factory: Callable[..., RunningTracker],
) -> None:
    tracker = tracker_factory("--max-connections-per-address", "2000", "--max-connections", "2000")

    async def storm() -> None:
        async with connect(tracker.ws_url) as arbiter:
            event = opened(6)
            await submit(arbiter, tracker.token, event)
            assert (await reply_to(arbiter, event.id, timeout=30))["type"] == "ack"
            standings = await asyncio.to_thread(_standings, tracker)
            kinds = [kind for kind in KINDS for _ in range(PER_KIND)]
            opened_all = await asyncio.gather(
                *(_subscriber(tracker.ws_url, KINDS[kind]) for kind in kinds), return_exceptions=True
            )
            failed = [repr(x) for x in opened_all if isinstance(x, BaseException)]
            assert failed == []  # every handshake of the storm served
            subscribers = [x for x in opened_all if not isinstance(x, BaseException)]
            try:
                texts = {first for _, first in subscribers}
                assert len(texts) == 1  # the very same text, however it was compressed
                snapshot = json.loads(texts.pop())
                assert snapshot["type"] == "snapshot" and snapshot["seq"] == standings["seq"]
                assert snapshot["standings"] == standings["standings"]
                negotiated = {
                    kind: {str(ws.protocol.extensions) for ws, _ in subscribers[k * PER_KIND : (k + 1) * PER_KIND]}
                    for k, kind in enumerate(KINDS)
                }
                assert len({frozenset(v) for v in negotiated.values()}) == len(KINDS)  # four kinds, told apart

                result = game(1, 1, 6, "1-0")
                await submit(arbiter, tracker.token, result)
                assert (await reply_to(arbiter, result.id, timeout=30))["type"] == "ack"

                async def next_of(ws: ClientConnection) -> Any:
                    async with asyncio.timeout(60):
                        return json.loads(await ws.recv())

                updates = await asyncio.gather(*(next_of(ws) for ws, _ in subscribers))
                assert {(u["type"], u["seq"]) for u in updates} == {("update", snapshot["seq"] + 1)}
                assert len({json.dumps(u, sort_keys=True) for u in updates}) == 1
            finally:
                await asyncio.gather(*(ws.close() for ws, _ in subscribers), return_exceptions=True)

    asyncio.run(storm())
