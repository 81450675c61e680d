"""Protocol v1.1's field deltas and the digest that checks them.

How this works
--------------

A subscriber that asks for ``"updates": "delta"`` gets each ``update`` as
the difference between the standings before and after it
(:func:`diff_standings`): the top-level fields that changed, the changed
fields of the changed rows, a crosstable line's new entries, the order when
it moved, and the CRC-32 of a canonical text of the full standings after it
(:func:`standings_digest`; :class:`Digester` keeps it from update to update).
A client rebuilds the full standings (:func:`apply_delta`) and checks them
against the digest.  The canonical text writes numbers as JavaScript's
``String()`` does (:func:`js_number`): ``web/live.js`` computes the same
digest in the browser, so this module and that one must stay byte-exact.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any, Final, Literal, NotRequired, TypedDict

import msgspec

from tracker.protocol.messages import EventFields
from tracker.protocol.shapes import RoundMatchesJSON, SaidJSON, TeamRowJSON, encode

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
    summary_said: NotRequired[list[SaidJSON]]
    #: a team event's team rows, whole, when any of them changed
    teams: NotRequired[list[TeamRowJSON]]
    #: a team event's matches: only the rounds whose matches changed (each replaces its round)
    matches: NotRequired[list[RoundMatchesJSON]]
    #: every round of ``matches`` in order, only when the set of rounds changed (a void took a round's
    #: last board away): the rounds not listed are dropped
    match_rounds: NotRequired[list[int]]
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
    summary_said: msgspec.Raw | None = None


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
    if "matches" in top:
        top.update(_matches_diff(previous.get("matches") or [], new["matches"]))
    order = [row["start_no"] for row in new["standings"]]
    same = len(order) == len(old_rows) and all(
        a == b["start_no"] for a, b in zip(order, previous.get("standings", ()), strict=False)
    )
    return top, rows, None if same else order


def _matches_diff(old: list[Any], new: list[Any]) -> dict[str, Any]:
    """A team event's ``matches`` in a delta: the rounds that changed (a board result changes one round, not
    the 25 KB of every match of a 12-team event), and ``match_rounds`` when the set of rounds changed."""
    before = {entry["round"]: entry for entry in old}
    diff: dict[str, Any] = {"matches": [entry for entry in new if before.get(entry["round"]) != entry]}
    rounds = [entry["round"] for entry in new]
    if rounds != [entry["round"] for entry in old]:
        diff["match_rounds"] = rounds
    return diff


def _patched_matches(old: list[Any], delta: Mapping[str, Any]) -> list[Any]:
    """``old`` matches with a delta's changed rounds put in (see :func:`_matches_diff`)."""
    by_round = {entry["round"]: entry for entry in old}
    by_round.update((entry["round"], entry) for entry in delta.get("matches", ()))
    rounds = delta.get("match_rounds")
    return [by_round[r] for r in (rounds if rounds is not None else sorted(by_round))]


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
    if at > 0 and message.endswith((b'"}', b"]}")) and message.find(b',"summary":"', at) > 0:
        return b"".join((encode(head)[:-1], message[at:-1], b",", encode(rest)[1:]))
    tail = _tail_decoder.decode(message)
    body = {**head, **{key: getattr(tail, key) for key in EVENT_FIELDS}}
    if tail.summary_said is not None:
        body["summary_said"] = tail.summary_said
    return encode({**body, **rest})


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
    if "matches" in delta or "match_rounds" in delta:
        payload["matches"] = _patched_matches(previous.get("matches") or [], delta)
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
_DELTA_ONLY: Final = frozenset(
    ("delta", *EVENT_FIELDS, "summary_said", "rows", "order", "digest", "matches", "match_rounds")
)


def full_update(payload: Mapping[str, Any], delta: Mapping[str, Any]) -> bytes:
    """The full v1 ``update`` message of ``delta`` whose standings (after it) are ``payload``, encoded.

    Byte for byte what :func:`update_message` wrote when ``payload`` is what the processor built.
    """
    body = {"type": "update", **payload, **{key: delta[key] for key in EVENT_FIELDS}}
    return encode(body)
