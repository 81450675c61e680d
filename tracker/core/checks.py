"""Event validation: whether an event may be applied to a tournament, and why not.

Every check raises :class:`~tracker.core.errors.EventRejected` (or a
subclass) with a reason a person can act on, before anything changes.
:func:`plan` is the one place that validates every kind of event (a
``match`` closed with ``assert_never``: a new event type is named here by
``mypy --strict``); it returns the :class:`Plan` that
:func:`tracker.core.apply.step` then carries out.
"""

from __future__ import annotations

import re
from decimal import Decimal
from itertools import pairwise
from typing import Final, NamedTuple, assert_never

from tracker.core.crosstable import Entry, Tournament, bye_entry, game_entries
from tracker.core.errors import EventRejected, InvalidPairing, UnknownTournament
from tracker.core.events import (
    BoardUpdated,
    ByeRecorded,
    ByeVoided,
    Event,
    MatchScoring,
    PlayerWithdrawn,
    ResultCorrected,
    ResultRecorded,
    ResultVoided,
    Scoring,
    Teams,
    TournamentOpened,
)
from tracker.core.phrases import phrase, plural
from tracker.core.schedule import rounds_needed
from tracker.core.teams.tiebreaks import parse_team_tiebreaks
from tracker.core.tiebreaks import parse_tiebreaks

# -- the reasons, as phrases (rendered in English for ``EventRejected.reason``) ---------------

ALREADY_OPEN: Final = phrase("rejected.already_open", "tournament {tournament} is already open")
UNCHANGED: Final = phrase("rejected.unchanged", "the result of {white}–{black} is already {result}")
NO_BYE: Final = phrase("rejected.no_bye", "player {player} has no bye in round {round}")
ALREADY_WITHDRAWN: Final = phrase("rejected.already_withdrawn", "player {player} has already withdrawn")
BAD_POINTS: Final = phrase(
    "rejected.bad_points",
    "scoring {name} must be a number of points between -9999.999 and 9999.999 with at most 3 decimals",
)
WIN_WORTH: Final = phrase("rejected.win_worth", "a win must be worth more than 0 points")
SHARED_NUMBER: Final = phrase("rejected.shared_number", "two players share a start number")
TOO_FEW_ROUNDS: Final = phrase(
    "rejected.too_few_rounds", "{n} players need at least {needed} rounds in a single round robin, not {rounds}"
)
TOO_FEW_ROUNDS_DOUBLE: Final = phrase(
    "rejected.too_few_rounds.double", "{n} players need at least {needed} rounds in a double round robin, not {rounds}"
)
BAD_LINES: Final = phrase(
    "rejected.bad_lines", "lines of {places} places for {n} players: each at most {n} places, none twice"
)
BAD_PRIZES: Final = phrase(
    "rejected.bad_prizes",
    "prizes are declared per place from the 1st down, none negative: {prizes} is not in non-increasing order",
)
BAD_CATEGORY: Final = phrase(
    "rejected.bad_category",
    "prize category {name}: a name of its own (not place, not used twice) and prizes per category place from the "
    "1st down, none negative",
)
SCHEDULE_TOO_LONG: Final = phrase("rejected.schedule_too_long", "the schedule has more rounds than the tournament")
SCHEDULE_PAIRS: Final = phrase("rejected.schedule_pairs", "round {round} of the schedule pairs {white} and {black}")
TEAM_PLAYER: Final = phrase(
    "rejected.team_player", "team {team} lists player {player}, who is not in the start list or is in another team"
)
TEAM_NUMBER: Final = phrase("rejected.team_number", "two teams have number {team}")
SELF: Final = phrase("rejected.self", "player {player} cannot play himself")
BEYOND: Final = phrase("rejected.beyond", "round {round} is beyond the tournament's {rounds} rounds")
HAS_BYE: Final = phrase(
    "rejected.has_bye",
    "player {player} already has a bye in round {round}; void the bye first (bye_voided) if this game was played",
)
HAS_RESULT: Final = phrase(
    "rejected.has_result",
    "player {player} already has this game's result in round {round}; send result_corrected to change its result",
)
HAS_GAME: Final = phrase(
    "rejected.has_game",
    "player {player} already has a game against {opponent} in round {round}; "
    "correct or void that game first if the pairing was wrong",
)
MET: Final = plural(
    "rejected.met",
    "players {white} and {black} have already met in round {rounds:list}",
    "players {white} and {black} have already met in rounds {rounds:list}",
)
MET_IN_CYCLE: Final = phrase(
    "rejected.met_in_cycle", "players {white} and {black} already met in this cycle (round {round})"
)
UNSCHEDULED: Final = phrase("rejected.unscheduled", "round {round} of the schedule has no game {white}–{black}")
REVERSED: Final = phrase(
    "rejected.unscheduled.reversed", "round {round} of the schedule has no game {white}–{black} (colours reversed)"
)
BYE_HAS_GAME: Final = phrase(
    "rejected.bye_has_game", "player {player} already has a game against {opponent} in round {round}"
)
BYE_HAS_BYE: Final = phrase("rejected.bye_has_bye", "player {player} already has a bye in round {round}")
SCHEDULED_GAME: Final = phrase(
    "rejected.scheduled_game",
    "player {player} has a scheduled game {white}–{black} in round {round}; record its result instead "
    "(a forfeit if one side did not play), withdraw the absent player first, "
    "or mark the bye as replacing the game (a requested bye)",
)
ONLY_FORFEIT_WHITE: Final = phrase(
    "rejected.only_forfeit.white",
    "player {player} withdrew from round {since}: their game in round {round} can only be recorded "
    "as a forfeit they lose (−/+ (Black wins by forfeit), or −/− if neither played)",
)
ONLY_FORFEIT_BLACK: Final = phrase(
    "rejected.only_forfeit.black",
    "player {player} withdrew from round {since}: their game in round {round} can only be recorded "
    "as a forfeit they lose (+/− (White wins by forfeit), or −/− if neither played)",
)
PLAYED_ROUND: Final = phrase(
    "rejected.played_round",
    "player {player} played round {played} (against {opponent}), so cannot have withdrawn from round {round}: "
    "withdraw from round {later} or later, or correct that game first",
)
NO_RESULT: Final = phrase("rejected.no_result", "no result {white}–{black} is recorded in round {round}")
NOT_OPEN: Final = phrase("rejected.not_open", "no tournament {tournament} is open")
ELSEWHERE: Final = phrase("rejected.elsewhere", "an event for tournament {tournament} was sent to tournament {other}")


class Plan(NamedTuple):
    """What a valid event changes in a tournament.

    The entries of ``players`` (indices: one bye-taker, or white and black)
    in ``round`` become ``new`` (``None`` clears them); a withdrawal
    (``withdraws``) changes no entry (``new`` ``None``; ``round`` the first
    round the player no longer plays, 0 when not given).  A named tuple: one is made per event.
    """

    round: int
    players: tuple[int, ...]
    new: tuple[Entry, ...] | None
    withdraws: bool = False


def plan(t: Tournament, event: Event) -> Plan:
    """Validate ``event`` against ``t`` (an open tournament) and say what it changes; changes nothing.

    Raises :class:`EventRejected` (and subclasses) with the reason: an
    opening event for an open tournament (``already-open``), a pairing the
    rules or the schedule refuse, a correction to the same result
    (``unchanged``), a void of nothing (``no-such-result``), a second
    withdrawal (``already-withdrawn``), a game result other than a forfeit
    the withdrawn player loses from the withdrawal's round on, or a
    withdrawal from a round the player has played (``withdrawn``).
    """
    match event:
        case TournamentOpened():
            raise EventRejected(ALREADY_OPEN(tournament=event.tournament), code="already-open")
        case ResultRecorded():
            w, b = check_new_game(t, event)
            check_withdrawn(t, event, w, b)
            return Plan(event.round, (w, b), game_entries(t, event.round, w, b, event.result, event.short))
        case ResultCorrected():
            w, b, entry = existing_game(t, event)
            check_withdrawn(t, event, w, b)
            new = game_entries(t, event.round, w, b, event.result, event.short)
            if new[0] == entry and new[1] == t.entries[b][event.round]:
                raise EventRejected(
                    UNCHANGED(white=event.white, black=event.black, result=event.result), code="unchanged"
                )
            return Plan(event.round, (w, b), new)
        case ResultVoided():
            w, b, _ = existing_game(t, event)
            return Plan(event.round, (w, b), None)
        case ByeRecorded():
            p = check_bye(t, event)
            return Plan(event.round, (p,), (bye_entry(t, event.round, event.kind),))
        case ByeVoided():
            p = t.player(event.player)
            bye = t.entries[p].get(event.round)
            if bye is None or bye.is_game:
                raise EventRejected(NO_BYE(player=event.player, round=event.round), code="no-such-result")
            return Plan(event.round, (p,), None)
        case PlayerWithdrawn():
            p = t.player(event.player)
            if t.withdrawn[p]:
                raise EventRejected(ALREADY_WITHDRAWN(player=event.player), code="already-withdrawn")
            check_withdrawal(t, event, p)
            return Plan(event.round or 0, (p,), None, withdraws=True)
        case _:
            assert_never(event)


POINTS_STEP: Final = Decimal("0.001")


def check_scoring(scoring: Scoring | MatchScoring) -> None:
    """Refuse scoring values TRF cannot hold: beyond ±9999.999, finer than 0.001, NaN or infinite.

    Checked before any value becomes a Fraction: ``1e999999999`` would take forever to convert, and a
    value beyond a float's range cannot be sent as a JSON number.  Raises :class:`EventRejected`
    (``invalid-tournament``).
    """
    for name in scoring.__struct_fields__:
        value: Decimal | None = getattr(scoring, name)
        if value is None:
            continue
        # adjusted() (the exponent of the leading digit) needs no context: 1e999999999 is refused before any arithmetic
        if not value.is_finite() or value.adjusted() > 3 or value != value.quantize(POINTS_STEP):
            raise EventRejected(BAD_POINTS(name=name.replace("_", " ")), code="invalid-tournament")
    if scoring.win <= 0:
        raise EventRejected(WIN_WORTH(), code="invalid-tournament")


def check_opened(event: TournamentOpened) -> None:
    """Check an opening event before a tournament is built from it.

    Raises :class:`EventRejected` for a set-up tracker cannot track: repeated
    start numbers, too few rounds for the round robin, an unknown tie-break
    code, a schedule naming unknown players or pairing a player twice, a
    line with more places than players or declared twice, prizes that are
    negative or not in non-increasing order, a prize category named twice or
    ``place``, or with such prizes.
    """
    numbers = [p.start_no for p in event.players]
    if len(set(numbers)) != len(numbers):
        raise EventRejected(SHARED_NUMBER(), code="invalid-tournament")
    check_scoring(event.scoring)
    cycles = 2 if event.format == "double" else 1
    n = len(numbers)
    needed = rounds_needed(n, cycles)
    if event.rounds is not None and event.rounds < needed:
        too_few = TOO_FEW_ROUNDS_DOUBLE if event.format == "double" else TOO_FEW_ROUNDS
        raise EventRejected(too_few(n=n, needed=needed, rounds=event.rounds), code="invalid-tournament")
    parse_tiebreaks(event.tiebreaks, event.rules)
    prizes = event.prizes
    if any(not p.is_finite() or p < 0 or p.adjusted() > 12 for p in prizes) or any(a < b for a, b in pairwise(prizes)):
        raise EventRejected(BAD_PRIZES(prizes=", ".join(str(p) for p in prizes)), code="invalid-tournament")
    names: set[str] = set()
    for c in event.categories or ():
        name = c.name.strip()
        if (
            not name
            or name == "place"
            or name in names
            or any(not p.is_finite() or p < 0 or p.adjusted() > 12 for p in c.prizes)
            or any(a < b for a, b in pairwise(c.prizes))
        ):
            raise EventRejected(BAD_CATEGORY(name=repr(c.name)), code="invalid-tournament")
        names.add(name)
    places = [line.places for line in event.lines]
    if len(set(places)) != len(places) or any(p > n for p in places):
        raise EventRejected(BAD_LINES(places=", ".join(str(p) for p in places), n=n), code="invalid-tournament")
    if event.schedule is not None:
        known = set(numbers)
        limit = event.rounds if event.rounds is not None else needed
        if len(event.schedule) > limit:
            raise EventRejected(SCHEDULE_TOO_LONG(), code="invalid-tournament")
        for r, pairs in enumerate(event.schedule, start=1):
            seen: set[int] = set()
            for w, b in pairs:
                if w not in known or b not in known or w == b or w in seen or b in seen:
                    raise EventRejected(SCHEDULE_PAIRS(round=r, white=w, black=b), code="invalid-tournament")
                seen.update((w, b))
    if isinstance(event.teams, Teams):
        check_teams(event.teams, set(numbers))


def check_teams(teams: Teams, known: set[int]) -> None:
    """A team event's teams: distinct numbers, players of the start list each in one team, a known team order."""
    numbers: set[int] = set()
    placed: set[int] = set()
    for team in teams.teams:
        if team.number in numbers:
            raise EventRejected(TEAM_NUMBER(team=team.number), code="invalid-tournament")
        numbers.add(team.number)
        for player in team.players:
            if player not in known or player in placed:
                raise EventRejected(TEAM_PLAYER(team=team.number, player=player), code="invalid-tournament")
            placed.add(player)
    check_scoring(teams.scoring)
    parse_team_tiebreaks(teams.tiebreaks)


def check_game(t: Tournament, event: ResultRecorded | ResultCorrected | ResultVoided) -> tuple[int, int]:
    """Indices of white and black after checking the pairing itself.

    Raises :class:`UnknownPlayer` or :class:`InvalidPairing`.
    """
    w, b = t.player(event.white), t.player(event.black)
    if w == b:
        raise InvalidPairing(SELF(player=event.white))
    if event.round > t.rounds:
        raise InvalidPairing(BEYOND(round=event.round, rounds=t.rounds))
    return w, b


def _teams_meet(t: Tournament, pairs: set[tuple[int, int]], w: int, b: int) -> bool:
    """Whether players ``w`` and ``b`` (indices) are of two teams the schedule pairs in a round of ``pairs``:
    in a team event the schedule's boards are the declared line-ups, and a reserve who plays instead takes a
    board of the same match (its colour is the board's, so either colour)."""
    teams = t.opened.teams
    if not isinstance(teams, Teams):
        return False
    team_of = {t.index[p]: entry.number for entry in teams.teams for p in entry.players if p in t.index}
    if w not in team_of or b not in team_of or team_of[w] == team_of[b]:
        return False
    matches = {frozenset((team_of.get(x), team_of.get(y))) for x, y in pairs}
    return frozenset((team_of[w], team_of[b])) in matches


def check_new_game(t: Tournament, event: ResultRecorded) -> tuple[int, int]:
    """Indices of white and black for a new result, after every pairing rule.

    Raises :class:`InvalidPairing` when either player already has a result
    in the round, the pair has met as often as the format allows (or already
    in this cycle), or the pairing is not in the published schedule.
    """
    w, b = check_game(t, event)
    r = event.round
    for p, number in ((w, event.white), (b, event.black)):
        if r in t.entries[p]:
            other = t.entries[p][r]
            if not other.is_game:
                said = HAS_BYE(player=number, round=r)
            elif other.opponent in (w, b):
                said = HAS_RESULT(player=number, round=r)
            else:
                said = HAS_GAME(player=number, opponent=t.start_nos[other.opponent], round=r)
            code = "duplicate-result" if other.is_game and other.opponent in (w, b) else "invalid-pairing"
            raise InvalidPairing(said, code=code)
    met = t.games_between(w, b)
    if len(met) >= t.cycles:
        raise InvalidPairing(MET(white=event.white, black=event.black, rounds=list(met), n=len(met)))
    per_cycle = rounds_needed(t.n, 1)
    cycle = (r - 1) // per_cycle
    # a published schedule says itself who meets when (a team double round robin's boards meet twice within
    # the players' first cycle): the cycle rule guards the events without one
    if t.schedule is None and any((m - 1) // per_cycle == cycle for m in met):
        raise InvalidPairing(MET_IN_CYCLE(white=event.white, black=event.black, round=met[0]))
    # a round the schedule pairs nothing in is not paired yet (a team file or broadcast pairs as far as it goes)
    pairs = t.schedule.get(r) if t.schedule is not None else None
    if pairs and (w, b) not in pairs and not _teams_meet(t, pairs, w, b):
        unscheduled = REVERSED if (b, w) in pairs else UNSCHEDULED
        raise InvalidPairing(unscheduled(round=r, white=event.white, black=event.black))
    return w, b


def check_bye(t: Tournament, event: ByeRecorded) -> int:
    """The index of the player of a new bye, after checking the round, the player's entry and the schedule.

    Raises :class:`InvalidPairing` when the round is beyond the tournament, the
    player already has a result in it, or the schedule pairs the player in that
    round with an opponent who can still play the game: a bye would leave that
    game pending for ever, so the game's result (a forfeit when one side did not
    play) is what the arbiter must enter.  The bye is allowed when the event
    says it replaces the game (a requested bye), once either player has
    withdrawn, or when the opponent has a bye in that round too.
    """
    p = t.player(event.player)
    r = event.round
    if r > t.rounds:
        raise InvalidPairing(BEYOND(round=r, rounds=t.rounds))
    if r in t.entries[p]:
        other = t.entries[p][r]
        if other.is_game:
            raise InvalidPairing(BYE_HAS_GAME(player=event.player, opponent=t.start_nos[other.opponent], round=r))
        raise InvalidPairing(BYE_HAS_BYE(player=event.player, round=r))
    for w, b in sorted((t.schedule or {}).get(r, ())):
        if p not in (w, b):
            continue
        o = b if p == w else w
        opponent_bye = r in t.entries[o] and not t.entries[o][r].is_game
        if not (event.replaces_game or t.withdrawn[p] or t.withdrawn[o] or opponent_bye):
            raise InvalidPairing(
                SCHEDULED_GAME(player=event.player, white=t.start_nos[w], black=t.start_nos[b], round=r),
                code="scheduled-game",
            )
    return p


def check_withdrawn(t: Tournament, event: ResultRecorded | ResultCorrected, w: int, b: int) -> None:
    """Refuse a result that a withdrawal from an earlier round rules out.

    From the first round a withdrawn player no longer plays, their games can
    only be forfeits they lose (``-+`` with White, ``+-`` with Black, ``--``
    when the opponent did not play either): FIDE practice records the
    remaining games so.  A withdrawal that gave no round refuses nothing.
    Raises :class:`EventRejected` (``withdrawn``) naming the player and the round.
    """
    r = event.round
    for p, side in ((w, 0), (b, 1)):
        start = t.withdrawn_from[p]
        if not (t.withdrawn[p] and start and r >= start):
            continue
        if event.result == "--" or (event.result[side] == "-" and event.result[1 - side] == "+"):
            continue
        only = ONLY_FORFEIT_WHITE if side == 0 else ONLY_FORFEIT_BLACK
        raise EventRejected(only(player=t.start_nos[p], since=start, round=r), code="withdrawn")


def check_withdrawal(t: Tournament, event: PlayerWithdrawn, p: int) -> None:
    """Refuse a withdrawal from a round beyond the tournament or one the player has already played in.

    Raises :class:`EventRejected`: ``invalid-pairing`` for a round beyond the
    tournament's rounds, ``withdrawn`` when the player has a game played at the
    board in that round or later (correct or void it first, or withdraw from a later round).
    """
    r = event.round
    if r is None:
        return
    if r > t.rounds:
        raise InvalidPairing(BEYOND(round=r, rounds=t.rounds))
    played = sorted(k for k, e in t.entries[p].items() if k >= r and e.is_game and e.played)
    if played:
        opponent = t.start_nos[t.entries[p][played[0]].opponent]
        said = PLAYED_ROUND(player=event.player, played=played[0], opponent=opponent, round=r, later=played[-1] + 1)
        raise EventRejected(said, code="withdrawn")


def existing_game(t: Tournament, event: ResultCorrected | ResultVoided) -> tuple[int, int, Entry]:
    """White, black and white's entry of a game that must already be recorded."""
    w, b = check_game(t, event)
    entry = t.entries[w].get(event.round)
    if entry is None or entry.opponent != b or not entry.white:
        raise EventRejected(NO_RESULT(white=event.white, black=event.black, round=event.round), code="no-such-result")
    return w, b, entry


def require_tournament(t: Tournament | None, event: Event) -> Tournament:
    if t is None:
        raise UnknownTournament(NOT_OPEN(tournament=event.tournament))
    if t.id != event.tournament:
        raise UnknownTournament(ELSEWHERE(tournament=event.tournament, other=t.id))
    return t


# -- boards: checked like results, though they never enter the journal --------------------------------

BAD_FEN: Final = phrase("rejected.bad_fen", "the board's position is not a chess position in FEN: {problem}")
BAD_WDL: Final = phrase("rejected.bad_wdl", "the board's win/draw/loss estimate sums to {total} per mille, not 1000")
BAD_MOVE: Final = phrase("rejected.bad_move", "the board's last move is not a move in SAN (e.g. Nf3, exd5, O-O)")
#: A move in standard algebraic notation (the feeds' and python-chess's ``san()``), with its check sign.
_SAN: Final = re.compile(r"(?:[KQRBN][a-h]?[1-8]?x?[a-h][1-8]|[a-h](?:x[a-h])?[1-8](?:=[QRBN])?|O-O(?:-O)?)[+#]?")


def check_board_values(board: BoardUpdated, fen_problem: str | None) -> None:
    """Whether what ``board`` says of its game reads as chess; changes nothing.

    ``fen_problem`` is what the edge found wrong with its ``fen`` (the core parses no FEN: python-chess
    does, in the gateway), ``None`` when it parsed or is empty.  Raises :class:`EventRejected` with code
    ``invalid-board``: a position that is not one, an estimate whose win, draw and loss do not sum to
    1000 per mille, a last move that is not SAN.  The ranges of ``ply`` and the clocks are the
    decoder's (``bad-message``); a ply is not held to the position's move number (a game from a set-up
    position counts its own plies).
    """
    if fen_problem is not None:
        raise EventRejected(BAD_FEN(problem=fen_problem), code="invalid-board")
    wdl = board.evaluation.wdl if board.evaluation is not None else None
    if wdl is not None and sum(wdl) != 1000:
        raise EventRejected(BAD_WDL(total=sum(wdl)), code="invalid-board")
    if board.last_move and _SAN.fullmatch(board.last_move) is None:
        raise EventRejected(BAD_MOVE(), code="invalid-board")  # what it was is not sent back
