"""C.07 editions (2024 / 2026) and the STD, TPN, RTNG, ARO and BPG codes, on crafted crosstables.

Each edition difference of :mod:`tracker.core.editions` has a crosstable
where the two editions give different values or a different order; the
regulation's own example (FIDE TEC exercise 16) shows what stays the same.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import msgspec
import pytest

from tests.builders import FOOTBALL, column, fold_all, game, opened, order, read_data
from tracker.core.errors import EventRejected, ProjectionUnavailable
from tracker.core.events import Player, Rules, TournamentOpened, decode_event, encode_event
from tracker.core.projection import project
from tracker.core.standings import standings
from tracker.formats import state_from
from tracker.formats.files import read_file
from tracker.formats.trf import parse_trf


def _rated(o: TournamentOpened, ratings: dict[int, int], rules: Rules) -> TournamentOpened:
    rated = tuple(Player(start_no=p.start_no, name=p.name, rating=ratings.get(p.start_no, 0)) for p in o.players)
    return msgspec.structs.replace(o, players=rated, rules=rules)


# 1–2 is a forfeit win for White in round 1 (2 loses by forfeit with Black); 2 and 4 finish on 1½.
#   r1: 1–2 +-, 4–3 ½   r2: 2–3 1-0, 1–4 ½   r3: 4–2 ½, 1–3 1-0
# Black games: 2 — r1 (forfeit loss), r3; 3 — r1, r2, r3; 4 — r2.  Ratings: 1 2000, 2 1500, 3 2200, 4 2000.
_GAMES = (
    game(1, 1, 2, "+-"),
    game(1, 4, 3, "1/2-1/2"),
    game(2, 2, 3, "1-0"),
    game(2, 1, 4, "1/2-1/2"),
    game(3, 4, 2, "1/2-1/2"),
    game(3, 1, 3, "1-0"),
)
_RATINGS = {1: 2000, 2: 1500, 3: 2200, 4: 2000}


def _fold(codes: tuple[str, ...], rules: Rules) -> list[int]:
    return order(standings(fold_all([_rated(opened(4, tiebreaks=codes), _RATINGS, rules), *_GAMES])))


@pytest.mark.parametrize("rules", ["2024", "2026"])
def test_a_forfeit_loss_with_black_is_not_a_bpg_game_in_either_edition(rules: Rules) -> None:
    # as the FIDE TEC server reads it (tests/core/test_tec_readings.py): games played at the board only
    t = fold_all([_rated(opened(4, tiebreaks=("PTS", "BPG")), _RATINGS, rules), *_GAMES])
    assert column(standings(t), "BPG") == {1: 0, 2: 1, 3: 3, 4: 1}


def test_the_editions_agree_on_the_order_through_bpg() -> None:
    # 2 and 4 tie on 1½ and on BPG 1 = 1 in both editions; RTNG 2000 > 1500 puts 4 first
    codes = ("PTS", "BPG", "RTNG")
    assert _fold(codes, "2024") == [1, 4, 2, 3]
    assert _fold(codes, "2026") == [1, 4, 2, 3]


def test_a_forfeit_win_with_black_is_not_a_bpg_game_in_either_edition() -> None:
    for rules in ("2024", "2026"):
        t = fold_all([_rated(opened(2, tiebreaks=("PTS", "BPG")), {}, rules), game(1, 1, 2, "-+")])
        assert column(standings(t), "BPG") == {1: 0, 2: 0}


@pytest.mark.parametrize("rules", ["2024", "2026"])
def test_a_forfeits_opponent_is_left_out_of_aro_in_both_editions(rules: Rules) -> None:
    # 1 met 2 (1500, forfeit), 4 (2000), 3 (2200): (2000 + 2200) / 2 = 2100
    # 2 met 1 (2000, forfeit), 3 (2200), 4 (2000): (2200 + 2000) / 2 = 2100
    t = fold_all([_rated(opened(4, tiebreaks=("PTS", "ARO")), _RATINGS, rules), *_GAMES])
    aro = column(standings(t), "ARO")
    assert (aro[1], aro[2]) == (2100, 2100)


def test_std_counts_results_as_one_half_zero_under_custom_scoring() -> None:
    # 3-1-0: 1 has a win and two losses (3 points), 2 three draws (3 points); STD 1 against 1½
    events = [
        opened(5, scoring=FOOTBALL, tiebreaks=("PTS", "STD", "TPN")),
        game(1, 1, 3, "1-0"),
        game(2, 4, 1, "1-0"),
        game(3, 5, 1, "1-0"),
        game(1, 2, 4, "1/2-1/2"),
        game(2, 5, 2, "1/2-1/2"),
        game(3, 2, 3, "1/2-1/2"),
    ]
    s = standings(fold_all(events))
    assert column(s, "PTS")[1] == column(s, "PTS")[2] == 3
    assert column(s, "STD")[1] == 1
    assert column(s, "STD")[2] == Fraction(3, 2)
    assert order(s).index(2) < order(s).index(1)
    # the same codes in another order: TPN before STD puts 1 first
    events[0] = opened(5, scoring=FOOTBALL, tiebreaks=("PTS", "TPN", "STD"))
    s = standings(fold_all(events))
    assert order(s).index(1) < order(s).index(2)


def test_std_is_refused_under_2024() -> None:
    with pytest.raises(EventRejected, match="2026 edition"):
        fold_all([msgspec.structs.replace(opened(4, tiebreaks=("PTS", "STD")), rules="2024")])


def test_tpn_lower_first_and_rtng_higher_first_in_any_order() -> None:
    ratings = {1: 1800, 2: 2200, 3: 2200, 4: 2000}
    tpn_first = fold_all([_rated(opened(4, tiebreaks=("PTS", "TPN", "RTNG")), ratings, "2026")])
    assert order(standings(tpn_first)) == [1, 2, 3, 4]
    rtng_first = fold_all([_rated(opened(4, tiebreaks=("PTS", "RTNG", "TPN")), ratings, "2026")])
    s = standings(rtng_first)
    assert order(s) == [2, 3, 4, 1]
    assert [row.rank for row in s.rows] == [1, 2, 3, 4]  # TPN breaks the 2200 tie: no shared rank
    assert column(s, "TPN") == {1: 1, 2: 2, 3: 3, 4: 4}
    assert column(s, "RTNG") == {1: 1800, 2: 2200, 3: 2200, 4: 2000}


def test_regulation_example_koya_and_sb_are_the_same_in_both_editions() -> None:
    # FIDE TEC exercise 16 (C.07 §9.2): KS 2, ½, ½, 1, ½, 0 and SB 9¼ 6¼ 6¼ 4¼ 3¼ 2¼, with a forfeit in round 4
    o, events, _ = read_data("fide-tec-exercise16-rr6.trf")
    for rules in ("2024", "2026"):
        first = msgspec.structs.replace(o, tiebreaks=("PTS", "SB", "KS"), rules=rules)
        s = standings(fold_all([first, *events]))
        assert s.rules == rules
        half, quarter = Fraction(1, 2), Fraction(1, 4)
        assert column(s, "KS") == {1: 2, 2: half, 3: half, 4: 1, 5: half, 6: 0}
        assert column(s, "SB") == {k: v + quarter for k, v in {1: 9, 2: 6, 3: 6, 4: 4, 5: 3, 6: 2}.items()}


def test_an_opening_event_without_rules_decodes_as_2026() -> None:
    o = opened(4)
    legacy = encode_event(o).replace(b',"rules":"2026"', b"")
    assert b"rules" not in legacy
    decoded = decode_event(legacy)
    assert isinstance(decoded, TournamentOpened)
    assert decoded.rules == "2026"


_DATED = Path("tests/data/three-one-zero.trf").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("date", "rules"), [("2025/09/01", "2024"), ("2026/02/28", "2024"), ("2026/03/01", "2026"), ("", "2026")]
)
def test_trf_start_date_chooses_the_edition(date: str, rules: Rules) -> None:
    text = _DATED.replace("042 2025/09/01", f"042 {date}" if date else "###")
    assert parse_trf(text, "dated.trf").opened.rules == rules
    assert parse_trf(text, "dated.trf", rules="2026").opened.rules == "2026"


def test_projection_ranks_by_tpn_and_rtng_and_refuses_std() -> None:
    events = [opened(4, tiebreaks=("PTS", "TPN")), game(1, 1, 4, "1-0"), game(1, 2, 3, "1/2-1/2")]
    p = project(fold_all(events))
    assert p is not None
    events[0] = opened(4, tiebreaks=("PTS", "STD"))
    with pytest.raises(ProjectionUnavailable, match="STD"):
        project(fold_all(events))


def test_read_file_rules_override_reaches_the_state() -> None:
    tf = read_file("tests/data/three-one-zero.trf")
    assert tf.opened.rules == "2024"  # 042 2025/09/01
    assert state_from(read_file("tests/data/three-one-zero.trf", rules="2026")).rules == "2026"
