"""The live boards' messages: ``boards`` (where each game in progress stands) and ``live`` (what that
would make of the tournament), for subscribers who ask with ``"boards": true``.

Both are estimates and never change the official values: ``seq`` is the
official seq they are against, ``live_seq`` counts each tournament's live
messages (both kinds), so a client keeps the newest.  A ``live`` message
carries the standings "if the games ended now" as a field delta against the
official standings at ``seq`` (the rows that differ and the order when it
moved, as a v1.1 delta does: :func:`tracker.protocol.delta.diff_standings`),
the results assumed, the rank moves, who would cross the 50% line, the live
chances and the stakes sentences of the games in progress.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict, cast

from tracker.core.boards import BoardSet, board_age, eval_text, is_stale
from tracker.core.events import EvalSource, Evaluation, GameResult
from tracker.core.live import AsItStands, BoardStake
from tracker.core.projection.chances import Chances
from tracker.core.worth.rating import shown_change
from tracker.protocol.delta import DeltaRowJSON, diff_standings
from tracker.protocol.shapes import (
    ChancesJSON,
    RoundMatchesJSON,
    SaidJSON,
    StandingsPayload,
    TeamRowJSON,
    chances_json,
    encode,
    said_json,
    standings_payload,
)

#: How the live chances are made, as the message says it.
LIVE_MODEL = "games in progress drawn from their boards' win/draw/loss, games to come from Elo; {runs} simulated runs"


class BoardJSON(TypedDict):
    """One game in progress: where it stands (``ply`` half-moves, ``last_move`` in SAN, ``fen``, the clocks in
    seconds left), its evaluation from White's side and where that comes from, the win/draw/loss estimate
    (per mille: the evaluation's own or the model's, docs/protocol.md) and the most likely result.  ``age``:
    seconds since its source last sent it (``null``: unknown, a board restored after a restart); ``stale``:
    not known to be live (not refreshed within the gateway's stale time, its follower stopped, or restored
    and not sent again since): the position as last known."""

    round: int
    white: int
    black: int
    board: int
    ply: int
    last_move: str
    fen: str
    white_clock: float | None
    black_clock: float | None
    evaluation: Evaluation | None
    eval_text: str
    source: EvalSource | None
    wdl: list[int] | None
    likely: GameResult | None
    age: float | None
    stale: bool


class BoardsMessage(TypedDict):
    """Every game in progress of a tournament (``boards: true`` subscribers), after official event ``seq``."""

    type: Literal["boards"]
    tournament: str
    seq: int
    live_seq: int
    boards: list[BoardJSON]


class AssumedJSON(TypedDict):
    round: int
    white: int
    black: int
    result: GameResult


class MoveJSON(TypedDict):
    """A player whose rank as it stands differs from the official one."""

    start_no: int
    official: int
    live: int


class BoardStakeJSON(TypedDict):
    round: int
    white: int
    black: int
    board: int
    result: GameResult
    text: str
    said: SaidJSON


class LiveMessage(TypedDict):
    """The tournament "if the games ended now" (``boards: true`` subscribers): an estimate, apart from the
    official values.  ``rows`` and ``order`` are a delta against the official standings at ``seq``; ``chances``
    (the newest live chances, ``null`` until the first is simulated) were simulated after official event
    ``chances_seq``."""

    type: Literal["live"]
    tournament: str
    seq: int
    live_seq: int
    estimate: Literal[True]
    results: list[AssumedJSON]
    rows: list[DeltaRowJSON]
    order: NotRequired[list[int]]
    moves: list[MoveJSON]
    reached: list[int]
    fell: list[int]
    chances: ChancesJSON | None
    chances_seq: int | None
    stakes: list[BoardStakeJSON]
    #: the players of the games in progress: their rating change so far and performance as they would then be
    worth: NotRequired[list[LiveRatingJSON]]
    #: a team event: the matches with a game in progress as they would then stand, and the team rows when
    #: those would differ from the official ones
    matches: NotRequired[list[RoundMatchesJSON]]
    teams: NotRequired[list[TeamRowJSON]]


class LiveRatingJSON(TypedDict):
    """A player's rating change (FIDE B.02, one decimal; ``null``: unrated) and performance (TPR; ``null``
    without a rated game) if the games in progress ended at their most likely results."""

    start_no: int
    rating_change: float | None
    performance: int | None


def boards_message(
    tournament: str, seq: int, live_seq: int, boards: BoardSet, *, now: float, stale_after: float
) -> bytes:
    """The ``boards`` message of a tournament's boards, in board order, their ages at ``now`` (the clock of
    the boards' receive times), stale past ``stale_after`` seconds."""
    body: BoardsMessage = {
        "type": "boards",
        "tournament": tournament,
        "seq": seq,
        "live_seq": live_seq,
        "boards": [
            {
                "round": b.event.round,
                "white": b.event.white,
                "black": b.event.black,
                "board": b.number,
                "ply": b.event.ply,
                "last_move": b.event.last_move,
                "fen": b.event.fen,
                "white_clock": b.event.white_clock,
                "black_clock": b.event.black_clock,
                "evaluation": b.event.evaluation,
                "eval_text": eval_text(b.event.evaluation),
                "source": b.event.source,
                "wdl": None if b.wdl is None else list(b.wdl),
                "likely": b.likely,
                "age": None if (age := board_age(b, now)) is None else round(age, 1),
                "stale": is_stale(b, now, stale_after),
            }
            for b in boards.in_order()
        ],
    }
    return encode(body)


def live_message(
    live_seq: int,
    official: StandingsPayload,
    now: AsItStands,
    chances: Chances | None,
    stakes: tuple[BoardStake, ...],
) -> bytes:
    """The ``live`` message: ``now`` (from :func:`tracker.core.live.as_it_stands`) against ``official``."""
    payload: StandingsPayload = standings_payload(now.standings)
    payload["seq"] = official["seq"]
    top, rows, order = diff_standings(official, payload)
    body: LiveMessage = {
        "type": "live",
        "tournament": official["tournament"],
        "seq": official["seq"],
        "live_seq": live_seq,
        "estimate": True,
        "results": [{"round": r, "white": w, "black": b, "result": result} for r, w, b, result in now.results],
        "rows": cast(list[DeltaRowJSON], rows),  # diff_standings' rows are DeltaRowJSON-shaped
        "moves": [{"start_no": s, "official": a, "live": b} for s, a, b in now.moves],
        "reached": list(now.reached),
        "fell": list(now.fell),
        "chances": None if chances is None else chances_json(chances, LIVE_MODEL.format(runs=chances.runs)),
        "chances_seq": None if chances is None else chances.seq,
        "stakes": [
            {
                "round": k.round,
                "white": k.white,
                "black": k.black,
                "board": k.board,
                "result": k.result,
                "text": k.text,
                "said": said_json(k.said),
            }
            for k in stakes
        ],
    }
    if order is not None:
        body["order"] = order
    if "matches" in payload and now.results:  # a team event: its matches of the games in progress, as they stand
        playing = {(r, w, b) for r, w, b, _ in now.results}
        live_matches: list[RoundMatchesJSON] = []
        for rnd in payload["matches"]:
            kept = [
                m for m in rnd["matches"] if any((rnd["round"], x["white"], x["black"]) in playing for x in m["boards"])
            ]
            if kept:
                live_matches.append({"round": rnd["round"], "matches": kept})
        body["matches"] = live_matches
        if "teams" in top:
            body["teams"] = payload["teams"]
    if now.ratings:
        body["worth"] = [
            {
                "start_no": c.start_no,
                "rating_change": shown_change(c),
                "performance": c.performance,
            }
            for c in now.ratings
        ]
    return encode(body)
