"""Values at the edge: what decode_event refuses, and what a TRF export can never be made to write."""

from __future__ import annotations

from fractions import Fraction

import msgspec
import pytest

from tests.builders import TID, opened
from tracker.core.apply import fold
from tracker.core.errors import DecodeError
from tracker.core.events import Player, decode_event
from tracker.core.standings import format_points
from tracker.formats.trf import export_trf


@pytest.mark.parametrize("tournament", ["cup\n", "cup\r\n", "\ncup", "cup\nx", "-cup", ""])
def test_a_tournament_id_with_a_line_break_or_a_bad_start_is_refused(tournament: str) -> None:
    body = msgspec.json.encode(
        {"type": "result_voided", "id": "x", "tournament": tournament, "round": 1, "white": 1, "black": 2}
    )
    with pytest.raises(DecodeError):
        decode_event(body)


def test_fields_with_line_breaks_never_add_or_split_trf_lines() -> None:
    crafted = "1\n001    9      Injected                          "
    start = opened(4)
    players = (
        Player(start_no=1, name="A\nB", fide_id="12\n34", birth="2000\n01"),
        *start.players[1:],
    )
    state = fold([msgspec.structs.replace(start, players=players, records=(crafted[:40],))])
    assert state is not None and state.id == TID
    text = export_trf(state)
    lines = text.splitlines()
    assert sum(1 for line in lines if line.startswith("001")) == 4
    assert not any("Injected" in line and line.startswith("001") for line in lines)
    assert all("\r" not in line for line in lines)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (Fraction(59, 4), "14¾"),
        (Fraction(1, 4), "¼"),
        (Fraction(9, 2), "4½"),
        (Fraction(-5, 4), "−1¼"),
        (Fraction(3), "3"),
        (Fraction(31, 10), "3.1"),
    ],
)
def test_points_are_written_as_people_write_them_quarters_included(value: Fraction, shown: str) -> None:
    assert format_points(value) == shown
