"""Views of a source in start numbers, and the ledger of what the tracker holds: the events that differ."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final, assert_never

from tracker.core.codes import RESULT_OF_CODES
from tracker.core.events import (
    ByeKind,
    ByeRecorded,
    ByeVoided,
    Event,
    GameResult,
    PlayerWithdrawn,
    ResultCorrected,
    ResultRecorded,
    ResultVoided,
    TournamentOpened,
)
from tracker.follow.errors import FollowError
from tracker.follow.names import StartList
from tracker.formats import TournamentFile

GameKey = tuple[int, int, int]  # (round, white, black), start numbers
ByeKey = tuple[int, int]  # (round, player)
Outcome = tuple[GameResult, bool]  # (result, short)

_ROW_BYES: Final[dict[str, ByeKind]] = {"F": "full", "H": "half", "Z": "zero", "U": "pab"}


@dataclass(frozen=True, slots=True)
class View:
    """Results and byes in the tournament's start numbers.

    ``knows_short`` is false for PGN, which cannot say that a game lasted
    less than one move (TRF's W/D/L): such a view never changes ``short``.
    """

    games: dict[GameKey, Outcome] = field(default_factory=dict)
    byes: dict[ByeKey, ByeKind] = field(default_factory=dict)
    knows_short: bool = True


def view_of(tf: TournamentFile, start: StartList, *, knows_short: bool = True) -> tuple[View, tuple[str, ...]]:
    """The file's results in the start list's numbers, and the names that matched no one (sorted).

    Games and byes of an unmatched player are left out of the view.
    """
    number: dict[int, int | None] = {p.start_no: start.match(p.name) for p in tf.opened.players}
    unmatched = sorted({p.name for p in tf.opened.players if number[p.start_no] is None})
    games: dict[GameKey, Outcome] = {}
    byes: dict[ByeKey, ByeKind] = {}
    for event in tf.events:
        if isinstance(event, ResultRecorded):
            white, black = number.get(event.white), number.get(event.black)
            if white is not None and black is not None:
                games[(event.round, white, black)] = (event.result, event.short)
        elif isinstance(event, ByeRecorded):
            player = number.get(event.player)
            if player is not None:
                byes[(event.round, player)] = event.kind
    return View(games, byes, knows_short), tuple(unmatched)


def view_of_rows(rows: Iterable[tuple[int, Sequence[tuple[int, int, str, str]]]]) -> View:
    """The results in standings rows: ``(start_no, [(round, opponent or 0, colour, TRF code), …])``.

    Raises :class:`FollowError` for a pair of codes that makes no result
    (the tracker would never send one).
    """
    line: dict[tuple[int, int], tuple[int, str, str]] = {}
    for start_no, results in rows:
        for round_, opponent, colour, code in results:
            line[(start_no, round_)] = (opponent, colour, code.upper())
    games: dict[GameKey, Outcome] = {}
    byes: dict[ByeKey, ByeKind] = {}
    for (start_no, round_), (opponent, colour, code) in line.items():
        if opponent == 0:
            kind = _ROW_BYES.get(code)
            if kind is None:
                raise FollowError(f"the tracker's row {start_no} has bye code {code!r} in round {round_}")
            byes[(round_, start_no)] = kind
        elif colour == "w":
            other = line.get((opponent, round_))
            outcome = RESULT_OF_CODES.get((code, other[2])) if other is not None else None
            if outcome is None:
                raise FollowError(f"the tracker's rows {start_no} and {opponent} disagree about round {round_}")
            games[(round_, start_no, opponent)] = outcome
    return View(games, byes)


def _digest(*parts: object) -> str:
    return hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=6).hexdigest()


@dataclass(slots=True)
class Ledger:
    """What the tracker holds for one tournament, as far as this follower knows.

    ``seq`` is the tracker's seq when the ledger was read (0 when it could
    not be read); ``revisions`` counts the changes this follower made to each
    game or bye.  Both go into event ids (see the module docstring).
    ``own`` are the games and byes whose entry in the tracker this follower
    made (or found equal to the source on its first read): the only ones it
    may void or correct without being told to (:meth:`hold`).
    """

    tournament: str
    seq: int = 0
    games: dict[GameKey, Outcome] = field(default_factory=dict)
    byes: dict[ByeKey, ByeKind] = field(default_factory=dict)
    revisions: Counter[GameKey | ByeKey] = field(default_factory=Counter)
    own: set[GameKey | ByeKey] = field(default_factory=set)

    def agree(self, view: View) -> None:
        """Count as this follower's the tracker's entries equal to ``view`` (its first read of the source)."""
        for key, outcome in self.games.items():
            theirs = view.games.get(key)
            if theirs is not None and theirs[0] == outcome[0] and (theirs[1] == outcome[1] or not view.knows_short):
                self.own.add(key)
        self.own.update(bye for bye, kind in self.byes.items() if view.byes.get(bye) == kind)

    def hold(self, events: Sequence[Event]) -> tuple[list[Event], list[Event]]:
        """Split ``events`` (from :meth:`changes`) into those to submit and those held back as conflicts.

        A void or correction of an entry this follower did not make (an
        arbiter's, typically) is held back, and so is every new result or bye
        that needs its slot: the arbiter's entry stays until someone decides.
        """
        kept: list[Event] = []
        held: list[Event] = []
        blocked: set[tuple[int, int]] = set()
        for event in events:
            if isinstance(event, ResultVoided | ResultCorrected):
                if (event.round, event.white, event.black) not in self.own:
                    held.append(event)
                    blocked.update({(event.round, event.white), (event.round, event.black)})
                    continue
            elif isinstance(event, ByeVoided):
                if (event.round, event.player) not in self.own:
                    held.append(event)
                    blocked.add((event.round, event.player))
                    continue
            elif isinstance(event, ResultRecorded):
                if (event.round, event.white) in blocked or (event.round, event.black) in blocked:
                    held.append(event)
                    continue
            elif isinstance(event, ByeRecorded) and (event.round, event.player) in blocked:
                held.append(event)
                continue
            kept.append(event)
        return kept, held

    def _game_id(self, verb: str, key: GameKey, old: Outcome | None, new: Outcome | None) -> str:
        r, w, b = key
        digest = _digest(verb, key, old, new, self.seq, self.revisions[key])
        return f"{self.tournament}/follow/r{r}/{w}-{b}/{verb}-{digest}"

    def _bye_id(self, verb: str, key: ByeKey, old: ByeKind | None, new: ByeKind | None) -> str:
        r, p = key
        digest = _digest(verb, key, old, new, self.seq, self.revisions[key])
        return f"{self.tournament}/follow/r{r}/bye-{p}/{verb}-{digest}"

    def changes(self, previous: View | None, new: View) -> list[Event]:
        """The events that turn the tracker's state into ``new``, as far as the source speaks; voids first.

        ``previous`` is the view of the source's previous read (``None`` for
        the first read): only what disappeared since then is voided, besides
        tracker entries that are in the way of the new view's games and byes.
        """
        tid = self.tournament
        slots: set[tuple[int, int]] = {(r, p) for r, w, b in new.games for p in (w, b)} | set(new.byes)
        voids: list[Event] = []
        for key in sorted(self.games):
            if key in new.games:
                continue
            gone = previous is not None and key in previous.games
            r, w, b = key
            if gone or (r, w) in slots or (r, b) in slots:
                voids.append(
                    ResultVoided(
                        id=self._game_id("voided", key, self.games[key], None),
                        tournament=tid,
                        round=r,
                        white=w,
                        black=b,
                    )
                )
        for bye in sorted(self.byes):
            kind = new.byes.get(bye)
            gone = previous is not None and bye in previous.byes and kind is None
            in_the_way = kind is None and bye in slots
            if gone or in_the_way or (kind is not None and kind != self.byes[bye]):
                voids.append(
                    ByeVoided(
                        id=self._bye_id("voided", bye, self.byes[bye], None),
                        tournament=tid,
                        round=bye[0],
                        player=bye[1],
                    )
                )
        corrections: list[Event] = []
        recordings: list[tuple[tuple[int, int, int], Event]] = []
        for key, (result, short) in sorted(new.games.items()):
            r, w, b = key
            old = self.games.get(key)
            if old is None:
                outcome = (result, short if new.knows_short else False)
                event_id = self._game_id("recorded", key, None, outcome)
                recordings.append(((r, w, 0), ResultRecorded(event_id, tid, r, w, b, outcome[0], outcome[1])))
            elif old[0] != result or (new.knows_short and old[1] != short):
                outcome = (result, short if new.knows_short else old[1])
                event_id = self._game_id("corrected", key, old, outcome)
                corrections.append(ResultCorrected(event_id, tid, r, w, b, outcome[0], outcome[1]))
        for bye, kind in sorted(new.byes.items()):
            if self.byes.get(bye) != kind:
                event_id = self._bye_id("recorded", bye, None, kind)
                recordings.append(
                    ((bye[0], bye[1], 1), ByeRecorded(event_id, tid, bye[0], bye[1], kind, replaces_game=True))
                )
        return voids + corrections + [event for _, event in sorted(recordings, key=lambda pair: pair[0])]

    def apply(self, event: Event) -> None:
        """Note an event the tracker acknowledged (an opening or a withdrawal changes nothing here)."""
        match event:
            case ResultRecorded() | ResultCorrected():
                key: GameKey = (event.round, event.white, event.black)
                self.games[key] = (event.result, event.short)
                self.revisions[key] += 1
                self.own.add(key)
            case ResultVoided():
                key = (event.round, event.white, event.black)
                self.games.pop(key, None)
                self.revisions[key] += 1
                self.own.discard(key)
            case ByeRecorded():
                self.byes[(event.round, event.player)] = event.kind
                self.revisions[(event.round, event.player)] += 1
                self.own.add((event.round, event.player))
            case ByeVoided():
                self.byes.pop((event.round, event.player), None)
                self.revisions[(event.round, event.player)] += 1
                self.own.discard((event.round, event.player))
            case TournamentOpened() | PlayerWithdrawn():
                pass
            case _:
                assert_never(event)


def describe(event: Event, start: StartList) -> str:
    """A log line for an event: ``"round 3: Caruana–So 1/2-1/2 recorded"``."""
    match event:
        case TournamentOpened():
            return f"{event.name} opened as {event.tournament!r} with {len(event.players)} players"
        case ResultRecorded() | ResultCorrected():
            verb = "recorded" if isinstance(event, ResultRecorded) else "corrected"
            pair = f"{start.short(event.white)}–{start.short(event.black)}"
            return f"round {event.round}: {pair} {event.result}{' (short)' if event.short else ''} {verb}"
        case ResultVoided():
            return f"round {event.round}: {start.short(event.white)}–{start.short(event.black)} voided"
        case ByeRecorded():
            return f"round {event.round}: {start.short(event.player)} {event.kind} bye recorded"
        case ByeVoided():
            return f"round {event.round}: {start.short(event.player)}'s bye voided"
        case PlayerWithdrawn():
            return f"{start.short(event.player)} withdraws"
        case _:
            assert_never(event)
