"""Websocket protocol v1.1: the messages, their decoding and their JSON.

Three rooms: :mod:`~tracker.protocol.messages` (the catalogue, strict
decoding, one builder per server message), :mod:`~tracker.protocol.shapes`
(the JSON of standings, projections, stakes and chances) and
:mod:`~tracker.protocol.delta` (v1.1's field deltas and their digest, which
must stay byte-exact with ``web/live.js``).  This face re-exports them.

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

from tracker.protocol.boards import (
    AssumedJSON,
    BoardJSON,
    BoardsMessage,
    BoardStakeJSON,
    LiveMessage,
    MoveJSON,
    boards_message,
    live_message,
)
from tracker.protocol.delta import (
    EVENT_FIELDS,
    DeltaMessage,
    DeltaRowJSON,
    Digester,
    apply_delta,
    delta_message,
    diff_standings,
    digest_header,
    digest_row,
    digest_text,
    full_update,
    js_number,
    standings_digest,
    update_delta,
)
from tracker.protocol.messages import (
    MAX_DELAY,
    PROTOCOL_VERSION,
    AckMessage,
    ClientMessage,
    CueMessage,
    ErrorMessage,
    EventFields,
    NoticedEventJSON,
    NoticeJSON,
    NoticesMessage,
    ProjectionMessage,
    QualificationJSON,
    RejectedMessage,
    ScheduleMessage,
    SnapshotMessage,
    StakesMessage,
    Submit,
    Subscribe,
    Token,
    Unsubscribe,
    UpdateHead,
    UpdateKind,
    UpdateMessage,
    ack_message,
    cue_message,
    decode_client,
    decode_head,
    error_message,
    notices_message,
    projection_message,
    rejected_message,
    schedule_message,
    snapshot_message,
    stakes_message,
    update_message,
    v1_update,
)
from tracker.protocol.shapes import (
    AttainedJSON,
    ChancesJSON,
    ColumnJSON,
    ExactJSON,
    GameProjectionJSON,
    GameStakesJSON,
    KoyaRangeJSON,
    LineChanceJSON,
    LineJSON,
    LineProjectionJSON,
    LineStateJSON,
    OpponentStatusJSON,
    OutcomeEffectJSON,
    OutcomeStakesJSON,
    PlayerChancesJSON,
    PlayerLinesJSON,
    PlayerProjectionJSON,
    PlayoffProjectionJSON,
    ProjectionJSON,
    RankRangeJSON,
    RowJSON,
    SaidJSON,
    ScenarioGameJSON,
    ScenariosJSON,
    StakeJSON,
    StandingsJSON,
    StandingsPayload,
    column_words,
    encode,
    encoding_payload,
    projection_json,
    row_json,
    said_json,
    scenario_json,
    standings_json,
    standings_payload,
)

__all__ = [
    "EVENT_FIELDS",
    "MAX_DELAY",
    "PROTOCOL_VERSION",
    "AckMessage",
    "AssumedJSON",
    "AttainedJSON",
    "BoardJSON",
    "BoardStakeJSON",
    "BoardsMessage",
    "ChancesJSON",
    "ClientMessage",
    "ColumnJSON",
    "CueMessage",
    "DeltaMessage",
    "DeltaRowJSON",
    "Digester",
    "ErrorMessage",
    "EventFields",
    "ExactJSON",
    "GameProjectionJSON",
    "GameStakesJSON",
    "KoyaRangeJSON",
    "LineChanceJSON",
    "LineJSON",
    "LineProjectionJSON",
    "LineStateJSON",
    "LiveMessage",
    "MoveJSON",
    "NoticeJSON",
    "NoticedEventJSON",
    "NoticesMessage",
    "OpponentStatusJSON",
    "OutcomeEffectJSON",
    "OutcomeStakesJSON",
    "PlayerChancesJSON",
    "PlayerLinesJSON",
    "PlayerProjectionJSON",
    "PlayoffProjectionJSON",
    "ProjectionJSON",
    "ProjectionMessage",
    "QualificationJSON",
    "RankRangeJSON",
    "RejectedMessage",
    "RowJSON",
    "SaidJSON",
    "ScenarioGameJSON",
    "ScenariosJSON",
    "ScheduleMessage",
    "SnapshotMessage",
    "StakeJSON",
    "StakesMessage",
    "StandingsJSON",
    "StandingsPayload",
    "Submit",
    "Subscribe",
    "Token",
    "Unsubscribe",
    "UpdateHead",
    "UpdateKind",
    "UpdateMessage",
    "ack_message",
    "apply_delta",
    "boards_message",
    "column_words",
    "cue_message",
    "decode_client",
    "decode_head",
    "delta_message",
    "diff_standings",
    "digest_header",
    "digest_row",
    "digest_text",
    "encode",
    "encoding_payload",
    "error_message",
    "full_update",
    "js_number",
    "live_message",
    "notices_message",
    "projection_json",
    "projection_message",
    "rejected_message",
    "row_json",
    "said_json",
    "scenario_json",
    "schedule_message",
    "snapshot_message",
    "stakes_message",
    "standings_digest",
    "standings_json",
    "standings_payload",
    "update_delta",
    "update_message",
    "v1_update",
]
