"""The tie-break rules, one small hand-worked crosstable per rule.

Every expected value is worked out by hand in the test's comment, from
DESIGN.md §2 (FIDE C.07, 2026; the FIDE TEC tie-break server's readings).
Each folded tournament is also checked against the from-scratch sums of
:mod:`tracker.core.reference`, so a test fails when the incremental state and
the rule disagree, whichever is wrong.

Notation: ``1–4 1-0`` is start number 1 (White) beating 4.  "G" is the
number of games of the maximum possible score; the Koya line is
``win × G / 2`` (plus ``limit × win / 2``), and the test is ``≥``.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction

import msgspec
import pytest

from tests.builders import (
    FOOTBALL,
    berger,
    bye,
    column,
    correct,
    fold_all,
    game,
    opened,
    order,
    pts,
    ranks,
    read_data,
    void,
    withdraw,
)
from tracker.core.apply import QualificationChange, apply, step
from tracker.core.crosstable import Tournament
from tracker.core.errors import EventRejected, InvalidPairing, UnknownPlayer, UnknownTournament
from tracker.core.events import DEFAULT_TIEBREAKS, Event, ResultRecorded, Scoring
from tracker.core.reference import incremental_sums, rebuild_standings, rebuild_sums
from tracker.core.standings import Standings, standings

HALF = Fraction(1, 2)


def settle(events: Sequence[Event]) -> tuple[Tournament, Standings]:
    """Fold ``events``; check the incremental sums against a rebuild; return the state and its standings."""
    t = fold_all(events)
    live, rebuilt = incremental_sums(t), rebuild_sums(t)
    assert live == rebuilt, "\n".join(live.differences(rebuilt))
    s = standings(t)
    assert s == rebuild_standings(t)
    return t, s


def values(*pairs: tuple[int, str | int]) -> dict[int, Fraction]:
    return {start_no: pts(str(v)) for start_no, v in pairs}


def by_start(**kwargs: str | int) -> dict[int, Fraction]:
    """``by_start(p1="3½", p2=0)`` → ``{1: 7/2, 2: 0}``."""
    return {int(k[1:]): pts(str(v)) for k, v in kwargs.items()}


# -- the line ---------------------------------------------------------------------


def test_score_exactly_at_fifty_percent_qualifies() -> None:
    # 2 players, one game, a draw.  G = 1, line ½; both have ½ ≥ ½, so each
    # qualifies for the other and KS = ½ each (a strict > would give 0).
    _, s = settle([opened(2), game(1, 1, 2, "1/2-1/2")])
    assert column(s, "KS") == by_start(p1="½", p2="½")
    assert not s.provisional


def test_odd_round_robin_games_basis_and_rounds_basis_give_different_koya() -> None:
    # 3 players, 3 rounds, one free round each (zero byes).
    #   R1 1–2 1-0 (3 free)   R2 3–1 1-0 (2 free)   R3 2–3 ½ (1 free)
    # Scores: P1 1, P2 ½, P3 1½.
    # basis games:  G = n−1 = 2, line 1   → P1, P3 qualify.
    #   KS: P1 = vs3 0 = 0;  P2 = vs1 0 + vs3 ½ = ½;  P3 = vs1 1 = 1.
    # basis rounds: G = rounds = 3, line 1½ → only P3 qualifies.
    #   KS: P1 = vs3 0 = 0;  P2 = vs3 ½ = ½;  P3 = 0.
    def events() -> list[Event]:
        return [
            game(1, 1, 2, "1-0"),
            bye(1, 3),
            game(2, 3, 1, "1-0"),
            bye(2, 2),
            game(3, 2, 3, "1/2-1/2"),
            bye(3, 1),
        ]

    _, by_games = settle([opened(3, basis="games"), *events()])
    _, by_rounds = settle([opened(3, basis="rounds"), *events()])
    assert column(by_games, "PTS") == by_start(p1=1, p2="½", p3="1½")
    assert column(by_games, "KS") == by_start(p1=0, p2="½", p3=1)
    assert column(by_rounds, "KS") == by_start(p1=0, p2="½", p3=0)
    assert (by_games.basis, by_rounds.basis) == ("games", "rounds")


def test_double_round_robin_counts_both_games_against_a_qualifier() -> None:
    # 3 players, double round robin: G = (n−1) × 2 = 4, line 2.
    #   1–2: 1-0 and ½-½    1–3: 1-0 and 1-0    2–3: 1-0 and ½-½
    # Scores: P1 1+½+1+1 = 3½;  P2 0+½+1+½ = 2;  P3 0+0+0+½ = ½.
    # Qualifiers: P1 (3½), P2 (2 ≥ 2).
    # KS: P1 = vs2 (1 + ½) = 1½ — both games, once each;
    #     P2 = vs1 (0 + ½) = ½;  P3 = vs1 0 + vs2 (0 + ½) = ½.
    table = berger(3, cycles=2)
    results = {
        frozenset((1, 2)): ["1-0", "1/2-1/2"],
        frozenset((1, 3)): ["1-0", "1-0"],
        frozenset((2, 3)): ["1-0", "1/2-1/2"],
    }
    events: list[Event] = [opened(3, format="double")]
    for rnd in table:
        for w, b in rnd.pairs:
            result = results[frozenset((w, b))].pop(0)
            # results are given from the lower start number's point of view
            if w > b:
                result = {"1-0": "0-1", "0-1": "1-0"}.get(result, result)
            events.append(game(rnd.number, w, b, result))  # type: ignore[arg-type]
    _, s = settle(events)
    assert column(s, "PTS") == by_start(p1="3½", p2=2, p3="½")
    assert column(s, "KS") == by_start(p1="1½", p2="½", p3="½")


def test_forfeit_win_against_a_qualifier_counts_toward_koya() -> None:
    # 4 players, G = 3, line 1½.
    #   R1 1–4 1-0, 2–3 ½   R2 4–3 0-1, 1–2 -+ (2 wins by forfeit)   R3 2–4 1-0, 3–1 ½
    # Scores: P1 1+0+½ = 1½;  P2 ½+1+1 = 2½ (the forfeit counts);  P3 ½+1+½ = 2;  P4 0.
    # Qualifiers: P1 (1½, exactly on the line), P2, P3.
    # KS: P2 = vs3 ½ + vs1 forfeit 1 = 1½ (without the forfeit it would be ½);
    #     P1 = vs2 0 + vs3 ½ = ½;  P3 = vs2 ½ + vs1 ½ = 1;  P4 = 0.
    _, s = settle(
        [
            opened(4),
            game(1, 1, 4, "1-0"),
            game(1, 2, 3, "1/2-1/2"),
            game(2, 4, 3, "0-1"),
            game(2, 1, 2, "-+"),
            game(3, 2, 4, "1-0"),
            game(3, 3, 1, "1/2-1/2"),
        ]
    )
    assert column(s, "PTS") == by_start(p1="1½", p2="2½", p3=2, p4=0)
    assert column(s, "KS") == by_start(p1="½", p2="1½", p3=1, p4=0)


def test_double_forfeit_is_a_loss_and_a_game_for_both() -> None:
    # 4 players.  R1 1–4 1-0, 2–3 1-0   R2 4–3 ½, 1–2 --   R3 2–4 1-0, 3–1 0-1
    # The double forfeit gives 0 to both and is a game for both: everybody
    # has 3 games, so the round robin is complete (not provisional).
    # Scores: P1 1+0+1 = 2;  P2 1+0+1 = 2;  P3 0+½+0 = ½;  P4 0+½+0 = ½.
    # Line 1½: P1 and P2 qualify.  KS: P1 = vs2 0 = 0;  P2 = vs1 0 = 0;
    # P3 = vs2 0 + vs1 0 = 0;  P4 = vs1 0 + vs2 0 = 0.
    # SB: P1 = 1×½ (P4) + 0 (P2) + 1×½ (P3) = 1;  P2 = 1×½ + 0 + 1×½ = 1.
    t, s = settle(
        [
            opened(4),
            game(1, 1, 4, "1-0"),
            game(1, 2, 3, "1-0"),
            game(2, 4, 3, "1/2-1/2"),
            game(2, 1, 2, "--"),
            game(3, 2, 4, "1-0"),
            game(3, 3, 1, "0-1"),
        ]
    )
    assert not s.provisional
    assert [s.row(p).games for p in (1, 2, 3, 4)] == [3, 3, 3, 3]
    assert column(s, "PTS") == by_start(p1=2, p2=2, p3="½", p4="½")
    assert column(s, "KS") == by_start(p1=0, p2=0, p3=0, p4=0)
    assert column(s, "SB") == by_start(p1=1, p2=1, p3="¼", p4="¼")
    assert column(s, "WON") == by_start(p1=2, p2=2, p3=0, p4=0)
    assert t.entries[0][2].code == t.entries[1][2].code == "-"


def test_half_point_bye_counts_in_own_score_but_in_nobodys_koya() -> None:
    # 3 players, G = 2, line 1.
    #   R1 1–2 1-0, P3 half-point bye   R2 2–3 ½, P1 free (zero)   R3 3–1 0-1, P2 free
    # Scores: P1 1+0+1 = 2;  P2 0+½+0 = ½;  P3 ½ (bye) + ½ + 0 = 1.
    # Qualifiers: P1; P3 only thanks to the bye's ½ (1 ≥ 1).
    # KS: P1 = vs3 1 = 1;  P2 = vs1 0 + vs3 ½ = ½ (P3 qualifies);
    #     P3 = vs1 0 = 0 — the bye's ½ is not a point scored against anyone.
    # SB (SB opponents' scores drop trailing VUR byes, but P3's bye leads):
    #     P1 = 1×½ + 1×1 = 1½;  P2 = ½×1 = ½;  P3 = ½×½ = ¼.
    _, s = settle(
        [
            opened(3),
            game(1, 1, 2, "1-0"),
            bye(1, 3, "half"),
            game(2, 2, 3, "1/2-1/2"),
            bye(2, 1),
            game(3, 3, 1, "0-1"),
            bye(3, 2),
        ]
    )
    assert column(s, "PTS") == by_start(p1=2, p2="½", p3=1)
    assert column(s, "KS") == by_start(p1=1, p2="½", p3=0)
    assert column(s, "SB") == by_start(p1="1½", p2="½", p3="¼")


def test_trailing_half_point_bye_is_zeroed_in_opponents_sonneborn_berger() -> None:
    # 3 players.  R1 1–2 ½, P3 free   R2 2–3 1-0, P1 free   R3 3–1 0-1, P2 half-point bye
    # P2's bye comes after P2's last game: a trailing VUR, so P2's score as an
    # SB opponent is ½+1 = 1½ without the bye's ½ (own score 2).
    # SB: P1 = ½×1½ (P2 adjusted) + 1×0 (P3) = ¾;  P3 = 0.
    #     P2 = ½×P1 (1½) + 1×P3 (0) = ¾.
    _, s = settle(
        [
            opened(3),
            game(1, 1, 2, "1/2-1/2"),
            bye(1, 3),
            game(2, 2, 3, "1-0"),
            bye(2, 1),
            game(3, 3, 1, "0-1"),
            bye(3, 2, "half"),
        ]
    )
    assert column(s, "PTS") == by_start(p1="1½", p2=2, p3=0)
    assert column(s, "SB") == by_start(p1="¾", p2="¾", p3=0)


def test_player_who_never_had_an_opponent_lowers_the_maximum() -> None:
    # 4 players; P4 never shows up: zero byes for P4 and for P4's scheduled
    # opponent in every round.  Every player has an entry in every round, so
    # the event is over, with G = (n−1) − 1 never-paired player = 2, line 1.
    #   R1 2–3 ½   R2 1–2 1-0   R3 3–1 ½
    # Scores: P1 1½;  P2 ½;  P3 1;  P4 0.   Qualifiers: P1, P3 (1 ≥ 1).
    # KS: P1 = vs3 ½ = ½;  P2 = vs3 ½ = ½;  P3 = vs1 ½ = ½;  P4 = 0.
    # (With G = 3, line 1½, only P1 would qualify and P1's KS would be 0.)
    _, s = settle(
        [
            opened(4),
            bye(1, 1),
            bye(1, 4),
            game(1, 2, 3, "1/2-1/2"),
            bye(2, 4),
            bye(2, 3),
            game(2, 1, 2, "1-0"),
            bye(3, 2),
            bye(3, 4),
            game(3, 3, 1, "1/2-1/2"),
        ]
    )
    assert not s.provisional
    assert column(s, "KS") == by_start(p1="½", p2="½", p3="½", p4=0)


# -- limits and scoring -------------------------------------------------------------

#: 4 players, G = 3:  1–2 ½, 1–3 1-0, 1–4 1-0, 2–3 0-1, 2–4 1-0, 3–4 ½
#: Scores: P1 2½;  P2 ½+0+1 = 1½;  P3 0+1+½ = 1½;  P4 0+0+½ = ½.
LIMITS_RESULTS: list[tuple[int, int, int, str]] = [
    (1, 1, 4, "1-0"),
    (1, 2, 3, "0-1"),
    (2, 4, 3, "1/2-1/2"),
    (2, 1, 2, "1/2-1/2"),
    (3, 2, 4, "1-0"),
    (3, 3, 1, "0-1"),
]


def limits_events(**kwargs: object) -> list[Event]:
    return [
        opened(4, **kwargs),  # type: ignore[arg-type]
        *(game(r, w, b, res) for r, w, b, res in LIMITS_RESULTS),  # type: ignore[arg-type]
    ]


def test_koya_limits_move_the_line_up_and_down() -> None:
    # Scores P1 2½, P2 1½, P3 1½, P4 ½ (see LIMITS_RESULTS).
    # KS      line 1½:  P1, P2, P3 qualify.
    #   P1 = vs2 ½ + vs3 1 = 1½;  P2 = vs1 ½ + vs3 0 = ½;  P3 = vs2 1 + vs1 0 = 1;  P4 = vs2 0 + vs3 ½ = ½.
    # KS/L+1  line 2:   only P1.   P1 = 0;  P2 = ½;  P3 = 0;  P4 = 0.
    # KS/L+2  line 2½:  only P1 (2½ ≥ 2½): same as KS/L+1.
    # KS/L-1  line 1:   P1, P2, P3: same as KS.
    # KS/L-2  line ½:   everybody: KS = own score (2½, 1½, 1½, ½).
    codes = ("KS", "KS/L+1", "KS/L+2", "KS/L-1", "KS/L-2")
    _, s = settle(limits_events(tiebreaks=codes))
    assert column(s, "KS") == by_start(p1="1½", p2="½", p3=1, p4="½")
    assert column(s, "KS/L+1") == by_start(p1=0, p2="½", p3=0, p4=0)
    assert column(s, "KS/L+2") == column(s, "KS/L+1")
    assert column(s, "KS/L-1") == column(s, "KS")
    assert column(s, "KS/L-2") == by_start(p1="2½", p2="1½", p3="1½", p4="½")


def test_three_one_zero_scoring_scales_the_line_and_its_steps_with_the_win() -> None:
    # 4 players, 3-1-0.  1–2 ½, 1–3 0-1, 1–4 1-0, 2–3 1-0, 2–4 ½, 3–4 0-1
    # Scores: P1 1+0+3 = 4;  P2 1+3+1 = 5;  P3 3+0+0 = 3;  P4 0+1+3 = 4.
    # KS line = 3 × 3 / 2 = 4½: only P2 qualifies.
    #   KS: P1 = vs2 1;  P2 = 0;  P3 = vs2 0;  P4 = vs2 1.
    # KS/L-1: a step is half a win (1½ points), line 3: everybody qualifies,
    #   KS/L-1 = own score (4, 5, 3, 4).  With a ½-point step (line 4) P3
    #   would not qualify and P2 would have 1+1 = 2 instead of 5.
    _, s = settle(
        [
            opened(4, scoring=FOOTBALL, tiebreaks=("KS", "KS/L-1")),
            game(1, 1, 4, "1-0"),
            game(1, 2, 3, "1-0"),
            game(2, 4, 3, "1-0"),
            game(2, 1, 2, "1/2-1/2"),
            game(3, 2, 4, "1/2-1/2"),
            game(3, 3, 1, "1-0"),
        ]
    )
    assert column(s, "PTS") == by_start(p1=4, p2=5, p3=3, p4=4)
    assert column(s, "KS") == by_start(p1=1, p2=0, p3=0, p4=1)
    assert column(s, "KS/L-1") == by_start(p1=4, p2=5, p3=3, p4=4)


def test_custom_forfeit_points_count_in_koya() -> None:
    # 2 players, a forfeit worth only 1 when a win is 3 (Scoring.forfeit_win).
    # G = 1, line 1½: P1 (forfeit win, 1 point) does not qualify; P2 has 0.
    # KS/L-1 (line 0): both qualify; P1 scored 1 against P2.
    scoring = Scoring(win=Decimal(3), draw=Decimal(1), forfeit_win=Decimal(1))
    _, s = settle([opened(2, scoring=scoring, tiebreaks=("KS", "KS/L-1")), game(1, 1, 2, "+-")])
    assert column(s, "PTS") == by_start(p1=1, p2=0)
    assert column(s, "KS") == by_start(p1=0, p2=0)
    assert column(s, "KS/L-1") == by_start(p1=1, p2=0)


# -- provisional bases ---------------------------------------------------------------

#: 4 players, Berger rounds  R1 1–4, 2–3   R2 4–3, 1–2   R3 2–4, 3–1.
#: Round 1 is in, round 2 half played: 1–4 1-0, 2–3 ½, 4–3 ½.
PROVISIONAL = [(1, 1, 4, "1-0"), (1, 2, 3, "1/2-1/2"), (2, 4, 3, "1/2-1/2")]
#: The rest: 1–2 1-0, 2–4 1-0, 3–1 ½.
REST = [(2, 1, 2, "1-0"), (3, 2, 4, "1-0"), (3, 3, 1, "1/2-1/2")]


@pytest.mark.parametrize(
    ("provisional", "expected"),
    [
        # State: P1 1 (1 game), P2 ½ (1), P3 1 (2), P4 ½ (2).
        # percentage: own games. P1 1 ≥ ½ ✓, P2 ½ ≥ ½ ✓, P3 1 ≥ 1 ✓, P4 ½ < 1 ✗.
        #   KS: P1 = vs4 ✗ 0;  P2 = vs3 ½;  P3 = vs2 ½ (vs4 ✗);  P4 = vs1 0 + vs3 ½ = ½.
        ("percentage", {1: 0, 2: HALF, 3: HALF, 4: HALF}),
        # max-games: G = 2, line 1.  P1 ✓, P2 ✗, P3 ✓, P4 ✗.
        #   KS: P1 = 0;  P2 = vs3 ½;  P3 = 0;  P4 = vs1 0 + vs3 ½ = ½.
        ("max-games", {1: 0, 2: HALF, 3: 0, 4: HALF}),
        # rounds: 1 completed round, line ½: everybody qualifies.
        #   KS: P1 = vs4 1;  P2 = vs3 ½;  P3 = vs2 ½ + vs4 ½ = 1;  P4 = 0 + ½ = ½.
        ("rounds", {1: 1, 2: HALF, 3: 1, 4: HALF}),
    ],
)
def test_provisional_bases_give_different_koya_mid_round(provisional: str, expected: dict[int, Fraction]) -> None:
    events: list[Event] = [opened(4, provisional=provisional)]  # type: ignore[arg-type]
    events += [game(r, w, b, res) for r, w, b, res in PROVISIONAL]  # type: ignore[arg-type]
    _, s = settle(events)
    assert s.provisional and s.basis == provisional and s.max_basis == "games"
    assert column(s, "KS") == expected


@pytest.mark.parametrize("provisional", ["percentage", "max-games", "rounds"])
def test_every_provisional_basis_ends_at_the_final_koya(provisional: str) -> None:
    # Final scores: P1 1+1+½ = 2½;  P2 ½+0+1 = 1½;  P3 ½+½+½ = 1½;  P4 0+½+0 = ½.
    # Line 1½ (G = 3): P1, P2, P3 qualify.
    # KS: P1 = vs2 1 + vs3 ½ = 1½;  P2 = vs3 ½ + vs1 0 = ½;  P3 = vs2 ½ + vs1 ½ = 1;
    #     P4 = vs1 0 + vs3 ½ + vs2 0 = ½.
    events: list[Event] = [opened(4, provisional=provisional)]  # type: ignore[arg-type]
    events += [game(r, w, b, res) for r, w, b, res in PROVISIONAL + REST]  # type: ignore[arg-type]
    _, s = settle(events)
    assert not s.provisional and s.basis == "games"
    assert column(s, "KS") == by_start(p1="1½", p2="½", p3=1, p4="½")


def test_percentage_basis_of_a_finished_player_already_equals_the_final_value() -> None:
    # Under `percentage`, a player's line depends on their own games only: once
    # P3 has played all three games (1–4 1-0, 2–3 ½, 4–3 ½, 3–1 ½), P3's
    # qualification is final (1½ ≥ 1½) although 1–2 and 2–4 are pending.
    events: list[Event] = [opened(4)]
    events += [game(r, w, b, res) for r, w, b, res in [*PROVISIONAL, (3, 3, 1, "1/2-1/2")]]  # type: ignore[arg-type]
    t, s = settle(events)
    assert s.provisional
    assert t.qualified[0][2] is True
    # P3's opponents already count P3: P4 = vs1 0 + vs3 ½ = ½;  P2 = vs3 ½.
    assert column(s, "KS")[4] == column(s, "KS")[2] == HALF


def test_round_with_requested_byes_counts_as_completed_under_rounds_basis() -> None:
    # 4 players, provisional basis `rounds`.  R1: 1–4 1-0; P2 and P3 take
    # half-point byes instead of their game.  Every player has a result in
    # round 1, so 1 round is completed and the line is ½.
    # P4 (0) does not qualify, so P1's KS = 0.  (Counting 0 completed rounds,
    # the line is 0, everybody qualifies and P1's KS is 1.)
    _, s = settle([opened(4, provisional="rounds"), game(1, 1, 4, "1-0"), bye(1, 2, "half"), bye(1, 3, "half")])
    assert column(s, "KS")[1] == 0


# -- standings order -------------------------------------------------------------------


def test_players_tied_on_everything_share_a_rank() -> None:
    # 3 players:  1–2 ½, 1–3 1-0, 2–3 1-0 (byes omitted).  Scores 1½, 1½, 0.
    # P1 and P2: DE ½ each (tied, value 0);  SB ½×1½ + 1×0 = ¾ each;
    # KS (line 1) = vs the other ½ each;  WON 1 each.  Ranks 1, 1, 3.
    _, s = settle([opened(3), game(1, 1, 2, "1/2-1/2"), game(2, 3, 1, "0-1"), game(3, 2, 3, "1-0")])
    assert ranks(s) == {1: 1, 2: 1, 3: 3}
    assert order(s) == [1, 2, 3]
    assert column(s, "DE") == by_start(p1=0, p2=0, p3=0)
    assert column(s, "SB") == by_start(p1="¾", p2="¾", p3=0)


def de_against_sb(tiebreaks: Sequence[str] = DEFAULT_TIEBREAKS) -> list[Event]:
    """4 players:  1–2 0-1, 1–3 1-0, 1–4 ½, 2–3 0-1, 2–4 ½, 3–4 1-0.

    Scores: P1 0+1+½ = 1½;  P2 1+0+½ = 1½;  P3 0+1+1 = 2;  P4 ½+½+0 = 1.
    P1 and P2 tie; P2 won their game, but P1 has the better SB.
    """
    return [
        opened(4, tiebreaks=tiebreaks),
        game(1, 1, 4, "1/2-1/2"),
        game(1, 2, 3, "0-1"),
        game(2, 4, 3, "0-1"),
        game(2, 1, 2, "0-1"),
        game(3, 2, 4, "1/2-1/2"),
        game(3, 3, 1, "0-1"),
    ]


def test_direct_encounter_breaks_a_tie_before_sonneborn_berger() -> None:
    # Scores (see de_against_sb): P1 1½, P2 1½, P3 2, P4 1.
    # P1 and P2 tie on 1½; P2 won their game: DE P2 = 1, P1 = 2 (others 0).
    # SB would have it the other way: P1 = 1×2 (P3) + ½×1 (P4) = 2½;
    #                                 P2 = 1×1½ (P1) + ½×1 (P4) = 2.
    _, s = settle(de_against_sb())
    assert column(s, "PTS") == by_start(p1="1½", p2="1½", p3=2, p4=1)
    assert column(s, "DE") == by_start(p1=2, p2=1, p3=0, p4=0)
    assert column(s, "SB") == by_start(p1="2½", p2=2, p3="2½", p4="1½")
    assert order(s) == [3, 2, 1, 4]
    assert ranks(s) == {3: 1, 2: 2, 1: 3, 4: 4}


@pytest.mark.parametrize(
    ("codes", "expected"),
    [
        # de_against_sb's crosstable.  KS (line 1½: P1, P2, P3 qualify): P1 = vs2 0 + vs3 1 = 1;
        # P2 = vs1 1 + vs3 0 = 1 — KS does not separate them.
        (("DE", "SB", "KS"), [3, 2, 1, 4]),  # DE first: P2 won the game
        (("SB", "DE", "KS"), [3, 1, 2, 4]),  # SB first: P1 2½ > P2 2
        (("KS", "SB", "DE"), [3, 1, 2, 4]),  # KS ties, then SB
        (("KS", "DE", "SB"), [3, 2, 1, 4]),  # KS ties, then DE
    ],
)
def test_tiebreak_order_is_configurable(codes: tuple[str, ...], expected: list[int]) -> None:
    _, s = settle(de_against_sb(codes))
    assert s.codes == codes
    assert order(s) == expected
    assert column(s, "KS")[1] == column(s, "KS")[2] == 1


def test_direct_encounter_is_reapplied_inside_subgroups_still_tied() -> None:
    # 6 players; P1–P4 tie on 2 points, P5 and P6 on 3½.
    #   among 1–4:  1–2 0-1, 1–3 1-0, 1–4 1-0, 2–3 ½, 2–4 ½, 3–4 ½
    #   with 5, 6:  5 beats 1, 2, 4;  6 beats 1, 2, 3;  3 beats 5;  4 beats 6;  5–6 ½
    # Scores: P1 2, P2 2, P3 ½+½+1 = 2, P4 ½+½+1 = 2, P5 3½, P6 3½.
    # DE in {1,2,3,4}: P1 2, P2 1+½+½ = 2, P3 0+½+½ = 1, P4 1 → {1,2} ahead of {3,4}.
    #   Re-applied to {1,2}: P2 beat P1 → P2 place 1, P1 place 2.
    #   Re-applied to {3,4}: drawn → both place 3.
    # DE in {5,6}: drawn → the group stays tied, value 0.
    # SB: P1 = 1×2 + 1×2 = 4;  P2 = 1×2 + ½×2 + ½×2 = 4;
    #     P3 = 1×3½ + ½×2 + ½×2 = 5½ = P4;  P5 = 3×2 + ½×3½ = 7¾ = P6.
    # KS (G 5, line 2½: P5, P6): P3 = vs5 1, P4 = vs6 1;  P5 = P6 = ½.  WON 1, 1 and 3, 3.
    # So P5 and P6 share rank 1, P3 and P4 share rank 5.
    results = {
        (1, 2): "0-1",
        (1, 3): "1-0",
        (1, 4): "1-0",
        (2, 3): "1/2-1/2",
        (2, 4): "1/2-1/2",
        (3, 4): "1/2-1/2",
        (1, 5): "0-1",
        (2, 5): "0-1",
        (4, 5): "0-1",
        (1, 6): "0-1",
        (2, 6): "0-1",
        (3, 6): "0-1",
        (3, 5): "1-0",
        (4, 6): "1-0",
        (5, 6): "1/2-1/2",
    }
    flip = {"1-0": "0-1", "0-1": "1-0", "1/2-1/2": "1/2-1/2"}
    events: list[Event] = [opened(6)]
    for rnd in berger(6):
        for w, b in rnd.pairs:
            res = results[(w, b)] if (w, b) in results else flip[results[(b, w)]]
            events.append(game(rnd.number, w, b, res))  # type: ignore[arg-type]
    _, s = settle(events)
    assert column(s, "PTS") == by_start(p1=2, p2=2, p3=2, p4=2, p5="3½", p6="3½")
    assert column(s, "DE") == by_start(p1=2, p2=1, p3=3, p4=3, p5=0, p6=0)
    assert column(s, "SB") == by_start(p1=4, p2=4, p3="5½", p4="5½", p5="7¾", p6="7¾")
    assert ranks(s) == {5: 1, 6: 1, 2: 3, 1: 4, 3: 5, 4: 5}
    assert order(s) == [5, 6, 2, 1, 3, 4]


def test_direct_encounter_in_double_round_robin_averages_the_two_games() -> None:
    # 3 players, double round robin.
    #   1–2: 1-0 and ½   1–3: ½ and ½   2–3: 1-0 and 1-0
    # Scores: P1 1½ + 1 = 2½;  P2 ½ + 2 = 2½;  P3 1 + 0 = 1.
    # DE between P1 and P2: P1 (1 + ½)/2 = ¾, P2 (0 + ½)/2 = ¼ → P1 place 1, P2 place 2.
    results = {(1, 2): ["1-0", "1/2-1/2"], (1, 3): ["1/2-1/2", "1/2-1/2"], (2, 3): ["1-0", "1-0"]}
    flip = {"1-0": "0-1", "0-1": "1-0", "1/2-1/2": "1/2-1/2"}
    events: list[Event] = [opened(3, format="double")]
    for rnd in berger(3, cycles=2):
        for w, b in rnd.pairs:
            res = results[(w, b)].pop(0) if (w, b) in results else flip[results[(b, w)].pop(0)]
            events.append(game(rnd.number, w, b, res))  # type: ignore[arg-type]
    _, s = settle(events)
    assert column(s, "PTS") == by_start(p1="2½", p2="2½", p3=1)
    assert column(s, "DE") == by_start(p1=1, p2=2, p3=0)
    assert order(s) == [1, 2, 3]


def test_won_counts_only_games_won_at_the_board() -> None:
    # 3 players.  R1 1–2 1-0, P3 full-point bye   R2 3–1 -+ (P1 wins by forfeit), P2 free
    #             R3 2–3 1-0, P1 free
    # Points: P1 2, P2 1, P3 1 (the bye).  WON: P1 1 (the forfeit does not
    # count), P2 1, P3 0 (nor does the full-point bye).
    _, s = settle(
        [
            opened(3),
            game(1, 1, 2, "1-0"),
            bye(1, 3, "full"),
            game(2, 3, 1, "-+"),
            bye(2, 2),
            game(3, 2, 3, "1-0"),
            bye(3, 1),
        ]
    )
    assert column(s, "PTS") == by_start(p1=2, p2=1, p3=1)
    assert column(s, "WON") == by_start(p1=1, p2=1, p3=0)


def test_won_ignores_a_pairing_allocated_bye() -> None:
    # 3 players, R1: P1 has a pairing-allocated bye (1 point), 2–3 ½.
    # WON: 0 for everybody (the FIDE TEC server counts a win only with an opponent).
    _, s = settle([opened(3), bye(1, 1, "pab"), game(1, 2, 3, "1/2-1/2")])
    assert column(s, "PTS") == by_start(p1=1, p2="½", p3="½")
    assert column(s, "WON") == by_start(p1=0, p2=0, p3=0)


def test_won_counts_a_short_game() -> None:
    # TRF "W" (a win in a game that lasted less than a move) is still a game
    # played at the board for the FIDE TEC server: WON 1.
    _, s = settle([opened(2), game(1, 1, 2, "1-0", short=True)])
    assert column(s, "WON") == by_start(p1=1, p2=0)


# -- the published data sets -----------------------------------------------------------


def test_fide_exercise_16_matches_the_published_values() -> None:
    # FIDE TEC exercise 16 (IA Mario Held): 6 players, Franck–Helene forfeit.
    opening, events, players = read_data("fide-tec-exercise16-rr6.trf")
    opening = msgspec.structs.replace(opening, tiebreaks=("KS", "KS/L-2", "SB"))
    _, s = settle([opening, *events])
    assert not s.provisional
    assert column(s, "PTS") == values((1, "3½"), (2, "3½"), (3, "3½"), (4, "1½"), (5, "1½"), (6, "1½"))
    assert column(s, "PTS") == {p.start_no: p.points for p in players}
    assert column(s, "KS") == values((1, 2), (2, "½"), (3, "½"), (4, 1), (5, "½"), (6, 0))
    assert column(s, "SB") == values((1, "9¼"), (2, "6¼"), (3, "6¼"), (4, "4¼"), (5, "3¼"), (6, "2¼"))
    assert [column(s, "KS/L-2")[p] for p in (1, 2, 3)] == [pts("3½")] * 3


def test_sinquefield_cup_2021_matches_the_published_koya() -> None:
    opening, events, players = read_data("sinquefield-cup-2021.trf")
    _, s = settle([opening, *events])
    assert not s.provisional
    assert column(s, "PTS") == {p.start_no: p.points for p in players}
    names = {p.start_no: p.name.split(",")[0] for p in players}
    ks = {names[k]: v for k, v in column(s, "KS").items()}
    assert {name: ks[name] for name in ("Caruana", "Dominguez Perez", "So")} == {
        "Caruana": 2,
        "Dominguez Perez": pts("2½"),
        "So": 2,
    }
    assert {name: ks[name] for name in ("Mamedyarov", "Shankland", "Xiong")} == {
        "Mamedyarov": pts("2½"),
        "Shankland": pts("1½"),
        "Xiong": pts("2½"),
    }
    # Vachier-Lagrave (6) is alone at the top.
    assert s.rows[0].name.startswith("Vachier-Lagrave") and s.rows[0].rank == 1


# -- rejected events change nothing --------------------------------------------------------


def rejected(t: Tournament, event: Event, error: type[EventRejected], code: str) -> None:
    """``event`` raises ``error`` with ``code``; the sums, seq, entries and standings are untouched."""
    sums, seq, before = incremental_sums(t), t.seq, standings(t)
    entries = [dict(e) for e in t.entries]
    with pytest.raises(error) as caught:
        apply(t, event)
    assert caught.value.code == code, caught.value.reason
    assert incremental_sums(t) == sums
    assert t.seq == seq
    assert [dict(e) for e in t.entries] == entries
    assert standings(t) == before
    assert event.id not in t.applied


@pytest.fixture
def started() -> Tournament:
    """4 players with the Berger schedule; round 1 played (1–4 1-0, 2–3 ½)."""
    schedule = [list(r.pairs) for r in berger(4)]
    t, _ = settle([opened(4, schedule=schedule), game(1, 1, 4, "1-0"), game(1, 2, 3, "1/2-1/2")])
    return t


def test_result_for_an_unknown_player_is_rejected(started: Tournament) -> None:
    rejected(started, game(2, 1, 9, "1-0"), UnknownPlayer, "unknown-player")
    rejected(started, bye(2, 9), UnknownPlayer, "unknown-player")


def test_player_paired_twice_in_a_round_is_rejected(started: Tournament) -> None:
    rejected(started, game(1, 1, 3, "1-0"), InvalidPairing, "invalid-pairing")
    rejected(started, game(1, 1, 4, "0-1"), InvalidPairing, "duplicate-result")


def test_bye_for_a_player_with_a_game_in_the_round_is_rejected(started: Tournament) -> None:
    rejected(started, bye(1, 1), EventRejected, "invalid-pairing")


def test_pair_that_already_met_in_a_single_round_robin_is_rejected() -> None:
    t, _ = settle([opened(4), game(1, 1, 2, "1-0")])
    rejected(t, game(2, 2, 1, "1-0"), InvalidPairing, "invalid-pairing")


def test_second_meeting_in_the_same_cycle_of_a_double_round_robin_is_rejected() -> None:
    # 4 players, double: rounds 1–3 are the first cycle, 4–6 the second.
    t, _ = settle([opened(4, format="double"), game(1, 1, 2, "1-0")])
    rejected(t, game(3, 2, 1, "1-0"), InvalidPairing, "invalid-pairing")
    t, _ = settle([opened(4, format="double"), game(1, 1, 2, "1-0"), game(4, 2, 1, "1-0")])
    rejected(t, game(6, 1, 2, "1-0"), InvalidPairing, "invalid-pairing")


def test_double_round_robin_with_spare_rounds_accepts_the_second_cycle() -> None:
    # 4 players, double round robin announced with 8 rounds (6 needed).  The
    # Berger table's second cycle starts in round 4; 2–1 there is the return game.
    t, _ = settle([opened(4, format="double", rounds=8), game(1, 1, 2, "1-0")])
    step(t, game(4, 2, 1, "1-0"))
    assert t.games[0] == 2


def test_round_beyond_the_tournament_is_rejected(started: Tournament) -> None:
    rejected(started, game(4, 1, 2, "1-0"), InvalidPairing, "invalid-pairing")
    rejected(started, bye(4, 1), EventRejected, "invalid-pairing")


def test_invalid_bye_raises_invalid_pairing(started: Tournament) -> None:
    rejected(started, bye(4, 1), InvalidPairing, "invalid-pairing")


def test_correction_or_void_of_a_missing_game_is_rejected(started: Tournament) -> None:
    rejected(started, correct(2, 1, 2, "1-0"), EventRejected, "no-such-result")
    rejected(started, void(2, 1, 2), EventRejected, "no-such-result")
    # colours reversed: 4–1 was never played, 1–4 was
    rejected(started, correct(1, 4, 1, "1-0"), EventRejected, "no-such-result")


def test_correction_to_the_same_result_is_rejected(started: Tournament) -> None:
    rejected(started, correct(1, 1, 4, "1-0"), EventRejected, "unchanged")


def test_result_outside_the_schedule_is_rejected(started: Tournament) -> None:
    # Round 2 of the schedule is 4–3 and 1–2.
    rejected(started, game(2, 3, 4, "1-0"), InvalidPairing, "invalid-pairing")  # colours reversed
    rejected(started, game(3, 1, 2, "1-0"), InvalidPairing, "invalid-pairing")  # 1–2 is in round 2


def test_event_for_another_tournament_is_rejected(started: Tournament) -> None:
    other = ResultRecorded("other-1", "another-event", 2, 1, 2, "1-0")
    rejected(started, other, UnknownTournament, "unknown-tournament")


def test_odd_round_robin_with_too_few_rounds_is_rejected() -> None:
    # 3 players play 3 games, one per round: 2 rounds cannot hold them.
    with pytest.raises(EventRejected):
        step(None, opened(3, rounds=2))


# -- corrections, voids and re-deliveries ------------------------------------------------------


def test_redelivered_event_changes_nothing(started: Tournament) -> None:
    event = game(2, 4, 3, "0-1", id="r2-board1")
    t, update = apply(started, event)
    assert update is not None
    sums, seq, before = incremental_sums(t), t.seq, standings(t)
    for again in (event, started.opened):  # the very same events again
        t, update = apply(t, again)
        assert update is None
        assert incremental_sums(t) == sums and t.seq == seq and standings(t) == before


@pytest.mark.parametrize(
    "reused",
    [
        game(2, 1, 2, "1-0", id="r2-board1"),  # another game under the id of 4–3
        game(2, 4, 3, "1-0", id="r2-board1"),  # the same game with another result (a corrected file replayed)
    ],
)
def test_a_reused_id_with_other_content_is_rejected_not_acknowledged(started: Tournament, reused: Event) -> None:
    t, update = apply(started, game(2, 4, 3, "0-1", id="r2-board1"))
    assert update is not None
    sums, seq, before = incremental_sums(t), t.seq, standings(t)
    with pytest.raises(EventRejected) as caught:
        apply(t, reused)
    assert caught.value.code == "id-reused"
    assert "r2-board1" in caught.value.reason
    assert incremental_sums(t) == sums and t.seq == seq and standings(t) == before
    assert 2 not in t.entries[0]  # 1–2 was never recorded


def test_a_reused_tournament_id_with_another_opening_is_rejected(started: Tournament) -> None:
    other = msgspec.structs.replace(started.opened, name="Another event")
    with pytest.raises(EventRejected) as caught:
        apply(started, other)
    assert caught.value.code == "id-reused"


def test_correction_moves_every_sum_like_a_fresh_result() -> None:
    # 1–4 1-0 corrected to 0-1 must leave the same state as 1–4 0-1 recorded directly.
    corrected, _ = settle([opened(4), game(1, 1, 4, "1-0"), game(1, 2, 3, "1/2-1/2"), correct(1, 1, 4, "0-1")])
    direct, _ = settle([opened(4), game(1, 1, 4, "0-1"), game(1, 2, 3, "1/2-1/2")])
    assert incremental_sums(corrected) == incremental_sums(direct)
    assert standings(corrected).rows == standings(direct).rows


def test_void_returns_the_game_to_pending() -> None:
    voided, s = settle([opened(4), game(1, 1, 4, "1-0"), game(1, 2, 3, "1/2-1/2"), void(1, 1, 4)])
    fresh, _ = settle([opened(4), game(1, 2, 3, "1/2-1/2")])
    assert incremental_sums(voided) == incremental_sums(fresh)
    assert s.rows == standings(fresh).rows
    # and it can be recorded again
    again, _ = settle([opened(4), game(1, 2, 3, "1/2-1/2"), game(1, 1, 4, "1-0")])
    assert step(voided, game(1, 1, 4, "1-0"))[0] is voided
    assert incremental_sums(voided) == incremental_sums(again)


def test_voiding_the_last_game_makes_the_standings_provisional_again() -> None:
    events: list[Event] = [opened(2), game(1, 1, 2, "1-0")]
    _, s = settle(events)
    assert not s.provisional
    _, s = settle([*events, void(1, 1, 2)])
    assert s.provisional


@pytest.mark.parametrize(("before", "after"), [("-+", "--"), ("--", "-+")])
def test_forfeit_loss_can_be_corrected_to_a_double_forfeit_and_back(before: str, after: str) -> None:
    # 2 players: -+ gives P2 1 point, -- gives nobody anything.
    _, s = settle([opened(2), game(1, 1, 2, before), correct(1, 1, 2, after)])  # type: ignore[arg-type]
    assert column(s, "PTS")[2] == (1 if after == "-+" else 0)


def test_withdrawal_keeps_the_games_already_played() -> None:
    # 3 players: 1–2 1-0, then P2 withdraws.  Points and KS are unchanged (G: P1 1 game).
    _, s = settle([opened(3), game(1, 1, 2, "1-0"), withdraw(2)])
    assert s.row(2).withdrawn and not s.row(1).withdrawn
    assert column(s, "PTS") == by_start(p1=1, p2=0, p3=0)


# -- the diff pushed to subscribers -------------------------------------------------------------


def test_update_names_what_changed_and_who_entered_or_left_the_qualifying_sets() -> None:
    # 4 players, percentage basis (each player's own games).  Order PTS, DE, SB, KS, WON.
    # After round 1 (1–4 1-0, 2–3 ½):
    #   P1 1 (1 game) ✓, P2 ½ (1) ✓, P3 ½ (1) ✓, P4 0 (1) ✗.
    #   KS P1 0, P2 ½, P3 ½, P4 0;  SB P1 0, P2 ¼, P3 ¼, P4 0;  ranks 1, 2, 2, 4.
    t, s0 = settle([opened(4), game(1, 1, 4, "1-0"), game(1, 2, 3, "1/2-1/2")])
    assert ranks(s0) == {1: 1, 2: 2, 3: 2, 4: 4}

    # Round 2, board 2: 1–2 ½.  P1 1½ (2) ✓, P2 1 (2) ✓: nobody crosses the line.
    #   P1's qualifying set gains P2 (new opponent), P2's gains P1.
    #   KS P1 = vs2 ½;  P2 = vs3 ½ + vs1 ½ = 1;  SB P1 = ½×1 = ½, P2 = ½×½ + ½×1½ = 1, P3 = ½×1 = ½.
    #   Ranks 1, 2, 3, 4: P3's rank moves (2 → 3) and its SB (¼ → ½); P4's row stays.
    t, u1 = apply(t, game(2, 1, 2, "1/2-1/2"))
    assert u1 is not None
    assert u1.changed == (1, 2, 3)
    assert (u1.reached, u1.fell) == ((), ())
    assert u1.qualification == (QualificationChange(1, (2,), ()), QualificationChange(2, (1,), ()))
    assert ranks(u1.standings) == {1: 1, 2: 2, 3: 3, 4: 4}

    # Round 2, board 1: 4–3 1-0.  P3 ½ after 2 games falls below 1; P4 1 after 2 reaches it.
    #   P1 (played P4) gains P4;  P2 (played P3) loses P3;  P3 (now played P4) gains P4;
    #   P4's set stays {P1}.
    #   KS P1 = vs4 1 + vs2 ½ = 1½ (+1);  P2 = vs1 ½ = ½ (−½);  P3 = vs2 ½ + vs4 0 = ½;  P4 = vs1 0 = 0.
    #   Points 1½, 1, ½, 1.  P2 and P4 tie on 1, have not met (DE 0): SB P2 = ½×½ + ½×1½ = 1
    #   beats P4 = 0×1½ + 1×½ = ½.  Ranks: P1 1, P2 2, P4 3, P3 4: every row changes.
    t, u2 = apply(t, game(2, 4, 3, "1-0"))
    assert u2 is not None
    assert u2.changed == (1, 2, 3, 4)
    assert (u2.reached, u2.fell) == ((4,), (3,))
    assert u2.qualification == (
        QualificationChange(1, (4,), ()),
        QualificationChange(2, (), (3,)),
        QualificationChange(3, (4,), ()),
    )
    assert column(u2.standings, "KS") == by_start(p1="1½", p2="½", p3="½", p4=0)
    assert order(u2.standings) == [1, 2, 4, 3]
    assert u2.summary == "P4–P3 1–0 (round 2): P4 reaches 50%, P3 falls below 50%, P1's KS +1, P2's KS −½"
    assert u2.seq == u1.seq + 1 == t.seq


# -- byes against the schedule, and reasons in plain words ----------------------------------------


def test_bye_for_a_player_with_a_scheduled_game_is_refused_naming_the_game(started: Tournament) -> None:
    # Round 2 of the schedule is 4–3 and 1–2: a bye for 3 would leave 4–3 pending for ever.
    with pytest.raises(InvalidPairing) as caught:
        step(started, bye(2, 3))
    assert caught.value.code == "scheduled-game"
    assert "scheduled game 4–3 in round 2" in caught.value.reason
    rejected(started, bye(2, 3), InvalidPairing, "scheduled-game")


def test_bye_for_a_scheduled_player_is_accepted_once_the_opponent_withdrew(started: Tournament) -> None:
    step(started, withdraw(4))
    step(started, bye(2, 3))
    assert started.entries[started.player(3)][2].is_game is False


def test_a_game_after_a_bye_advises_voiding_the_bye_not_a_correction() -> None:
    t, _ = settle([opened(4), bye(1, 1)])
    with pytest.raises(InvalidPairing) as caught:
        step(t, game(1, 1, 2, "1-0"))
    assert "void the bye first" in caught.value.reason
    assert "result_corrected" not in caught.value.reason


def test_reasons_are_plain_words_not_python_reprs() -> None:
    t, _ = settle([opened(4), game(1, 1, 2, "1-0")])
    with pytest.raises(InvalidPairing) as caught:
        step(t, game(2, 2, 1, "1-0"))
    assert caught.value.reason == "players 2 and 1 have already met in round 1"
    with pytest.raises(EventRejected) as other:
        step(t, ResultRecorded("x-1", "another-event", 2, 1, 3, "1-0"))
    assert "'" not in other.value.reason and "[" not in other.value.reason, other.value.reason


def test_a_requested_bye_marked_as_replacing_the_game_is_accepted(started: Tournament) -> None:
    step(started, bye(2, 3, "half", replaces_game=True))
    step(started, bye(2, 4))  # the opponent of a player with a bye: nothing left to play
    assert all(not started.entries[started.player(p)][2].is_game for p in (3, 4))
