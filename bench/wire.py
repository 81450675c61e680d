"""Workload 9: bytes per update on the wire, full update (protocol v1) vs field delta (v1.1); the hub's memory.

Whole single round robins of 16 and 24 players (bench/scenario.py: Berger
pairings, seeded random results) go through the core and ``Hub.publish``
exactly as the embedded processor feeds it; for every update the full
message (what a v1 subscriber gets, today's update) and the delta the hub
derived (what a ``"updates": "delta"`` subscriber gets) are measured as
websocket frames (payload + frame header):

- uncompressed;
- compressed as the gateway sends them by default: on the feed's own
  deflate stream with context takeover (:class:`tracker.gateway.frames.Stream`,
  the server's settings: 4 KiB window, memLevel 5), for a subscriber that
  follows it from the opening (each feed, full and delta, has its stream);
- compressed alone (websockets' own ``PerMessageDeflate``, a fresh
  compressor per message): what a client that asks for
  ``server_no_context_takeover`` gets.

The ratio is delta bytes / full bytes summed over every update of the
tournaments (the opening included); the target is ≤ 25% raw and as the
gateway sends them; compressed alone is reported beside them.

Beside it, reported: the µs ``Hub.publish`` spends per update at 24 players
(deriving the delta and its digest, once per update), and the hub's share of
the Python heap per finished 10-player round robin (tracemalloc, tournaments
fed round by round as bench/many.py does), before and after the finished
tournaments are compacted; target ≤ 8 KB after.
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from types import SimpleNamespace
from typing import Any

import msgspec
from websockets.extensions.permessage_deflate import PerMessageDeflate
from websockets.frames import Frame, Opcode

from bench.common import Result, Row, Sizes, fmt_us, median, save_figure, say, timed
from bench.scenario import tournament
from tracker.core.apply import apply
from tracker.core.crosstable import Tournament
from tracker.core.events import ResultRecorded, TournamentOpened
from tracker.core.standings import Standings
from tracker.gateway.frames import SharedDeflate, Stream
from tracker.gateway.hub import Hub
from tracker.gateway.metrics import Metrics
from tracker.protocol import StandingsPayload, encode, standings_payload, update_message

RATIO_TARGET = 0.25
MEMORY_TARGET_KB = 8.0
MODES = ("raw", "deflate, the feed's stream (the gateway's default)", "deflate, each message alone (on request)")
TARGETED = MODES[:2]
COMPRESSION = (12, (("memLevel", 5),))  # tracker.gateway.serve.deflate's window and settings
COUNTS = {"quick": 1, "default": 4, "full": 10}  # tournaments per size
TRACED = {"quick": 100, "default": 500, "full": 2000}  # 10-player tournaments traced for the hub's memory


def updates(tid: str, players: int, seed: int) -> list[tuple[StandingsPayload, bytes]]:
    """``(payload, message)`` of every update of one whole round robin, as the processor builds them."""
    opened, results = tournament(tid, players, seed)
    state: Tournament | None = None
    last: Standings | None = None
    out = []
    for event in [opened, *results]:
        state, update = apply(state, event, last)
        assert update is not None
        last = update.standings
        payload = standings_payload(update.standings)
        out.append((payload, update_message(update, payload)))
    return out


def header(size: int) -> int:
    """Bytes of a server-to-client frame header (unmasked) for a payload of ``size`` bytes."""
    return 2 if size < 126 else 4 if size < 65536 else 10


class Wire:
    """One connection's bytes per message in one mode (:data:`MODES`): raw, on a feed's stream, or each alone."""

    def __init__(self, mode: str) -> None:
        self.stream = Stream() if mode == MODES[1] else None
        # what Stream.frames reads of a connection: the position of its SharedDeflate (context takeover allowed)
        self.follower = SimpleNamespace(
            protocol=SimpleNamespace(
                extensions=[SharedDeflate(PerMessageDeflate(False, False, 12, 12, dict(COMPRESSION[1])))]
            )
        )
        self.deflate = PerMessageDeflate(False, True, 12, 12, dict(COMPRESSION[1])) if mode == MODES[2] else None

    def size(self, message: bytes) -> int:
        if self.stream is not None:  # the frame the gateway writes to a subscriber following the feed from the start
            [(frame, position, _)] = self.stream.frames(message, COMPRESSION, [self.follower])
            self.follower.protocol.extensions[0].position = position  # as broadcast does once it has written it
            return len(frame)
        data = message
        if self.deflate is not None:
            data = self.deflate.encode(Frame(Opcode.TEXT, message)).data
        return len(data) + header(len(data))


def measure(players: int, count: int) -> dict[str, Any]:
    """Bytes of every full update and every delta of ``count`` whole ``players``-player round robins."""
    full: dict[str, list[int]] = {mode: [] for mode in MODES}
    delta: dict[str, list[int]] = {mode: [] for mode in MODES}
    events: list[int] = []  # the delta's event fields alone (no rows, order, digest), without context takeover
    publish_us: list[float] = []
    clock = time.perf_counter_ns
    for k in range(count):
        tid = f"wire-{players}-{k}"
        hub = Hub(Metrics())
        wires = {mode: (Wire(mode), Wire(mode)) for mode in MODES}  # (a v1 subscriber, a delta subscriber)
        for payload, message in updates(tid, players, seed=11 + k):
            a = clock()
            assert hub.publish(payload, message)
            publish_us.append((clock() - a) / 1000)
            newest = hub.latest(tid)
            assert newest is not None
            seq, sent = newest
            assert seq == payload["seq"]
            for mode, (v1, v11) in wires.items():
                full[mode].append(v1.size(message))
                delta[mode].append(v11.size(sent))
            body = msgspec.json.decode(sent)
            alone = {key: value for key, value in body.items() if key not in ("rows", "order", "digest")}
            events.append(Wire(MODES[2]).size(encode(alone)))
    return {"full": full, "delta": delta, "events": events, "publish_us": publish_us, "updates": len(publish_us)}


def hub_memory(count: int) -> dict[str, float]:
    """The hub's share of the Python heap per finished 10-player round robin, before and after compaction."""
    batches: list[tuple[TournamentOpened, list[ResultRecorded]]] = [
        tournament(f"mem{k:06d}", 10, seed=13) for k in range(count)
    ]
    states: dict[str, Tournament] = {}
    last: dict[str, Standings] = {}
    tracemalloc.start()
    gc.collect()
    hub = Hub(Metrics())

    def submit(event: TournamentOpened | ResultRecorded) -> None:
        state, update = apply(states.get(event.tournament), event, last.get(event.tournament))
        assert update is not None
        states[event.tournament], last[event.tournament] = state, update.standings
        hub.publish(standings_payload(update.standings), update_message(update))

    for opened, _ in batches:
        submit(opened)
    for r in range(1, max(e.round for e in batches[0][1]) + 1):
        for _, results in batches:
            for event in results:
                if event.round == r:
                    submit(event)
    del batches
    gc.collect()
    with_hub = tracemalloc.get_traced_memory()[0]
    history = hub.stats().history_bytes
    compacted = hub.compact()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    kept = hub.stats().history_bytes
    hub = Hub(Metrics())
    gc.collect()
    without = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert compacted == count, f"{compacted} of {count} tournaments compacted"
    return {
        "tournaments": count,
        "live_per_tournament": (with_hub - without) / count,
        "compacted_per_tournament": (after - without) / count,
        "history_bytes_live": history / count,
        "history_bytes_compacted": kept / count,
    }


def _plot(players: int, series: dict[str, list[list[int]]]) -> object:
    """Bytes per update along one round robin: full update and delta, raw, on the feed's stream, each alone."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.2, 5.2), dpi=110)
    colours = {"full": "tab:red", "delta": "tab:blue"}
    for kind, by_mode in series.items():
        for mode, sizes, style in zip(MODES, by_mode, ("-", "-", ":"), strict=True):
            label = f"{'full update' if kind == 'full' else 'field delta'}, {mode}"
            ax.plot(
                range(len(sizes)),
                sizes,
                style,
                color=colours[kind],
                lw=1.8 if mode == MODES[1] else 0.9,
                alpha=0.35 if mode == MODES[0] else 1.0,
                label=label,
            )
    ax.set_yscale("log")
    ax.set_xlabel(f"update (seq) along one {players}-player round robin")
    ax.set_ylabel("bytes on the wire (frame)")
    ax.set_title("Bytes per update: full vs delta; raw, on the feed's stream, compressed alone")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    return save_figure(fig, "bench-wire.png")


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def run(sizes: Sizes) -> Result:
    result = Result("wire", "9. bytes per update on the wire: full update vs field delta")
    count = COUNTS.get(sizes.mode, 4)
    figures: dict[int, dict[str, Any]] = {}
    with timed(result):
        for players in (16, 24):
            say(f"  wire: {count} × {players}-player round robins")
            data = measure(players, count)
            fig: dict[str, Any] = {"updates": data["updates"], "publish_median_us": median(data["publish_us"])}
            fig["event_fields_ratio"] = sum(data["events"]) / sum(data["full"][MODES[2]])
            for mode in MODES:
                full, delta = data["full"][mode], data["delta"][mode]
                ratio = sum(delta) / sum(full)
                fig[mode] = {
                    "full_median": median(full),
                    "delta_median": median(delta),
                    "full_mean": sum(full) / len(full),
                    "delta_mean": sum(delta) / len(delta),
                    "ratio": ratio,
                    "median_ratio": median([d / f for d, f in zip(delta, full, strict=True)]),
                }
                result.rows.append(
                    Row(
                        workload=f"wire bytes per update, {players} players, {mode}",
                        size=f"{data['updates']:,} updates ({count} RR)",
                        measured=f"delta median {fig[mode]['delta_median']:,.0f} B, "
                        f"mean {fig[mode]['delta_mean']:,.0f} B",
                        baseline=f"full median {fig[mode]['full_median']:,.0f} B, mean {fig[mode]['full_mean']:,.0f} B",
                        ratio=f"{_pct(ratio)} (median per update {_pct(fig[mode]['median_ratio'])})",
                        target=f"≤ {RATIO_TARGET:.0%}" if mode in TARGETED else "— (reported)",
                        met=ratio <= RATIO_TARGET if mode in TARGETED else None,
                    )
                )
            figures[players] = fig
            if players == 24:
                first = data["updates"] // count  # the updates of the first round robin
                result.plots.append(
                    _plot(
                        players,
                        {k: [v[mode][:first] for mode in MODES] for k, v in data.items() if k in ("full", "delta")},
                    )
                )
        traced = TRACED.get(sizes.mode, 500)
        say(f"  wire: the hub's memory over {traced} finished 10-player round robins (tracemalloc)")
        memory = hub_memory(traced)
        result.rows.append(
            Row(
                workload="hub memory per finished 10-player RR, compacted",
                size=f"{traced:,} tournaments (tracemalloc)",
                measured=f"{memory['compacted_per_tournament'] / 1024:,.1f} KB",
                baseline=f"{memory['live_per_tournament'] / 1024:,.1f} KB before compaction",
                ratio=f"{memory['compacted_per_tournament'] / memory['live_per_tournament']:.2f}×",
                target=f"≤ {MEMORY_TARGET_KB:g} KB",
                met=memory["compacted_per_tournament"] <= MEMORY_TARGET_KB * 1024,
            )
        )
        result.raw = {"figures": figures, "memory": memory}
        result.notes.append(
            "Bytes per websocket frame (payload + header) of every update of whole round robins: the full "
            '`update` a protocol v1 subscriber gets vs the field delta a `"updates": "delta"` subscriber '
            "gets, both as sent by `Hub.publish`. Compressed as the gateway writes them by default: each feed "
            "(full updates, deltas) is one deflate stream with context takeover (`tracker.gateway.frames.Stream`, "
            "4 KiB window, memLevel 5), written to every subscriber that follows it, here one that follows it from "
            "the opening; and each compressed alone (websockets' `PerMessageDeflate`, a fresh compressor per "
            "message), what a client gets that asks for `server_no_context_takeover` (browsers do not). Ratio = "
            "delta bytes / full bytes over every update, the opening (whose delta holds every row) included."
        )
        result.notes.append(
            "Without context takeover a small message compresses poorly (no history, its own Huffman tables): "
            "the delta's event fields alone (`event`, `changed`, `reached`, `fell`, `qualification`, `summary`, "
            "no rows) already weigh "
            f"{_pct(figures[16]['event_fields_ratio'])} of the full update at 16 players and "
            f"{_pct(figures[24]['event_fields_ratio'])} at 24, compressed that way."
        )
        result.notes.append(
            "`Hub.publish` per update at 24 players (deriving the delta and its digest once, no subscribers): "
            f"median {fmt_us(figures[24]['publish_median_us'])}; at 16: {fmt_us(figures[16]['publish_median_us'])}."
        )
        result.notes.append(
            f"The hub's heap per finished 10-player round robin ({traced:,} fed round by round, tracemalloc): "
            f"{memory['live_per_tournament'] / 1024:,.1f} KB while its history is kept "
            f"({memory['history_bytes_live'] / 1024:,.1f} KB of deltas), "
            f"{memory['compacted_per_tournament'] / 1024:,.1f} KB once compacted "
            f"(snapshot bytes and {memory['history_bytes_compacted'] / 1024:,.1f} KB of the newest deltas)."
        )
    return result
