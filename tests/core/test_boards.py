"""Live boards in the core: the boards kept, the standings if the games ended now, the live chances.

The properties of issue 26: a game certain on its board gives the chances of its result recorded (same
seed, same runs); no board gives today's chances; the standings "if the games ended now" are those of the
file with the likely results added (through the TRF export and back); and boards never touch the
official standings or their seq.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import count

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import berger, fold_all, game, opened, schedule_of
from tracker.core.apply import step
from tracker.core.boards import BoardSet, check_board, likely_result, wdl_from_eval
from tracker.core.crosstable import Tournament
from tracker.core.errors import EventRejected
from tracker.core.events import BoardUpdated, Evaluation, GameResult, ResultRecorded
from tracker.core.live import as_it_stands, board_stakes, live_chances
from tracker.core.projection.chances import chances
from tracker.core.projection.stakes import stakes
from tracker.core.standings import standings
from tracker.formats.trf import export_trf, parse_trf

_ids = count(1)
CERTAIN: dict[GameResult, tuple[int, int, int]] = {"1-0": (1000, 0, 0), "1/2-1/2": (0, 1000, 0), "0-1": (0, 0, 1000)}


def board(t: Tournament, r: int, w: int, b: int, *, ply: int = 20, **evaluation: object) -> BoardUpdated:
    return BoardUpdated(
        f"board-{next(_ids)}", t.id, r, w, b, ply=ply, evaluation=Evaluation(**evaluation) if evaluation else None
    )


def before_round(n: int, played: int, results: list[GameResult]) -> tuple[Tournament, list[tuple[int, int]]]:
    """An ``n``-player round robin with a schedule and its first ``played`` rounds in; the next round's pairs."""
    rounds = berger(n)
    events = [opened(n, schedule=schedule_of(rounds))]
    picks = iter(results * 100)
    for rnd in rounds[:played]:
        events += [game(rnd.number, w, b, next(picks)) for w, b in rnd.pairs]
    return fold_all(events), list(rounds[played].pairs)


def test_the_eval_model_is_symmetric_and_sums_to_a_thousand() -> None:
    for cp in (-900, -250, -100, -30, 0, 30, 100, 250, 900):
        w, d, lo = wdl_from_eval(Evaluation(cp=cp))  # type: ignore[misc]
        assert w + d + lo == 1000 and min(w, d, lo) >= 0
        assert (lo, d, w) == wdl_from_eval(Evaluation(cp=-cp))
    assert wdl_from_eval(Evaluation(cp=0)) == (119, 762, 119)
    assert wdl_from_eval(Evaluation(mate=3)) == (1000, 0, 0) and wdl_from_eval(Evaluation(mate=-1)) == (0, 0, 1000)
    assert wdl_from_eval(Evaluation(cp=500, wdl=(10, 980, 10))) == (10, 980, 10)  # the source's own wins
    assert wdl_from_eval(Evaluation()) is None
    assert likely_result((400, 400, 200)) == "1/2-1/2" and likely_result((401, 400, 199)) == "1-0"


def test_a_board_keeps_the_newest_position_and_says_what_changed() -> None:
    t, pairs = before_round(6, 2, ["1-0", "1/2-1/2"])
    w, b = pairs[0]
    boards = BoardSet()
    first = board(t, 3, w, b, ply=10, cp=20)
    assert boards.put(t, first) == "assessed"
    assert boards.put(t, first) == "none"  # a re-delivery
    assert boards.put(t, board(t, 3, w, b, ply=9, cp=900)) == "none"  # older than the one kept
    assert boards.put(t, board(t, 3, w, b, ply=12, cp=25)) == "moved"  # same estimate
    assert boards.put(t, board(t, 3, w, b, ply=14, cp=400)) == "assessed"
    assert boards.boards[(3, w, b)].likely == "1-0" and boards.boards[(3, w, b)].number == 1


def test_a_board_for_a_decided_or_impossible_game_is_refused_with_a_reason() -> None:
    t, pairs = before_round(6, 2, ["1-0"])
    done = berger(6)[0].pairs[0]
    with pytest.raises(EventRejected) as finished:
        check_board(t, board(t, 1, *done))
    assert finished.value.code == "game-finished" and "already has a result" in finished.value.reason
    with pytest.raises(EventRejected, match="schedule"):
        check_board(t, board(t, 3, pairs[0][1], pairs[0][0]))  # colours reversed: not the scheduled game
    with pytest.raises(EventRejected):
        check_board(t, board(t, 3, 1, 99))
    w, b = pairs[0]
    boards = BoardSet()
    boards.put(t, board(t, 3, w, b, cp=10))
    step(t, ResultRecorded("r", t.id, 3, w, b, "1-0"))
    assert boards.prune(t) == [(3, w, b)] and not boards.boards


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(4, 9),
    played=st.integers(1, 2),
    history=st.lists(st.sampled_from(["1-0", "0-1", "1/2-1/2"]), min_size=1, max_size=5),
    certain=st.lists(st.sampled_from(["1-0", "0-1", "1/2-1/2"]), min_size=1, max_size=5),
    seed=st.integers(0, 2**31),
)
def test_games_certain_on_their_boards_give_the_chances_and_standings_of_their_results(
    n: int, played: int, history: list[GameResult], certain: list[GameResult], seed: int
) -> None:
    t, pairs = before_round(n, played, history)
    official = standings(t)
    boards = BoardSet()
    assumed = list(zip(pairs, certain, strict=False))
    for (w, b), result in assumed:
        boards.put(t, board(t, played + 1, w, b, wdl=CERTAIN[result]))
    live = as_it_stands(t, boards)
    # the official state is untouched: same standings, same seq
    assert standings(t) == official and t.seq == official.seq
    with_results = t.scenario()
    for (w, b), result in assumed:
        step(with_results, ResultRecorded(f"x{w}-{b}", t.id, played + 1, w, b, result))
    # the live chances with the games certain on their boards are the chances with their results recorded
    from tracker.core.live import board_estimates

    recorded = chances(with_results, seed=seed, runs=400)
    assert chances(t, seed=seed, runs=400, boards=board_estimates(boards)) == replace(recorded, seq=t.seq)
    # "if the games ended now" is what tracker standings reads from the file with those results added
    text = export_trf(with_results)
    back = parse_trf(text, "live.trf")
    folded = fold_all([back.opened, *back.events])
    assert [(r.rank, r.start_no, r.points, r.tiebreaks) for r in live.standings.rows] == [
        (r.rank, r.start_no, r.points, r.tiebreaks) for r in standings(folded).rows
    ]
    assert len(live.results) == len(assumed)


def test_without_boards_the_live_chances_are_todays() -> None:
    t, _ = before_round(8, 4, ["1-0", "1/2-1/2", "0-1"])
    assert live_chances(t, BoardSet(), runs=500) == chances(t, seed=t.seq, runs=500)
    assert as_it_stands(t, BoardSet()).standings.rows == standings(t).rows


def test_a_board_without_an_evaluation_leaves_its_game_unplayed() -> None:
    t, pairs = before_round(6, 2, ["1-0"])
    boards = BoardSet()
    assert boards.put(t, board(t, 3, *pairs[0])) == "moved"
    live = as_it_stands(t, boards)
    assert live.results == () and live.moves == ()


def test_the_stakes_sentence_says_where_the_board_stands() -> None:
    t, _ = before_round(4, 2, ["1-0", "1-0", "0-1", "1/2-1/2"])
    k = stakes(t)
    deciding = [(g, o) for g in k.games for o in g.outcomes if o.stakes and o.result == "1-0" and g.round is not None]
    assert deciding, "the last round of this 4-player event decides something"
    g, o = deciding[0]
    boards = BoardSet()
    boards.put(t, board(t, g.round, g.white, g.black, cp=310))  # type: ignore[arg-type]
    names = {p.start_no: p.name for p in t.opened.players}
    (said,) = board_stakes(k, boards, names)
    assert said.text.startswith(f"P{g.white} is winning on board ")
    assert "(+3.1): if it holds, " + o.stakes[0].text in said.text
