"""Event validation: whether an event may be applied to a tournament, and why not.

Every check raises :class:`~tracker.core.errors.EventRejected` (or a
subclass) with a reason a person can act on, before anything changes.
:func:`plan` is the one place that validates every kind of event (a
``match`` closed with ``assert_never``: a new event type is named here by
``mypy --strict``); it returns the :class:`Plan` that
:func:`tracker.core.apply.step` then carries out.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Final, assert_never

from tracker.core.crosstable import Entry, Tournament, bye_entry, game_entries
from tracker.core.errors import EventRejected, InvalidPairing, UnknownTournament
from tracker.core.events import (
    ByeRecorded,
    ByeVoided,
    Event,
    PlayerWithdrawn,
    ResultCorrected,
    ResultRecorded,
    ResultVoided,
    Scoring,
    TournamentOpened,
)
from tracker.core.schedule import rounds_needed
from tracker.core.tiebreaks import parse_tiebreaks


@dataclass(frozen=True, slots=True)
class Plan:
    """What a valid event changes in a tournament.

    The entries of ``players`` (indices: one bye-taker, or white and black)
    in ``round`` become ``new`` (``None`` clears them); a withdrawal
    (``withdraws``) changes no entry (``new`` ``None``; ``round`` the first
    round the player no longer plays, 0 when not given).
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
            raise EventRejected(f"tournament {event.tournament} is already open", code="already-open")
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
                    f"the result of {event.white}–{event.black} is already {event.result}", code="unchanged"
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
                raise EventRejected(f"player {event.player} has no bye in round {event.round}", code="no-such-result")
            return Plan(event.round, (p,), None)
        case PlayerWithdrawn():
            p = t.player(event.player)
            if t.withdrawn[p]:
                raise EventRejected(f"player {event.player} has already withdrawn", code="already-withdrawn")
            check_withdrawal(t, event, p)
            return Plan(event.round or 0, (p,), None, withdraws=True)
        case _:
            assert_never(event)


POINTS_STEP: Final = Decimal("0.001")


def check_scoring(scoring: Scoring) -> None:
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
            raise EventRejected(
                f"scoring {name.replace('_', ' ')} must be a number of points between -9999.999 and 9999.999 "
                "with at most 3 decimals",
                code="invalid-tournament",
            )
    if scoring.win <= 0:
        raise EventRejected("a win must be worth more than 0 points", code="invalid-tournament")


def check_opened(event: TournamentOpened) -> None:
    """Check an opening event before a tournament is built from it.

    Raises :class:`EventRejected` for a set-up tracker cannot track: repeated
    start numbers, too few rounds for the round robin, an unknown tie-break
    code, a schedule naming unknown players or pairing a player twice, a
    line with more places than players or declared twice.
    """
    numbers = [p.start_no for p in event.players]
    if len(set(numbers)) != len(numbers):
        raise EventRejected("two players share a start number", code="invalid-tournament")
    check_scoring(event.scoring)
    cycles = 2 if event.format == "double" else 1
    n = len(numbers)
    needed = rounds_needed(n, cycles)
    if event.rounds is not None and event.rounds < needed:
        raise EventRejected(
            f"{n} players need at least {needed} rounds in a {event.format} round robin, not {event.rounds}",
            code="invalid-tournament",
        )
    parse_tiebreaks(event.tiebreaks, event.rules)
    places = [line.places for line in event.lines]
    if len(set(places)) != len(places) or any(p > n for p in places):
        raise EventRejected(
            f"lines of {', '.join(str(p) for p in places)} places for {n} players: each at most {n} places, none twice",
            code="invalid-tournament",
        )
    if event.schedule is not None:
        known = set(numbers)
        limit = event.rounds if event.rounds is not None else needed
        if len(event.schedule) > limit:
            raise EventRejected("the schedule has more rounds than the tournament", code="invalid-tournament")
        for r, pairs in enumerate(event.schedule, start=1):
            seen: set[int] = set()
            for w, b in pairs:
                if w not in known or b not in known or w == b or w in seen or b in seen:
                    raise EventRejected(f"round {r} of the schedule pairs {w} and {b}", code="invalid-tournament")
                seen.update((w, b))


def check_game(t: Tournament, event: ResultRecorded | ResultCorrected | ResultVoided) -> tuple[int, int]:
    """Indices of white and black after checking the pairing itself.

    Raises :class:`UnknownPlayer` or :class:`InvalidPairing`.
    """
    w, b = t.player(event.white), t.player(event.black)
    if w == b:
        raise InvalidPairing(f"player {event.white} cannot play himself")
    if event.round > t.rounds:
        raise InvalidPairing(f"round {event.round} is beyond the tournament's {t.rounds} rounds")
    return w, b


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
                advice = "void the bye first (bye_voided) if this game was played"
                what = "a bye"
            elif other.opponent in (w, b):
                advice = "send result_corrected to change its result"
                what = "this game's result"
            else:
                advice = "correct or void that game first if the pairing was wrong"
                what = f"a game against {t.start_nos[other.opponent]}"
            raise InvalidPairing(
                f"player {number} already has {what} in round {r}; {advice}",
                code="duplicate-result" if other.is_game and other.opponent in (w, b) else "invalid-pairing",
            )
    met = t.games_between(w, b)
    if len(met) >= t.cycles:
        raise InvalidPairing(f"players {event.white} and {event.black} have already met in {rounds_words(met)}")
    per_cycle = rounds_needed(t.n, 1)
    cycle = (r - 1) // per_cycle
    if any((m - 1) // per_cycle == cycle for m in met):
        raise InvalidPairing(f"players {event.white} and {event.black} already met in this cycle (round {met[0]})")
    if t.schedule is not None:
        pairs = t.schedule.get(r, set())
        if (w, b) not in pairs:
            hint = " (colours reversed)" if (b, w) in pairs else ""
            raise InvalidPairing(f"round {r} of the schedule has no game {event.white}–{event.black}{hint}")
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
        raise InvalidPairing(f"round {r} is beyond the tournament's {t.rounds} rounds")
    if r in t.entries[p]:
        other = t.entries[p][r]
        what = f"a game against {t.start_nos[other.opponent]}" if other.is_game else "a bye"
        raise InvalidPairing(f"player {event.player} already has {what} in round {r}")
    for w, b in sorted((t.schedule or {}).get(r, ())):
        if p not in (w, b):
            continue
        o = b if p == w else w
        opponent_bye = r in t.entries[o] and not t.entries[o][r].is_game
        if not (event.replaces_game or t.withdrawn[p] or t.withdrawn[o] or opponent_bye):
            raise InvalidPairing(
                f"player {event.player} has a scheduled game {t.start_nos[w]}–{t.start_nos[b]} in round {r}; "
                "record its result instead (a forfeit if one side did not play), withdraw the absent player "
                "first, or mark the bye as replacing the game (a requested bye)",
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
        lost = "−/+ (Black wins by forfeit)" if side == 0 else "+/− (White wins by forfeit)"
        raise EventRejected(
            f"player {t.start_nos[p]} withdrew from round {start}: their game in round {r} can only be recorded "
            f"as a forfeit they lose ({lost}, or −/− if neither played)",
            code="withdrawn",
        )


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
        raise InvalidPairing(f"round {r} is beyond the tournament's {t.rounds} rounds")
    played = sorted(k for k, e in t.entries[p].items() if k >= r and e.is_game and e.played)
    if played:
        opponent = t.start_nos[t.entries[p][played[0]].opponent]
        raise EventRejected(
            f"player {event.player} played round {played[0]} (against {opponent}), so cannot have withdrawn from "
            f"round {r}: withdraw from round {played[-1] + 1} or later, or correct that game first",
            code="withdrawn",
        )


def rounds_words(rounds: list[int]) -> str:
    """``[8]`` → "round 8", ``[3, 8]`` → "rounds 3 and 8", ``[1, 2, 5]`` → "rounds 1, 2 and 5"."""
    if len(rounds) == 1:
        return f"round {rounds[0]}"
    return "rounds " + ", ".join(str(r) for r in rounds[:-1]) + f" and {rounds[-1]}"


def existing_game(t: Tournament, event: ResultCorrected | ResultVoided) -> tuple[int, int, Entry]:
    """White, black and white's entry of a game that must already be recorded."""
    w, b = check_game(t, event)
    entry = t.entries[w].get(event.round)
    if entry is None or entry.opponent != b or not entry.white:
        raise EventRejected(
            f"no result {event.white}–{event.black} is recorded in round {event.round}",
            code="no-such-result",
        )
    return w, b, entry


def require_tournament(t: Tournament | None, event: Event) -> Tournament:
    if t is None:
        raise UnknownTournament(f"no tournament {event.tournament} is open")
    if t.id != event.tournament:
        raise UnknownTournament(f"an event for tournament {event.tournament} was sent to tournament {t.id}")
    return t
