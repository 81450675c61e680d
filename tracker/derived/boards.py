"""Live boards for subscribers who ask (``"boards": true``): each board's state, and the tournament if the
games ended now, both estimates, never mixed with the official values.

How this works
--------------

The backend keeps each tournament's boards (:class:`~tracker.core.boards.BoardSet`:
the embedded processor, or the Kafka feed's copy of what the worker
accepted) and tells the gateway when they change
(:meth:`LiveBoards.changed`).  Then, at most once per ``interval`` seconds
per tournament:

* a ``boards`` message (every game in progress);
* when a board's win/draw/loss or most likely result changed, or an
  official update came, a ``live`` message: the games in progress played to
  their likely results and ranked (:func:`tracker.core.live.as_it_stands`,
  on the event loop: a scenario copy and a few results, milliseconds even
  for big fields), so its rows always stand against the official standings
  the subscriber has, with the stakes sentences of the boards, and the
  newest live chances (``chances_seq`` says after which official seq they
  were simulated).

The live chances (10,000 simulated completions) are a ``live`` job on the
shared worker pool (:mod:`tracker.derived.pool`, spaced ``interval`` apart
too); when one finishes, a ``live`` message with them follows.  Both kinds
carry the official ``seq`` they are against and a ``live_seq`` that counts
them per tournament.  Boards age: each board says its ``age`` and whether it
is ``stale`` (not refreshed within ``stale_after`` seconds, its follower
stopped, or restored after a restart and not sent since:
:func:`tracker.core.boards.is_stale`); when a board goes stale by age with
nothing else happening, a ``boards`` message says so then (a timer per
tournament, at the next board's stale time).  A subscriber who joins gets
the newest of each at
once; a subscriber who joins gets the newest of each at
They reach subscribers through the hub's ``deliver``, so a spoiler
delay holds them back like everything else.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from websockets.asyncio.server import ServerConnection

from tracker.core.boards import BoardSet, Change
from tracker.core.crosstable import Tournament
from tracker.core.live import as_it_stands, board_stakes, live_chances
from tracker.core.projection.chances import Chances
from tracker.core.projection.stakes import Stakes
from tracker.core.standings import Standings, standings
from tracker.derived.pool import SPECTATORS, Pool, Runner
from tracker.protocol import StandingsPayload, boards_message, live_message, standings_payload


@dataclass(frozen=True, slots=True)
class LiveInput:
    """What a live-chances job computes from: the official state and its boards (``version``: when they were)."""

    state: Tournament
    boards: BoardSet
    version: int

    @property
    def id(self) -> str:
        return self.state.id

    @property
    def seq(self) -> int:
        return self.state.seq


def chances_job(work: LiveInput) -> Chances:
    """Runs in the worker process: the live chances (each game in progress drawn from its board)."""
    return live_chances(work.state, work.boards)


class LiveBoards:
    """``boards`` and ``live`` messages for the subscribers who asked (see the module docstring)."""

    def __init__(
        self,
        pool: Pool,
        state: Callable[[str], Tournament | None],
        boards: Callable[[str], BoardSet | None],
        stakes: Callable[[str], Stakes | None],
        subscribers: Callable[[str], list[ServerConnection]],
        deliver: Callable[[str, list[ServerConnection], bytes], None],
        *,
        interval: float,
        stale_after: float = 120.0,
    ) -> None:
        self._state = state
        self._boards = boards
        self._stakes = stakes
        self._subscribers = subscribers
        self._deliver = deliver
        self.interval = interval
        self.stale_after = stale_after
        self._ageing: dict[str, asyncio.TimerHandle] = {}  # tournament → a boards message when a board goes stale
        self._versions: dict[str, int] = {}  # live_seq per tournament: both kinds of message count
        self._latest: dict[str, tuple[bytes | None, bytes | None]] = {}  # (boards, live) sent last
        self._chances: dict[str, Chances] = {}  # the newest live chances per tournament
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._sent_at: dict[str, float] = {}
        self._due: dict[str, bool] = {}  # tournament → a live message is owed (not only boards)
        self._official: dict[str, tuple[int, Standings, StandingsPayload]] = {}  # per tournament, its seq's standings
        self.runner: Runner[LiveInput, Chances] = Runner(
            pool,
            "live",
            chances_job,
            state=self._input,
            publish=self._chances_done,
            wanted=lambda tournament: bool(subscribers(tournament)),
            delay=interval,
            version=lambda work: work.version,
            spacing=True,
            priority=SPECTATORS,
        )

    def wanted(self, tournament: str) -> bool:
        """Whether anybody follows ``tournament``'s boards (the stakes feed computes for them too)."""
        return bool(self._subscribers(tournament))

    def changed(self, tournament: str, change: Change) -> None:
        """The backend's boards of ``tournament`` changed: ``moved`` (a position) or ``assessed`` (an estimate)."""
        if change == "none" or not self._subscribers(tournament):
            return
        self._bump(tournament)
        self._soon(tournament, live=change == "assessed")
        if change == "assessed":
            self.runner.updated(tournament)

    def updated(self, tournament: str) -> None:
        """An official update was published: what stands as if the games ended now moves with it."""
        if not self._subscribers(tournament):
            self._latest.pop(tournament, None)
            self._chances.pop(tournament, None)
            self._official.pop(tournament, None)
            return
        self._bump(tournament)
        self._soon(tournament, live=True)
        self.runner.updated(tournament)

    def stakes_computed(self, tournament: str) -> None:
        """New stakes exist: the boards' sentences can say what their games decide."""
        if self._subscribers(tournament):
            self._soon(tournament, live=True)

    def joined(self, conn: ServerConnection, tournament: str) -> None:
        """``conn`` asked for the boards: the newest messages now, fresh ones if none exist."""
        boards_data, live_data = self._latest.get(tournament, (None, None))
        for data in (boards_data, live_data):
            if data is not None:
                self._deliver(tournament, [conn], data)
        if self._boards(tournament):  # fresh ages (the newest message aged since it was sent)
            self._soon(tournament, live=boards_data is None)
        self.runner.join(tournament)

    def _bump(self, tournament: str) -> int:
        version = self._versions[tournament] = self._versions.get(tournament, 0) + 1
        return version

    def _input(self, tournament: str) -> LiveInput | None:
        state, boards = self._state(tournament), self._boards(tournament)
        if state is None or boards is None:
            return None
        live = boards.live(asyncio.get_running_loop().time(), self.stale_after)  # stale boards are not counted
        return LiveInput(state, live, self._versions.get(tournament, 0))

    def _soon(self, tournament: str, *, live: bool) -> None:
        """Send the ``boards`` (and, with ``live``, the ``live``) message now, or once ``interval`` has passed."""
        self._due[tournament] = self._due.get(tournament, False) or live
        if tournament in self._timers:
            return
        loop = asyncio.get_running_loop()
        wait = max(0.0, self._sent_at.get(tournament, -1e9) + self.interval - loop.time())
        self._timers[tournament] = loop.call_later(wait, self._send, tournament)

    def _send(self, tournament: str) -> None:
        self._timers.pop(tournament, None)
        live = self._due.pop(tournament, False)
        state, boards = self._state(tournament), self._boards(tournament)
        conns = self._subscribers(tournament)
        if state is None or boards is None or not conns:
            return
        loop = asyncio.get_running_loop()
        now = self._sent_at[tournament] = loop.time()
        boards_data = boards_message(
            tournament, state.seq, self._bump(tournament), boards, now=now, stale_after=self.stale_after
        )
        self._age_later(tournament, boards, now)
        counted = boards.live(now, self.stale_after)  # the estimates count the boards still live only
        live_data = self._live(tournament, state, counted) if live else self._latest.get(tournament, (None, None))[1]
        self._latest[tournament] = (boards_data, live_data)
        self._deliver(tournament, conns, boards_data)
        if live and live_data is not None:
            self._deliver(tournament, conns, live_data)

    def _age_later(self, tournament: str, boards: BoardSet, now: float) -> None:
        """Send a ``boards`` message when the next live board goes stale, unless another one goes first."""
        if (timer := self._ageing.pop(tournament, None)) is not None:
            timer.cancel()
        at = boards.next_stale(now, self.stale_after)
        if at is not None:
            self._ageing[tournament] = asyncio.get_running_loop().call_later(
                max(0.0, at - now) + 0.01, self._aged, tournament
            )

    def _aged(self, tournament: str) -> None:
        self._ageing.pop(tournament, None)
        if self._subscribers(tournament):
            self._bump(tournament)
            self._soon(tournament, live=True)  # a stale board leaves the estimates: "as it stands" changes

    def _live(self, tournament: str, state: Tournament, boards: BoardSet) -> bytes:
        """The ``live`` message as things stand now: rows on the loop, the newest chances the pool made."""
        cached = self._official.get(tournament)
        if cached is None or cached[0] != state.seq:  # the official standings, once per seq
            official = standings(state)
            cached = self._official[tournament] = (state.seq, official, standings_payload(official))
        _, official, payload = cached
        now = as_it_stands(state, boards, official)
        k = self._stakes(tournament)
        names = {p.start_no: p.name for p in state.opened.players}
        said = () if k is None or k.seq != state.seq else board_stakes(k, boards, names)
        return live_message(self._versions.get(tournament, 0), payload, now, self._chances.get(tournament), said)

    def _chances_done(self, tournament: str, seq: int, chances: Chances) -> None:
        known = self._chances.get(tournament)
        if known is not None and known.seq > chances.seq:
            return  # an older seq finished after a newer one
        self._chances[tournament] = chances
        self._soon(tournament, live=True)

    def close(self) -> None:
        """Stop the pending messages (the jobs are the pool's)."""
        for timer in (*self._timers.values(), *self._ageing.values()):
            timer.cancel()
        self._timers.clear()
        self._ageing.clear()
