"""Title norms (FIDE B.01) over the whole remaining schedule of a round robin: the least score, the scenario
that reaches it, "secured" and "out", against an enumeration of the player's remaining games.

B.01 prints its norm table (score needed per number of games and average) rather than worked examples; the
cases here are built from the requirements' text (docs/ratings.md) with the arithmetic written out.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import TID, berger, fold_all, game
from tracker.core.crosstable import Tournament
from tracker.core.events import Event, GameResult, Player, TournamentOpened
from tracker.core.worth.norms import MIN_SCORE, least_score, norm, norm_games, norms, titles_for
from tracker.core.worth.tables import dp_of

FEDS = ("NOR", "IND", "CHN", "FRA")


def _field(n: int, rating: int, title: str = "GM", me: tuple[int, str, str] = (2500, "", "USA")) -> tuple[Player, ...]:
    first = Player(start_no=1, name="Me", rating=me[0], title=me[1], federation=me[2])
    rest = tuple(
        Player(start_no=k, name=f"P{k}", rating=rating, title=title, federation=FEDS[k % len(FEDS)])
        for k in range(2, n + 1)
    )
    return (first, *rest)


def _token(mine: str, white: bool) -> GameResult:
    """Player 1's result ``W``/``D``/``L`` as the game's result token."""
    if mine == "D":
        return "1/2-1/2"
    return "1-0" if (mine == "W") == white else "0-1"


def _state(players: tuple[Player, ...], rounds_played: int, mine: list[str]) -> tuple[Tournament, list]:
    """The round robin of ``players`` (Berger schedule) with ``rounds_played`` rounds in: player 1's games as
    ``mine`` says (``W``, ``D``, ``L``: player 1's side), every other game drawn."""
    rounds = berger(len(players))
    opened = TournamentOpened(
        id="open", tournament=TID, name="norm", players=players, schedule=tuple(tuple(r.pairs) for r in rounds)
    )
    events: list[Event] = [opened]
    results = iter(mine)
    for r in rounds[:rounds_played]:
        for w, b in r.pairs:
            events.append(game(r.number, w, b, _token(next(results), w == 1) if 1 in (w, b) else "1/2-1/2"))
    return fold_all(events), rounds


def test_gm_norm_needs_half_against_a_2600_field() -> None:
    """Ra 2600 (nine GMs of 2600, four federations): a GM norm needs dp ≥ 0, p = .50 → 4½ of 9; an IM norm
    needs dp ≥ −150: p = .30 gives −149, but B.01's 35 % makes it 3½ of 9."""
    t, _ = _state(_field(10, 2600), 6, ["D"] * 6)
    gm = norm(t, 0, "GM")
    assert (gm.games, gm.average, gm.failing) == (9, 2600, ())
    assert gm.needed == Fraction(9, 2) and gm.scored == 3 and gm.status == "possible" and gm.remaining == 3
    mine = [res for _, w, b, res in gm.scenario]
    assert len(gm.scenario) == 3 and sorted(mine).count("1/2-1/2") == 1  # a win, a draw, a loss: 1½ more
    im = norm(t, 0, "IM")
    assert (im.needed == Fraction(7, 2) and im.status == "secured" != True) or im.status == "possible"


def test_secured_and_out() -> None:
    secured, _ = _state(_field(10, 2600), 6, ["W", "W", "D", "D", "W", "D"])  # 4½ of 6: the GM norm is in
    gm = norm(secured, 0, "GM")
    assert gm.scored == Fraction(9, 2) and gm.status == "secured" and not gm.scenario
    out, _ = _state(_field(10, 2600), 6, ["L", "L", "D", "L", "D", "L"])  # 1 of 6: 4 of 9 at most
    g = norm(out, 0, "GM")
    assert g.scored + g.remaining < Fraction(9, 2) and g.status == "out" and not g.scenario


def test_too_few_games_titled_and_federations_put_the_norm_out() -> None:
    short, _ = _state(_field(9, 2600), 0, [])  # 8 games
    assert "games" in norm(short, 0, "GM").failing and norm(short, 0, "GM").status == "out"
    untitled, _ = _state(_field(10, 2600, title="FM"), 0, [])
    assert "titled" in norm(untitled, 0, "GM").failing  # no GM among the opponents
    one_fed = tuple(Player(start_no=k, name=f"P{k}", rating=2600, title="GM", federation="USA") for k in range(2, 11))
    home, _ = _state((Player(start_no=1, name="Me", rating=2500, federation="USA"), *one_fed), 0, [])
    assert {"federations", "own_federation", "one_federation"} <= set(norm(home, 0, "GM").failing)


def test_the_lowest_opponent_is_raised_to_the_floor_and_unrated_count_1400() -> None:
    players = list(_field(10, 2600))
    players[9] = Player(start_no=10, name="P10", rating=0, title="GM", federation="IND")
    t, _ = _state(tuple(players), 0, [])
    # eight at 2600 and one unrated (1400) raised to the GM floor 2200: (8·2600 + 2200) / 9 = 2555.6 → 2556
    assert norm(t, 0, "GM").average == 2556


def test_women_norms_for_women_only_and_titles_above_ones_own() -> None:
    assert titles_for(Player(start_no=1, name="A", title="IM")) == ("GM",)
    assert titles_for(Player(start_no=1, name="A", sex="w", title="WIM")) == ("GM", "IM", "WGM")
    assert titles_for(Player(start_no=1, name="A")) == ("GM", "IM")


# -- exact over the remaining schedule: every outcome of the player's remaining games ----------------------


@settings(max_examples=40, deadline=None)
@given(st.integers(2350, 2700), st.integers(5, 9), st.lists(st.sampled_from("WDL"), min_size=9))
def test_least_score_is_the_least_over_every_outcome(rating: int, played: int, mine: list) -> None:
    from tracker.core.worth.tables import dp_of

    t, rounds = _state(_field(10, rating), played, mine)
    n = norm(t, 0, "GM")
    ahead = [(r.number, w, b) for r in rounds[played:] for w, b in r.pairs if 1 in (w, b)]
    assert n.remaining == len(ahead)
    reached = []
    for outcome in itertools.product((Fraction(1), Fraction(1, 2), Fraction(0)), repeat=len(ahead)):
        final = n.scored + sum(outcome)
        p = final / 9
        if rating >= 2380 and p >= Fraction(35, 100) and rating + dp_of(p) >= 2600:  # B.01: Ra ≥ 2380 too
            reached.append(final)
    if not reached:
        assert n.status == "out"
    else:
        assert n.status in ("possible", "secured")
        if n.status == "secured":
            assert n.needed is not None and n.scored >= n.needed and min(reached) == n.scored
        else:
            assert n.needed == min(reached)
        if n.status == "possible":
            gained = Fraction(0)
            for _, w, b, res in n.scenario:
                gained += {"1-0": 1 if w == 1 else 0, "0-1": 1 if b == 1 else 0}.get(res, Fraction(1, 2))
            assert n.scored + gained == n.needed


def test_standings_json_rows_carry_the_norms() -> None:
    from tracker.cli.worth import add_worth
    from tracker.core.standings import standings
    from tracker.protocol import standings_json

    t, _ = _state(_field(10, 2600), 6, ["D"] * 6)
    table = standings(t)
    document = standings_json(table)
    add_worth(document, t, table, None, "hort")
    row = next(r for r in document["standings"] if r["start_no"] == 1)
    gm = row["norms"]["GM"]  # type: ignore[typeddict-item]
    assert gm["status"] == "possible" and gm["needed"] == 4.5 and gm["scored"] == 3.0 and len(gm["scenario"]) == 3
    assert all("norms" not in r for r in document["standings"] if r["start_no"] != 1)  # GMs aim at no norm


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40), st.integers(1800, 2700), st.sampled_from([2250, 2400, 2450, 2600]))
def test_least_score_by_bisection_is_the_first_score_that_reaches(games: int, average: int, target: int) -> None:
    """The bisection finds what a walk over every score in half points finds (the definition)."""
    walked = next(
        (
            Fraction(h, 2)
            for h in range(2 * games + 1)
            if Fraction(h, 2 * games) >= MIN_SCORE and average + dp_of(Fraction(h, 2 * games)) >= target
        ),
        None,
    )
    assert least_score(games, average, target) == walked


def test_norms_of_every_player_equal_each_norm_asked_alone() -> None:
    """norms() shares one walk over the remaining schedule; each answer is the one asked for alone."""
    ratings = [2450, 2380, 2500, 2300, 2420, 2550, 2350, 2480, 2400, 2330]
    players = tuple(
        Player(start_no=k + 1, name=f"P{k + 1}", rating=r, title="IM" if k % 3 else "GM", federation=f"F{k % 4}")
        for k, r in enumerate(ratings)
    )
    opened = TournamentOpened(id="open", tournament=TID, name="n", players=players)
    played = [game(r.number, w, b, "1/2-1/2") for r in berger(10)[:4] for w, b in r.pairs]
    t = fold_all([opened, *played])
    ahead = norm_games(t)
    together = norms(t)
    alone = tuple(norm(t, i, title) for i, p in enumerate(players) for title in titles_for(p))
    assert together == alone
    assert any(n.remaining for n in together) and all(len(games) == 5 for games in ahead)
