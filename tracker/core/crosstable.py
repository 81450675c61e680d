"""The crosstable of one round robin and its incremental tie-break sums.

How this works
--------------

A :class:`Tournament` holds one :class:`Entry` per player and round (a game,
a forfeit or a bye) and, per player, running sums: score, games completed,
wins, Sonneborn-Berger and, for every Koya limit the tournament uses,
whether the player is on or above the line ("qualifies") and the Koya sum.

Changing one game touches only what it can change (O(n) per result):

1. the old game's contributions are taken out of both players' sums;
2. the new entries are stored and the two players' scores move by Δ; every
   opponent of theirs gets ``points scored against them × Δ`` added to SB;
3. the two players' qualification is re-tested (everyone's, when the line
   itself moved: a complete tournament, or a provisional basis whose line
   depends on the whole field); for each player whose qualification flipped,
   each of their opponents gains or loses the points scored against them
   in Koya;
4. the new game's contributions are added with the new values.

:func:`tracker.core.reference.rebuild_sums` computes the same sums from the entries alone; a property
test checks that both always agree.

The Koya line (C.07 §9.2, §14.5)
--------------------------------

An opponent qualifies when ``score ≥ win × G / 2 + limit × win / 2``
(:func:`tracker.core.line.koya_threshold` and
:func:`~tracker.core.line.qualifies`, the one place that says so).  ``G`` is:

* once every game is in: the number of games a participant can play,
  ``(n − 1) × cycles`` (basis ``games``, the FIDE TEC reading), less the
  players who never had an opponent; or the number of rounds (basis
  ``rounds``);
* before that (provisional), per the tournament's provisional basis:
  ``percentage`` — the opponent's own completed games (rounds for basis
  ``rounds``); ``max-games`` — the most games completed by anyone;
  ``rounds`` — the number of completed rounds.

Byes never add to Koya or SB (they have no opponent) but their points count
in the player's score.  Forfeits and double forfeits are games (§15.2).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress
from typing import Final

from tracker.core.codes import BYE_CODES, GAME_CODES, RESULT_OF_CODES, SHORT_CODES, code_units
from tracker.core.errors import UnknownPlayer
from tracker.core.events import ByeKind, GameResult, TournamentOpened
from tracker.core.line import final_games, koya_threshold, qualifies
from tracker.core.order import TieBreak
from tracker.core.phrases import phrase
from tracker.core.schedule import rounds_needed
from tracker.core.scoring import Units, units_of

BYE: Final = -1
NO_PLAYER: Final = phrase("rejected.no_player", "tournament {tournament} has no player with start number {player}")


@dataclass(slots=True)
class Entry:
    """What one player did in one round.

    ``opponent`` is a player index or :data:`BYE`; ``code`` the TRF result
    code (``1 = 0 + - W D L F H Z U``); ``units`` the points scored.
    ``played`` is true for games played at the board (not forfeits, not
    byes).
    """

    round: int
    opponent: int
    white: bool
    code: str
    units: int
    played: bool

    @property
    def is_game(self) -> bool:
        return self.opponent != BYE

    @property
    def voluntarily_unplayed(self) -> bool:
        """A round the player did not play and did not win (TEC's "VUR")."""
        return self.code in ("-", "H", "Z")


class Tournament:
    """The mutable state of one round robin, owned by one processor.

    Built by :func:`tracker.core.apply.step` from the opening event; change it only through
    :func:`tracker.core.apply.apply`.
    """

    __slots__ = (
        "adjusted",
        "applied",
        "basis",
        "cycles",
        "de_places",
        "entries",
        "entry_count",
        "game_count",
        "games",
        "id",
        "index",
        "ks",
        "limits",
        "n",
        "name",
        "opened",
        "pair_games",
        "pair_units",
        "provisional_basis",
        "qualified",
        "results_cache",
        "round_entries",
        "rounds",
        "rules",
        "sb",
        "schedule",
        "score",
        "seq",
        "start_nos",
        "tiebreaks",
        "units",
        "wins",
        "withdrawn",
        "withdrawn_from",
    )

    def __init__(self, opened: TournamentOpened, order: tuple[TieBreak, ...]) -> None:
        """The empty crosstable of ``opened``; ``order``, its tie-break order parsed, says which Koya limits to sum."""
        players = opened.players
        self.opened = opened
        self.id = opened.tournament
        self.name = opened.name
        self.n = n = len(players)
        self.cycles = 2 if opened.format == "double" else 1
        self.rounds = opened.rounds if opened.rounds is not None else rounds_needed(n, self.cycles)
        self.units: Units = units_of(opened.scoring)
        self.rules = opened.rules
        self.tiebreaks = order
        limits = {tb.limit for tb in self.tiebreaks if tb.kind == "KS"}
        self.limits: tuple[int, ...] = tuple(sorted(limits | {0}))
        self.basis = opened.basis
        self.provisional_basis = opened.provisional
        self.start_nos = [p.start_no for p in players]
        self.index = {p.start_no: i for i, p in enumerate(players)}
        self.entries: list[dict[int, Entry]] = [{} for _ in range(n)]
        self.score = [0] * n
        self.adjusted = [0] * n  # score as an SB opponent (C.07 §16 / TEC: trailing VUR byes count 0)
        self.games = [0] * n  # games completed, forfeits included
        self.wins = [0] * n
        # per ordered pair (i, j), flat at i × n + j: the units i scored against j in all their games,
        # and how many games they played (both directions); DE and "have they met" read them
        self.pair_units = [0] * (n * n)
        self.pair_games = [0] * (n * n)
        self.sb = [0] * n  # Σ own units × opponent's adjusted units
        self.withdrawn = [False] * n
        self.withdrawn_from = [0] * n  # the first round a withdrawn player no longer plays (0: not given)
        self.round_entries: dict[int, int] = {}  # players with an entry, per round
        self.game_count = 0
        self.entry_count = 0
        self.seq = 0
        self.applied: dict[str, int] = {}  # event id → fingerprint of its content (see apply.already_applied)
        self.results_cache: list[tuple[tuple[int, int, str, str], ...] | None] = [None] * n
        lines = self.line_games_all()
        self.qualified = {limit: [self._line(i, limit, lines[i]) for i in range(n)] for limit in self.limits}
        self.ks = {limit: [0] * n for limit in self.limits}
        self.schedule: dict[int, set[tuple[int, int]]] | None = None
        #: places per (code, group tied before it: its sorted members) of a criterion decided inside groups
        #: (DE), as the last standings found them; kept by tracker.core.standings, dropped here when a game
        #: between two members changes (such places depend only on the games between the members)
        self.de_places: dict[tuple[str, tuple[int, ...]], list[int]] = {}
        if opened.schedule is not None:
            self.schedule = {
                r: {(self.index[w], self.index[b]) for w, b in pairs}
                for r, pairs in enumerate(opened.schedule, start=1)
            }

    # -- the line -----------------------------------------------------------

    @property
    def complete(self) -> bool:
        """Every game of the round robin is in, or every round has an entry."""
        n = self.n
        return self.game_count == n * (n - 1) // 2 * self.cycles or self.entry_count == n * self.rounds

    def line_games(self, i: int) -> int:
        """``G`` in the Koya line for player ``i`` (see the module docstring)."""
        if self.complete:
            never_paired = sum(1 for g in self.games if g == 0)
            return final_games(self.n, self.cycles, self.rounds, self.basis, never_paired)
        if self.provisional_basis == "percentage":
            return self.games[i] if self.basis == "games" else len(self.entries[i])
        if self.provisional_basis == "max-games":
            return max(self.games) if self.basis == "games" else max(len(e) for e in self.entries)
        needed = self.n - self.n % 2
        return sum(1 for count in self.round_entries.values() if count >= needed)

    def line_games_all(self) -> list[int]:
        """:meth:`line_games` for every player at once (O(n))."""
        if self.complete or self.provisional_basis != "percentage":
            g = self.line_games(0)
            return [g] * self.n
        if self.basis == "games":
            return list(self.games)
        return [len(e) for e in self.entries]

    def _line(self, i: int, limit: int, games: int) -> bool:
        """Whether player ``i`` is on or above the line of ``limit``, ``games`` its ``G`` (from :meth:`line_games_all`,
        made once for every player)."""
        return qualifies(self.score[i], koya_threshold(self.units.win, games, limit))

    def _line_key(self) -> tuple[bool, int]:
        """Changes whenever the line can move for players other than the two of a game."""
        if self.complete:
            return (True, sum(1 for g in self.games if g == 0))
        if self.provisional_basis == "percentage":
            return (False, 0)
        return (False, self.line_games(0))

    def scenario(self) -> Tournament:
        """A copy to play hypothetical results on (the standings "if the games ended now").

        Changing the copy never changes ``self``: the running sums and the entries' tables are copied
        (entries themselves are replaced, never changed, so they are shared).  The ids of the events
        applied are not copied: a scenario's own events cannot be re-deliveries.
        """
        c = object.__new__(Tournament)
        for name in Tournament.__slots__:
            setattr(c, name, getattr(self, name))
        c.entries = [dict(e) for e in self.entries]
        for name in (
            "score",
            "adjusted",
            "games",
            "wins",
            "pair_units",
            "pair_games",
            "sb",
            "withdrawn",
            "withdrawn_from",
        ):
            setattr(c, name, list(getattr(self, name)))
        c.round_entries = dict(self.round_entries)
        c.applied = {}
        c.results_cache = list(self.results_cache)
        c.qualified = {limit: list(q) for limit, q in self.qualified.items()}
        c.ks = {limit: list(k) for limit, k in self.ks.items()}
        c.de_places = dict(self.de_places)
        return c

    # -- queries --------------------------------------------------------------

    def player(self, start_no: int) -> int:
        """The index of start number ``start_no``; raises :class:`UnknownPlayer`."""
        try:
            return self.index[start_no]
        except KeyError:
            raise UnknownPlayer(NO_PLAYER(tournament=self.id, player=start_no)) from None

    def results_of(self, i: int) -> tuple[tuple[int, int, str, str], ...]:
        """Player ``i``'s crosstable line: (round, opponent start no or 0, colour, TRF code)."""
        cached = self.results_cache[i]
        if cached is None:
            cached = tuple([self._result(e) for _, e in sorted(self.entries[i].items())])
            self.results_cache[i] = cached
        return cached

    def _result(self, e: Entry) -> tuple[int, int, str, str]:
        """One item of :meth:`results_of`."""
        if e.opponent == BYE:
            return (e.round, 0, "-", e.code)
        return (e.round, self.start_nos[e.opponent], "w" if e.white else "b", e.code)

    def points_against(self, i: int, j: int) -> int:
        """Units ``i`` scored in all games against ``j``."""
        return sum(e.units for e in self.entries[i].values() if e.opponent == j)

    def absent(self, i: int, round_: int | None) -> bool:
        """Whether player ``i`` no longer plays in ``round_`` (``None``: a round after every recorded one).

        True for a withdrawn player from the withdrawal's round on, and in every
        round for a withdrawal that gave none (events written before rounds
        were given): their games not yet recorded are forfeits they lose.
        """
        if not self.withdrawn[i]:
            return False
        start = self.withdrawn_from[i]
        return start == 0 or round_ is None or round_ >= start

    def games_between(self, i: int, j: int) -> list[int]:
        """Rounds in which ``i`` and ``j`` met."""
        if not self.pair_games[i * self.n + j]:
            return []
        return sorted(r for r, e in self.entries[i].items() if e.opponent == j)

    def opponents(self, i: int) -> list[int]:
        """The players ``i`` has played at least one game against (forfeits included), by index."""
        n = self.n
        return list(compress(range(n), self.pair_games[i * n : (i + 1) * n]))

    def pending_pairs(self) -> list[tuple[int, int]]:
        """Pairs (i < j) with games still to play, once per missing game."""
        pending = []
        for i in range(self.n):
            for j in range(i + 1, self.n):
                missing = self.cycles - self.pair_games[i * self.n + j]
                pending.extend([(i, j)] * missing)
        return pending

    # -- mutation (called by apply after validation) -------------------------

    def _adjusted_score(self, i: int) -> int:
        entries = self.entries[i]
        if self.games[i] == len(entries):
            return self.score[i]  # no byes: nothing trails
        last_real = max((r for r, e in entries.items() if not e.voluntarily_unplayed), default=0)
        trailing = sum(e.units for r, e in entries.items() if r > last_real and not e.is_game)
        return self.score[i] - trailing

    def set_entries(
        self, round_: int, players: tuple[int, ...], new: tuple[Entry, ...] | None
    ) -> list[tuple[int, int, bool]]:
        """Replace what ``players`` (one bye-taker, or white and black) did in ``round_``.

        ``new`` is the new entries in the same order, or ``None`` to clear
        them.  Returns the qualification flips ``(limit, player, now)``.
        """
        key_before = self._line_key()
        old = [self.entries[p].get(round_) for p in players]
        # 1. take the old game's contributions out
        self._contribute(old, players, -1)
        # 2. store the new entries, move the scores, propagate SB
        self._store(round_, players, old, new)
        for k, p in enumerate(players):
            old_entry = old[k]
            before = old_entry.units if old_entry is not None else 0
            after = new[k].units if new is not None else 0
            self.score[p] += after - before
            adjusted = self._adjusted_score(p)
            delta = adjusted - self.adjusted[p]
            if delta:
                self.adjusted[p] = adjusted
                entries, sb = self.entries, self.sb
                for r, e in entries[p].items():
                    o = e.opponent
                    if o != BYE and r != round_:
                        sb[o] += entries[o][r].units * delta
        # 3. re-test the line
        candidates: range | tuple[int, ...] = range(self.n) if self._line_key() != key_before else players
        flips = []
        lines = self.line_games_all()  # G once, not per candidate
        for limit in self.limits:
            qualified = self.qualified[limit]
            ks = self.ks[limit]
            for p in candidates:
                now = self._line(p, limit, lines[p])
                if now == qualified[p]:
                    continue
                qualified[p] = now
                flips.append((limit, p, now))
                sign = 1 if now else -1
                entries = self.entries
                for r, e in entries[p].items():
                    o = e.opponent
                    if o != BYE and not (r == round_ and o in players):
                        ks[o] += sign * entries[o][r].units
        # 4. add the new game's contributions
        if new is not None:
            self._contribute(list(new), players, +1)
        return flips

    def store_entries(self, round_: int, players: tuple[int, ...], new: tuple[Entry, ...] | None) -> None:
        """Like :meth:`set_entries` but leave the running sums stale: the bulk path.

        Folding a whole file moves every sum O(n) times per result (O(n³)
        for a round robin); storing the entries and calling :meth:`resum`
        once at the end is O(entries).  Until :meth:`resum`, only the
        entries and the counts beside them (games, pair sums, entry counts)
        are right: enough to validate further events, not to rank.
        """
        self._store(round_, players, [self.entries[p].get(round_) for p in players], new)

    def resum(self) -> None:
        """Recompute score, SB, the line and Koya from the stored entries, in O(entries).

        The same sums :meth:`set_entries` keeps incrementally (a property test
        compares both with :func:`tracker.core.reference.rebuild_sums`).
        """
        n = self.n
        self.score = [sum(e.units for e in entries.values()) for entries in self.entries]
        self.adjusted = [self._adjusted_score(i) for i in range(n)]
        adjusted = self.adjusted
        self.sb = [
            sum(e.units * adjusted[e.opponent] for e in entries.values() if e.is_game) for entries in self.entries
        ]
        lines = self.line_games_all()
        for limit in self.limits:
            q = [self._line(i, limit, lines[i]) for i in range(n)]
            self.qualified[limit] = q
            self.ks[limit] = [
                sum(e.units for e in entries.values() if e.is_game and q[e.opponent]) for entries in self.entries
            ]

    def _store(
        self, round_: int, players: tuple[int, ...], old: list[Entry | None], new: tuple[Entry, ...] | None
    ) -> None:
        """Swap ``old`` for ``new`` in the entries and the counts kept beside them (not the sums)."""
        units_win = self.units.win
        results = self.results_cache
        for k, p in enumerate(players):
            line = results[p]
            if line is not None:  # patch the one round (rebuilding the line sorts every entry)
                at = bisect_left(line, (round_,))
                end = at + 1 if at < len(line) and line[at][0] == round_ else at
                results[p] = (*line[:at], *([] if new is None else [self._result(new[k])]), *line[end:])
        if len(players) == 2:
            a, b = players
            stale = [key for key in self.de_places if a in key[1] and b in key[1]]
            for key in stale:
                del self.de_places[key]
        for p, e in zip(players, old, strict=True):
            if e is not None:
                del self.entries[p][round_]
                self.entry_count -= 1
                self.round_entries[round_] -= 1
                if e.is_game:
                    self.games[p] -= 1
                if e.is_game and e.played and e.units == units_win:
                    self.wins[p] -= 1
        if len(players) == 2 and old[0] is not None:
            self._meet(players, old, -1)
        if new is not None:
            for p, e in zip(players, new, strict=True):
                self.entries[p][round_] = e
                self.entry_count += 1
                self.round_entries[round_] = self.round_entries.get(round_, 0) + 1
                if e.is_game:
                    self.games[p] += 1
                if e.is_game and e.played and e.units == units_win:
                    self.wins[p] += 1
            if len(players) == 2:
                self._meet(players, new, +1)

    def _contribute(self, entries: list[Entry | None], players: tuple[int, ...], sign: int) -> None:
        if len(players) != 2:
            return
        a, b = players
        ea, eb = entries
        if ea is None or eb is None:
            return
        self.sb[a] += sign * ea.units * self.adjusted[b]
        self.sb[b] += sign * eb.units * self.adjusted[a]
        for limit in self.limits:
            q = self.qualified[limit]
            ks = self.ks[limit]
            if q[b]:
                ks[a] += sign * ea.units
            if q[a]:
                ks[b] += sign * eb.units

    def _meet(self, players: tuple[int, ...], entries: Sequence[Entry | None], sign: int) -> None:
        """Count the game of ``players`` (white, black) with these ``entries`` in (+1) or out (-1) of the pair sums."""
        a, b = players
        ea, eb = entries
        assert ea is not None and eb is not None  # a game has both entries
        n = self.n
        self.pair_units[a * n + b] += sign * ea.units
        self.pair_units[b * n + a] += sign * eb.units
        self.pair_games[a * n + b] += sign
        self.pair_games[b * n + a] += sign
        self.game_count += sign


def game_entries(
    t: Tournament, round_: int, white: int, black: int, result: GameResult, short: bool
) -> tuple[Entry, Entry]:
    """The two entries a game result makes (forfeits per C.07 §15.2)."""
    u = t.units
    cw, cb = GAME_CODES[result]
    played = result in ("1-0", "1/2-1/2", "0-1")
    if played and short:
        cw, cb = SHORT_CODES[cw], SHORT_CODES[cb]
    return (
        Entry(round_, black, True, cw, code_units(u, cw), played),
        Entry(round_, white, False, cb, code_units(u, cb), played),
    )


def bye_entry(t: Tournament, round_: int, kind: ByeKind) -> Entry:
    """The entry of a bye (no opponent; never adds to Koya or SB)."""
    code = BYE_CODES[kind]
    return Entry(round_, BYE, False, code, code_units(t.units, code), code == "U")


def game_result(white: Entry, black: Entry) -> tuple[GameResult, bool]:
    """The result token of a stored game and whether it was short (W/D/L)."""
    return RESULT_OF_CODES[(white.code, black.code)]


__all__ = ["BYE", "Entry", "Tournament", "bye_entry", "game_entries", "game_result"]
