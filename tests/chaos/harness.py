"""Randomized fault rounds against a real deployment, each proven by the invariant checker.

How this works
--------------

A *run* starts one deployment and plays ``rounds`` rounds on it, each on a tournament of its own
(``chaos-<deployment><seed>-<round>``) read from a bundled TRF file, all of them 127.0.0.1 only:

- *embedded*: one ``tracker up`` on a fixed port, its data directory on a small tmpfs (or, where
  mounting is refused, limited with ``RLIMIT_FSIZE``: see :mod:`tests.chaos.faults`);
- *kafka*: a Tansu broker, two ``tracker worker`` and two ``tracker gateway`` processes
  (:mod:`tests.kafka_fixtures`, with its low Faust timeouts).

A round draws everything from ``random.Random(f"{seed}/{round}")``: the file, one to three arbiters
(each submits the opening event and its share of the results, with copies in one TCP write and TCP
resets mid-submit, and resubmits what was not acknowledged), one to three subscribers (fast or slow,
resubscribing with ``since`` at random), and the faults: SIGKILL of the server (restarted on the same
data directory) and a full disk (embedded); SIGKILL of a worker or a gateway (a new one started) and
a frozen broker (kafka), each at a random moment.  Then the round *settles* (the HTTP standings stop
moving, every subscriber catches up or times out), the durable log is read (the journal's ``events``
rows, or the ``tracker-standings`` topic), and :func:`tests.chaos.invariants.check` counts
violations.  Timing makes a round's interleaving vary between runs of one seed; the seed fixes what
is tried.

Bounds: every wait has a timeout, a round's arbiters stop at a deadline, and a run stops starting
rounds after ``max_seconds``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import signal
import sqlite3
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from tests.chaos.clients import Arbiter, BoardFeeder, Guesser, Subscriber, fresh_snapshot
from tests.chaos.faults import DiskFull, freeze, sigkill
from tests.chaos.invariants import EARLY_SLACK, INVARIANTS, Connection, Observed, Verdict, check
from tests.conftest import TEST_DATA, TOKEN, RunningTracker, data_file, start_tracker
from tests.kafka_fixtures import PARTITIONS, WORKER_ENV, Broker, free_port, partition_of, start_broker
from tests.processes import Process, spawn
from tracker.core.events import Event, decode_event
from tracker.formats.files import read_file

FILES = (
    data_file("sinquefield-cup-2021.trf"),
    data_file("fide-tec-exercise16-rr6.trf"),
    TEST_DATA / "byes.trf",
    TEST_DATA / "double.trf",
    TEST_DATA / "forfeits.trf",
    TEST_DATA / "three-one-zero.trf",
)
#: the server's own limits are not under test here: no submit is rate-limited, slow subscribers are dropped early
SERVER_ARGS = ("--submits-per-second", "100000", "--submit-burst", "100000", "--max-buffer", "65536")

FAULTS = {
    "sigkill-server": "SIGKILL of `tracker up` at a random moment, restarted on the same data dir",
    "disk-full": "journal file system full (DISK) at a random moment, freed after 0.1–0.8 s",
    "sigkill-worker": "SIGKILL of a `tracker worker` at a random moment, a new one started",
    "sigkill-gateway": "SIGKILL of a `tracker gateway` at a random moment, a new one started",
    "freeze-broker": "broker frozen (SIGSTOP 1.5–4 s, then SIGCONT) at a random moment",
    "abrupt-disconnect": "arbiter connection reset (SO_LINGER 0, TCP RST) with submits in flight",
    "duplicate-in-one-write": "two or three copies of one submit in one TCP write",
    "resubmit": "resubmit of an event id not yet acknowledged (after a reset, a kill or a rejection)",
    "resubscribe": "subscriber resubscribed with since at a random moment (polite close or RST)",
    "reconnect": "subscriber resubscribed with since after the server ended its connection",
    "dropped-as-slow": "slow subscriber dropped by the server (close 1008), resumed with since",
}


@dataclass
class RoundResult:
    deployment: str
    seed: int
    round: int
    tournament: str
    file: str
    faults: Counter[str]
    verdict: Verdict
    events: int
    acked: int
    rejected: Counter[str]
    seconds: float

    def line(self) -> str:
        bad = {k: v for k, v in self.verdict.counts.items() if v}
        return (
            f"{self.deployment} seed {self.seed} round {self.round} ({self.file}, {self.events} events, "
            f"{self.acked} acked, {self.seconds:.1f} s) faults {dict(self.faults)}: "
            + (f"VIOLATIONS {bad}" if bad else "ok")
        )


@dataclass
class RunResult:
    deployment: str
    seed: int
    disk: str = ""
    rounds: list[RoundResult] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        total = dict.fromkeys(INVARIANTS, 0)
        for r in self.rounds:
            for k, v in r.verdict.counts.items():
                total[k] += v
        return total

    def violations(self) -> int:
        return sum(self.counts().values())

    def failing(self) -> list[RoundResult]:
        return [r for r in self.rounds if r.verdict.violations]

    def per_fault(self) -> dict[str, tuple[int, int, int, dict[str, int]]]:
        """fault → (injections, rounds with it, violations in those rounds, by invariant)."""
        out: dict[str, tuple[int, int, int, dict[str, int]]] = {}
        for fault in FAULTS:
            rounds = [r for r in self.rounds if r.faults[fault]]
            if not rounds:
                continue
            by = dict.fromkeys(INVARIANTS, 0)
            for r in rounds:
                for k, v in r.verdict.counts.items():
                    by[k] += v
            out[fault] = (sum(r.faults[fault] for r in rounds), len(rounds), sum(by.values()), by)
        return out

    def report(self) -> str:
        lines = [
            f"chaos {self.deployment}, seed {self.seed}: {len(self.rounds)} rounds, "
            f"{sum(r.events for r in self.rounds)} events, {sum(r.acked for r in self.rounds)} acked, "
            f"violations {self.counts()}" + (f", full disk by {self.disk}" if self.disk else ""),
            "  per fault: injections / rounds / violations in those rounds:",
        ]
        for fault, (n, rounds, lost, by) in self.per_fault().items():
            lines.append(f"    {fault}: {n} / {rounds} / {lost} { ({k: v for k, v in by.items() if v}) }")
        for r in self.failing():
            lines.append("  " + r.line())
            lines += ["      " + d for d in r.verdict.details[:6]]
        return "\n".join(lines)


# -- shared steps ------------------------------------------------------------------------------------------


def http_standings(port: int, tournament: str) -> dict[str, Any] | None:
    """The HTTP standings of a tournament (None: 404); raises OSError when the server does not answer."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/tournaments/{tournament}/standings", timeout=5) as r:
            body: dict[str, Any] = json.loads(r.read())
            return body
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise


async def settle(ports: Callable[[], list[int]], tournament: str, quiet: float, timeout: float = 20) -> list[Any]:
    """Poll every port's HTTP standings until none has moved for ``quiet`` seconds; return the last answers."""
    end = time.monotonic() + timeout
    last: list[Any] = []
    stable_since = time.monotonic()
    while time.monotonic() < end:
        try:
            now = [await asyncio.to_thread(http_standings, p, tournament) for p in ports()]
        except OSError:
            now = ["down"]
        seqs = [None if a is None or a == "down" else a["seq"] for a in now]
        if seqs != [None if a is None or a == "down" else a["seq"] for a in last] or "down" in now:
            stable_since = time.monotonic()
        elif time.monotonic() - stable_since >= quiet:
            return now
        last = now
        await asyncio.sleep(0.1)
    return last


def plan_events(rng: random.Random, tournament: str) -> tuple[str, list[Event], list[list[Event]]]:
    """A file, all its events, and each arbiter's share (the opening event, then every n-th result)."""
    path = rng.choice(FILES)
    tf = read_file(str(path), tournament)
    arbiters = rng.randint(1, 3)
    shares = [[tf.opened, *tf.events[i::arbiters]] for i in range(arbiters)]
    return path.name, [tf.opened, *tf.events], shares


async def play(
    deployment: str,
    seed: int,
    number: int,
    port_of: Callable[[], int | None],
    live_ports: Callable[[], list[int]],
    faults: Callable[[random.Random, Counter[str]], Awaitable[None]],
    read_log: Callable[[str], Awaitable[tuple[list[Event], int, int]]],
    *,
    reply_timeout: float,
    deadline_seconds: float,
    quiet: float,
    pace: float,
) -> RoundResult:
    """One round: clients and faults, then settle, read the durable log, and check."""
    started = time.monotonic()
    rng = random.Random(f"{seed}/{number}")
    tid = f"chaos-{deployment[0]}{seed}-{number}"
    name, events, shares = plan_events(rng, tid)
    p_duplicate, p_reset = rng.choice((0.1, 0.3, 0.6)), rng.choice((0.05, 0.15, 0.3))
    arbiters = [
        Arbiter(
            f"arbiter-{i}",
            port_of,
            TOKEN,
            share,
            random.Random(rng.random()),
            p_duplicate=p_duplicate,
            p_reset=p_reset,
            reply_timeout=reply_timeout,
            pace=pace,
        )
        for i, share in enumerate(shares)
    ]
    subscribers = [
        Subscriber(
            f"subscriber-{i}",
            port_of,
            tid,
            random.Random(rng.random()),
            slow=rng.random() < 0.4,
            p_resubscribe=rng.choice((0.0, 0.3, 0.7)),
        )
        for i in range(rng.randint(1, 3))
    ]
    # the round-two surfaces (issue 37): a delayed subscriber, token guessers, a board feed on the arbiter token
    delayed = [
        Subscriber(f"delayed-{i}", port_of, tid, random.Random(rng.random()), slow=False, p_resubscribe=0.0, delay=2.0)
        for i in range(rng.choice((0, 1, 1, 2)))
    ]
    subscribers += delayed
    guessers = [Guesser(f"guesser-{i}", port_of, events, random.Random(rng.random())) for i in range(rng.randint(0, 2))]
    feeders = [BoardFeeder("boards", port_of, TOKEN, events, random.Random(rng.random()))] if rng.random() < 0.6 else []
    fault_rng = random.Random(rng.random())
    injected: Counter[str] = Counter()
    following = [asyncio.create_task(s.run(), name=s.name) for s in subscribers]
    try:
        for s in subscribers:  # each has its first snapshot (seq 0: the tournament is not open yet)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(3):
                    await s.first.wait()
        deadline = time.monotonic() + deadline_seconds
        others = [asyncio.create_task(g.run(deadline)) for g in guessers]
        others += [asyncio.create_task(f.run(deadline)) for f in feeders]
        try:
            await asyncio.gather(faults(fault_rng, injected), *(a.run(deadline) for a in arbiters))
        finally:
            for task in others:
                task.cancel()
            await asyncio.gather(*others, return_exceptions=True)
        answers = await settle(live_ports, tid, quiet)
        final_api = answers[0] if answers and answers[0] != "down" else None
        target = int(final_api["seq"]) if final_api else 0
        for s in subscribers:
            await s.wait_for(target, 5)
        finals = [s.last_message for s in subscribers if s.last_message is not None]
        port = port_of()
        snapshot = await fresh_snapshot(port, tid) if port is not None else None
        if snapshot is not None:
            finals.append(snapshot)
    finally:
        for task in following:
            task.cancel()
        await asyncio.gather(*following, return_exceptions=True)
    log, twice, holes = await read_log(tid)
    acked: dict[str, int] = {}
    rejected: Counter[str] = Counter()
    for a in arbiters:
        acked.update(a.acked)
        rejected += a.rejected
        injected += a.faults
    connections: list[Connection] = [c for s in subscribers for c in s.connections]
    for s in subscribers:
        injected += s.faults
    injected["delayed-subscribers"] += len(delayed)
    for g in guessers:
        injected += g.faults
    for f in feeders:
        injected += f.faults
    sent_at: dict[str, float] = {}
    for a in arbiters:
        for event_id, at in a.sent_at.items():
            sent_at[event_id] = min(at, sent_at.get(event_id, at))
    early = [  # an update cannot be published before its event was first sent: due at that + the delay at least
        f"{d.name}: seq {seen.seq} {sent_at[seen.event_id] + d.delay - d.arrived[seen.seq]:.2f} s before its delay"
        for d in delayed
        for conn in d.connections
        for seen in conn.seen
        if seen.kind == "update"
        and seen.event_id in sent_at
        and d.arrived[seen.seq] < sent_at[seen.event_id] + d.delay - EARLY_SLACK
    ]
    observed = Observed(tid, acked, connections, final_api, finals, log, twice, holes)
    observed.guesses_acked = sum(g.acked for g in guessers)
    observed.early = early
    observed.board_ids = {i for f in feeders for i in f.ids}
    observed.board_codes = [c for f in feeders for c in f.codes]
    verdict = check(observed)
    return RoundResult(
        deployment,
        seed,
        number,
        tid,
        name,
        injected,
        verdict,
        len(events),
        len(acked),
        rejected,
        time.monotonic() - started,
    )


# -- embedded -------------------------------------------------------------------------------------------------


class EmbeddedRun:
    """One ``tracker up`` on a fixed port whose data directory can be filled, killed and restarted."""

    def __init__(self, disk: DiskFull, seed: int) -> None:
        self.disk = disk
        self.seed = seed
        self.data_dir = disk.root / "data"
        self.port = free_port()
        self.server: RunningTracker | None = None
        self.up = False

    def start(self) -> None:
        self.server = start_tracker(self.data_dir, "--port", str(self.port), *SERVER_ARGS)
        self.disk.pid = self.server.proc.pid
        self.up = True

    def stop(self) -> None:
        self.disk.free()
        if self.server is not None:
            self.server.stop()

    def port_of(self) -> int | None:
        return self.port if self.up else None

    def live_ports(self) -> list[int]:
        return [self.port]

    async def faults(self, rng: random.Random, injected: Counter[str]) -> None:
        plan = ["sigkill-server"] * rng.choice((0, 1, 1, 2)) + (["disk-full"] if rng.random() < 0.35 else [])
        rng.shuffle(plan)
        for fault in plan:
            await asyncio.sleep(rng.uniform(0.0, 0.5))
            injected[fault] += 1
            if fault == "disk-full":
                self.disk.fill()
                try:
                    await asyncio.sleep(rng.uniform(0.1, 0.8))
                finally:
                    self.disk.free()
            else:
                assert self.server is not None
                self.up = False
                await sigkill(self.server.proc)
                await asyncio.to_thread(self.start)

    async def read_log(self, tournament: str) -> tuple[list[Event], int, int]:
        def read() -> list[Event]:
            db = sqlite3.connect(self.data_dir / "journal.sqlite3", timeout=10)
            try:
                rows = db.execute("SELECT body FROM events WHERE tournament = ? ORDER BY pos", (tournament,))
                return [decode_event(bytes(body)) for (body,) in rows]
            finally:
                db.close()

        return await asyncio.to_thread(read), 0, 0

    async def round(self, number: int) -> RoundResult:
        if self.server is None or self.server.proc.poll() is not None:
            await asyncio.to_thread(self.start)
        return await play(
            "embedded",
            self.seed,
            number,
            self.port_of,
            self.live_ports,
            self.faults,
            self.read_log,
            reply_timeout=5,
            deadline_seconds=20,
            quiet=0.5,
            pace=0.04,
        )


async def run_embedded(
    disk: DiskFull,
    seed: int,
    rounds: int,
    *,
    first: int = 0,
    max_seconds: float = 3600,
    say: Callable[[str], None] = print,
) -> RunResult:
    """Play ``rounds`` rounds (numbered from ``first``) on one ``tracker up``; none started after ``max_seconds``."""
    result = RunResult("embedded", seed, disk.how)
    run = EmbeddedRun(disk, seed)
    end = time.monotonic() + max_seconds
    try:
        for number in range(first, first + rounds):
            if time.monotonic() > end:
                say(f"chaos embedded: time budget spent after {len(result.rounds)} rounds")
                break
            r = await run.round(number)
            result.rounds.append(r)
            say(r.line())
    finally:
        await asyncio.to_thread(run.stop)
    return result


# -- kafka ------------------------------------------------------------------------------------------------------


class KafkaRun:
    """A Tansu broker, two workers, two gateways; killed pieces are replaced by new ones."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.broker: Broker = start_broker()
        self.workers: list[Process] = []
        self.gateways: dict[int, Process] = {}  # port → process
        self.pick = random.Random(seed)
        self.offsets: dict[int, int] = {}

    def start(self) -> None:
        for _ in range(2):
            self.workers.append(self.broker.worker(wait=False))
        for w in self.workers:
            w.expect(r"assigned partitions \[", timeout=60)
        for _ in range(2):
            self.start_gateway()

    def start_gateway(self) -> None:
        process = spawn(
            f"gateway-{len(self.broker.started)}",
            [
                sys.executable,
                "-m",
                "tracker.cli",
                "gateway",
                "--broker",
                self.broker.url,
                "--port",
                "0",
                "--token",
                TOKEN,
                *SERVER_ARGS,
            ],
        )
        self.broker.started.append(process)
        port = int(process.expect(r"listening on http://127\.0\.0\.1:(\d+)/", timeout=120).group(1))
        self.gateways[port] = process

    def start_worker(self) -> None:
        worker = spawn(
            f"worker-{len(self.broker.started)}",
            [
                sys.executable,
                "-m",
                "tracker.cli",
                "worker",
                "--broker",
                self.broker.url,
                "--partitions",
                str(PARTITIONS),
            ],
            env=WORKER_ENV,
        )
        self.broker.started.append(worker)
        self.workers.append(worker)

    def stop(self) -> None:
        if self.broker.process.proc.poll() is None:
            self.broker.process.proc.send_signal(signal.SIGCONT)
        self.broker.stop()

    def port_of(self) -> int | None:
        ports = self.live_ports()
        return self.pick.choice(ports) if ports else None

    def live_ports(self) -> list[int]:
        return sorted(p for p, g in self.gateways.items() if g.proc.poll() is None)

    async def faults(self, rng: random.Random, injected: Counter[str]) -> None:
        kinds = (("sigkill-worker", 0.4), ("sigkill-gateway", 0.4), ("freeze-broker", 0.3))
        plan = [f for f, p in kinds if rng.random() < p] or [rng.choice(kinds)[0]]  # at least one per round
        rng.shuffle(plan)
        for fault in plan:
            await asyncio.sleep(rng.uniform(0.0, 1.5))
            injected[fault] += 1
            if fault == "freeze-broker":
                await freeze(self.broker.process.proc, rng.uniform(1.5, 4.0))
            elif fault == "sigkill-worker":
                victim = rng.choice(self.workers)
                await sigkill(victim.proc)
                self.workers.remove(victim)
                self.start_worker()
            else:
                port = rng.choice(self.live_ports())
                await sigkill(self.gateways.pop(port).proc)
                await asyncio.to_thread(self.start_gateway)

    async def note_offsets(self, tournament: str) -> None:
        from aiokafka import AIOKafkaConsumer, TopicPartition

        from tracker.kafka.topics import STANDINGS

        consumer = AIOKafkaConsumer(bootstrap_servers=f"127.0.0.1:{self.broker.port}", enable_auto_commit=False)
        await consumer.start()
        try:
            tp = TopicPartition(STANDINGS, partition_of(tournament))
            self.offsets[partition_of(tournament)] = (await consumer.end_offsets([tp]))[tp]
        finally:
            await consumer.stop()

    async def read_log(self, tournament: str) -> tuple[list[Event], int, int]:
        """The tournament's applied events from ``tracker-standings``, by seq; ids or seqs held twice; missing seqs."""
        from aiokafka import AIOKafkaConsumer, TopicPartition

        from tracker.kafka.topics import STANDINGS

        partition = partition_of(tournament)
        tp = TopicPartition(STANDINGS, partition)
        consumer = AIOKafkaConsumer(bootstrap_servers=f"127.0.0.1:{self.broker.port}", enable_auto_commit=False)
        await consumer.start()
        records: list[Any] = []
        try:
            consumer.assign([tp])
            consumer.seek(tp, self.offsets.get(partition, 0))
            end = (await consumer.end_offsets([tp]))[tp]
            async with asyncio.timeout(90):
                while await consumer.position(tp) < end:
                    for part in (await consumer.getmany(timeout_ms=1500)).values():
                        records += part
        finally:
            await consumer.stop()
        by_seq: dict[int, dict[str, Any]] = {}
        ids_of_seq: dict[int, set[str]] = {}
        seqs_of_id: dict[str, set[int]] = {}
        for rec in records:
            update = json.loads(rec.value)
            if update.get("tournament") != tournament:
                continue
            seq, eid = int(update["seq"]), update["event"]["id"]
            by_seq.setdefault(seq, update)
            ids_of_seq.setdefault(seq, set()).add(eid)
            seqs_of_id.setdefault(eid, set()).add(seq)
        twice = sum(len(s) - 1 for s in ids_of_seq.values()) + sum(len(s) - 1 for s in seqs_of_id.values())
        top = max(by_seq, default=0)
        holes = sum(1 for k in range(1, top + 1) if k not in by_seq)
        log = [decode_event(json.dumps(by_seq[k]["event"]).encode()) for k in range(1, top + 1) if k in by_seq]
        return log, twice, holes

    async def round(self, number: int) -> RoundResult:
        tid = f"chaos-k{self.seed}-{number}"
        await self.note_offsets(tid)
        return await play(
            "kafka",
            self.seed,
            number,
            self.port_of,
            self.live_ports,
            self.faults,
            self.read_log,
            reply_timeout=40,
            deadline_seconds=60,
            quiet=2.0,
            pace=0.1,
        )


async def run_kafka(
    seed: int, rounds: int, *, first: int = 0, max_seconds: float = 3600, say: Callable[[str], None] = print
) -> RunResult:
    """Play ``rounds`` rounds on one broker with two workers and two gateways."""
    result = RunResult("kafka", seed)
    run = KafkaRun(seed)
    end = time.monotonic() + max_seconds
    try:
        await asyncio.to_thread(run.start)
        for number in range(first, first + rounds):
            if time.monotonic() > end:
                say(f"chaos kafka: time budget spent after {len(result.rounds)} rounds")
                break
            r = await run.round(number)
            result.rounds.append(r)
            say(r.line())
    except BaseException:
        say(run.broker.report()[-20000:])
        raise
    finally:
        await asyncio.to_thread(run.stop)
    return result
