"""Live boards for subscribers who ask (``"boards": true``): each board's state, and the tournament if the
games ended now, both estimates, never mixed with the official values.

How this works
--------------

The backend keeps each tournament's boards (:class:`~tracker.core.boards.BoardSet`:
the embedded processor, or the Kafka feed's copy of what the worker
accepted) and tells the gateway when they change
(:meth:`LiveBoards.changed`).  Then:

* a ``boards`` message (every game in progress) goes out at most once per
  ``interval`` seconds, built on the event loop (it is small);
* when a board's win/draw/loss or most likely result changed, or an
  official update came, a ``live`` job is queued on the shared worker pool
  (:mod:`tracker.gateway.jobs`, spaced at least ``interval`` apart): in a
  worker process it plays the games in progress to their likely results,
  ranks, simulates the live chances and words the stakes of each board
  (:mod:`tracker.core.live`), and encodes the ``live`` message.

Both kinds carry the official ``seq`` they are against and a ``live_seq``
that counts them per tournament; a subscriber who joins gets the newest of
each at once.  They reach subscribers through the hub's ``deliver``, so a
spoiler delay holds them back like everything else.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from websockets.asyncio.server import ServerConnection

from tracker.core.boards import BoardSet, Change
from tracker.core.crosstable import Tournament
from tracker.core.live import as_it_stands, board_stakes, live_chances
from tracker.core.projection.stakes import Stakes
from tracker.core.standings import standings
from tracker.gateway.jobs import SPECTATORS, Pool, Runner
from tracker.protocol import boards_message, live_message, standings_payload


@dataclass(frozen=True, slots=True)
class LiveInput:
    """What a live job computes from: the official state, its boards, the newest stakes (or none)."""

    state: Tournament
    boards: BoardSet
    stakes: Stakes | None
    version: int

    @property
    def id(self) -> str:
        return self.state.id

    @property
    def seq(self) -> int:
        return self.state.seq


def live_job(work: LiveInput) -> bytes:
    """Runs in the worker process: the encoded ``live`` message (``live_seq`` is the input's version)."""
    t = work.state
    official = standings(t)
    now = as_it_stands(t, work.boards, official)
    names = {p.start_no: p.name for p in t.opened.players}
    said = () if work.stakes is None or work.stakes.seq != t.seq else board_stakes(work.stakes, work.boards, names)
    return live_message(work.version, standings_payload(official), now, live_chances(t, work.boards), said)


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
    ) -> None:
        self._state = state
        self._boards = boards
        self._stakes = stakes
        self._subscribers = subscribers
        self._deliver = deliver
        self.interval = interval
        self._versions: dict[str, int] = {}  # live_seq per tournament: both kinds of message count
        self._latest: dict[str, tuple[bytes | None, bytes | None]] = {}  # (boards, live) sent last
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._sent_at: dict[str, float] = {}
        self.runner: Runner[LiveInput, bytes] = Runner(
            pool,
            "live",
            live_job,
            state=self._input,
            publish=self._publish,
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
        self._boards_soon(tournament)
        if change == "assessed":
            self.runner.updated(tournament)

    def updated(self, tournament: str) -> None:
        """An official update was published: what stands as if the games ended now moves with it."""
        if not self._subscribers(tournament):
            self._latest.pop(tournament, None)
            return
        self._bump(tournament)
        self._boards_soon(tournament)
        self.runner.updated(tournament)

    def stakes_computed(self, tournament: str) -> None:
        """New stakes exist: the boards' sentences can say what their games decide."""
        if self._subscribers(tournament):
            self._bump(tournament)
            self.runner.updated(tournament)

    def joined(self, conn: ServerConnection, tournament: str) -> None:
        """``conn`` asked for the boards: the newest messages now, a fresh live job if none exists."""
        boards_data, live_data = self._latest.get(tournament, (None, None))
        for data in (boards_data, live_data):
            if data is not None:
                self._deliver(tournament, [conn], data)
        if boards_data is None and self._boards(tournament):
            self._boards_soon(tournament)
        self.runner.join(tournament)

    def _bump(self, tournament: str) -> int:
        version = self._versions[tournament] = self._versions.get(tournament, 0) + 1
        return version

    def _input(self, tournament: str) -> LiveInput | None:
        state, boards = self._state(tournament), self._boards(tournament)
        if state is None or boards is None:
            return None
        return LiveInput(state, boards, self._stakes(tournament), self._versions.get(tournament, 0))

    def _boards_soon(self, tournament: str) -> None:
        """Send the ``boards`` message now, or once ``interval`` has passed since the last one."""
        if tournament in self._timers:
            return
        loop = asyncio.get_running_loop()
        wait = max(0.0, self._sent_at.get(tournament, -1e9) + self.interval - loop.time())
        self._timers[tournament] = loop.call_later(wait, self._send_boards, tournament)

    def _send_boards(self, tournament: str) -> None:
        self._timers.pop(tournament, None)
        state, boards = self._state(tournament), self._boards(tournament)
        conns = self._subscribers(tournament)
        if state is None or boards is None or not conns:
            return
        self._sent_at[tournament] = asyncio.get_running_loop().time()
        data = boards_message(tournament, state.seq, self._bump(tournament), boards)
        self._latest[tournament] = (data, self._latest.get(tournament, (None, None))[1])
        self._deliver(tournament, conns, data)

    def _publish(self, tournament: str, seq: int, data: bytes) -> None:
        state = self._state(tournament)
        if state is not None and state.seq != seq:
            return  # an official update came meanwhile: the next job says what stands now
        self._latest[tournament] = (self._latest.get(tournament, (None, None))[0], data)
        self._deliver(tournament, self._subscribers(tournament), data)

    def close(self) -> None:
        """Stop the pending ``boards`` messages (the jobs are the pool's)."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
