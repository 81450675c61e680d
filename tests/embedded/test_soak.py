"""Soak (``make soak``): 1,000 clients connecting and disconnecting while results flow, bounded in time.

How this works
--------------

One ``tracker up`` serves one tournament whose round-1 game an arbiter corrects over and over
(``RATE`` results a second; every correction is an update to every subscriber).  Before the soak
the arbiter fills the server's resume history (2,000 updates), so that memory measured after the
warm-up already holds everything the server keeps by design.

``PROCS`` client processes (this file run as a script) run ``CLIENTS`` client slots between them:

- *stayers* (one in ten) connect once, subscribe, and must receive every seq from their snapshot to
  the last result, in order, without a gap or a repeat;
- *churners* connect, subscribe (with ``since`` = the last seq they saw, after the first time), stay
  one to eight seconds, disconnect (politely, or by dropping the TCP connection), wait, and come
  back; every session must continue exactly where the last one stopped (no gap, no repeat, no
  snapshot needed).

The server's RSS (``/proc/PID/status``) is sampled every second; the value at the end must be within
10% of the value after the warm-up.  ``TRACKER_SOAK_SECONDS`` (default 600) bounds the churn phase.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.reliability_log import record

CLIENTS = 1000
PROCS = 4
RATE = 5.0  # results per second during the soak
HISTORY = 2000  # Limits.history: updates kept for resume
SOAK_SECONDS = float(os.environ.get("TRACKER_SOAK_SECONDS", "600"))
TID = "soak-cup"
FLIPS = ("0-1", "1/2-1/2", "1-0")


# -- the client processes ---------------------------------------------------------------------------------


class Slot:
    """One client slot: its counts, and the seq it must see next."""

    def __init__(self, stayer: bool) -> None:
        self.stayer = stayer
        self.last: int | None = None  # the last seq seen
        self.sessions = 0
        self.updates = 0
        self.gaps = 0  # a seq skipped or repeated
        self.snapshots_on_resume = 0  # a resume that needed a snapshot (should not happen: history is kept)
        self.errors: list[str] = []
        self.first: int | None = None

    def see(self, seq: int) -> None:
        if self.last is not None and seq != self.last + 1:
            self.gaps += 1
            if len(self.errors) < 5:
                self.errors.append(f"expected seq {self.last + 1}, got {seq}")
        self.last = seq
        self.updates += 1


async def run_slot(
    slot: Slot, url: str, rng: random.Random, stop: asyncio.Event, final: list[int], ready: asyncio.Event
) -> None:
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed, InvalidStatus

    while not stop.is_set():
        try:
            async with connect(url, open_timeout=30, close_timeout=5) as ws:
                slot.sessions += 1
                subscribe: dict[str, Any] = {"type": "subscribe", "tournament": TID}
                if slot.last is not None:
                    subscribe["since"] = slot.last
                await ws.send(json.dumps(subscribe))
                first = True
                stay_until = time.monotonic() + (1e9 if slot.stayer else rng.uniform(1.0, 8.0))
                ready.set()
                while True:
                    if slot.stayer and final and slot.last is not None and slot.last >= final[0]:
                        return
                    left = stay_until - time.monotonic()
                    if left <= 0 or (stop.is_set() and not slot.stayer):
                        break
                    try:
                        async with asyncio.timeout(min(left, 1.0)):
                            raw = await ws.recv()
                    except TimeoutError:
                        continue
                    message = json.loads(raw)
                    if message["type"] == "snapshot":
                        if slot.last is not None and first:
                            slot.snapshots_on_resume += 1
                        slot.last = message["seq"]
                        if slot.first is None:
                            slot.first = message["seq"]
                    elif message["type"] == "update":
                        if slot.first is None:
                            slot.first = message["seq"]
                        slot.see(message["seq"])
                    first = False
                if rng.random() < 0.2 and ws.transport is not None:
                    ws.transport.abort()  # drop the TCP connection without a close handshake
        except (ConnectionClosed, InvalidStatus, OSError, TimeoutError) as exc:
            if slot.stayer:
                slot.gaps += 1
                slot.errors.append(f"the stayer's connection ended: {exc!r}")
                return
        if not slot.stayer:
            await asyncio.sleep(rng.uniform(0.0, 1.0))


async def client_main(url: str, slots: int, stayers: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    stop = asyncio.Event()
    final: list[int] = []
    all_slots = [Slot(stayer=k < stayers) for k in range(slots)]
    readies = [asyncio.Event() for _ in all_slots]
    tasks = []
    for k, slot in enumerate(all_slots):
        tasks.append(asyncio.create_task(run_slot(slot, url, random.Random(rng.random()), stop, final, readies[k])))
        await asyncio.sleep(0.002)  # a ramp, not a thundering herd
    await asyncio.gather(*(r.wait() for r in readies))
    print("ready", flush=True)
    line = await asyncio.to_thread(sys.stdin.readline)  # "stop FINAL_SEQ"
    final.append(int(line.split()[1]))
    stop.set()
    async with asyncio.timeout(60):
        await asyncio.gather(*tasks)
    stayer_slots = [s for s in all_slots if s.stayer]
    return {
        "slots": slots,
        "stayers": len(stayer_slots),
        "sessions": sum(s.sessions for s in all_slots),
        "updates": sum(s.updates for s in all_slots),
        "gaps": sum(s.gaps for s in all_slots),
        "snapshots_on_resume": sum(s.snapshots_on_resume for s in all_slots),
        "stayers_complete": sum(1 for s in stayer_slots if s.last == final[0] and s.gaps == 0),
        "stayer_updates": sum(s.updates for s in stayer_slots),
        "errors": [e for s in all_slots for e in s.errors][:20],
    }


# -- the test -------------------------------------------------------------------------------------------------------


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


class Arbiter:
    """Submits corrections of one game, paced, on its own event loop thread; remembers the last seq."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.token = token
        self.k = 0
        self.last_seq = 0
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.running: asyncio.Future[Any] | None = None
        self.pace = asyncio.Event()

    def run(self, coro: Any, timeout: float | None = None) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def _submit(self, ws: Any, event: dict[str, Any]) -> None:
        from tests.wsclient import reply_to, send

        while True:
            await send(ws, {"type": "submit", "token": self.token, "event": event})
            reply = await reply_to(ws, event["id"], timeout=30)
            if reply["type"] == "ack":
                self.last_seq = reply["seq"]
                return
            assert reply["code"] == "rate-limited", reply
            await asyncio.sleep(0.05)

    def flip(self) -> dict[str, Any]:
        from tests.gateway.test_hostile import result

        event = result(TID, f"soak-{self.k}", 1, 1, 4, FLIPS[self.k % 3], kind="result_corrected")
        self.k += 1
        return event

    async def open_and_prefill(self, n: int) -> None:
        from websockets.asyncio.client import connect

        from tests.gateway.test_hostile import four_players, result

        async with connect(self.url) as ws:
            await self._submit(ws, four_players(TID, "Soak Cup"))
            await self._submit(ws, result(TID, "soak-first", 1, 1, 4, "1-0"))
            for _ in range(n):
                await self._submit(ws, self.flip())

    async def flow(self, stop: asyncio.Event) -> None:
        from websockets.asyncio.client import connect

        async with connect(self.url) as ws:
            started = time.monotonic()
            sent = 0
            while not stop.is_set():
                await self._submit(ws, self.flip())
                sent += 1
                delay = started + sent / RATE - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@pytest.mark.soak
@pytest.mark.timeout(int(SOAK_SECONDS) + 600)
def test_a_thousand_clients_churning_while_results_flow_lose_nothing_and_memory_stays_flat(tmp_path: Path) -> None:
    from tests.conftest import TOKEN, start_tracker

    server = start_tracker(tmp_path / "data")
    arbiter = Arbiter(server.ws_url, TOKEN)
    clients: list[subprocess.Popen[str]] = []
    samples: list[tuple[float, float]] = []
    sampling = threading.Event()

    def sample() -> None:
        t0 = time.monotonic()
        while not sampling.wait(1.0):
            samples.append((time.monotonic() - t0, rss_mib(server.proc.pid)))

    sampler = threading.Thread(target=sample, daemon=True)
    try:
        arbiter.run(arbiter.open_and_prefill(HISTORY + 100), timeout=300)  # the resume history is full from now on
        base_rss = rss_mib(server.proc.pid)  # history full, no clients yet
        stop_flow = asyncio.Event()
        flowing = asyncio.run_coroutine_threadsafe(arbiter.flow(stop_flow), arbiter.loop)
        sampler.start()
        started = time.monotonic()
        per = CLIENTS // PROCS
        for i in range(PROCS):
            clients.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "tests.embedded.test_soak",
                        "--url",
                        server.ws_url,
                        "--slots",
                        str(per),
                        "--stayers",
                        str(per // 10),
                        "--seed",
                        str(i),
                    ],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                    cwd=REPO,
                )
            )
        for proc in clients:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready", "a client process did not start"
        ramp = time.monotonic() - started
        warm_up = max(20.0, 0.1 * SOAK_SECONDS)
        deadline = started + SOAK_SECONDS
        time.sleep(
            max(0.0, started + warm_up - time.monotonic())
        )  # the warm-up is a duration, not a wait for a message
        warm_rss = rss_mib(server.proc.pid)
        warm_seq = arbiter.last_seq
        time.sleep(max(0.0, deadline - time.monotonic()))  # the soak itself: results flow, clients churn
        end_rss = rss_mib(server.proc.pid)
        arbiter.loop.call_soon_threadsafe(stop_flow.set)
        flowing.result(timeout=60)
        final_seq = arbiter.last_seq
        reports = []
        for proc in clients:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(f"stop {final_seq}\n")
            proc.stdin.flush()
        for proc in clients:
            assert proc.stdout is not None
            out, _ = proc.communicate(timeout=120)
            reports.append(json.loads(out.strip().splitlines()[-1]))
        assert server.proc.poll() is None, "the server died:\n" + "".join(server.output[-40:])
    finally:
        sampling.set()
        for proc in clients:
            if proc.poll() is None:
                proc.kill()
        arbiter.close()
        server.stop()

    total = {
        key: sum(r[key] for r in reports)
        for key in (
            "slots",
            "stayers",
            "sessions",
            "updates",
            "gaps",
            "snapshots_on_resume",
            "stayers_complete",
            "stayer_updates",
        )
    }
    errors = [e for r in reports for e in r["errors"]]
    peak = max(rss for _, rss in samples)
    series = [
        round(min(samples, key=lambda s: abs(s[0] - t))[1], 1) for t in (SOAK_SECONDS * k / 10 for k in range(11))
    ]
    figures = {
        "seconds": SOAK_SECONDS,
        "ramp_seconds": round(ramp, 1),
        "results": final_seq,
        "results_during_soak": final_seq - HISTORY - 102,
        "rss_before_clients_mib": round(base_rss, 1),
        "rss_warm_mib": round(warm_rss, 1),
        "rss_end_mib": round(end_rss, 1),
        "rss_peak_mib": round(peak, 1),
        "rss_growth_pct": round(100 * (end_rss - warm_rss) / warm_rss, 1),
        "rss_every_tenth_mib": series,
        "warm_seq": warm_seq,
        **total,
    }
    print("\nsoak figures:", json.dumps(figures, indent=1))
    assert total["gaps"] == 0, errors
    assert total["stayers_complete"] == total["stayers"], errors
    assert total["snapshots_on_resume"] == 0
    assert end_rss <= warm_rss * 1.10, f"memory grew from {warm_rss:.1f} MiB after the warm-up to {end_rss:.1f} MiB"
    record(
        "soak",
        f"{CLIENTS} clients ({total['stayers']} stayed, the rest churned) for {SOAK_SECONDS:g} s "
        f"while {RATE:g} results/s flowed",
        tried=total["sessions"],
        unit="client sessions",
        lost=total["gaps"],
        outcome=(
            f"every stayer got every seq; every churner resumed with since without a gap; "
            f"{total['updates']:,} updates delivered; "
            f"RSS {warm_rss:.1f} → {end_rss:.1f} MiB ({figures['rss_growth_pct']:+.1f}%)"
        ),
        figures=figures,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="soak client process")
    parser.add_argument("--url", required=True)
    parser.add_argument("--slots", type=int, required=True)
    parser.add_argument("--stayers", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    args = parser.parse_args()
    report = asyncio.run(client_main(args.url, args.slots, args.stayers, args.seed))
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
