"""The team projection (issue 35) against an exhaustive enumeration written here, and its scenarios replayed.

Small random team round robins (3–5 teams, 2–4 boards, one or two rounds left) are written as TRF16 team
files, cut before their last rounds and projected; the reference enumerates every result of every pending
board game, sums match and game points itself from the generated matches, and takes the extremes of the
rank as :mod:`tracker.core.teams.projection` defines it (best: 1 + teams strictly above on the order's
leading ``MPTS``/``GPTS`` key; worst: 1 + teams at least equal).  Each scenario is recorded as ordinary
``ResultRecorded`` events and ranked by :func:`team_standings`: it must reach its extreme, and the full
order's rank must lie inside the range.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core.test_team_standings import RESULTS, berger  # the pairings and board results both tests play
from tracker.core.events import GameResult, ResultRecorded
from tracker.core.projection import Scenario
from tracker.core.teams.projection import TeamProjection, board_stakes, project_teams
from tracker.core.teams.setup import TeamSetup
from tracker.core.teams.standings import TeamStandings, team_standings
from tracker.formats import TournamentFile, state_from
from tracker.formats.trf import parse_trf
from tracker.formats.trf.read import team_setup_of

HALF = Fraction(1, 2)
#: recorded board results, White's view: the team standings test's, without the double forfeit
RECORDED = [r for r in RESULTS if r[:2] != ("-", "-")]
WEIGHTS = [30, 30, 30, 3, 3]
PENDING: dict[GameResult, tuple[Fraction, Fraction]] = {
    "1-0": (Fraction(1), Fraction(0)),
    "1/2-1/2": (HALF, HALF),
    "0-1": (Fraction(0), Fraction(1)),
}
ORDERS = [
    ("MPTS", "GPTS", "EDE", "SB:MP"),
    ("MPTS", "GPTS"),
    ("GPTS", "MPTS", "BBE"),
    ("MPTS", "EDE", "GPTS"),
    ("GPTS",),
]
TEAM_RR = Path(__file__).resolve().parents[2] / "data" / "team-rr"


@dataclass
class Board:
    round: int
    white: int
    black: int
    white_team: int
    black_team: int
    points: tuple[Fraction, Fraction] | None = None  # None: pending
    played: bool = True


@dataclass
class Event:
    n: int
    boards: int
    rounds: int
    left: int
    win: Fraction
    draw: Fraction
    text: str = ""
    games: list[Board] = field(default_factory=list)
    pairs: list[tuple[int, int, int]] = field(default_factory=list)  # (round, team a, team b)


def generate(rng: random.Random, n: int, boards: int, left: int) -> Event:
    """A ``n``-team, ``boards``-board round robin with results in all rounds but the last ``left``."""
    scoring = rng.choice([(Fraction(2), Fraction(1)), (Fraction(3), Fraction(1))])
    schedule = berger(n)
    ev = Event(n, boards, len(schedule), left, *scoring)
    number = [[k * boards + p + 1 for p in range(boards)] for k in range(n)]
    blocks: dict[int, dict[int, tuple[int, str, str]]] = {s: {} for team in number for s in team}
    for r, pairs in enumerate(schedule, start=1):
        pending = r > ev.rounds - left
        for a, b in pairs:
            if b is None:
                for s in number[a]:
                    blocks[s][r] = (0, "-", "Z")
                continue
            ev.pairs.append((r, a, b))
            for board in range(boards):
                a_white = board % 2 == 0
                pa, pb = number[a][board], number[b][board]
                white, black = (pa, pb) if a_white else (pb, pa)
                wt, bt = (a, b) if a_white else (b, a)
                if pending:
                    blocks[white][r] = (black, "w", " ")
                    blocks[black][r] = (white, "b", " ")
                    ev.games.append(Board(r, white, black, wt, bt))
                else:
                    cw, cb, pw, pbl, played = rng.choices(RECORDED, WEIGHTS)[0]
                    blocks[white][r] = (black, "w", cw)
                    blocks[black][r] = (white, "b", cb)
                    ev.games.append(Board(r, white, black, wt, bt, (pw, pbl), played))
    lines = [f"012 Team projection {rng.random():.6f}", f"XXR {ev.rounds}", "092 Team Round Robin"]
    if ev.win != 2:
        lines.append(f"362  W{float(ev.win):4.1f}    D{float(ev.draw):4.1f}    L{0.0:4.1f}")
    for team in number:
        for s in team:
            line = f"001 {s:4d}      {'Player ' + str(s):<34}2000".ljust(91)
            for r in range(1, ev.rounds + 1):
                opp, colour, code = blocks[s][r]
                cell = f"{opp:4d} {colour} {code}" if opp else "0000 - " + code
                line += cell.rjust(10) if r > 1 else cell
            lines.append(line)
    for k, team in enumerate(number):
        lines.append(f"013 {'Team ' + str(k + 1):<32}" + " ".join(f"{s:4d}" for s in team))
    ev.text = "\n".join(lines) + "\n"
    return ev


def key_of(mp: Fraction, gp: Fraction, order: tuple[str, ...]) -> tuple[Fraction, ...]:
    """The order's leading run of MPTS/GPTS, as values (the projection's rank key)."""
    key: list[Fraction] = []
    seen: list[str] = []
    for code in order:
        if code not in ("MPTS", "GPTS"):
            break
        if code not in seen:
            seen.append(code)
            key.append(mp if code == "MPTS" else gp)
    return tuple(key)


def ranks_of(keys: list[tuple[Fraction, ...]]) -> list[tuple[int, int]]:
    """Per team (best, worst) position on the key: 1 + teams above, 1 + teams at least equal."""
    return [
        (
            1 + sum(1 for j, other in enumerate(keys) if j != i and other > mine),
            1 + sum(1 for j, other in enumerate(keys) if j != i and other >= mine),
        )
        for i, mine in enumerate(keys)
    ]


def reference(ev: Event, order: tuple[str, ...]) -> list[tuple[int, int]]:
    """Every team's least best position and greatest worst position over every pending result."""
    pending = [g for g in ev.games if g.points is None]
    slot = {id(g): k for k, g in enumerate(pending)}
    # per match: the recorded game points of each side, whether a board was played, its pending boards
    matches = []
    for r, a, b in ev.pairs:
        ga = gb = Fraction(0)
        played = False
        boards = []
        for g in ev.games:
            if g.round != r or {g.white_team, g.black_team} != {a, b}:
                continue
            if g.points is None:
                boards.append((slot[id(g)], g.white_team == a))
                continue
            pw, pb = g.points
            played = played or g.played
            ga += pw if g.white_team == a else pb
            gb += pb if g.white_team == a else pw
        matches.append((a, b, ga, gb, played or bool(boards), boards))
    best = [ev.n] * ev.n
    worst = [1] * ev.n
    for outcome in itertools.product(PENDING.values(), repeat=len(pending)):
        mp = [Fraction(0)] * ev.n
        gp = [Fraction(0)] * ev.n
        for a, b, ga, gb, _, boards in matches:
            for k, a_white in boards:
                pw, pb = outcome[k]
                ga += pw if a_white else pb
                gb += pb if a_white else pw
            gp[a] += ga
            gp[b] += gb
            if ga > gb:
                mp[a] += ev.win
            elif gb > ga:
                mp[b] += ev.win
            elif ga > 0:
                mp[a] += ev.draw
                mp[b] += ev.draw
        for i, (lo, hi) in enumerate(ranks_of([key_of(mp[k], gp[k], order) for k in range(ev.n)])):
            best[i] = min(best[i], lo)
            worst[i] = max(worst[i], hi)
    return list(zip(best, worst, strict=True))


def completed(tf: TournamentFile, setup: TeamSetup, scenario: Scenario, order: tuple[str, ...]) -> TeamStandings:
    """The team standings once ``scenario``'s results are recorded."""
    extra = [
        ResultRecorded(f"s{k}", tf.opened.tournament, g.round or 0, g.white, g.black, g.result)
        for k, g in enumerate(scenario)
    ]
    return team_standings(state_from(dataclasses.replace(tf, events=(*tf.events, *extra))), setup, order)


def check_scenarios(p: TeamProjection, tf: TournamentFile, setup: TeamSetup, order: tuple[str, ...]) -> None:
    """Each extreme's scenario covers the pending games, and ranked by team_standings reaches its extreme;
    the full order's rank lies inside the range."""
    pending = sorted((g.round, g.white, g.black) for g in p.games)
    for row in p.teams:
        for name, reached in row.reached.items():
            assert sorted((g.round, g.white, g.black) for g in reached.scenario) == pending
            s = completed(tf, setup, reached.scenario, order)
            keys = [key_of(r.match_points, r.game_points, order) for r in s.rows]
            positions = dict(zip((r.team for r in s.rows), ranks_of(keys), strict=True))
            got = positions[row.team][0 if name == "rank_best" else 1]
            assert got == reached.attained, (row.team, name)
            if reached.exact:
                assert got == (row.rank_best if name == "rank_best" else row.rank_worst), (row.team, name)
            full = next(r.rank for r in s.rows if r.team == row.team)
            assert row.rank_best <= full <= row.rank_worst, (row.team, name, full)


@st.composite
def small_events(draw: st.DrawFn) -> tuple[int, int, int, int, tuple[str, ...]]:
    n = draw(st.integers(3, 5))
    left = draw(st.integers(1, 2))
    matches = left * (n // 2)
    if 9 // matches < 2:
        left, matches = 1, n // 2
    boards = draw(st.integers(2, min(4, 9 // matches)))
    return draw(st.integers(0, 2**32)), n, boards, left, draw(st.sampled_from(ORDERS))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_events())
def test_team_rank_ranges_equal_every_outcome_and_scenarios_reach_them(
    case: tuple[int, int, int, int, tuple[str, ...]],
) -> None:
    seed, n, boards, left, order = case
    ev = generate(random.Random(seed), n, boards, left)
    tf = parse_trf(ev.text, "small.trf")
    setup = team_setup_of(tf)
    assert setup is not None
    p = project_teams(state_from(tf), setup, order)
    assert p.exact
    assert p.remaining == sum(1 for g in ev.games if g.points is None)
    want = reference(ev, order)
    assert [(r.rank_best, r.rank_worst) for r in p.teams] == want
    check_scenarios(p, tf, setup, order)


def _random_outcomes_inside(p: TeamProjection, tf: TournamentFile, setup: TeamSetup, order: tuple[str, ...]) -> None:
    rng = random.Random(35)
    ranges = {r.team: (r.rank_best, r.rank_worst) for r in p.teams}
    for _ in range(20):
        scenario = tuple(
            dataclasses.replace(g, result=rng.choice(list(PENDING))) for g in p.teams[0].reached["rank_best"].scenario
        )
        s = completed(tf, setup, scenario, order)
        keys = [key_of(r.match_points, r.game_points, order) for r in s.rows]
        for r, (lo, hi) in zip(s.rows, ranks_of(keys), strict=True):
            assert ranges[r.team][0] <= lo and hi <= ranges[r.team][1]


def test_ten_teams_of_four_boards_one_round_before_the_end_are_exact() -> None:
    order = ("MPTS", "GPTS", "EDE", "SB:MP")
    ev = generate(random.Random(1035), 10, 4, 1)
    tf = parse_trf(ev.text, "ten.trf")
    setup = team_setup_of(tf)
    assert setup is not None
    p = project_teams(state_from(tf), setup, order)
    assert p.exact and p.remaining == 20
    check_scenarios(p, tf, setup, order)
    _random_outcomes_inside(p, tf, setup, order)


def test_the_tec_file_of_ten_teams_cut_one_round_before_the_end_is_exact() -> None:
    from tracker.formats.files import read_file

    path = str(TEAM_RR / "team-rr-9004.trf")
    tf = read_file(path).until_round(8)
    setup = team_setup_of(tf, path)
    assert setup is not None and len(setup.teams) == 10
    p = project_teams(state_from(tf), setup)
    assert p.exact and p.remaining == 20 and p.key == ("MPTS", "GPTS")
    check_scenarios(p, tf, setup, setup.tiebreaks)
    _random_outcomes_inside(p, tf, setup, setup.tiebreaks)


@pytest.mark.parametrize(("seed", "n", "boards", "left"), [(77, 4, 2, 1), (78, 4, 2, 2), (79, 5, 2, 1)])
def test_board_stakes_are_the_projection_with_that_board_fixed(seed: int, n: int, boards: int, left: int) -> None:
    order = ("MPTS", "GPTS")
    ev = generate(random.Random(seed), n, boards, left)
    tf = parse_trf(ev.text, "stakes.trf")
    setup = team_setup_of(tf)
    assert setup is not None
    state = state_from(tf)
    whole = project_teams(state, setup, order)
    before = {r.team: (r.rank_best, r.rank_worst) for r in whole.teams}
    stakes = board_stakes(state, setup, order, base=whole)
    assert board_stakes(state, setup, order) == stakes
    assert [s.game for s in stakes] == list(whole.games)
    pending = [g for g in ev.games if g.points is None]
    for k, stake in enumerate(stakes):
        assert [o.result for o in stake.outcomes] == list(PENDING)
        for outcome in stake.outcomes:
            # the reference with this board fixed: drop the other results from the enumeration
            fixed = dataclasses.replace(ev, games=list(ev.games))
            index = ev.games.index(pending[k])
            w, b = PENDING[outcome.result]
            fixed.games[index] = dataclasses.replace(pending[k], points=(w, b), played=True)
            want = dict(zip(range(1, ev.n + 1), reference(fixed, order), strict=True))
            assert outcome.exact
            assert outcome.changes == {t: v for t, v in want.items() if v != before[t]}
    assert any(o.changes for s in stakes for o in s.outcomes)  # these events have boards that decide something


def test_ten_teams_two_rounds_before_the_end_reach_their_extremes() -> None:
    """Two rounds left (40 board games): exact here too, each extreme reached, random completions inside."""
    order = ("MPTS", "GPTS", "EDE")
    ev = generate(random.Random(2035), 10, 4, 2)
    tf = parse_trf(ev.text, "ten-two.trf")
    setup = team_setup_of(tf)
    assert setup is not None
    p = project_teams(state_from(tf), setup, order)
    assert p.remaining == 40 and p.exact
    check_scenarios(p, tf, setup, order)
    _random_outcomes_inside(p, tf, setup, order)


def test_a_round_in_progress_counts_its_recorded_boards() -> None:
    """Round 9 of the TEC file half played: the recorded boards stay, the rest are pending (whole matches
    and single boards of matches under way); the scenarios reach their extremes, random completions stay in."""
    from tracker.formats.files import read_file

    path = str(TEAM_RR / "team-rr-9004.trf")
    whole = read_file(path)
    cut = whole.until_round(8)
    last = [e for e in whole.events if isinstance(e, ResultRecorded) and e.round == 9]
    tf = dataclasses.replace(cut, events=(*cut.events, *last[::2]))  # every other board of round 9
    setup = team_setup_of(tf, path)
    assert setup is not None
    p = project_teams(state_from(tf), setup)
    assert p.exact and p.remaining == len(last) - len(last[::2])
    check_scenarios(p, tf, setup, setup.tiebreaks)
    _random_outcomes_inside(p, tf, setup, setup.tiebreaks)
