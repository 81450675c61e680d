"""Scenarios, lines and the play-off for 1st, checked by completing the crosstable and ranking it.

Every reported extreme names a scenario; here each scenario is recorded as
ordinary ``ResultRecorded`` events and :func:`standings` ranks the result,
which must give exactly the reported rank or KS.  Line statuses and play-off
membership are compared with an enumeration of every outcome (small cases)
and the 16-open-game case with random samples: no outcome may leave the
reported ranges.
"""

from __future__ import annotations

import itertools
import json
import random
from fractions import Fraction

import msgspec
import pytest

from tests.core.test_projection import (
    PLAYED,
    TID,
    Case,
    _id,
    brute_force,
    check_exact,
    corrections_walk,
    random_case,
)
from tracker.core.errors import EventRejected
from tracker.core.events import Line, ResultRecorded, TournamentOpened, decode_event, encode_event
from tracker.core.projection import Projection, Scenario, project
from tracker.core.standings import Standings, standings


def with_lines(case: Case, places: tuple[int, ...], playoff: bool) -> Case:
    opened = case.events[0]
    assert isinstance(opened, TournamentOpened)
    lines = tuple(Line(p) for p in places if p <= case.n)
    changed = msgspec.structs.replace(opened, lines=lines, playoff=playoff)
    return Case(
        [changed, *case.events[1:]], case.pending, case.withdrawn, case.n, case.cycles, case.win, case.line_games
    )


def completed(case: Case, scenario: Scenario) -> Standings:
    """The final standings once ``scenario``'s results are recorded (forfeits included)."""
    assert sorted((g.round, min(g.white, g.black), max(g.white, g.black)) for g in scenario) == sorted(
        (r, min(w, b), max(w, b)) for r, w, b in case.pending
    ), "a scenario covers exactly the remaining games"
    extra = []
    for g in scenario:
        r = g.round if g.round is not None else next(r for r, w, b in case.pending if {w, b} == {g.white, g.black})
        extra.append(ResultRecorded(_id(), TID, r, g.white, g.black, g.result))
    s = standings(case.rebuilt(extra))
    assert not s.provisional
    return s


def check_scenarios(p: Projection, case: Case) -> None:
    """Each extreme's scenario, ranked by :func:`standings`, gives what it is said to reach."""
    for pp in p.players:
        for name, reached in pp.reached.items():
            s = completed(case, reached.scenario)
            row = s.row(pp.start_no)
            got = row.rank if name.startswith("rank") else row.tiebreaks[s.codes.index("KS")]
            assert got == reached.attained, f"{name} of {pp.start_no}"
            if reached.exact:
                reported = {"rank_best": pp.rank_best, "rank_worst": pp.rank_worst, "ks_min": pp.ks_min}.get(
                    name, pp.ks_max
                )
                assert got == reported, f"{name} of {pp.start_no}"


def _leader_state(s: Standings, start_no: int) -> str:
    """Line 1 under a play-off: ``in`` alone on the most points, ``playoff`` tied on them, ``out`` otherwise."""
    top = max(row.points for row in s.rows)
    mine = s.row(start_no).points
    if mine < top:
        return "out"
    return "in" if sum(row.points == top for row in s.rows) == 1 else "playoff"


def check_lines(p: Projection, case: Case) -> None:
    """Line statuses and play-off membership against every outcome, and each line's scenarios."""
    seen: dict[tuple[int, int], set[str]] = {}
    for outcome in itertools.product(*case.options()):
        extra = [ResultRecorded(_id(), TID, r, w, b, res) for (r, w, b), res in zip(case.pending, outcome, strict=True)]
        s = standings(case.rebuilt(extra))
        for row in s.rows:
            for places, _ in p.lines:
                if p.playoff and places == 1:
                    state = _leader_state(s, row.start_no)
                else:
                    state = "in" if row.rank <= places else "out"
                seen.setdefault((row.start_no, places), set()).add(state)
            seen.setdefault((row.start_no, 0), set()).add(_leader_state(s, row.start_no))
    for pp in p.players:
        for line in pp.lines:
            states = seen[(pp.start_no, line.places)]
            expected = (
                "clinched"
                if states == {"in"}
                else "eliminated"
                if "in" not in states and ("playoff" not in states)
                else "open"
            )
            assert line.status == expected, f"{line.name} for {pp.start_no}: {states}"
            assert (line.inside is not None) == ("in" in states)
            assert (line.outside is not None) == ("out" in states)
            for side, want in ((line.inside, "in"), (line.outside, "out"), (line.playoff, "playoff")):
                if side is None:
                    continue
                s = completed(case, side)
                if p.playoff and line.places == 1:
                    assert _leader_state(s, pp.start_no) == want
                else:
                    assert (s.row(pp.start_no).rank <= line.places) == (want == "in")
        if p.playoff:
            assert pp.playoff is not None
            states = seen[(pp.start_no, 0)]
            assert (pp.playoff.status != "eliminated") == ("playoff" in states)
            assert (pp.playoff.status == "clinched") == (states == {"playoff"})
            assert pp.playoff.secured == ("out" not in states)
            if pp.playoff.scenario is not None:
                assert _leader_state(completed(case, pp.playoff.scenario), pp.start_no) == "playoff"


@pytest.mark.parametrize("seed", range(40))
def test_every_extreme_is_reached_by_its_scenario_and_equals_brute_force(seed: int) -> None:
    rng = random.Random(7000 + seed)
    n = rng.randint(3, 8)
    case = random_case(rng, n, rng.randint(0, 6), withdraw=rng.random() < 0.25)
    p = project(case.tournament())
    check_exact(p, case, brute_force(case))
    assert all(r.exact for pp in p.players for r in pp.reached.values())
    check_scenarios(p, case)


@pytest.mark.parametrize("seed", range(24))
def test_lines_and_play_off_membership_equal_every_outcome(seed: int) -> None:
    rng = random.Random(8000 + seed)
    n = rng.randint(3, 7)
    case = random_case(rng, n, rng.randint(1, 6), withdraw=rng.random() < 0.2)
    case = with_lines(case, tuple(sorted(rng.sample(range(1, n + 1), min(n, 2)))), playoff=seed % 2 == 0)
    p = project(case.tournament())
    assert p.exact and p.playoff == (seed % 2 == 0)
    check_lines(p, case)


def test_sixteen_open_games_are_exact_reached_by_their_scenarios_and_contain_random_outcomes() -> None:
    """The last two rounds of a 16-player round robin: 3^16 outcomes, searched, not enumerated."""
    rng = random.Random(1616)
    case = random_case(rng, 16, 16, tail=True, order=("DE", "SB", "KS", "WON"))
    assert len({r for r, _, _ in case.pending}) == 2
    p = project(case.tournament())
    assert p.remaining == 16
    assert p.exact
    assert all(r.exact for pp in p.players for r in pp.reached.values())
    check_scenarios(p, case)
    samples = [tuple(rng.choice(o) for o in case.options()) for _ in range(60)]
    truth = corrections_walk(case, samples)
    for pp in p.players:
        lo, hi = truth.ranks[pp.start_no]
        assert pp.rank_best <= lo and hi <= pp.rank_worst
        ks_lo, ks_hi = truth.ks[pp.start_no]
        assert pp.ks_min <= ks_lo and ks_hi <= pp.ks_max


def test_a_query_out_of_budget_reports_a_labelled_bound_that_still_contains_every_outcome() -> None:
    rng = random.Random(31)
    case = random_case(rng, 8, 12)
    p = project(case.tournament(), budget=0)
    assert not p.exact
    truth = corrections_walk(case, [tuple(rng.choice(o) for o in case.options()) for _ in range(80)])
    for pp in p.players:
        for name, reached in pp.reached.items():
            value = {"rank_best": pp.rank_best, "rank_worst": pp.rank_worst, "ks_min": pp.ks_min}.get(name, pp.ks_max)
            assert reached.exact == (reached.attained == value)
        assert pp.rank_best <= truth.ranks[pp.start_no][0] and truth.ranks[pp.start_no][1] <= pp.rank_worst
        assert pp.ks_min <= truth.ks[pp.start_no][0] and truth.ks[pp.start_no][1] <= pp.ks_max
    check_scenarios(p, case)


def test_tournament_opened_without_lines_still_decodes_and_lines_beyond_the_field_are_rejected() -> None:
    from tracker.core.apply import step

    rng = random.Random(3)
    case = random_case(rng, 4, 2)
    opened = case.events[0]
    assert isinstance(opened, TournamentOpened)
    old = json.loads(encode_event(opened))
    del old["lines"], old["playoff"]
    decoded = decode_event(json.dumps(old))
    assert isinstance(decoded, TournamentOpened) and decoded.lines == () and decoded.playoff is False
    with pytest.raises(EventRejected, match="lines"):
        step(None, msgspec.structs.replace(opened, lines=(Line(5),)))


def test_standings_project_json_is_one_document_with_scenarios_and_lines(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.conftest import data_file
    from tracker.cli import main

    path = str(data_file("sinquefield-cup-2021.trf"))
    code = main(
        ["standings", path, "--after-round", "8", "--project", "--format", "json", "--lines", "1,3", "--playoff"]
    )
    assert code == 0
    document = json.loads(capsys.readouterr().out)  # one document: json.loads refuses trailing text
    assert document["standings"][0]["rank"] == 1
    projection = document["projection"]
    assert projection["exact"] is True and projection["remaining"] == 5 and projection["playoff"] is True
    assert projection["lines"] == [{"places": 1, "name": "1st"}, {"places": 3, "name": "top 3"}]
    for player in projection["players"]:
        assert set(player["scenarios"]) == {"rank_best", "rank_worst", "ks_min", "ks_max"}
        for games in player["scenarios"].values():
            assert len(games) == 5 and {g["round"] for g in games} == {9}
            assert all(g["result"] in PLAYED for g in games)
        assert all(player["exact"].values())
        assert player["attained"]["rank_best"] == player["rank_best"]
        assert [line["places"] for line in player["lines"]] == [1, 3]
        assert player["playoff"]["status"] in ("clinched", "eliminated", "open")


def test_scenario_ks_values_are_points_not_units() -> None:
    rng = random.Random(12)
    case = random_case(rng, 5, 3)
    p = project(case.tournament())
    for pp in p.players:
        assert isinstance(pp.reached["ks_max"].attained, Fraction)
        assert pp.reached["ks_max"].attained == pp.ks_max
