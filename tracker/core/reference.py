"""From-scratch tie-break sums: the reference the incremental crosstable must equal.

How this works
--------------

:func:`rebuild_sums` reads nothing but the stored entries (round, opponent,
TRF result code) and the tournament's settings, and recomputes every
running sum of :class:`~tracker.core.crosstable.Tournament` the slow, obvious
way, in this order:

1. **score** — the points of every entry, taken from the result code and the
   scoring system (byes included);
2. **adjusted score** (the score an opponent sees in Sonneborn-Berger) —
   the score less the points of trailing voluntarily unplayed byes: ``H``
   and ``Z`` entries after the player's last round that is not a VUR
   (``-``, ``H``, ``Z``), as the FIDE TEC server does;
3. **games** — entries with an opponent (forfeits and double forfeits are
   games, C.07 §15.2); **wins** — games won at the board (``1`` and the
   short ``W``; no forfeit wins, no byes);
4. **SB** (C.07 §9.1) — Σ over games of own points × the opponent's
   adjusted score; byes add nothing;
5. the **Koya line** (C.07 §9.2, §14.5) for each limit ``L``: an opponent
   qualifies when ``2 × score ≥ win × (G + L)``, where ``G`` is the number
   of games of the maximum possible score (see :func:`line_games`);
6. **KS** — Σ over games of own points against qualifying opponents; a
   forfeit win against a qualifier adds the forfeit points, byes add
   nothing.

:func:`rebuild_sums` shares no code with the incremental path: it neither
calls ``Tournament.set_entries`` nor reads the tournament's running sums
(nor the points stored in the entries: it re-derives them from the codes).
A "completed round", for the provisional ``rounds`` basis, is one in which
every player has a result, except the free player of an odd round robin.
:func:`incremental_sums` reads the same quantities from the live state so
that a test can compare the two with ``==``.

:func:`rebuild_standings` is the "rebuild after each result" baseline the
benchmarks measure: it folds the stored entries, as new events, into a fresh
tournament (through the ordinary :func:`~tracker.core.apply.fold`) and
returns that tournament's standings.

Everything here is pure: values in, values out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

from tracker.core.apply import fold
from tracker.core.crosstable import BYE, Entry, Tournament
from tracker.core.events import ByeKind, ByeRecorded, Event, GameResult, PlayerWithdrawn, ResultRecorded
from tracker.core.scoring import Units
from tracker.core.standings import Standings, standings

#: Rounds a player did not play and did not win (TEC's "VUR").
_VUR: Final = frozenset({"-", "H", "Z"})
#: Byes a player asked for (or an absence): the ones trailing VUR zeroes.
_VOLUNTARY_BYES: Final = frozenset({"H", "Z"})
#: Wins at the board; ``W`` is a game that lasted less than a move, still played.
_BOARD_WINS: Final = frozenset({"1", "W"})

#: (white's code, black's code) → (result token, short).
_RESULTS: Final[dict[tuple[str, str], tuple[GameResult, bool]]] = {
    ("1", "0"): ("1-0", False),
    ("=", "="): ("1/2-1/2", False),
    ("0", "1"): ("0-1", False),
    ("W", "L"): ("1-0", True),
    ("D", "D"): ("1/2-1/2", True),
    ("L", "W"): ("0-1", True),
    ("+", "-"): ("+-", False),
    ("-", "+"): ("-+", False),
    ("-", "-"): ("--", False),
}
_BYES: Final[dict[str, ByeKind]] = {"F": "full", "H": "half", "Z": "zero", "U": "pab"}


@dataclass(frozen=True, slots=True)
class Sums:
    """Every running sum of a tournament, per player index, in integer units.

    ``sb`` is in units² (own units × opponent's units).  ``qualified`` and
    ``ks`` hold one ``(limit, per-player values)`` pair per Koya limit, in
    ascending order of the limit.
    """

    score: tuple[int, ...]
    adjusted: tuple[int, ...]
    games: tuple[int, ...]
    wins: tuple[int, ...]
    sb: tuple[int, ...]
    qualified: tuple[tuple[int, tuple[bool, ...]], ...]
    ks: tuple[tuple[int, tuple[int, ...]], ...]

    def qualified_at(self, limit: int) -> tuple[bool, ...]:
        """Who is on or above the line moved by ``limit`` half-win steps; raises ``KeyError``."""
        return dict(self.qualified)[limit]

    def ks_at(self, limit: int) -> tuple[int, ...]:
        """Koya sums (units) for ``limit``; raises ``KeyError`` for a limit not tracked."""
        return dict(self.ks)[limit]

    def differences(self, other: Sums) -> list[str]:
        """One line per field and player where ``self`` and ``other`` disagree (for test failures)."""
        lines = []
        plain = ("score", "adjusted", "games", "wins", "sb")
        for field in plain:
            mine, theirs = getattr(self, field), getattr(other, field)
            lines += [f"{field}[{i}]: {a} != {b}" for i, (a, b) in enumerate(zip(mine, theirs, strict=True)) if a != b]
        for name, mine_by, theirs_by in (
            ("qualified", dict(self.qualified), dict(other.qualified)),
            ("ks", dict(self.ks), dict(other.ks)),
        ):
            if mine_by.keys() != theirs_by.keys():
                lines.append(f"{name} limits: {sorted(mine_by)} != {sorted(theirs_by)}")
                continue
            for limit, values in mine_by.items():
                lines += [
                    f"{name}[L{limit:+d}][{i}]: {a} != {b}"
                    for i, (a, b) in enumerate(zip(values, theirs_by[limit], strict=True))
                    if a != b
                ]
        return lines


def code_units(units: Units, code: str) -> int:
    """Points (in units) of one TRF result code under ``units``; raises ``KeyError`` for an unknown code."""
    table = {
        "1": units.win,
        "W": units.win,
        "=": units.draw,
        "D": units.draw,
        "0": units.loss,
        "L": units.loss,
        "+": units.forfeit_win,
        "-": units.forfeit_loss,
        "F": units.full_bye,
        "H": units.half_bye,
        "Z": units.zero_bye,
        "U": units.pab,
    }
    return table[code]


def is_complete(t: Tournament) -> bool:
    """Every game of the round robin is in, or every player has an entry in every round."""
    game_entries = sum(1 for entries in t.entries for e in entries.values() if e.opponent != BYE)
    if game_entries == t.n * (t.n - 1) * t.cycles:
        return True
    return all(r in entries for entries in t.entries for r in range(1, t.rounds + 1))


def completed_rounds(t: Tournament) -> int:
    """Rounds in which every player has a result (a game or a bye).

    The free-round player of an odd round robin need not have a bye entry
    yet: a round counts once at most one player is missing from it.
    """
    missing_allowed = t.n % 2
    count = 0
    for r in range(1, t.rounds + 1):
        missing = sum(1 for entries in t.entries if r not in entries)
        if missing <= missing_allowed:
            count += 1
    return count


def line_games(t: Tournament) -> tuple[int, ...]:
    """``G`` per player: the games of the maximum possible score behind each line.

    Final (every game in): ``(n − 1) × cycles`` less the players who never
    had an opponent (basis ``games``), or the number of rounds (``rounds``).
    Provisional: ``percentage`` — the player's own games (basis ``games``)
    or rounds with an entry (``rounds``); ``max-games`` — the most of those
    anyone has; ``rounds`` — the completed rounds.
    """
    n = t.n
    if is_complete(t):
        if t.basis == "rounds":
            return (t.rounds,) * n
        never_paired = sum(1 for entries in t.entries if all(e.opponent == BYE for e in entries.values()))
        return ((n - 1) * t.cycles - never_paired,) * n
    if t.basis == "rounds":
        played = [len(entries) for entries in t.entries]
    else:
        played = [sum(1 for e in entries.values() if e.opponent != BYE) for entries in t.entries]
    if t.provisional_basis == "percentage":
        return tuple(played)
    if t.provisional_basis == "max-games":
        return (max(played),) * n
    return (completed_rounds(t),) * n


def _adjusted(units: Units, entries: dict[int, Entry]) -> int:
    last_real = max((r for r, e in entries.items() if e.code not in _VUR), default=0)
    return sum(
        code_units(units, e.code)
        for r, e in entries.items()
        if not (r > last_real and e.opponent == BYE and e.code in _VOLUNTARY_BYES)
    )


def rebuild_sums(t: Tournament) -> Sums:
    """Every running sum of ``t`` recomputed from its entries alone (see the module docstring)."""
    n, u = t.n, t.units
    score = tuple(sum(code_units(u, e.code) for e in t.entries[i].values()) for i in range(n))
    adjusted = tuple(_adjusted(u, t.entries[i]) for i in range(n))
    games = tuple(sum(1 for e in t.entries[i].values() if e.opponent != BYE) for i in range(n))
    wins = tuple(sum(1 for e in t.entries[i].values() if e.opponent != BYE and e.code in _BOARD_WINS) for i in range(n))
    sb = tuple(
        sum(code_units(u, e.code) * adjusted[e.opponent] for e in t.entries[i].values() if e.opponent != BYE)
        for i in range(n)
    )
    g = line_games(t)
    qualified: list[tuple[int, tuple[bool, ...]]] = []
    ks: list[tuple[int, tuple[int, ...]]] = []
    for limit in sorted(set(t.limits)):
        q = tuple(2 * score[i] >= u.win * (g[i] + limit) for i in range(n))
        qualified.append((limit, q))
        ks.append(
            (
                limit,
                tuple(
                    sum(code_units(u, e.code) for e in t.entries[i].values() if e.opponent != BYE and q[e.opponent])
                    for i in range(n)
                ),
            )
        )
    return Sums(score, adjusted, games, wins, sb, tuple(qualified), tuple(ks))


def incremental_sums(t: Tournament) -> Sums:
    """The running sums ``t`` keeps incrementally, in the shape of :func:`rebuild_sums`."""
    limits = sorted(t.qualified)
    return Sums(
        score=tuple(t.score),
        adjusted=tuple(t.adjusted),
        games=tuple(t.games),
        wins=tuple(t.wins),
        sb=tuple(t.sb),
        qualified=tuple((limit, tuple(t.qualified[limit])) for limit in limits),
        ks=tuple((limit, tuple(t.ks[limit])) for limit in sorted(t.ks)),
    )


def replay_events(t: Tournament) -> list[Event]:
    """The events that rebuild ``t``'s crosstable from nothing, in round order.

    One ``result_recorded`` per stored game, one ``bye_recorded`` per bye,
    then one ``player_withdrawn`` per withdrawn player; ids are derived from
    the opening event's id and cannot collide with it.
    """
    tid, base = t.id, t.opened.id
    events: list[Event] = []
    rounds = sorted({r for entries in t.entries for r in entries})
    for r in rounds:
        for i in range(t.n):
            e = t.entries[i].get(r)
            if e is None:
                continue
            number = t.start_nos[i]
            if e.opponent == BYE:
                # the state held this bye: whatever the schedule said, it replaced the game
                events.append(
                    ByeRecorded(f"{base}/rebuild/{r}/{number}", tid, r, number, _BYES[e.code], replaces_game=True)
                )
            elif e.white:
                other = t.entries[e.opponent][r]
                result, short = _RESULTS[(e.code, other.code)]
                black = t.start_nos[e.opponent]
                events.append(
                    ResultRecorded(f"{base}/rebuild/{r}/{number}", tid, r, number, black, result, short=short)
                )
    for i in range(t.n):
        if t.withdrawn[i]:
            events.append(PlayerWithdrawn(f"{base}/rebuild/withdrawn/{t.start_nos[i]}", tid, t.start_nos[i]))
    return events


def rebuild_standings(t: Tournament) -> Standings:
    """The standings of a fresh tournament folded from ``t``'s entries, stamped with ``t.seq``.

    Raises :class:`~tracker.core.errors.EventRejected` only if ``t`` holds
    a crosstable that its own rules would not accept from scratch (a bug).
    """
    fresh = fold((t.opened, *replay_events(t)))
    assert fresh is not None  # the opening event makes a tournament
    return replace(standings(fresh), seq=t.seq)


__all__ = [
    "Sums",
    "code_units",
    "completed_rounds",
    "incremental_sums",
    "is_complete",
    "line_games",
    "rebuild_standings",
    "rebuild_sums",
    "replay_events",
]
