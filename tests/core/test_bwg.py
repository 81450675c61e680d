"""``BWG`` (games won with Black), the kind added as one module of the tie-break table."""

from __future__ import annotations

import msgspec
import pytest

from tests.builders import column, fold_all, game, opened, order
from tracker.core.errors import ProjectionUnavailable
from tracker.core.events import Rules
from tracker.core.projection import project
from tracker.core.standings import standings
from tracker.protocol import column_words

# r1: 2–1 0-1 (1 wins with Black at the board), 4–3 -+ (3 wins with Black by forfeit)
# r2: 1–3 ½, 2–4 0-1 (4 wins with Black)        r3: 3–2 0-1 (2 wins with Black), 4–1 1-0
_GAMES = (
    game(1, 2, 1, "0-1"),
    game(1, 4, 3, "-+"),
    game(2, 1, 3, "1/2-1/2"),
    game(2, 2, 4, "0-1"),
    game(3, 3, 2, "0-1"),
    game(3, 4, 1, "1-0"),
)


@pytest.mark.parametrize("rules", ["2024", "2026"])
def test_only_wins_at_the_board_with_black_count_in_both_editions(rules: Rules) -> None:
    opening = msgspec.structs.replace(opened(4, tiebreaks=("PTS", "BWG")), rules=rules)
    t = fold_all([opening, *_GAMES])
    assert column(standings(t), "BWG") == {1: 1, 2: 1, 3: 0, 4: 1}


def test_bwg_breaks_a_tie_that_points_leave() -> None:
    # 1 and 3 both on 1½: 1 won at the board with Black, 3 only by forfeit, so 1 is above 3 on BWG
    t = fold_all([opened(4, tiebreaks=("PTS", "BWG", "TPN")), *_GAMES])
    table = standings(t)
    assert column(table, "PTS") == {1: 1.5, 2: 1.0, 3: 1.5, 4: 2.0}
    assert order(table) == [4, 1, 3, 2]


def test_the_pages_get_its_words_and_the_projection_refuses_it_in_one_sentence() -> None:
    (words,) = column_words(["BWG"])
    assert (words["name"], words["better"]) == ("Games won with Black", "more is better")
    with pytest.raises(ProjectionUnavailable, match=r"^the projection does not compute BWG"):
        project(fold_all([opened(4, tiebreaks=("PTS", "BWG")), *_GAMES[:2]]))
