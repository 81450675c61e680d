"""The projection is a function of the state (issue 38, item j).

Reproductions: with the last seq's memory reused, the per-game effects of games marked not exact differed
from a fresh search of the same state (7 of 10 steps of the Sinquefield Cup 2021 after round 5), so two
arbiters saw two ranges for one state; the chances spread a shared rank over the places it covers, putting a
player one place past the worst rank the projection proves.
"""

from __future__ import annotations

from tests.builders import fold_all, game, opened
from tests.conftest import data_file
from tracker.core.apply import fold
from tracker.core.projection import project
from tracker.core.projection.analysis import analyse
from tracker.core.projection.chances import chances
from tracker.formats.files import read_file


def test_per_game_effects_are_the_same_with_the_last_memory_reused_as_from_a_fresh_search() -> None:
    tf = read_file(str(data_file("sinquefield-cup-2021.trf")))
    events = [tf.opened, *tf.events]
    start = 1 + 5 * 5  # after round 5: 20 games to play, beyond the per-game exact limit
    state = fold(events[:start])
    assert state is not None
    memory = analyse(state).memory
    not_exact = 0
    for k in range(start + 1, start + 11):
        state = fold(events[:k])
        assert state is not None
        reused = analyse(state, previous=memory)
        assert reused.reused, "one more result lands inside the last scenario space"
        memory = reused.memory
        fresh = analyse(state).projection
        assert reused.projection.games == fresh.games, f"after event {k}"
        assert project(state).games == fresh.games
        not_exact += sum(not g.exact for g in fresh.games)
    assert not_exact > 0, "the steps have games whose effects are not exact (the case that differed)"


def test_chances_put_a_shared_rank_at_that_rank_never_past_the_worst_rank() -> None:
    # ranked on points alone: 1 and 2 have 2½ each and no game left, so they share 1st whatever 3–4 gives
    events = [
        opened(4, tiebreaks=("PTS",)),
        game(1, 1, 2, "1/2-1/2"),
        game(2, 1, 3, "1-0"),
        game(2, 2, 4, "1-0"),
        game(3, 1, 4, "1-0"),
        game(3, 2, 3, "1-0"),
    ]
    state = fold_all(events)
    projected = {p.start_no: p for p in project(state).players}
    c = chances(state, seed=3)
    shared = 0
    for p in c.players:
        assert abs(sum(p.positions) - 1.0) < 1e-9
        worst = projected[p.start_no].rank_worst
        best = projected[p.start_no].rank_best
        outside = [k + 1 for k, mass in enumerate(p.positions) if mass > 0 and not best <= k + 1 <= worst]
        assert outside == [], (p.start_no, best, worst, p.positions)
        shared += projected[p.start_no].rank_worst == 1
    assert shared == 2, "1 and 2 share 1st in every completion"
    assert [p.positions[0] for p in c.players if p.start_no in (1, 2)] == [1.0, 1.0]
