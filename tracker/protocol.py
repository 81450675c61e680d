"""Websocket protocol v1.1: the messages, their decoding and their JSON.

Client → server::

    {"type": "subscribe", "tournament": ID, "since": SEQ?, "token": T?, "stakes": BOOL?, "delay": SECONDS?,
     "updates": "full" | "delta"?}
    {"type": "unsubscribe", "tournament": ID}
    {"type": "submit", "token": T, "event": {...}, "ref": "client tag"?}

Server → client::

    snapshot   the full standings of a tournament and their seq
    update     one accepted event: seq, the event, rows that changed, who
               reached or fell below the 50% line, qualifying-set changes,
               a sentence in plain words, and the full new rows; with
               ``"updates": "delta"`` (v1.1) only the fields that changed,
               and the digest of the full standings (:func:`update_delta`)
    ack        a submitted event is durable (id, tournament, seq)
    rejected   a submitted event was refused (id, code, reason)
    error      the message itself was bad (code, reason)
    projection (arbiters only) what the remaining games can still change
    stakes     (``"stakes": true``) what each pending game decides, and the
               chances from ratings, labelled as an estimate
    cue        (``"stakes": true``) a line clinched or lost, a new leader, an
               overtake on a tie-break: a moment for a lower third
    schedule   (arbiters only, on subscribe) the published pairings, per round
    notices    (arbiters only, on subscribe and on every change) the recent
               rejected submissions: what every arbiter device shows

Decoding is strict: :func:`decode_client` returns one typed message or
raises :class:`~tracker.core.errors.DecodeError`.  Encoding happens once per
update; every subscriber receives the same bytes (one encoding for the full
updates, one for the deltas).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Annotated, Any, Final, Literal, NotRequired, TypedDict

import msgspec

from tracker.core.apply import Update
from tracker.core.errors import DecodeError
from tracker.core.events import Event, GameResult, TournamentId
from tracker.core.projection import LineStatus, Projection, Scenario, Status
from tracker.core.projection.chances import Chances
from tracker.core.projection.cues import Cue, CueKind
from tracker.core.projection.stakes import LineState, Stakes
from tracker.core.standings import Row, Standings

#: v1.1 adds ``"updates": "delta"`` to ``subscribe`` (field deltas); a client that does not ask gets v1's bytes.
PROTOCOL_VERSION: Final = "1.1"

Token = Annotated[str, msgspec.Meta(max_length=256)]


#: The longest spoiler delay a subscriber may ask for, in seconds.
MAX_DELAY: Final = 600.0


class Subscribe(msgspec.Struct, frozen=True, tag="subscribe", tag_field="type", forbid_unknown_fields=True):
    tournament: TournamentId
    since: Annotated[int, msgspec.Meta(ge=0, le=2**53)] | None = None
    token: Token | None = None
    stakes: bool = False
    delay: Annotated[float, msgspec.Meta(ge=0, le=MAX_DELAY)] = 0.0
    updates: Literal["full", "delta"] = "full"


class Unsubscribe(msgspec.Struct, frozen=True, tag="unsubscribe", tag_field="type", forbid_unknown_fields=True):
    tournament: TournamentId


class Submit(msgspec.Struct, frozen=True, tag="submit", tag_field="type", forbid_unknown_fields=True):
    token: Token
    event: Event
    ref: Annotated[str, msgspec.Meta(max_length=128)] | None = None


ClientMessage = Subscribe | Unsubscribe | Submit

_client_decoder: Final = msgspec.json.Decoder(ClientMessage)
_encoder: Final = msgspec.json.Encoder(decimal_format="number")


def decode_client(data: bytes | str) -> ClientMessage:
    """One client message, or :class:`DecodeError` saying what is wrong."""
    try:
        return _client_decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise DecodeError(f"invalid message: {exc}") from None
    except msgspec.DecodeError as exc:
        raise DecodeError(f"malformed JSON: {exc}") from None
    except RecursionError:
        raise DecodeError("malformed JSON: nested too deeply") from None


# -- standings rows (``tracker standings --format json``, the HTTP API, snapshots and updates) ----------


class RowJSON(TypedDict):
    rank: int
    start_no: int
    name: str
    points: float
    tiebreaks: dict[str, float]
    games: int
    withdrawn: bool
    qualified: bool
    line: float
    results: list[tuple[int, int, str, str]]


class StandingsJSON(TypedDict):
    tournament: str
    name: str
    seq: int
    provisional: bool
    basis: str
    max_basis: str
    rules: str
    standings: list[RowJSON]


def standings_json(s: Standings) -> StandingsJSON:
    """The standings JSON of `tracker standings --format json`: rows with rank, start_no, name, points, tiebreaks."""
    return {
        "tournament": s.tournament,
        "name": s.name,
        "seq": s.seq,
        "provisional": s.provisional,
        "basis": s.basis,
        "max_basis": s.max_basis,
        "rules": s.rules,
        "standings": [row_json(s.codes, row) for row in s.rows],
    }


def row_json(codes: tuple[str, ...], row: Row) -> RowJSON:
    return {
        "rank": row.rank,
        "start_no": row.start_no,
        "name": row.name,
        "points": _number(row.points),
        "tiebreaks": {code: _number(v) for code, v in zip(codes, row.tiebreaks, strict=True)},
        "games": row.games,
        "withdrawn": row.withdrawn,
        "qualified": row.qualified,
        "line": _number(row.line),
        "results": list(row.results),
    }


def _number(value: Fraction) -> float:
    # float(value) exactly (Rational.__float__ divides the same two ints), without its two int() calls and
    # the method lookups: a worker converts about 70 numbers per update, one update per result.
    return value.numerator / value.denominator


# -- projections -------------------------------------------------------------------------------


class OpponentStatusJSON(TypedDict):
    start_no: int
    status: Status


class ScenarioGameJSON(TypedDict):
    round: int | None
    white: int
    black: int
    result: GameResult


class ScenariosJSON(TypedDict):
    """For each extreme, a result for every remaining game that reaches it."""

    rank_best: list[ScenarioGameJSON]
    rank_worst: list[ScenarioGameJSON]
    ks_min: list[ScenarioGameJSON]
    ks_max: list[ScenarioGameJSON]


class ExactJSON(TypedDict):
    """For each extreme: true when the value is exact (its scenario reaches it), false when it is a bound."""

    rank_best: bool
    rank_worst: bool
    ks_min: bool
    ks_max: bool


class AttainedJSON(TypedDict):
    """For each extreme: what its scenario reaches (equal to the value when exact)."""

    rank_best: float
    rank_worst: float
    ks_min: float
    ks_max: float


class LineProjectionJSON(TypedDict):
    """One declared line (the first ``places`` places) for one player, with a scenario per possible side."""

    places: int
    name: str
    status: LineStatus
    inside: list[ScenarioGameJSON] | None
    outside: list[ScenarioGameJSON] | None
    playoff: list[ScenarioGameJSON] | None


class PlayoffProjectionJSON(TypedDict):
    """Membership of the play-off for 1st; ``secured``: at least tied first on points in every outcome."""

    status: Status
    scenario: list[ScenarioGameJSON] | None
    secured: bool
    exact: bool


class PlayerProjectionJSON(TypedDict):
    start_no: int
    ks_min: float
    ks_max: float
    rank_best: int
    rank_worst: int
    points_min: float
    points_max: float
    qualification: Status
    opponents: list[OpponentStatusJSON]
    scenarios: ScenariosJSON
    exact: ExactJSON
    attained: AttainedJSON
    lines: list[LineProjectionJSON]
    playoff: PlayoffProjectionJSON | None


class KoyaRangeJSON(TypedDict):
    start_no: int
    min: float
    max: float


class RankRangeJSON(TypedDict):
    start_no: int
    best: int
    worst: int


class OutcomeEffectJSON(TypedDict):
    result: GameResult
    ks: list[KoyaRangeJSON]
    ranks: list[RankRangeJSON]


class GameProjectionJSON(TypedDict):
    round: int | None
    white: int
    black: int
    outcomes: list[OutcomeEffectJSON]
    exact: bool


class LineJSON(TypedDict):
    places: int
    name: str


class ProjectionJSON(TypedDict):
    tournament: str
    seq: int
    exact: bool
    remaining: int
    line: float
    players: list[PlayerProjectionJSON]
    games: list[GameProjectionJSON]
    lines: list[LineJSON]
    playoff: bool


def scenario_json(scenario: Scenario) -> list[ScenarioGameJSON]:
    """A scenario as the list of remaining games with their results."""
    return [{"round": g.round, "white": g.white, "black": g.black, "result": g.result} for g in scenario]


def _maybe(scenario: Scenario | None) -> list[ScenarioGameJSON] | None:
    return None if scenario is None else scenario_json(scenario)


def projection_json(p: Projection) -> ProjectionJSON:
    """The JSON shape sent to arbiters: points as JSON numbers, maps as lists."""
    return {
        "tournament": p.tournament,
        "seq": p.seq,
        "exact": p.exact,
        "remaining": p.remaining,
        "line": float(p.line),
        "players": [
            {
                "start_no": pp.start_no,
                "ks_min": float(pp.ks_min),
                "ks_max": float(pp.ks_max),
                "rank_best": pp.rank_best,
                "rank_worst": pp.rank_worst,
                "points_min": float(pp.points_min),
                "points_max": float(pp.points_max),
                "qualification": pp.qualification,
                "opponents": [{"start_no": o.start_no, "status": o.status} for o in pp.opponents],
                "scenarios": {
                    "rank_best": scenario_json(pp.reached["rank_best"].scenario),
                    "rank_worst": scenario_json(pp.reached["rank_worst"].scenario),
                    "ks_min": scenario_json(pp.reached["ks_min"].scenario),
                    "ks_max": scenario_json(pp.reached["ks_max"].scenario),
                },
                "exact": {
                    "rank_best": pp.reached["rank_best"].exact,
                    "rank_worst": pp.reached["rank_worst"].exact,
                    "ks_min": pp.reached["ks_min"].exact,
                    "ks_max": pp.reached["ks_max"].exact,
                },
                "attained": {
                    "rank_best": float(pp.reached["rank_best"].attained),
                    "rank_worst": float(pp.reached["rank_worst"].attained),
                    "ks_min": float(pp.reached["ks_min"].attained),
                    "ks_max": float(pp.reached["ks_max"].attained),
                },
                "lines": [
                    {
                        "places": line.places,
                        "name": line.name,
                        "status": line.status,
                        "inside": _maybe(line.inside),
                        "outside": _maybe(line.outside),
                        "playoff": _maybe(line.playoff),
                    }
                    for line in pp.lines
                ],
                "playoff": None
                if pp.playoff is None
                else {
                    "status": pp.playoff.status,
                    "scenario": _maybe(pp.playoff.scenario),
                    "secured": pp.playoff.secured,
                    "exact": pp.playoff.exact,
                },
            }
            for pp in p.players
        ],
        "games": [
            {
                "round": g.round,
                "white": g.white,
                "black": g.black,
                "outcomes": [
                    {
                        "result": o.result,
                        "ks": [{"start_no": s, "min": float(lo), "max": float(hi)} for s, (lo, hi) in o.ks.items()],
                        "ranks": [{"start_no": s, "best": b, "worst": w} for s, (b, w) in o.ranks.items()],
                    }
                    for o in g.outcomes
                ],
                "exact": g.exact,
            }
            for g in p.games
        ],
        "lines": [{"places": places, "name": name} for places, name in p.lines],
        "playoff": p.playoff,
    }


class StandingsPayload(StandingsJSON):
    """:class:`StandingsJSON` and what live clients need beside it: rounds, games played, the codes, the scoring."""

    rounds: int
    games_played: int
    codes: list[str]
    scoring: dict[str, float]


def standings_payload(s: Standings) -> StandingsPayload:
    """The standings JSON every interface shares (the HTTP standings page, snapshots and updates)."""
    return {
        **standings_json(s),
        "rounds": s.rounds,
        "games_played": sum(row.games for row in s.rows) // 2,
        "codes": list(s.codes),
        "scoring": {name: float(points) for name, points in s.scoring},
    }


class QualificationJSON(TypedDict):
    """Opponents (start numbers) who entered or left ``player``'s qualifying set (50% line, limit 0)."""

    player: int
    entered: list[int]
    left: list[int]


class SnapshotMessage(StandingsPayload):
    """The full standings of a tournament and the ``seq`` they are at; sent first after ``subscribe``."""

    type: Literal["snapshot"]


class EventFields(TypedDict):
    """What one accepted event did, in every ``update`` (full or delta).

    ``changed`` are the start numbers whose rank, points or tie-breaks moved,
    ``reached``/``fell`` those who crossed the 50% line, ``summary`` one
    sentence for people.
    """

    event: Event
    changed: list[int]
    reached: list[int]
    fell: list[int]
    qualification: list[QualificationJSON]
    summary: str


class UpdateMessage(StandingsPayload, EventFields):
    """One accepted event: the event, what it changed and why (:class:`EventFields`), and the full new rows.

    ``seq`` increases strictly from one update to the next.
    """

    type: Literal["update"]


class AckMessage(TypedDict):
    """A submitted event is durable, or was already applied (same id: nothing changed).

    ``seq`` is the tournament's seq after it.
    """

    type: Literal["ack"]
    id: str
    tournament: str
    seq: int
    ref: str | None


class RejectedMessage(TypedDict):
    """A submitted event was refused and changed nothing: ``code`` for machines, ``reason`` for people."""

    type: Literal["rejected"]
    id: str | None
    code: str
    reason: str
    ref: str | None


class ErrorMessage(TypedDict):
    """The client's message itself was bad (malformed JSON, unknown type, unknown tournament, wrong token)."""

    type: Literal["error"]
    code: str
    reason: str


class ProjectionMessage(ProjectionJSON):
    """For arbiters (``subscribe`` with a token): what the remaining games can still change."""

    type: Literal["projection"]


class NoticeJSON(TypedDict):
    """One rejected submission, as every arbiter device lists it.

    ``id`` increases from one notice to the next (a page shows each once),
    ``at`` is when it was refused (Unix seconds), ``event`` the event refused.
    """

    id: int
    at: float
    code: str
    reason: str
    event: Event


class NoticesMessage(TypedDict):
    """For arbiters: the tournament's recent rejected submissions, oldest first (at most a few dozen).

    Sent on an arbiter's subscribe and to every arbiter of the tournament
    whenever one is added, so a reloaded page or a second device sees them too.
    """

    type: Literal["notices"]
    tournament: str
    notices: list[NoticeJSON]


class ScheduleMessage(TypedDict):
    """For arbiters, on subscribe: the published pairings, ``rounds[r - 1]`` the (white, black) pairs of round r.

    Empty when the tournament was opened without a schedule.
    """

    type: Literal["schedule"]
    tournament: str
    rounds: list[list[tuple[int, int]]]


def notices_message(tournament: str, notices: list[NoticeJSON]) -> bytes:
    body: NoticesMessage = {"type": "notices", "tournament": tournament, "notices": notices}
    return _encoder.encode(body)


def schedule_message(tournament: str, rounds: list[list[tuple[int, int]]]) -> bytes:
    body: ScheduleMessage = {"type": "schedule", "tournament": tournament, "rounds": rounds}
    return _encoder.encode(body)


def update_message(u: Update, payload: StandingsPayload | None = None) -> bytes:
    """The ``update`` message of one accepted event, encoded once.

    ``payload`` is ``standings_payload(u.standings)`` when the caller already built it.
    """
    body: UpdateMessage = {
        "type": "update",
        **(payload if payload is not None else standings_payload(u.standings)),
        "event": u.event,  # a struct: the encoder writes it as encode_event does
        "changed": list(u.changed),
        "reached": list(u.reached),
        "fell": list(u.fell),
        "qualification": [
            {"player": q.player, "entered": list(q.entered), "left": list(q.left)} for q in u.qualification
        ],
        "summary": u.summary,
    }
    return _encoder.encode(body)


def snapshot_message(payload: StandingsPayload) -> bytes:
    body: SnapshotMessage = {"type": "snapshot", **payload}
    return _encoder.encode(body)


# -- protocol v1.1: field deltas ----------------------------------------------------------------


class DeltaRowJSON(TypedDict):
    """One row that changed: its ``start_no`` and only its fields that changed (a new row: all of them).

    ``tiebreaks`` holds only the codes whose value changed; ``results`` is there only when the crosstable
    line changed: with ``results_from`` k, the line's first k entries stay and ``results`` are the entries
    after them (a result in the latest round: one entry); without it, the whole line.
    """

    start_no: int
    rank: NotRequired[int]
    name: NotRequired[str]
    points: NotRequired[float]
    tiebreaks: NotRequired[dict[str, float]]
    games: NotRequired[int]
    withdrawn: NotRequired[bool]
    qualified: NotRequired[bool]
    line: NotRequired[float]
    results_from: NotRequired[int]
    results: NotRequired[list[tuple[int, int, str, str]]]


class DeltaMessage(EventFields):
    """An ``update`` for a subscriber that asked for ``"updates": "delta"`` (protocol v1.1).

    The event fields as in a full update; of the standings only what changed since ``seq - 1``: the
    top-level fields whose value changed, ``rows`` (see :class:`DeltaRowJSON`), ``order`` (every start
    number in standings order, only when the order or the set of rows changed) and ``digest``, the
    CRC-32 of the canonical text of the full standings after this update (docs/protocol.md, "Digest").
    """

    type: Literal["update"]
    delta: Literal[True]
    tournament: str
    seq: int
    name: NotRequired[str]
    provisional: NotRequired[bool]
    basis: NotRequired[str]
    max_basis: NotRequired[str]
    rules: NotRequired[str]
    rounds: NotRequired[int]
    games_played: NotRequired[int]
    codes: NotRequired[list[str]]
    scoring: NotRequired[dict[str, float]]
    rows: list[DeltaRowJSON]
    order: NotRequired[list[int]]
    digest: int


#: The fields of an ``update`` that describe the event, in the order a delta carries them.
EVENT_FIELDS: Final = ("event", "changed", "reached", "fell", "qualification", "summary")
_ABSENT: Final = object()
#: Top-level standings fields a delta never carries as changes: the key and the position.
_FIXED: Final = frozenset(("type", "tournament", "seq", "standings"))


class _Tail(msgspec.Struct):
    """The event fields of an encoded full ``update``, kept as the bytes they were written as."""

    event: msgspec.Raw = msgspec.Raw(b"null")
    changed: msgspec.Raw = msgspec.Raw(b"[]")
    reached: msgspec.Raw = msgspec.Raw(b"[]")
    fell: msgspec.Raw = msgspec.Raw(b"[]")
    qualification: msgspec.Raw = msgspec.Raw(b"[]")
    summary: msgspec.Raw = msgspec.Raw(b'""')


_tail_decoder: Final = msgspec.json.Decoder(_Tail)


def js_number(value: object) -> str:
    """``value`` as JavaScript's ``String(value)`` writes it (``2.0`` → ``"2"``, ``1e-7`` → ``"1e-7"``).

    Python's ``repr`` and JavaScript both write the shortest digits that read back to the same double;
    only the layout differs (ECMAScript Number::toString), which this reproduces.  Booleans are
    ``"true"``/``"false"``, ``None`` is ``"null"``, strings are themselves.
    """
    kind = type(value)
    if kind is float:
        if value == 0:
            return "0"  # String(-0) is "0"
        text = repr(value)
        if text.endswith(".0"):
            return text[:-2]  # |value| < 1e16: repr writes no exponent
        if "e" not in text and "n" not in text:
            return text
        return _js_float(text)
    if kind is int or kind is str:
        return str(value)
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, str | int):
        return str(value)
    if isinstance(value, Fraction | Decimal | float):
        return js_number(float(value))
    raise TypeError(f"not a JSON value of the standings: {value!r}")


def _js_float(text: str) -> str:
    """A float's ``repr`` with an exponent (or inf, nan) as ECMAScript Number::toString writes it."""
    if "n" in text:  # inf, nan: never in standings
        return {"inf": "Infinity", "-inf": "-Infinity"}.get(text, "NaN")
    sign, digits, exponent = Decimal(text).normalize().as_tuple()
    assert isinstance(exponent, int)
    d = "".join(map(str, digits))
    k, n = len(d), len(d) + exponent  # value = 0.d × 10^n, as ECMAScript defines it
    minus = "-" if sign else ""
    if k <= n <= 21:
        return minus + d + "0" * (n - k)
    if 0 < n <= 21:
        return minus + d[:n] + "." + d[n:]
    if -6 < n <= 0:
        return minus + "0." + "0" * -n + d
    mantissa = d[0] + ("." + d[1:] if k > 1 else "")
    return f"{minus}{mantissa}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"


def _results_text(results: Any) -> str:
    # round and opponent are integers: str() writes them as String() does
    return ";".join([f"{r},{o},{c},{x}" for r, o, c, x in results])


def digest_row(codes: list[str], row: Mapping[str, Any]) -> str:
    """One row's line of the canonical text: its fields and tie-breaks, then its crosstable part."""
    return f"{_digest_fields(codes, row)}|{_results_text(row['results'])}"


def _digest_fields(codes: list[str], row: Mapping[str, Any]) -> str:
    """A row's line of the canonical text up to its crosstable part (without the ``|`` before it)."""
    tiebreaks = row["tiebreaks"]
    return "|".join(
        (
            js_number(row["rank"]),
            js_number(row["start_no"]),
            row["name"],
            js_number(row["points"]),
            js_number(row["games"]),
            js_number(row["withdrawn"]),
            js_number(row["qualified"]),
            js_number(row["line"]),
            ",".join(js_number(tiebreaks[c]) if c in tiebreaks else "" for c in codes),
        )
    )


def digest_header(p: Mapping[str, Any]) -> str:
    """The first line of the canonical text: the standings' top-level fields (a missing one: empty)."""
    scoring = p.get("scoring") or {}
    return "|".join(
        (
            *(js_number(p.get(key, "")) for key in _HEADER),
            ",".join(p.get("codes") or ()),
            ",".join(f"{key}={js_number(scoring[key])}" for key in sorted(scoring)),
        )
    )


#: The top-level fields of the canonical text, in its order (then ``codes`` and ``scoring``).
_HEADER: Final = ("tournament", "name", "seq", "rounds", "games_played", "provisional", "basis", "max_basis", "rules")


def digest_text(lines: list[str]) -> int:
    """CRC-32 (ISO-HDLC, as zlib and PNG) of the lines joined with ``\n``, as UTF-8: an unsigned 32-bit int."""
    return zlib.crc32("\n".join(lines).encode()) & 0xFFFFFFFF


def standings_digest(p: Mapping[str, Any]) -> int:
    """The digest of a full standings payload (docs/protocol.md, "Digest"): what a delta's ``digest`` is."""
    codes = p["codes"]
    return digest_text([digest_header(p), *(digest_row(codes, row) for row in p["standings"])])


class Digester:
    """The digest of one tournament's standings from update to update, re-writing only what changed.

    Keeps each row's canonical line in two texts, its fields and tie-breaks and its crosstable part
    (the longest, which changes only for the players of the event); :meth:`digest` takes the new
    payload and the changed rows as :func:`diff_standings` gives them (``None``: all rows anew), and
    returns the same value as :func:`standings_digest`.  Two strings per row, not a part per field:
    a hub keeps one Digester per live tournament.
    """

    __slots__ = ("codes", "rows")

    def __init__(self) -> None:
        self.codes: list[str] = []
        self.rows: dict[int, tuple[str, str]] = {}  # start_no → (fields and tie-breaks, crosstable text)

    def digest(self, p: Mapping[str, Any], changes: Mapping[int, Mapping[str, Any]] | None) -> int:
        codes = list(p["codes"])
        if codes != self.codes:
            self.codes, changes = codes, None
        out = [digest_header(p)]
        for row in p["standings"]:
            start_no = row["start_no"]
            kept = self.rows.get(start_no)
            change = None if changes is None else changes.get(start_no)
            if kept is None or changes is None:
                kept = self._whole(row)
            elif change is not None:
                results = _results_text(row["results"]) if "results" in change else kept[1]
                head = (
                    kept[0] if change.keys() <= {"start_no", "results", "results_from"} else _digest_fields(codes, row)
                )
                kept = self.rows[start_no] = (head, results)
            out.append(f"{kept[0]}|{kept[1]}")
        if len(self.rows) > len(p["standings"]):
            present = {row["start_no"] for row in p["standings"]}
            for gone in [n for n in self.rows if n not in present]:
                del self.rows[gone]
        return digest_text(out)

    def _whole(self, row: Mapping[str, Any]) -> tuple[str, str]:
        kept = self.rows[row["start_no"]] = (_digest_fields(self.codes, row), _results_text(row["results"]))
        return kept


def _kept(old: Any, new: Any) -> int:
    """How many leading entries two crosstable lines share (entries may be tuples on one side, lists on the other)."""
    if old == new:
        return len(new)
    kept = 0
    for x, y in zip(old, new, strict=False):
        if tuple(x) != tuple(y):
            break
        kept += 1
    return kept


def diff_standings(
    previous: Mapping[str, Any], new: Mapping[str, Any]
) -> tuple[dict[str, Any], list[dict[str, Any]], list[int] | None]:
    """What changed from ``previous`` to ``new``: (top-level fields, changed rows, order or ``None``).

    Each changed row holds ``start_no`` and its changed fields in the row's own order (a new row: all
    of them); ``tiebreaks`` only the codes that changed.  ``order`` is ``None`` when the order of the
    start numbers is the same.
    """
    top = {k: v for k, v in new.items() if k not in _FIXED and (k not in previous or previous[k] != v)}
    old_rows = {row["start_no"]: row for row in previous.get("standings", ())}
    rows: list[dict[str, Any]] = []
    for row in new["standings"]:
        old = old_rows.get(row["start_no"])
        if old is None:
            rows.append(dict(row))
            continue
        change: dict[str, Any] | None = None
        for key, value in row.items():
            before = old.get(key, _ABSENT)
            if before == value:
                continue
            if change is None:
                change = {"start_no": row["start_no"]}
            if key == "tiebreaks" and before is not _ABSENT:
                change[key] = {code: v for code, v in value.items() if code not in before or before[code] != v}
            elif key == "results" and before is not _ABSENT:
                kept = _kept(before, value)
                if kept == len(before) == len(value):
                    continue  # the same entries, tuples on one side and lists on the other
                if kept:
                    change["results_from"] = kept  # the first ``kept`` entries stay: only the rest is sent
                change[key] = value[kept:]
            else:
                change[key] = value
        if change is not None and len(change) > 1:
            rows.append(change)
    order = [row["start_no"] for row in new["standings"]]
    same = len(order) == len(old_rows) and all(
        a == b["start_no"] for a, b in zip(order, previous.get("standings", ()), strict=False)
    )
    return top, rows, None if same else order


def update_delta(previous: Mapping[str, Any], new: Mapping[str, Any], message: bytes, digest: int) -> bytes:
    """The delta ``update`` (v1.1) for the full ``update`` ``message`` whose standings are ``new``.

    ``previous`` are the standings at the seq before, ``digest`` is ``standings_digest(new)`` (the caller
    may keep a :class:`Digester`).  The event fields are copied from ``message`` byte for byte.
    """
    top, rows, order = diff_standings(previous, new)
    return delta_message(new, message, top, rows, order, digest)


def delta_message(
    new: Mapping[str, Any],
    message: bytes,
    top: Mapping[str, Any],
    rows: list[dict[str, Any]],
    order: list[int] | None,
    digest: int,
) -> bytes:
    """Encode a delta from what :func:`diff_standings` found (see :func:`update_delta`).

    The event fields are the last ones :func:`update_message` writes: their bytes are spliced in as they
    are (found after the last ``,"event":{``, which no escaped JSON string can contain); a message laid
    out otherwise is decoded instead.
    """
    head: dict[str, Any] = {"type": "update", "delta": True, "tournament": new["tournament"], "seq": new["seq"], **top}
    rest: dict[str, Any] = {"rows": rows}
    if order is not None:
        rest["order"] = order
    rest["digest"] = digest
    at = message.rfind(b',"event":{')
    if at > 0 and message.endswith(b'"}') and message.find(b',"summary":"', at) > 0:
        return b"".join((_encoder.encode(head)[:-1], message[at:-1], b",", _encoder.encode(rest)[1:]))
    tail = _tail_decoder.decode(message)
    body = {**head, **{key: getattr(tail, key) for key in EVENT_FIELDS}, **rest}
    return _encoder.encode(body)


def apply_delta(previous: Mapping[str, Any], delta: Mapping[str, Any]) -> dict[str, Any]:
    """The standings payload after ``delta`` (a decoded delta ``update``) on ``previous`` (at ``seq - 1``).

    ``previous`` is not changed; unchanged rows are shared.  Check the result with
    :func:`standings_digest` against ``delta["digest"]``.  Raises ``KeyError`` for a delta that names a
    row neither ``previous`` nor the delta itself describes fully.
    """
    payload = {k: v for k, v in previous.items()}
    for key, value in delta.items():
        if key not in _FIXED and key not in _DELTA_ONLY:
            payload[key] = value
    payload["tournament"] = delta["tournament"]
    payload["seq"] = delta["seq"]
    rows = {row["start_no"]: row for row in previous.get("standings", ())}
    for change in delta["rows"]:
        start_no = change["start_no"]
        old = rows.get(start_no)
        if old is None:
            rows[start_no] = dict(change)
            continue
        row = {**old, **change}
        if "tiebreaks" in change:
            row["tiebreaks"] = {**old["tiebreaks"], **change["tiebreaks"]}
        if "results_from" in change:
            del row["results_from"]
            row["results"] = [*old["results"][: change["results_from"]], *change["results"]]
        rows[start_no] = row
    order = delta.get("order")
    if order is None:
        order = [row["start_no"] for row in previous.get("standings", ())]
    payload["standings"] = [rows[n] for n in order]
    return payload


#: Keys of a delta that are not standings fields.
_DELTA_ONLY: Final = frozenset(("delta", *EVENT_FIELDS, "rows", "order", "digest"))


def full_update(payload: Mapping[str, Any], delta: Mapping[str, Any]) -> bytes:
    """The full v1 ``update`` message of ``delta`` whose standings (after it) are ``payload``, encoded.

    Byte for byte what :func:`update_message` wrote when ``payload`` is what the processor built.
    """
    body = {"type": "update", **payload, **{key: delta[key] for key in EVENT_FIELDS}}
    return _encoder.encode(body)


def ack_message(event_id: str, tournament: str, seq: int, ref: str | None = None) -> bytes:
    body: AckMessage = {"type": "ack", "id": event_id, "tournament": tournament, "seq": seq, "ref": ref}
    return _encoder.encode(body)


def rejected_message(event_id: str | None, code: str, reason: str, ref: str | None = None) -> bytes:
    body: RejectedMessage = {"type": "rejected", "id": event_id, "code": code, "reason": reason, "ref": ref}
    return _encoder.encode(body)


def error_message(code: str, reason: str) -> bytes:
    body: ErrorMessage = {"type": "error", "code": code, "reason": reason}
    return _encoder.encode(body)


def projection_message(p: Projection) -> bytes:
    """The ``projection`` message arbiters receive."""
    body: ProjectionMessage = {"type": "projection", **projection_json(p)}
    return _encoder.encode(body)


# -- stakes, chances and cues (subscribers with ``"stakes": true``) ---------------------------


class StakeJSON(TypedDict):
    """One player's state on one line changes with this outcome; ``text`` says it for people."""

    start_no: int
    places: int
    line: str
    before: LineState
    after: LineState
    text: str


class OutcomeStakesJSON(TypedDict):
    result: GameResult
    stakes: list[StakeJSON]


class GameStakesJSON(TypedDict):
    """A pending game; ``exact`` false: the stakes listed are proven, and there may be more."""

    round: int | None
    white: int
    black: int
    outcomes: list[OutcomeStakesJSON]
    exact: bool


class LineStateJSON(TypedDict):
    places: int
    name: str
    state: LineState


class PlayerLinesJSON(TypedDict):
    start_no: int
    name: str
    lines: list[LineStateJSON]


class LineChanceJSON(TypedDict):
    places: int
    name: str
    chance: float


class PlayerChancesJSON(TypedDict):
    """Estimated chances (0–1): the title, each line, the play-off (null without one), each place."""

    start_no: int
    first: float
    lines: list[LineChanceJSON]
    playoff: float | None
    positions: list[float]


class ChancesJSON(TypedDict):
    """Chances from ratings: an estimate (``estimate`` is always true), never an exact answer.

    ``model`` names how it was made (Elo expectation with a draw model), ``runs`` simulated completions
    of the tournament from ``seed``.
    """

    estimate: Literal[True]
    model: str
    runs: int
    seed: int
    draw_rate: float
    players: list[PlayerChancesJSON]


class StakesMessage(TypedDict):
    """For subscribers who ask (``"stakes": true``): what each pending game decides, after event ``seq``.

    ``exact``: every state and stake is exact; otherwise those listed are proven and games say which are
    incomplete.  ``players`` hold each player's state today on each line.  ``chances`` is an estimate from
    ratings, kept apart from the exact answers (null when not computed).
    """

    type: Literal["stakes"]
    tournament: str
    seq: int
    exact: bool
    lines: list[LineJSON]
    playoff: bool
    players: list[PlayerLinesJSON]
    games: list[GameStakesJSON]
    chances: ChancesJSON | None


class CueMessage(TypedDict):
    """A moment for producers (subscribers with ``"stakes": true``): ``kind`` is ``clinched`` or ``lost``
    (a line, named in ``line``), ``leader`` (new players ranked 1st) or ``overtake`` (the first player passes
    the second on a tie-break, on equal points); ``text`` is a lower third; ``seq`` the event after which
    it holds."""

    type: Literal["cue"]
    tournament: str
    seq: int
    kind: CueKind
    players: list[int]
    line: str | None
    text: str


def stakes_message(k: Stakes, c: Chances | None) -> bytes:
    """The ``stakes`` message: stakes and today's line states, and the chances (an estimate) apart."""
    body: StakesMessage = {
        "type": "stakes",
        "tournament": k.tournament,
        "seq": k.seq,
        "exact": k.exact,
        "lines": [{"places": places, "name": name} for places, name in k.lines],
        "playoff": k.playoff,
        "players": [
            {
                "start_no": p.start_no,
                "name": p.name,
                "lines": [
                    {"places": places, "name": name, "state": state}
                    for (places, name), state in zip(k.lines, p.states, strict=True)
                ],
            }
            for p in k.players
        ],
        "games": [
            {
                "round": g.round,
                "white": g.white,
                "black": g.black,
                "outcomes": [
                    {
                        "result": o.result,
                        "stakes": [
                            {
                                "start_no": s.start_no,
                                "places": s.places,
                                "line": s.line,
                                "before": s.before,
                                "after": s.after,
                                "text": s.text,
                            }
                            for s in o.stakes
                        ],
                    }
                    for o in g.outcomes
                ],
                "exact": g.exact,
            }
            for g in k.games
        ],
        "chances": None
        if c is None
        else {
            "estimate": True,
            "model": f"Elo expectation, draw rate {c.draw_rate:g} between equals, {c.runs} simulated runs",
            "runs": c.runs,
            "seed": c.seed,
            "draw_rate": c.draw_rate,
            "players": [
                {
                    "start_no": p.start_no,
                    "first": p.first,
                    "lines": [
                        {"places": places, "name": name, "chance": chance}
                        for (places, name), chance in zip(c.lines, p.lines, strict=True)
                    ],
                    "playoff": p.playoff,
                    "positions": list(p.positions),
                }
                for p in c.players
            ],
        },
    }
    return _encoder.encode(body)


def cue_message(tournament: str, seq: int, cue: Cue) -> bytes:
    body: CueMessage = {
        "type": "cue",
        "tournament": tournament,
        "seq": seq,
        "kind": cue.kind,
        "players": list(cue.players),
        "line": cue.line,
        "text": cue.text,
    }
    return _encoder.encode(body)


def encode(obj: object) -> bytes:
    """JSON bytes of a plain value (decimals as numbers)."""
    return _encoder.encode(obj)


UpdateKind = Literal["snapshot", "update"]
