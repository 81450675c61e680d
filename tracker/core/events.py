"""Typed events: everything that can happen to a round-robin tournament.

Events are frozen ``msgspec`` structs tagged by ``type``, so one decoder
turns untrusted JSON into exactly one of them (or raises
:class:`~tracker.core.errors.DecodeError`), and the same definitions give
the JSON Schema published in the docs.  Points in :class:`Scoring` are
``Decimal`` on the wire and exact fractions inside the core: no float ever
enters a score.

Every event has an ``id`` chosen by its producer; applying an event whose id
the tournament has already applied changes nothing (at-least-once delivery
is the norm on Kafka).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Final, Literal

import msgspec

from tracker.core.errors import DecodeError

EventId = Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
# (?!\n) before $: Python's $ also matches before a final newline, which an id must not end with
TournamentId = Annotated[str, msgspec.Meta(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*(?!\n)$")]
StartNo = Annotated[int, msgspec.Meta(ge=1, le=9999)]
RoundNo = Annotated[int, msgspec.Meta(ge=1, le=999)]
Name = Annotated[str, msgspec.Meta(max_length=200)]
Points = Decimal

#: A game's result as a PGN-like token. ``+-`` and ``-+`` are forfeit wins
#: for White and Black, ``--`` a double forfeit (C.07 §15.2: all three are
#: games in a round robin).
GameResult = Literal["1-0", "1/2-1/2", "0-1", "+-", "-+", "--"]
GAME_RESULTS: Final[tuple[GameResult, ...]] = ("1-0", "1/2-1/2", "0-1", "+-", "-+", "--")
#: Free round of an odd round robin or a requested bye: ``full`` (TRF ``F``),
#: ``half`` (``H``), ``zero`` (``Z``, also the usual free round), ``pab``
#: (pairing-allocated bye, ``U``).
ByeKind = Literal["full", "half", "zero", "pab"]
Format = Literal["single", "double"]
Basis = Literal["games", "rounds"]
ProvisionalBasis = Literal["percentage", "max-games", "rounds"]
#: The edition of FIDE C.07 (tie-break regulations) the tournament runs
#: under: ``2026`` (in force since 1 March 2026) or ``2024``.  What differs is
#: in :mod:`tracker.core.editions`.
Rules = Literal["2024", "2026"]
#: How players equal on points share place prizes (:mod:`tracker.core.worth.prizes`): ``none`` (the
#: tie-breaks decide), ``average`` (equal shares), ``hort`` (half by place, half in equal shares).
PrizeSharing = Literal["none", "average", "hort"]
RULES: Final[tuple[Rules, ...]] = ("2024", "2026")

DEFAULT_TIEBREAKS: Final[tuple[str, ...]] = ("PTS", "DE", "SB", "KS", "WON")
#: A team event's team order when it names none (FIDE TEC codes).
DEFAULT_TEAM_TIEBREAKS: Final[tuple[str, ...]] = ("MPTS", "GPTS", "EDE", "SB:MP")


class Player(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A participant: the TRF starting rank and what a start list shows."""

    start_no: StartNo
    name: Name
    rating: Annotated[int, msgspec.Meta(ge=0, le=4000)] = 0
    title: Annotated[str, msgspec.Meta(max_length=3)] = ""
    federation: Annotated[str, msgspec.Meta(max_length=3)] = ""
    fide_id: Annotated[str, msgspec.Meta(max_length=11)] = ""
    sex: Annotated[str, msgspec.Meta(max_length=1)] = ""
    birth: Annotated[str, msgspec.Meta(max_length=10)] = ""


class Scoring(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Points per outcome.  ``None`` means "as a win" / "as a draw".

    Koya's 50% line and its limit steps scale with ``win`` (C.07 §14.5: a
    step is half a win), so 3-1-0 scoring works like 1-½-0.
    """

    win: Points = Decimal(1)
    draw: Points = Decimal("0.5")
    loss: Points = Decimal(0)
    forfeit_win: Points | None = None
    forfeit_loss: Points = Decimal(0)
    full_bye: Points | None = None
    half_bye: Points | None = None
    zero_bye: Points = Decimal(0)
    pab: Points | None = None


class Line(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A line in the final standings that matters: the first ``places`` places (a title, prizes, qualification).

    ``name`` is what people call it ("1st", "top 3", "qualifies"); empty: tracker names it.
    """

    places: Annotated[int, msgspec.Meta(ge=1, le=500)]
    name: Name = ""


class TeamEntry(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One team of a team event: its number (the file's team order), its name, its players in board order
    (start numbers; those past the board count are reserves)."""

    number: Annotated[int, msgspec.Meta(ge=1, le=999)]
    name: Name
    players: Annotated[tuple[StartNo, ...], msgspec.Meta(min_length=1, max_length=100)]


class MatchScoring(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Match points per match outcome (TRF26 ``362``): ``unplayed`` for a match lost with nothing played at
    the board and a zero-point team bye, ``pab`` for a pairing-allocated team bye (``None``: as a draw)."""

    win: Points = Decimal(2)
    draw: Points = Decimal(1)
    loss: Points = Decimal(0)
    unplayed: Points = Decimal(0)
    pab: Points | None = None


class Teams(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A team event's set-up: the teams, the boards of a match (``0``: the largest line-up found), the
    first-named team's colour per board (TRF ``352``; empty: ``WBWB…``), the match scoring (``362``), the team
    round robin's rounds (``0``: what it needs) and cycles, and the team order (FIDE TEC codes)."""

    teams: Annotated[tuple[TeamEntry, ...], msgspec.Meta(min_length=2, max_length=250)]
    boards: Annotated[int, msgspec.Meta(ge=0, le=100)] = 0
    colours: Annotated[str, msgspec.Meta(max_length=100, pattern="^[WB]*$")] = ""
    scoring: MatchScoring = MatchScoring()
    rounds: Annotated[int, msgspec.Meta(ge=0, le=999)] = 0
    cycles: Annotated[int, msgspec.Meta(ge=1, le=2)] = 1
    tiebreaks: Annotated[tuple[Annotated[str, msgspec.Meta(max_length=16)], ...], msgspec.Meta(max_length=16)] = (
        DEFAULT_TEAM_TIEBREAKS
    )


class PrizeCategory(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Prizes for the players a rule admits, per category place from the 1st (non-increasing), beside the place
    prizes, one prize per player (:mod:`tracker.core.worth.categories`): ``rule`` is ``rating<N`` (the start
    list's rating; unrated players are not admitted), ``sex=w`` or ``sex=m``, or ``age<N`` (on the start date,
    record ``042`` in ``records``)."""

    name: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    # (?!\n) before $: Python's $ also matches before a final newline
    rule: Annotated[str, msgspec.Meta(pattern=r"^(rating<[0-9]{1,4}|sex=[mwMW]|age<[0-9]{1,3})(?!\n)$")]
    prizes: Annotated[tuple[Points, ...], msgspec.Meta(min_length=1, max_length=100)]


class TournamentOpened(
    msgspec.Struct, frozen=True, tag="tournament_opened", tag_field="type", forbid_unknown_fields=True
):
    """A tournament starts being tracked.

    ``rounds`` defaults to what the round robin needs (n-1 per cycle, n for
    an odd n).  ``schedule``, when given, lists each round's pairings as
    (white, black) start numbers; results outside it are rejected.
    ``records`` keeps TRF header lines verbatim for a faithful export.
    ``lines`` are the places that matter (projections say, for each player
    and line, whether it is clinched, lost or still open); ``playoff`` says
    that a tie for 1st on points is decided by a play-off, not tie-breaks.
    Both are optional: events written before they existed decode unchanged.
    ``rules`` is the C.07 edition (default ``2026``; optional for the same
    reason: an event without it is read as 2026).  ``prizes`` are the prize
    money per place from the 1st (non-increasing; none: no prizes declared)
    and ``sharing`` how players equal on points share them; optional too.
    ``teams`` makes it a team event (:class:`Teams`; optional and left out of
    the encoding when unset, so an individual event's bytes are as before).
    ``categories`` are prize categories beside the place prizes
    (:class:`PrizeCategory`; optional and left out of the encoding when unset,
    likewise).
    """

    id: EventId
    tournament: TournamentId
    name: Name
    players: Annotated[tuple[Player, ...], msgspec.Meta(min_length=2, max_length=500)]
    format: Format = "single"
    rounds: RoundNo | None = None
    scoring: Scoring = Scoring()
    tiebreaks: Annotated[tuple[Annotated[str, msgspec.Meta(max_length=16)], ...], msgspec.Meta(max_length=16)] = (
        DEFAULT_TIEBREAKS
    )
    basis: Basis = "games"
    provisional: ProvisionalBasis = "percentage"
    schedule: tuple[tuple[tuple[StartNo, StartNo], ...], ...] | None = None
    records: Annotated[tuple[Annotated[str, msgspec.Meta(max_length=400)], ...], msgspec.Meta(max_length=100)] = ()
    lines: Annotated[tuple[Line, ...], msgspec.Meta(max_length=16)] = ()
    playoff: bool = False
    rules: Rules = "2026"
    prizes: Annotated[tuple[Points, ...], msgspec.Meta(max_length=500)] = ()
    sharing: PrizeSharing = "hort"
    teams: Teams | msgspec.UnsetType = msgspec.UNSET
    categories: Annotated[tuple[PrizeCategory, ...], msgspec.Meta(max_length=16)] | msgspec.UnsetType = msgspec.UNSET


class ResultRecorded(msgspec.Struct, frozen=True, tag="result_recorded", tag_field="type", forbid_unknown_fields=True):
    """A game of ``round`` between ``white`` and ``black`` ended.

    ``short`` marks TRF's W/D/L codes (the game lasted less than one move);
    it changes nothing in the standings and is kept for export.
    """

    id: EventId
    tournament: TournamentId
    round: RoundNo
    white: StartNo
    black: StartNo
    result: GameResult
    short: bool = False


class ResultCorrected(
    msgspec.Struct, frozen=True, tag="result_corrected", tag_field="type", forbid_unknown_fields=True
):
    """An already recorded game's result is replaced (an arbiter's correction)."""

    id: EventId
    tournament: TournamentId
    round: RoundNo
    white: StartNo
    black: StartNo
    result: GameResult
    short: bool = False


class ResultVoided(msgspec.Struct, frozen=True, tag="result_voided", tag_field="type", forbid_unknown_fields=True):
    """A recorded game is removed, as if it had not been played yet."""

    id: EventId
    tournament: TournamentId
    round: RoundNo
    white: StartNo
    black: StartNo


class ByeRecorded(msgspec.Struct, frozen=True, tag="bye_recorded", tag_field="type", forbid_unknown_fields=True):
    """``player`` has no game in ``round``: a free round or a requested bye.

    ``replaces_game`` says the arbiter knows the player's scheduled game of
    that round will not be played (a requested bye).  Without it a bye for a
    player the schedule pairs in that round is refused: a bye entered by
    mistake would leave that game pending for ever.
    """

    id: EventId
    tournament: TournamentId
    round: RoundNo
    player: StartNo
    kind: ByeKind = "zero"
    replaces_game: bool = False


class ByeVoided(msgspec.Struct, frozen=True, tag="bye_voided", tag_field="type", forbid_unknown_fields=True):
    """A recorded bye is removed (to record the game instead, or another bye)."""

    id: EventId
    tournament: TournamentId
    round: RoundNo
    player: StartNo


class PlayerWithdrawn(
    msgspec.Struct, frozen=True, tag="player_withdrawn", tag_field="type", forbid_unknown_fields=True
):
    """``player`` leaves the event; games already played keep counting.

    ``round`` is the first round the player no longer plays: from it on a
    game of theirs can only be recorded as a forfeit they lose (FIDE
    practice records the remaining games so), and the projections treat the
    games not yet recorded as forfeit wins for the opponents.  Optional:
    events written before it existed decode unchanged, and a withdrawal
    without it refuses nothing (its games not yet recorded are projected as
    forfeits, as before).
    """

    id: EventId
    tournament: TournamentId
    player: StartNo
    round: RoundNo | None = None
    reason: Name = ""


Event = TournamentOpened | ResultRecorded | ResultCorrected | ResultVoided | ByeRecorded | ByeVoided | PlayerWithdrawn
GameEvent = ResultRecorded | ResultCorrected | ResultVoided

# -- boards: games in progress (never in the crosstable) ----------------------------------------

PerMille = Annotated[int, msgspec.Meta(ge=0, le=1000)]
Seconds = Annotated[float, msgspec.Meta(ge=0, le=86_400)]


class Evaluation(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A position's evaluation from White's side: centipawns (``cp``) or a forced mate in ``mate`` moves
    (positive: White mates), and/or a win/draw/loss estimate in per mille (``wdl``, summing to 1000)."""

    cp: Annotated[int, msgspec.Meta(ge=-100_000, le=100_000)] | None = None
    mate: Annotated[int, msgspec.Meta(ge=-500, le=500)] | None = None
    wdl: tuple[PerMille, PerMille, PerMille] | None = None


class EvalSource(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Where an evaluation comes from: the feed's own ``[%eval]`` (``kind`` ``feed``) or a UCI engine
    (``engine``: its name, and the depth it reached)."""

    kind: Literal["feed", "engine"] = "feed"
    engine: Annotated[str, msgspec.Meta(max_length=64)] = ""
    depth: Annotated[int, msgspec.Meta(ge=0, le=999)] | None = None


class BoardUpdated(msgspec.Struct, frozen=True, tag="board_updated", tag_field="type", forbid_unknown_fields=True):
    """A game of ``round`` between ``white`` and ``black`` is being played: where it stands now.

    ``ply`` half-moves played, ``last_move`` in SAN, ``fen`` the position, the clocks (seconds left)
    when the source gives them, the ``evaluation`` and its ``source`` when known.  A board never
    touches the crosstable: it is kept apart from the results (the newest per game), a result for the
    game ends it, and a board for a game that already has a result is refused.  ``ended``: the source
    stopped following the game (``tracker follow`` stopping), so the board is the position as last known,
    stale until a live board of the game comes.
    """

    id: EventId
    tournament: TournamentId
    round: RoundNo
    white: StartNo
    black: StartNo
    ply: Annotated[int, msgspec.Meta(ge=0, le=2000)] = 0
    last_move: Annotated[str, msgspec.Meta(max_length=12)] = ""
    fen: Annotated[str, msgspec.Meta(max_length=100)] = ""
    white_clock: Seconds | None = None
    black_clock: Seconds | None = None
    evaluation: Evaluation | None = None
    source: EvalSource | None = None
    ended: bool = False


#: Everything a client may submit: an event of the results log, or a board (which never enters it).
Submitted = Event | BoardUpdated

_decoder: Final = msgspec.json.Decoder(Event)
_board_decoder: Final = msgspec.json.Decoder(BoardUpdated)
_encoder: Final = msgspec.json.Encoder(decimal_format="number")


def decode_event(data: bytes | str) -> Event:
    """Decode one event from JSON.

    Raises :class:`DecodeError` with msgspec's explanation (which field, what
    was expected) for anything that is not exactly one valid event.
    """
    try:
        event: Event = _decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise DecodeError(f"invalid event: {exc}") from None
    except msgspec.DecodeError as exc:
        raise DecodeError(f"malformed JSON: {exc}") from None
    except RecursionError:
        raise DecodeError("malformed JSON: nested too deeply") from None
    return event


def event_from_builtins(obj: object) -> Event:
    """Like :func:`decode_event` for an already parsed JSON value."""
    try:
        event: Event = msgspec.convert(obj, Event)
    except msgspec.ValidationError as exc:
        raise DecodeError(f"invalid event: {exc}") from None
    return event


def encode_event(event: Event) -> bytes:
    """The event's canonical JSON (points as JSON numbers)."""
    return _encoder.encode(event)


def decode_board(data: bytes | str) -> BoardUpdated:
    """Decode one ``board_updated`` from JSON; raises :class:`DecodeError` as :func:`decode_event` does."""
    try:
        return _board_decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise DecodeError(f"invalid board: {exc}") from None
    except msgspec.DecodeError as exc:
        raise DecodeError(f"malformed JSON: {exc}") from None


def encode_board(board: BoardUpdated) -> bytes:
    """The board's canonical JSON."""
    return _encoder.encode(board)
