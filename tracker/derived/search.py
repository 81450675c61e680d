"""One search per seq for a tournament's arbiters and spectators, and the last seq's search reused.

How this works
--------------

The arbiters' projection (:mod:`tracker.derived.arbiters`) and the
spectators' stakes (:mod:`tracker.derived.stakes`) search the completions of
the same crosstable.  Both runners compute :func:`analysis_job` in a worker
process, asking for what is wanted when it starts (:class:`AnalysisWork`):
the projection when an arbiter watches, the stakes when a spectator (or a
live board) asks.  Asked both, one
:func:`~tracker.core.projection.analysis.analyse` answers both from one
solver, and the result goes to both feeds; the other runner then finds the
seq done and does not search it again (:class:`~tracker.derived.pool.Pool`
skips a job whose version has a result).  While the arbiters' job of a
tournament is due, queued or running, the stakes job of that tournament
waits for it (the runner's ``after``), at most the projection's time limit,
so the spectators' stakes never starve behind a stream of results.

Each job takes the tournament's newest
:class:`~tracker.core.projection.analysis.Memory` (:class:`Memories`, kept
here in the server) and returns the next one: when a result lands inside
the previous seq's scenario space, the extremes and stakes it does not move
are proved without a search.

A projection's search has its own time (``seconds``); stopped there, or by
the worker's memory limit, the message is the interval bounds with
``cut_short``, and no stakes come with it (the stakes job then runs on its
own).  A stakes-only job has no time of its own: the pool's limit bounds it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Literal

from tracker.core.crosstable import Tournament
from tracker.core.events import Teams
from tracker.core.projection import project
from tracker.core.projection.analysis import Memory, analyse, project_again, stakes_again
from tracker.core.projection.chances import chances
from tracker.core.projection.cues import Insight, insight
from tracker.core.projection.stakes import Stakes, lines_of
from tracker.core.standings import standings
from tracker.core.teams.setup import setup_of
from tracker.core.teams.stakes import live_team_stakes
from tracker.core.worth.live import live_worth
from tracker.derived.workers import OutOfTime, deadline
from tracker.protocol import projection_message, stakes_message
from tracker.protocol.messages import CutShortJSON


@dataclass(frozen=True, slots=True)
class Computed:
    """One seq's stakes: the encoded message, the insight the cues compare, the stakes themselves."""

    message: bytes
    insight: Insight
    stakes: Stakes


def computed(state: Tournament, k: Stakes) -> Computed:
    """The stakes ``k`` of ``state`` as the feed sends them: encoded, with the chances and the cues' insight."""
    table = standings(state)
    teams = state.opened.teams
    if isinstance(teams, Teams):  # a team event: the boards' team stakes; its players' lines and chances are none
        message = stakes_message(k, None, live_worth(state, table), live_team_stakes(state, setup_of(teams)))
    else:
        message = stakes_message(k, chances(state, seed=state.seq), live_worth(state, table))
    return Computed(message, insight(table, k), k)


def team_stakes(t: Tournament) -> Stakes:
    """A team event's individual stakes: none searched (its players do not play a round robin of their own, so
    their lines decide nothing; :func:`computed` adds what each board decides for the teams)."""
    return Stakes(t.id, t.seq, True, lines_of(t), t.opened.playoff, (), ())


@dataclass(frozen=True, slots=True)
class AnalysisWork:
    """What a worker computes: ``state``'s projection and/or stakes, from ``memory`` (the last seq's), in time.

    ``seconds`` is the projection search's own time (a stakes-only job has none: the pool's limit bounds it).
    """

    state: Tournament
    memory: Memory | None
    projection: bool
    stakes: bool
    seconds: float = math.inf

    @property
    def id(self) -> str:
        return self.state.id

    @property
    def seq(self) -> int:
        return self.state.seq


@dataclass(frozen=True, slots=True)
class Analysed:
    """A job's answers: the encoded projection message, the stakes, each ``None`` when not asked (or cut short)."""

    projection: bytes | None
    stakes: Computed | None
    memory: Memory | None


def analysis_job(work: AnalysisWork) -> Analysed:
    """Runs in the worker process: what ``work`` asks, from one search (see the module docstring)."""
    t = work.state
    if not work.projection:  # the stakes alone: the pool's limit bounds them (MemoryError: no stakes this seq)
        if isinstance(t.opened.teams, Teams):
            return Analysed(None, computed(t, team_stakes(t)), None)
        k, memory, _ = stakes_again(t, previous=work.memory)
        return Analysed(None, computed(t, k), memory)
    started = time.monotonic()
    reason: Literal["time", "memory"]
    try:
        with deadline(work.seconds):
            if work.stakes:
                both = analyse(t, previous=work.memory)
                return Analysed(projection_message(both.projection), computed(t, both.stakes), both.memory)
            p, memory, _ = project_again(t, previous=work.memory)
            return Analysed(projection_message(p), None, memory)
    except OutOfTime:
        reason = "time"
    except MemoryError:
        reason = "memory"
    # outside the handler: the search's memory is released before the bounds are computed
    cut: CutShortJSON = {"seconds": round(time.monotonic() - started, 1), "reason": reason}
    return Analysed(projection_message(project(t, exact_limit=-1), cut_short=cut), None, work.memory)


class Memories:
    """Each tournament's newest search memory (the server keeps one per tournament: a few hundred KiB at most)."""

    def __init__(self) -> None:
        self._kept: dict[str, Memory] = {}

    def get(self, tournament: str) -> Memory | None:
        return self._kept.get(tournament)

    def keep(self, tournament: str, memory: Memory | None) -> None:
        """Keep ``memory`` unless a newer seq's is kept already."""
        if memory is None:
            return
        kept = self._kept.get(tournament)
        if kept is None or kept.seq <= memory.seq:
            self._kept[tournament] = memory

    def forget(self, tournament: str) -> None:
        self._kept.pop(tournament, None)
