"""The messages of websocket protocol v1.1: the client's, decoded strictly, and the server's, encoded once.

Client → server: :class:`Subscribe`, :class:`Unsubscribe`, :class:`Submit`
(their docstrings are the published schemas' descriptions).  Server →
client: one ``TypedDict`` per message and one builder per message that
returns its bytes; the builders are typed with the dicts, so mypy holds the
two together and :mod:`tracker.schema` publishes them.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal, NotRequired, TypedDict

import msgspec

from tracker.core.apply import Update
from tracker.core.errors import DecodeError
from tracker.core.events import Event, GameResult, Submitted, Teams, TournamentId
from tracker.core.phrases import Said
from tracker.core.projection import Projection
from tracker.core.projection.chances import Chances
from tracker.core.projection.cues import Cue, CueKind
from tracker.core.projection.stakes import OutcomeStakes, Stakes
from tracker.core.teams.stakes import BoardDecides
from tracker.core.worth.live import LiveWorth, NormStake
from tracker.core.worth.prizes import MoneyStake
from tracker.protocol.shapes import (
    BoardDecidesJSON,
    ChancesJSON,
    ColumnJSON,
    GameStakesJSON,
    LineJSON,
    OutcomeStakesJSON,
    PlayerLinesJSON,
    PlayerWorthJSON,
    ProjectionJSON,
    SaidJSON,
    StandingsPayload,
    chances_json,
    column_words,
    encode,
    money_stakes_json,
    norm_stakes_json,
    projection_json,
    said_json,
    standings_payload,
    team_games_json,
    worth_json,
)

PROTOCOL_VERSION: Final = "1.1"

Token = Annotated[str, msgspec.Meta(max_length=256)]


#: The longest spoiler delay a subscriber may ask for, in seconds.
MAX_DELAY: Final = 600.0


class Subscribe(msgspec.Struct, frozen=True, tag="subscribe", tag_field="type", forbid_unknown_fields=True):
    """Follow a tournament: the server answers with a snapshot (or, with `since`, the updates after that seq
    when it still keeps them), then sends every update. With the arbiter `token`, projections too. With
    `stakes`, `stakes` and `cue` messages too; with `boards`, `boards` and `live` messages (the games in
    progress and the tournament if they ended now: estimates). `delay` (seconds, at most 600) holds back
    every message to this subscriber by that long (a spoiler delay), and nobody else's. `updates`: `full`
    (the default, protocol v1) or `delta` (v1.1: updates carry only the fields that changed and a digest)."""

    tournament: TournamentId
    since: Annotated[int, msgspec.Meta(ge=0, le=2**53)] | None = None
    token: Token | None = None
    stakes: bool = False
    boards: bool = False
    delay: Annotated[float, msgspec.Meta(ge=0, le=MAX_DELAY)] = 0.0
    updates: Literal["full", "delta"] = "full"


class Unsubscribe(msgspec.Struct, frozen=True, tag="unsubscribe", tag_field="type", forbid_unknown_fields=True):
    """Stop receiving a tournament's updates."""

    tournament: TournamentId


class Submit(msgspec.Struct, frozen=True, tag="submit", tag_field="type", forbid_unknown_fields=True):
    """An arbiter submits an event (or a `board_updated`, which never enters the results). The server
    answers `ack` once the event is durable (a board: once it is kept), or `rejected`; `ref` is echoed back.
    With `propose` (a reason), the event is not applied: it goes on the arbiters' desk as a notice with code
    `proposed` and that reason, and the answer is `rejected` (`proposed`): how `tracker follow` puts a void
    its source made to the arbiter."""

    token: Token
    event: Submitted
    ref: Annotated[str, msgspec.Meta(max_length=128)] | None = None
    propose: Annotated[str, msgspec.Meta(min_length=1, max_length=300)] | None = None


ClientMessage = Subscribe | Unsubscribe | Submit

_client_decoder: Final = msgspec.json.Decoder(ClientMessage)


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


class QualificationJSON(TypedDict):
    """Opponents (start numbers) who entered or left ``player``'s qualifying set (50% line, limit 0)."""

    player: int
    entered: list[int]
    left: list[int]


class SnapshotMessage(StandingsPayload):
    """The full standings of a tournament and the ``seq`` they are at; sent first after ``subscribe``.

    ``columns`` says what each shown code is (the same for the whole tournament: updates do not repeat it).
    """

    type: Literal["snapshot"]
    columns: list[ColumnJSON]


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
    """A submitted event was refused and changed nothing: ``code`` for machines, ``reason`` for people.

    ``reason_said`` (to a connection that subscribed with ``"updates": "delta"``, protocol v1.1) is the
    reason as a phrase, for a client to write in its viewer's language; a reason without one (an
    operational failure: a journal or broker error) is English only.
    """

    type: Literal["rejected"]
    id: str | None
    code: str
    reason: str
    ref: str | None
    reason_said: NotRequired[SaidJSON]


class ErrorMessage(TypedDict):
    """The client's message itself was bad (malformed JSON, unknown type, unknown tournament, wrong token)."""

    type: Literal["error"]
    code: str
    reason: str


class CutShortJSON(TypedDict):
    """Why a projection's exact search was stopped: after ``seconds`` of its own time, for ``time`` or ``memory``."""

    seconds: float
    reason: Literal["time", "memory"]


class ProjectionMessage(ProjectionJSON):
    """For arbiters (``subscribe`` with a token): what the remaining games can still change.

    ``preliminary``: the interval bounds sent first, while the exact search
    runs (its projection follows for the same or a later seq).  ``cut_short``:
    the exact search was stopped (its time or memory limit), so the values are
    the interval bounds; absent when the search ran to its end.
    """

    type: Literal["projection"]
    preliminary: NotRequired[bool]
    cut_short: NotRequired[CutShortJSON]


class NoticedEventJSON(TypedDict):
    """What a notice says of the event it refused: its type, id and tournament, and where it has them its
    round, players (``white``/``black`` or ``player``), result, bye kind, reason, or (an opening) how many
    players it listed."""

    type: str
    id: str
    tournament: str
    round: NotRequired[int]
    white: NotRequired[int]
    black: NotRequired[int]
    player: NotRequired[int]
    result: NotRequired[str]
    kind: NotRequired[str]
    reason: NotRequired[str]
    players: NotRequired[int]


class NoticeJSON(TypedDict):
    """One rejected submission, as every arbiter device lists it.

    ``id`` increases from one notice to the next (a page shows each once),
    ``at`` is when it was refused (Unix seconds), ``event`` a summary of the event refused,
    ``reason_said`` the reason as a phrase (when it has one: see :class:`RejectedMessage`).
    """

    id: int
    at: float
    code: str
    reason: str
    event: NoticedEventJSON
    reason_said: NotRequired[SaidJSON]


class NoticesMessage(TypedDict):
    """For arbiters: the tournament's recent rejected submissions, oldest first (at most a few dozen).

    Sent whole on an arbiter's subscribe; to every arbiter of the tournament whenever one is added, with
    ``added`` true and only the new notice, so a reloaded page or a second device sees them too.
    """

    type: Literal["notices"]
    tournament: str
    notices: list[NoticeJSON]
    added: NotRequired[bool]


class ScheduleMessage(TypedDict):
    """For arbiters, on subscribe: the published pairings, ``rounds[r - 1]`` the (white, black) pairs of round r.

    Empty when the tournament was opened without a schedule.  ``withdrawals``: (start number, the first round
    the player no longer plays, 0 when the withdrawal gave none) of every player withdrawn so far; later
    withdrawals arrive as updates.
    """

    type: Literal["schedule"]
    tournament: str
    rounds: list[list[tuple[int, int]]]
    withdrawals: NotRequired[list[tuple[int, int]]]
    #: a team event's set-up: the boards of a match, the first-named team's colour per board (``""``: W B W B …)
    #: and each team's players in board order (reserves last), for the arbiter page's match entry
    teams: NotRequired[ScheduleTeamsJSON]


class ScheduleTeamJSON(TypedDict):
    team: int
    name: str
    players: list[int]


class ScheduleTeamsJSON(TypedDict):
    boards: int
    colours: str
    teams: list[ScheduleTeamJSON]


def notices_message(tournament: str, notices: list[NoticeJSON], *, added: bool = False) -> bytes:
    """The ``notices`` message: the whole list, or (``added``) the notices just added."""
    body: NoticesMessage = {"type": "notices", "tournament": tournament, "notices": notices}
    if added:
        body["added"] = True
    return encode(body)


def schedule_message(
    tournament: str,
    rounds: list[list[tuple[int, int]]],
    withdrawals: list[tuple[int, int]] | None = None,
    teams: Teams | None = None,
) -> bytes:
    body: ScheduleMessage = {"type": "schedule", "tournament": tournament, "rounds": rounds}
    if withdrawals:
        body["withdrawals"] = withdrawals
    if teams is not None:
        body["teams"] = {
            # without a board count, the smallest team's size (a team fields no more boards than it has players)
            "boards": teams.boards or min(len(x.players) for x in teams.teams),
            "colours": teams.colours,
            "teams": [{"team": x.number, "name": x.name, "players": list(x.players)} for x in teams.teams],
        }
    return encode(body)


def update_message(u: Update, payload: StandingsPayload | None = None) -> bytes:
    """The ``update`` message of one accepted event as the processor publishes it, encoded once.

    Its last field is ``summary_said`` (the summary as phrases, when the update has them): a hub sends
    full subscribers :func:`v1_update` of it (protocol v1's bytes) and delta subscribers the phrases too.

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
    if u.said:  # last, after the v1 fields: SAID_TAIL
        return encode({**body, "summary_said": u.said})
    return encode(body)


#: What follows an ``update``'s ``summary`` in the message the processor publishes: the summary as phrases
#: (a hub strips it for full subscribers, who get protocol v1's bytes; deltas carry it).
SAID_TAIL: Final = b',"summary_said":['


def v1_update(message: bytes) -> bytes:
    """``message`` (an ``update`` as published) as protocol v1 sends it: without its ``summary_said``."""
    at = message.rfind(SAID_TAIL)
    return message[:at] + b"}" if at > 0 and message.endswith(b"]}") else message


def snapshot_message(payload: StandingsPayload) -> bytes:
    body: SnapshotMessage = {"type": "snapshot", **payload, "columns": column_words(payload["codes"])}
    return encode(body)


class _EventRef(msgspec.Struct):
    id: str


class UpdateHead(msgspec.Struct, frozen=True):
    """What a reader of encoded ``update`` messages needs first: whose, which seq, which event."""

    tournament: str
    seq: int
    event: _EventRef

    @property
    def event_id(self) -> str:
        return self.event.id


_head_decoder: Final = msgspec.json.Decoder(UpdateHead)


def decode_head(message: bytes) -> UpdateHead:
    """The head of an encoded ``update`` (full or delta); raises :class:`DecodeError` for anything else."""
    try:
        return _head_decoder.decode(message)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise DecodeError(f"invalid update: {exc}") from None


def ack_message(event_id: str, tournament: str, seq: int, ref: str | None = None) -> bytes:
    body: AckMessage = {"type": "ack", "id": event_id, "tournament": tournament, "seq": seq, "ref": ref}
    return encode(body)


def rejected_message(
    event_id: str | None, code: str, reason: str, ref: str | None = None, said: Said | None = None
) -> bytes:
    body: RejectedMessage = {"type": "rejected", "id": event_id, "code": code, "reason": reason, "ref": ref}
    if said is not None:
        body["reason_said"] = said_json(said)
    return encode(body)


def error_message(code: str, reason: str) -> bytes:
    body: ErrorMessage = {"type": "error", "code": code, "reason": reason}
    return encode(body)


def projection_message(p: Projection, *, preliminary: bool = False, cut_short: CutShortJSON | None = None) -> bytes:
    """The ``projection`` message arbiters receive (``preliminary`` and ``cut_short`` as :class:`ProjectionMessage`)."""
    body: ProjectionMessage = {"type": "projection", **projection_json(p)}  # type: ignore[typeddict-item]
    # (mypy asks the ** item to name the optional keys too; they are set below, when they apply)
    if preliminary:
        body["preliminary"] = True
    if cut_short is not None:
        body["cut_short"] = cut_short
    return encode(body)


class PrizeCategoryJSON(TypedDict):
    """A prize category as ``tournament_opened.categories`` declares it: its name, rule and prizes per place."""

    name: str
    rule: str
    prizes: list[float]


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
    #: each player's rating change, performance and title norms in play (:mod:`tracker.core.worth.live`)
    worth: NotRequired[list[PlayerWorthJSON]]
    #: the prizes declared per place from the 1st and how they are shared (absent: none declared)
    prizes: NotRequired[list[float]]
    sharing: NotRequired[str]
    #: the prize categories declared beside the places (absent: none), one prize per player
    categories: NotRequired[list[PrizeCategoryJSON]]
    #: a team event's last round: what each pending board decides for the teams (:mod:`tracker.core.teams.stakes`)
    team_games: NotRequired[list[BoardDecidesJSON]]


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
    said: SaidJSON


def stakes_message(
    k: Stakes, c: Chances | None, worth: LiveWorth | None = None, team_games: tuple[BoardDecides, ...] | None = None
) -> bytes:
    """The ``stakes`` message: stakes and today's line states, and the chances (an estimate) apart; with
    ``worth``, each player's rating change, performance and norms, and the norms each outcome decides."""
    decides = {} if worth is None else worth.decides
    at_stake = {} if worth is None else worth.money
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
                "board": g.board,
                "white": g.white,
                "black": g.black,
                "outcomes": [
                    _outcome_json(o, decides.get(key := (g.round, g.white, g.black), {}), at_stake.get(key, {}))
                    for o in g.outcomes
                ],
                "exact": g.exact,
            }
            for g in k.games
        ],
        "chances": None if c is None else chances_json(c),
    }
    if worth is not None:
        body["worth"] = worth_json(worth)
        if worth.prizes or worth.categories:
            body["prizes"] = [float(p) for p in worth.prizes]
            body["sharing"] = worth.sharing
        if worth.categories:
            body["categories"] = [
                {"name": c.name, "rule": c.rule, "prizes": [float(p) for p in c.prizes]} for c in worth.categories
            ]
    if team_games is not None:
        body["team_games"] = team_games_json(team_games)
    return encode(body)


def _outcome_json(
    o: OutcomeStakes,
    decided: dict[GameResult, tuple[NormStake, ...]],
    at_stake: dict[GameResult, tuple[MoneyStake, ...]],
) -> OutcomeStakesJSON:
    """One outcome of a pending game: the lines it decides, the norms (``decided``: the game's, by result) and
    the money at stake (``at_stake``: the game's, by result)."""
    body: OutcomeStakesJSON = {
        "result": o.result,
        "stakes": [
            {
                "start_no": s.start_no,
                "places": s.places,
                "line": s.line,
                "before": s.before,
                "after": s.after,
                "text": s.text,
                "said": said_json(s.said),
            }
            for s in o.stakes
        ],
    }
    if norms := decided.get(o.result):
        body["norms"] = norm_stakes_json(norms)
    if money := at_stake.get(o.result):
        body["money"] = money_stakes_json(money)
    return body


def cue_message(tournament: str, seq: int, cue: Cue) -> bytes:
    body: CueMessage = {
        "type": "cue",
        "tournament": tournament,
        "seq": seq,
        "kind": cue.kind,
        "players": list(cue.players),
        "line": cue.line,
        "text": cue.text,
        "said": said_json(cue.said),
    }
    return encode(body)


UpdateKind = Literal["snapshot", "update"]
