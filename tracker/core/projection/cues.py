"""Cues for producers: the moments worth a lower third, from one state of a tournament to the next.

How this works
--------------

An :class:`Insight` is what the cues compare: the standings order (rank
and points per player, the tie-break values) and each player's state on
each line (from :func:`~tracker.core.projection.stakes.stakes`).
:func:`cues` compares two insights of the same tournament and returns, in
this order:

* ``clinched`` / ``lost``: a player's state on a line became ``clinched``
  or ``playoff`` (at least a play-off for 1st), or ``eliminated``; a
  change to or from ``unknown`` (a search out of budget) is no cue;
* ``leader``: the players ranked 1st are not the same ones as before;
* ``overtake``: a player ranked behind another before is ranked ahead of
  them now while both have the same points: a tie-break decided it (the
  first criterion that separates them is named).

Nothing fires when nothing changed: ``cues(x, x)`` is empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Final, Literal

from tracker.core.phrases import Said, phrase, render
from tracker.core.projection.stakes import CLINCHES, OUT, LineState, Stakes, line_arg, surname
from tracker.core.standings import Standings

CueKind = Literal["clinched", "lost", "leader", "overtake"]


@dataclass(frozen=True, slots=True)
class Placing:
    start_no: int
    name: str
    rank: int
    points: Fraction
    tiebreaks: tuple[Fraction, ...]


@dataclass(frozen=True, slots=True)
class Insight:
    """What cues compare: the standings and the line states after event ``seq``."""

    tournament: str
    seq: int
    codes: tuple[str, ...]
    placings: tuple[Placing, ...]  # in standings order
    lines: tuple[tuple[int, str], ...]
    states: dict[int, tuple[LineState, ...]]  # start_no → state per line


@dataclass(frozen=True, slots=True)
class Cue:
    """One moment: ``kind``, the players concerned (start numbers), the line if any, and a sentence."""

    kind: CueKind
    players: tuple[int, ...]
    line: str | None
    text: str
    said: Said


def insight(s: Standings, k: Stakes) -> Insight:
    """The insight of one state: its standings and its stakes (both of the same event)."""
    return Insight(
        tournament=s.tournament,
        seq=s.seq,
        codes=s.codes,
        placings=tuple(Placing(r.start_no, r.name, r.rank, r.points, r.tiebreaks) for r in s.rows),
        lines=k.lines,
        states={p.start_no: p.states for p in k.players},
    )


SURE_OF_PLAYOFF: Final = phrase("cue.playoff", "{who:player} is sure of at least a play-off for {line:line}")
LEADS: Final = phrase("cue.leads", "{who:player} leads")
SHARE_LEAD: Final = phrase("cue.share_lead", "{who:players} share the lead")
OVERTAKES: Final = phrase("cue.overtakes", "{who:player} overtakes {rival:player} on {code}")


def cues(before: Insight, after: Insight) -> tuple[Cue, ...]:
    """The cues of going from ``before`` to ``after`` (see the module docstring); raises nothing."""
    found: list[Cue] = []
    names = {p.start_no: surname(p.name) for p in after.placings}

    def cue(kind: CueKind, players: tuple[int, ...], line: str | None, said: Said) -> Cue:
        return Cue(kind, players, line, render(said, lambda n: names.get(n, str(n))), said)

    if before.lines == after.lines:
        for start_no, states in after.states.items():
            was = before.states.get(start_no)
            if was is None:
                continue
            for (places, line), old, new in zip(after.lines, was, states, strict=True):
                if old == new or "unknown" in (old, new):
                    continue
                where = line_arg(places, line)
                if new == "clinched":
                    found.append(cue("clinched", (start_no,), line, CLINCHES(who=start_no, line=where)))
                elif new == "playoff":
                    found.append(cue("clinched", (start_no,), line, SURE_OF_PLAYOFF(who=start_no, line=where)))
                elif new == "eliminated":
                    found.append(cue("lost", (start_no,), line, OUT(who=start_no, line=where)))
    leaders_before = {p.start_no for p in before.placings if p.rank == 1}
    leaders = tuple(p.start_no for p in after.placings if p.rank == 1)
    if leaders and set(leaders) != leaders_before:
        said = LEADS(who=leaders[0]) if len(leaders) == 1 else SHARE_LEAD(who=list(leaders))
        found.append(cue("leader", leaders, None, said))
    old_rank = {p.start_no: p.rank for p in before.placings}
    for a in after.placings:
        for b in after.placings:
            if a.rank >= b.rank or a.points != b.points:
                continue
            if a.start_no not in old_rank or b.start_no not in old_rank or old_rank[a.start_no] <= old_rank[b.start_no]:
                continue
            code = next((c for c, x, y in zip(after.codes, a.tiebreaks, b.tiebreaks, strict=True) if x != y), "DE")
            said = OVERTAKES(who=a.start_no, rival=b.start_no, code=code)
            found.append(cue("overtake", (a.start_no, b.start_no), None, said))
    return tuple(found)
