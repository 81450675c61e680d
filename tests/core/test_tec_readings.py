"""``BWG``, ``BPG`` and ``ARO`` as the FIDE TEC tie-break server reads them, in both editions.

The server (TEC-FIDE/TieBreakServer, ``tiebreak.py``) counts

* ``BWG``: games played at the board with Black and won — a pairing-allocated
  bye (``U``) has no colour and no opponent, so it is never one;
* ``BPG``: games played at the board with Black — no forfeit win or loss, no
  bye, in either edition;
* ``ARO``: the ratings of the opponents of games played at the board — a
  forfeit's opponent is left out in either edition.

The three reproductions of issue 38 come first; then a Hypothesis property
over random round robins with every kind of bye (``U``, ``H``, ``Z``, ``F``),
forfeits (``+-``, ``-+``) and double forfeits, against a reference computed
here from the drawn games alone (not from the crosstable's entries).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import berger, bye, column, fold_all, game, opened, order, schedule_of
from tracker.core.events import ByeKind, Event, GameResult, Player, Rules, TournamentOpened
from tracker.core.standings import standings

EDITIONS: tuple[Rules, Rules] = ("2024", "2026")


def _rated(o: TournamentOpened, ratings: dict[int, int], rules: Rules) -> TournamentOpened:
    rated = tuple(Player(start_no=p.start_no, name=p.name, rating=ratings.get(p.start_no, 0)) for p in o.players)
    return msgspec.structs.replace(o, players=rated, rules=rules)


# -- the three reproductions ------------------------------------------------------


@pytest.mark.parametrize("rules", EDITIONS)
def test_a_pairing_allocated_bye_is_not_a_game_won_with_black(rules: Rules) -> None:
    # A (1) wins only with White (r1 against 2); r2 a draw with Black against 3; r3 a U bye in place of the
    # game against 4 (4 gets a zero bye).  The server: BWG 0 for A, not 1.
    events: list[Event] = [
        _rated(opened(4, tiebreaks=("PTS", "BWG")), {}, rules),
        game(1, 1, 2, "1-0"),
        game(1, 3, 4, "1/2-1/2"),
        game(2, 3, 1, "1/2-1/2"),
        game(2, 4, 2, "1/2-1/2"),
        bye(3, 1, "pab", replaces_game=True),
        bye(3, 4, "zero", replaces_game=True),
        game(3, 2, 3, "1/2-1/2"),
    ]
    assert column(standings(fold_all(events)), "BWG") == {1: 0, 2: 0, 3: 0, 4: 0}


@pytest.mark.parametrize("rules", EDITIONS)
def test_bpg_counts_games_played_at_the_board_only(rules: Rules) -> None:
    # r1: 2–1 -+ (1 wins by forfeit with Black), 3–4 +- (4 loses by forfeit with Black)
    # r2: 1–3 ½ (3 with Black), 4–2 --  (a double forfeit: 2 with Black, not played)
    # r3: 1–4 1-0 (4 with Black at the board), 2–3 0-1 (3 with Black at the board)
    events: list[Event] = [
        _rated(opened(4, tiebreaks=("PTS", "BPG")), {}, rules),
        game(1, 2, 1, "-+"),
        game(1, 3, 4, "+-"),
        game(2, 1, 3, "1/2-1/2"),
        game(2, 4, 2, "--"),
        game(3, 1, 4, "1-0"),
        game(3, 2, 3, "0-1"),
    ]
    assert column(standings(fold_all(events)), "BPG") == {1: 0, 2: 0, 3: 2, 4: 1}


# A 1900, B 2100, C 2400, D 1600.  A and B finish on 2; C forfeits to A in round 1.
#   r1: A–C +-, B–D 1-0   r2: A–D ½, C–B ½   r3: B–A ½, C–D 1-0
# With C counted (the old 2024 reading) A's opponents average 2033 and B's 1967: A 1st.
# As the server reads it (both editions), A's played opponents are B and D: 1850 < 1967: B 1st, A 2nd.
_ARO_RATINGS = {1: 1900, 2: 2100, 3: 2400, 4: 1600}
_ARO_GAMES = (
    game(1, 1, 3, "+-"),
    game(1, 2, 4, "1-0"),
    game(2, 1, 4, "1/2-1/2"),
    game(2, 3, 2, "1/2-1/2"),
    game(3, 2, 1, "1/2-1/2"),
    game(3, 3, 4, "1-0"),
)


@pytest.mark.parametrize("rules", EDITIONS)
def test_aro_leaves_a_forfeits_opponent_out_in_both_editions(rules: Rules) -> None:
    t = fold_all([_rated(opened(4, tiebreaks=("PTS", "ARO", "TPN")), _ARO_RATINGS, rules), *_ARO_GAMES])
    s = standings(t)
    assert column(s, "PTS")[1] == column(s, "PTS")[2] == 2
    assert column(s, "ARO")[1] == 1850  # (2100 + 1600) / 2
    assert column(s, "ARO")[2] == 1967  # (1900 + 2400 + 1600) / 3 = 1966.7
    assert order(s)[:2] == [2, 1]


# -- the property -----------------------------------------------------------------

#: (white's points, black's points) in half-points, and whether the game was played at the board.
_GAME_KINDS: dict[GameResult, tuple[bool, int, int]] = {
    "1-0": (True, 2, 0),
    "1/2-1/2": (True, 1, 1),
    "0-1": (True, 0, 2),
    "+-": (False, 2, 0),
    "-+": (False, 0, 2),
    "--": (False, 0, 0),
}
_BYE_KINDS: list[ByeKind] = ["pab", "half", "zero", "full"]


@dataclass(frozen=True, slots=True)
class Played:
    """One drawn game: who had which colour, the result, and whether it was short (TRF W/D/L)."""

    white: int
    black: int
    result: GameResult
    short: bool


def reference(n: int, ratings: dict[int, int], games: list[Played]) -> dict[str, dict[int, int]]:
    """BWG, BPG and ARO as the TEC server computes them, from the drawn games alone.

    Byes never appear: none has a colour or an opponent.  A game counts when it
    was played at the board (short games too: the server reads ``W``/``D``/``L``
    as played, only not rated).
    """
    bwg = dict.fromkeys(range(1, n + 1), 0)
    bpg = dict.fromkeys(range(1, n + 1), 0)
    opponents: dict[int, list[int]] = {k: [] for k in range(1, n + 1)}
    for g in games:
        at_board, _, black_points = _GAME_KINDS[g.result]
        if not at_board:
            continue
        bpg[g.black] += 1
        bwg[g.black] += black_points == 2
        opponents[g.white].append(ratings[g.black])
        opponents[g.black].append(ratings[g.white])
    aro = {}
    for k, rs in opponents.items():
        rated = [r for r in rs if r > 0]
        aro[k] = math.floor(Fraction(sum(rated), len(rated)) + Fraction(1, 2)) if rated else 0  # §10.1: half up
    return {"BWG": bwg, "BPG": bpg, "ARO": aro}


@st.composite
def tournaments(draw: st.DrawFn) -> tuple[int, dict[int, int], list[Event], list[Played]]:
    """A random round robin, some rounds played, with byes of every kind and forfeits."""
    n = draw(st.integers(2, 8), label="players")
    cycles = draw(st.sampled_from([1, 1, 2]), label="cycles")
    rules = draw(st.sampled_from(EDITIONS), label="rules")
    ratings = {k: draw(st.sampled_from([0, 1450, 1800, 1999, 2000, 2001, 2350, 2700])) for k in range(1, n + 1)}
    table = berger(n, cycles)
    first = _rated(
        opened(
            n,
            format="double" if cycles == 2 else "single",
            tiebreaks=("PTS", "BWG", "BPG", "ARO"),
            schedule=schedule_of(table),
        ),
        ratings,
        rules,
    )
    events: list[Event] = [first]
    played: list[Played] = []
    rounds = draw(st.integers(1, len(table)), label="rounds entered")
    for rnd in table[:rounds]:
        if rnd.free is not None and draw(st.booleans()):
            events.append(bye(rnd.number, rnd.free, draw(st.sampled_from(_BYE_KINDS))))
        for white, black in rnd.pairs:
            what = draw(st.sampled_from(["game", "game", "game", "byes", "pending"]))
            if what == "pending":
                continue
            if what == "byes":
                for p in (white, black):
                    events.append(bye(rnd.number, p, draw(st.sampled_from(_BYE_KINDS)), replaces_game=True))
                continue
            result = draw(st.sampled_from(list(_GAME_KINDS)))
            short = _GAME_KINDS[result][0] and draw(st.integers(0, 5)) == 0
            events.append(game(rnd.number, white, black, result, short=short))
            played.append(Played(white, black, result, short))
    return n, ratings, events, played


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tournaments())
def test_bwg_bpg_aro_equal_the_servers_reading_on_random_files(
    drawn: tuple[int, dict[int, int], list[Event], list[Played]],
) -> None:
    n, ratings, events, played = drawn
    s = standings(fold_all(events))
    expected = reference(n, ratings, played)
    for code in ("BWG", "BPG", "ARO"):
        assert column(s, code) == expected[code], code


def test_the_reference_rounds_half_up() -> None:
    # 1 plays 2 (1999) and 3 (2000) at the board: 1999.5 → 2000; 2 plays 1 (0, unrated) only: 0 is left out
    games = [Played(1, 2, "1-0", False), Played(3, 1, "0-1", False)]
    got = reference(3, {1: 0, 2: 1999, 3: 2000}, games)
    assert got["ARO"] == {1: 2000, 2: 0, 3: 0}
    assert got["BWG"] == {1: 1, 2: 0, 3: 0}
    assert got["BPG"] == {1: 1, 2: 1, 3: 0}
