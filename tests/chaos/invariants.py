"""The invariant checker: what one chaos round observed, held against the durable log.

Pure: it reads what the clients recorded (acks, every message of every subscriber connection, the
final HTTP standings) and the durable log (the embedded journal's rows, or the Kafka standings
topic's records) of one tournament, and counts violations of each invariant.  A count is never
capped and never excused: a round passes only when every count is 0.

The invariants (:data:`INVARIANTS`):

``acked-lost``
    an event the server acknowledged is not in the durable log;
``applied-twice``
    one event id holds two places in the durable log (or two seqs, or one seq two ids);
``final-state``
    the HTTP standings, or a subscriber's last message after the run settled, differ from the
    fold of the durable log (:func:`tracker.core.apply.fold`, then
    :func:`tracker.protocol.standings_payload`);
``seq-order``
    a subscriber connection saw a seq that is not the one after the last (a gap, a repeat, an
    update of an older seq), or a snapshot that was not its first message;
``published-not-durable``
    a subscriber saw a seq beyond the durable log, or a seq whose event or standings are not the
    durable log's at that position;
``durable-not-published``
    after the run settled, the HTTP standings or a subscriber that stayed to the end are behind the
    durable log;
``guess-accepted``
    a submit with a wrong token (a guesser's) was acknowledged;
``delayed-early``
    a subscriber with a spoiler delay got an update before its delay had passed since the update's
    event was first sent (it cannot have been published sooner; :data:`EARLY_SLACK` for the clocks);
``board-misanswered``
    a board got an answer other than an ack or a rejection a board may get, or is in the durable log.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from tracker.core.apply import step
from tracker.core.crosstable import Tournament
from tracker.core.events import Event
from tracker.core.standings import standings
from tracker.protocol import StandingsPayload, standings_payload

INVARIANTS: Final = (
    "acked-lost",
    "applied-twice",
    "final-state",
    "seq-order",
    "published-not-durable",
    "durable-not-published",
    "guess-accepted",
    "delayed-early",
    "board-misanswered",
)
#: How much sooner than its delay, counted from its event's first send, a delayed update may arrive (one
#: monotonic clock in one process: only the scheduling of the two readings).
EARLY_SLACK: Final = 0.05
#: What a board may be answered besides an ack (its game decided, the tournament not open yet, too many).
BOARD_REJECTIONS: Final = frozenset(
    {"game-finished", "unknown-tournament", "rate-limited", "not-durable", "invalid-pairing", "pending"}
)

#: the keys of a snapshot or update that carry standings (everything of StandingsPayload)
PAYLOAD_KEYS: Final = tuple(StandingsPayload.__annotations__)  # the standings part of a message, as the code defines it


def payload_of(message: dict[str, Any]) -> dict[str, Any]:
    """The standings part of a snapshot or update message (or of the HTTP standings)."""
    return {key: message[key] for key in PAYLOAD_KEYS if key in message}  # an optional key absent stays absent


@dataclass
class Seen:
    """One message a subscriber connection received: its type, seq, event id and standings."""

    kind: str
    seq: int
    event_id: str | None
    payload: dict[str, Any]


@dataclass
class Connection:
    """One websocket connection of a subscriber: the ``since`` it subscribed with and what it got."""

    since: int | None
    seen: list[Seen] = field(default_factory=list)


@dataclass
class Observed:
    """Everything one round recorded about one tournament."""

    tournament: str
    acked: dict[str, int]  # event id → seq of an ack (any copy)
    connections: list[Connection]
    final_api: dict[str, Any] | None  # the HTTP standings after the run settled (None: 404)
    final_messages: list[dict[str, Any]]  # each stayer's last message and a fresh subscriber's snapshot
    log: list[Event]  # the durable log of the tournament, in order
    log_twice: int = 0  # places in the log held by an id already there (counted by the reader)
    log_holes: int = 0  # seqs missing from a log that is keyed by seq (Kafka's standings topic)
    guesses_acked: int = 0  # wrong-token submits that got an ack
    early: list[str] = field(default_factory=list)  # delayed updates seen too soon, said
    board_ids: set[str] = field(default_factory=set)  # the ids of the boards sent
    board_codes: list[str] = field(default_factory=list)  # each board's answer: "ack" or its rejection code


@dataclass
class Verdict:
    counts: dict[str, int]
    details: list[str]

    @property
    def violations(self) -> int:
        return sum(self.counts.values())


def _normal(obj: Any) -> Any:
    """JSON round trip: tuples become lists, so a computed payload compares with a received one."""
    return json.loads(json.dumps(obj))


def prefix_payloads(log: list[Event]) -> tuple[list[dict[str, Any] | None], str | None]:
    """``payloads[k]`` is the standings payload after the first ``k`` logged events (``payloads[0]`` None).

    Returns the payloads, and the reason the fold stopped when an event of the log was refused.
    """
    payloads: list[dict[str, Any] | None] = [None]
    state: Tournament | None = None
    for event in log:
        try:
            state, _ = step(state, event, explain=False)
        except Exception as exc:  # the log holds an event the core refuses: the fold ends there
            return payloads, f"fold of the log stops at {event.id}: {type(exc).__name__}: {exc}"
        payloads.append(_normal(standings_payload(standings(state))))
    return payloads, None


def check(obs: Observed) -> Verdict:
    """Count the violations of every invariant in one round's observations."""
    counts = dict.fromkeys(INVARIANTS, 0)
    details: list[str] = []

    def bad(invariant: str, n: int, why: str) -> None:
        if n:
            counts[invariant] += n
            if len(details) < 40:
                details.append(f"{obs.tournament}: {invariant} ×{n}: {why}")

    ids = [e.id for e in obs.log]
    logged = set(ids)
    bad("applied-twice", len(ids) - len(logged) + obs.log_twice, "ids repeated in the durable log")
    bad("seq-order", obs.log_holes, "seqs missing in the durable log")
    lost = sorted(set(obs.acked) - logged)
    bad("acked-lost", len(lost), f"acknowledged, not in the durable log: {lost[:8]}")

    payloads, stopped = prefix_payloads(obs.log)
    if stopped:
        bad("final-state", 1, stopped)
    durable = len(obs.log)
    expected = payloads[-1] if len(payloads) == durable + 1 else None

    # what every connection saw: in order, and each seq exactly what the durable log says
    wrong_seqs: set[int] = set()
    beyond: set[int] = set()
    for n, conn in enumerate(obs.connections):
        after = conn.since  # the seq the next update must follow
        for k, seen in enumerate(conn.seen):
            if seen.kind == "snapshot":
                if k != 0:
                    bad("seq-order", 1, f"connection {n}: a snapshot (seq {seen.seq}) after {k} messages")
                after = seen.seq
            elif after is None or seen.seq != after + 1:
                bad("seq-order", 1, f"connection {n} (since {conn.since}): seq {seen.seq} after {after}")
                after = seen.seq if after is None else max(after, seen.seq)
            else:
                after = seen.seq
            if seen.seq == 0:
                continue
            if seen.seq > durable:
                beyond.add(seen.seq)
            elif seen.seq < len(payloads):
                wrong_event = seen.kind == "update" and seen.event_id != ids[seen.seq - 1]
                if wrong_event or _normal(seen.payload) != payloads[seen.seq]:
                    wrong_seqs.add(seen.seq)
    bad(
        "published-not-durable", len(beyond), f"seqs published beyond the durable log ({durable}): {sorted(beyond)[:8]}"
    )
    bad(
        "published-not-durable",
        len(wrong_seqs),
        f"seqs whose published event or standings differ from the durable log: {sorted(wrong_seqs)[:8]}",
    )

    # after the run settled: the API and every stayer are exactly the fold of the log
    finals = ([obs.final_api] if obs.final_api is not None else []) + list(obs.final_messages)
    if obs.final_api is None and durable:
        bad("durable-not-published", 1, f"no HTTP standings, {durable} events in the durable log")
    for where, final in enumerate(finals):
        seq = int(final.get("seq") or 0)
        label = "the HTTP standings" if where == 0 and obs.final_api is not None else f"final message {where}"
        if seq < durable:
            bad("durable-not-published", 1, f"{label} at seq {seq}, the durable log holds {durable}")
        elif seq > durable:
            bad("published-not-durable", 1, f"{label} at seq {seq}, the durable log holds {durable}")
        elif expected is not None and _normal(payload_of(final)) != expected:
            bad("final-state", 1, f"{label} at seq {seq} differs from the fold of the durable log")

    bad("guess-accepted", obs.guesses_acked, "submits with a wrong token were acknowledged")
    for why in obs.early[:8]:
        bad("delayed-early", 1, why)
    bad("delayed-early", max(0, len(obs.early) - 8), "more delayed updates early")
    board_ids = logged & obs.board_ids
    bad("board-misanswered", len(board_ids), f"boards in the durable log: {sorted(board_ids)[:8]}")
    wrong = [code for code in obs.board_codes if code != "ack" and code not in BOARD_REJECTIONS]
    bad("board-misanswered", len(wrong), f"boards answered {sorted(set(wrong))[:8]}")
    return Verdict(counts, details)
