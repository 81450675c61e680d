"""Big TRF files: a whole round robin is read in one batch, and a huge damaged file is refused early."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.trf_read import round_robin_trf
from tracker.core.apply import step
from tracker.core.errors import FormatError
from tracker.core.reference import incremental_sums, rebuild_sums
from tracker.core.standings import standings
from tracker.formats import state_from
from tracker.formats.files import read_file
from tracker.formats.trf import parse_trf


def test_a_60_player_round_robin_read_in_one_batch_equals_folding_event_by_event() -> None:
    tf = parse_trf(round_robin_trf(60, seed=3), "rr60.trf")
    assert len(tf.events) == 60 * 59 // 2
    batched = state_from(tf)
    one_by_one, _ = step(None, tf.opened)
    for event in tf.events:
        one_by_one, _ = step(one_by_one, event)
    assert incremental_sums(batched) == incremental_sums(one_by_one) == rebuild_sums(one_by_one)
    table = standings(batched)
    assert table == standings(one_by_one)
    assert not table.provisional
    assert sum(row.points for row in table.rows) == 60 * 59 // 2


def test_the_bench_file_has_the_points_column_the_results_add_up_to() -> None:
    # parse_trf compares every points column with the folded score: a wrong generator would fail here
    text = round_robin_trf(11, seed=5)
    table = standings(state_from(parse_trf(text, "rr11.trf")))
    assert len(table.rows) == 11
    assert all(row.games == 10 for row in table.rows)


def test_five_megabytes_of_one_repeated_player_line_are_refused_at_line_3(tmp_path: Path) -> None:
    line = "001    1 m    Repeated, Player                  2700 NOR             1990/01/01  0.0    1"
    path = tmp_path / "repeated.trf"
    path.write_text("012 Repeated\n" + (line + "\n") * (5_000_000 // len(line)), encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        read_file(str(path))
    assert caught.value.line == 3
    assert "starting rank 1 is already used on line 2" in caught.value.problem


def test_more_than_500_players_are_refused_at_the_501st_player_line() -> None:
    text = round_robin_trf(501)
    with pytest.raises(FormatError) as caught:
        parse_trf(text, "rr501.trf")
    assert caught.value.line == 2 + 501  # 012, XXR, then player 501
    assert "more than 500 players" in caught.value.problem
