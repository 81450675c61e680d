"""Stakes: what each outcome of each pending game decides, line by line, for everyone.

How this works
--------------

A *line* is one of the tournament's declared lines (the first ``places``
places), or 1st alone when it declares none.  A player's *state* on a line
is ``clinched`` (inside in every outcome of the remaining games),
``eliminated`` (in none) or ``open``.  With a play-off for 1st, line 1 is
judged on points, as the projection does: ``clinched`` is alone on the most
points in every outcome, ``playoff`` at least tied on them in every outcome
(the title or the play-off), ``eliminated`` never even tied.

For every undecided game and each of its outcomes, the same states are
computed with that outcome fixed; a *stake* is a player whose state on a
line differs from today's ("if Caruana wins, he clinches at least a
play-off"; "if So loses, he can no longer finish 1st").  Only a player open
today can change, so only they are searched.

The states come from :class:`~tracker.core.projection.solver.Solver`
extremes: best and worst rank for place lines, lowest and highest lead for
the play-off line.  Every extreme is exact unless the node budget ran out;
a bound still proves ``clinched``, ``playoff`` and ``eliminated`` (it is
sound), so a state derived from bounds is reported only when proven and
``unknown`` otherwise, and the game (or the player) is flagged not exact:
a stake is then a proven one, and there may be more.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from tracker.core.boards import board_number
from tracker.core.crosstable import Tournament
from tracker.core.events import GameResult
from tracker.core.phrases import Said, phrase, render
from tracker.core.projection.model import model_of
from tracker.core.projection.solver import Objective, Solver, scaled

LineState = Literal["clinched", "playoff", "open", "eliminated", "unknown"]

#: Nodes all stake queries may expand together (a few seconds of search at most; fewer past 30 games:
#: solver.scaled), one player's extreme (the
#: states of today), and one question under every condition at once.
STAKES_BUDGET: Final = 120_000
STAKES_EXTREME_BUDGET: Final = 25_000
STAKES_QUERY_BUDGET: Final = 15_000
#: Nodes past a question's budget for asking alone each condition its one search left open (Solver.cover's ``ask``).
STAKES_ASK_BUDGET: Final = 6_000


@dataclass(frozen=True, slots=True)
class Stake:
    """One player's state on one line changes if the game ends this way; ``text`` says it in words."""

    start_no: int
    places: int
    line: str
    before: LineState
    after: LineState
    text: str
    said: Said


@dataclass(frozen=True, slots=True)
class OutcomeStakes:
    result: GameResult
    stakes: tuple[Stake, ...]


@dataclass(frozen=True, slots=True)
class GameStakes:
    """A pending game (start numbers) and what each outcome decides; ``exact`` false: proven stakes only.

    ``board`` is the game's board in its round (its place in the schedule's list of the round; 0 when the
    tournament has no schedule), so that an overlay set to one board keeps showing that board.
    """

    round: int | None
    white: int
    black: int
    outcomes: tuple[OutcomeStakes, ...]
    exact: bool
    board: int = 0


@dataclass(frozen=True, slots=True)
class PlayerLines:
    """A player's state today on each line (aligned with :attr:`Stakes.lines`)."""

    start_no: int
    name: str
    states: tuple[LineState, ...]


@dataclass(frozen=True, slots=True)
class Stakes:
    """What every pending game decides after event ``seq``.

    ``lines`` are (places, name); ``players`` by start number; ``games`` the
    undecided games in schedule order (a withdrawn player's forfeits decide
    nothing and are left out).  ``exact``: every state and stake is exact.
    """

    tournament: str
    seq: int
    exact: bool
    lines: tuple[tuple[int, str], ...]
    playoff: bool
    players: tuple[PlayerLines, ...]
    games: tuple[GameStakes, ...]


def lines_of(t: Tournament) -> tuple[tuple[int, str], ...]:
    """The declared lines, or 1st alone when the tournament declares none."""
    declared = tuple((line.places, line.name or _line_name(line.places)) for line in t.opened.lines)
    return declared or ((1, "1st"),)


def _line_name(places: int) -> str:
    return "1st" if places == 1 else f"top {places}"


class _States:
    """Line states of players over a solver, within one shared node budget.

    Each state is two or three threshold questions: a place line asks
    whether the player can still finish inside and whether outside; the
    play-off line whether they can be caught (lead of the others at least
    0), passed (at least 1) and whether they can still catch up (lead at
    most 0).  Each question is answered under every condition at once
    (:meth:`Solver.cover`: what the known scenarios settle costs nothing, one
    search the rest); one the budget cannot settle leaves the state
    ``unknown`` unless another question proves it.
    """

    def __init__(self, solver: Solver, lines: tuple[tuple[int, str], ...], playoff: bool, budget: int) -> None:
        self.solver = solver
        self.lines = lines
        self.playoff = playoff
        self.left = budget
        self._answers: dict[tuple[int, Objective, int], list[bool | None]] = {}

    def extremes(self, i: int, budget: int) -> None:
        """Search ``i``'s unconditional extremes the lines read (each within ``budget`` nodes): every condition's
        question starts from them."""
        objectives: tuple[Objective, ...] = ("rank_best", "rank_worst")
        if self.playoff:
            objectives += ("lead_min", "lead_max")
        for objective in objectives:
            self.solver.solve(i, objective, budget=max(0, min(budget, self.left)))
            self.left -= self.solver.nodes

    def _can(self, i: int, objective: Objective, target: int, condition: int) -> bool | None:
        key = (i, objective, target)
        answers = self._answers.get(key)
        if answers is None:
            budget = max(0, min(STAKES_QUERY_BUDGET, self.left))
            ask = max(0, min(STAKES_ASK_BUDGET, self.left - budget))
            answers = self.solver.cover(i, objective, target, budget=budget, ask=ask)
            self.left -= self.solver.nodes
            self._answers[key] = answers
        return answers[condition]

    def of(self, i: int, condition: int) -> tuple[tuple[LineState, ...], bool]:
        """``i``'s state on every line under ``condition`` (a condition index; 0: today), and whether all are exact."""
        states: list[LineState] = []
        exact = True
        for places, _ in self.lines:
            if self.playoff and places == 1:
                caught = self._can(i, "lead_max", 0, condition)  # someone else at least level on points
                if caught is False:
                    state: LineState = "clinched"
                elif caught and self._can(i, "lead_max", 1, condition) is False:
                    state = "playoff"
                else:
                    behind = self._can(i, "lead_min", 0, condition)  # can they still be level or ahead
                    if behind is False:
                        state = "eliminated"
                    elif caught is None or behind is None or self._can(i, "lead_max", 1, condition) is None:
                        state = "unknown"
                    else:
                        state = "open"
            else:
                inside = self._can(i, "rank_best", places, condition)
                outside = self._can(i, "rank_worst", places + 1, condition)
                if outside is False:
                    state = "clinched"
                elif inside is False:
                    state = "eliminated"
                elif inside and outside:
                    state = "open"
                else:
                    state = "unknown"
            exact = exact and state != "unknown"
            states.append(state)
        return tuple(states), exact


def stakes(t: Tournament, *, budget: int = STAKES_BUDGET, solver: Solver | None = None) -> Stakes:
    """What each outcome of each undecided game of ``t`` changes on each line, for every player.

    Exact within ``budget`` solver nodes in all; beyond, the states and
    stakes reported are proven and flagged not exact (see the module
    docstring).  Reads ``t`` and changes nothing; raises nothing for a
    valid tournament.  Pure and deterministic: the same tournament (and the
    same ``solver`` history) always gives the same stakes.  ``solver``, a
    :class:`Solver` of ``t``'s model, shares the search with the projection
    (:func:`~tracker.core.projection.analysis.analyse`); by default a fresh one.
    """
    m = solver.m if solver is not None else model_of(t)
    n = m.n
    lines = lines_of(t)
    playoff = t.opened.playoff
    solver = solver if solver is not None else Solver(m)
    search = _States(solver, lines, playoff, scaled(budget, m))
    by_start = sorted(range(n), key=lambda i: t.start_nos[i])
    today: dict[int, tuple[LineState, ...]] = {}
    exact = True
    for i in by_start:
        search.extremes(i, STAKES_EXTREME_BUDGET)
        today[i], ok = search.of(i, 0)
        exact = exact and ok
    names = [p.name for p in t.opened.players]

    def short(start_no: int) -> str:
        return surname(names[t.index[start_no]])

    players = tuple(PlayerLines(t.start_nos[i], names[i], today[i]) for i in by_start)
    moving = [i for i in by_start if any(s not in ("clinched", "eliminated") for s in today[i])]
    games = []
    for index, g in enumerate(m.undecided):
        game_exact = True
        outcomes = []
        for o, option in enumerate(g.options):
            found = []
            for i in moving:
                after, ok = search.of(i, solver.known.condition(index, o))
                game_exact = game_exact and ok
                for (places, name), was, now in zip(lines, today[i], after, strict=True):
                    if now != was and "unknown" not in (was, now):
                        said = words(t.start_nos[i], places, name, now)
                        text = render(said, short)
                        found.append(Stake(t.start_nos[i], places, name, was, now, text, said))
            outcomes.append(OutcomeStakes(option.result, tuple(found)))
        exact = exact and game_exact
        white, black = t.start_nos[g.white], t.start_nos[g.black]
        board = 0 if g.round is None else board_number(t, g.round, white, black)
        games.append(GameStakes(g.round, white, black, tuple(outcomes), game_exact, board))
    return Stakes(t.id, t.seq, exact, lines, playoff, players, tuple(games))


CLINCHES: Final = phrase("stakes.clinches", "{who:player} clinches {line:line}")
PLAYOFF: Final = phrase("stakes.playoff", "{who:player} clinches at least a play-off for {line:line}")
OUT: Final = phrase("stakes.out", "{who:player} can no longer finish {line:line}")
IN_RACE: Final = phrase("stakes.open", "{who:player} is still in the race for {line:line}")


def words(start_no: int, places: int, line: str, state: LineState) -> Said:
    """``"Caruana clinches 1st"``, ``"So can no longer finish top 3"``, ``"Firouzja clinches at least a play-off"``."""
    said = {"clinched": CLINCHES, "playoff": PLAYOFF, "eliminated": OUT}.get(state, IN_RACE)
    return said(who=start_no, line=line_arg(places, line))


def line_arg(places: int, name: str) -> int | str:
    """A line as a phrase's ``line`` argument: its places when it has tracker's own name, else the declared one."""
    return places if name == _line_name(places) else name


def surname(name: str) -> str:
    """ "Caruana, Fabiano" → "Caruana" (names in start lists are surname first)."""
    return name.split(",", 1)[0].strip() or name
