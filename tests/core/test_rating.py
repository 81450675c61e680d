"""Rating change (FIDE B.02 §8.3) and performance (C.07 TPR): the articles' cases, and a property against a
reference written here from the regulations' text alone.

B.02 prints no worked numbers for K or for the 400-point rule; the cases below are built from the articles'
own words (quoted in docs/ratings.md: the rule in force since 1 October 2025, the 2024 one and the one before
March 2024) and computed by hand from table 8.1(b): each test says which words it checks.
"""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import TID, berger, bye, column, fold_all, game
from tracker.core.crosstable import Tournament
from tracker.core.events import DEFAULT_TIEBREAKS, Event, GameResult, Player, TournamentOpened
from tracker.core.standings import standings
from tracker.core.worth.rating import cap_rule, k_records, one_decimal, rating_change, rating_changes, xxk_records
from tracker.core.worth.tables import dp_of, expected

# -- an independent reading of B.02: table 8.1(b) as printed, ranges of D per PD --------------------------

_TABLE_81B = """
0-3 .50 4-10 .51 11-17 .52 18-25 .53 26-32 .54 33-39 .55 40-46 .56 47-53 .57 54-61 .58 62-68 .59
69-76 .60 77-83 .61 84-91 .62 92-98 .63 99-106 .64 107-113 .65 114-121 .66 122-129 .67 130-137 .68
138-145 .69 146-153 .70 154-162 .71 163-170 .72 171-179 .73 180-188 .74 189-197 .75 198-206 .76
207-215 .77 216-225 .78 226-235 .79 236-245 .80 246-256 .81 257-267 .82 268-278 .83 279-290 .84
291-302 .85 303-315 .86 316-328 .87 329-344 .88 345-357 .89 358-374 .90 375-391 .91 392-411 .92
412-432 .93 433-456 .94 457-484 .95 485-517 .96 518-559 .97 560-619 .98 620-735 .99
"""


def _pd(d: int) -> Fraction:
    """Table 8.1(b) for the higher-rated side (``d ≥ 0``), read from the printed ranges."""
    words = _TABLE_81B.split()
    for span, pd in zip(words[::2], words[1::2], strict=True):
        low, high = (int(x) for x in span.split("-"))
        if low <= d <= high:
            return Fraction(pd.replace(".", "0."))
    return Fraction(1)


def _reference_change(rating: int, k: int, games: list[tuple[int, int, Fraction]], rule: str = "2650") -> Fraction:
    """K · Σ(W − PD) over ``games`` = (round, opponent rating, score), >400 counted as 400 as ``rule`` says:
    ``"2650"`` (from 1 October 2025) in every game of a player under 2650 and never for one of 2650 or more;
    ``"2024"`` in every game; ``"old"`` (before March 2024) for the lower-rated side always, for the
    higher-rated side in one game only, the greatest difference, the earliest among equal."""
    ups = [(rating - opp, -rnd) for rnd, opp, _ in games if rating - opp > 400]
    upgraded = -max(ups)[1] if ups else None
    total = Fraction(0)
    for rnd, opp, score in games:
        d = rating - opp
        if rule == "2650" and rating >= 2650:
            pass
        elif d < -400:
            d = -400
        elif d > 400 and (rule != "old" or rnd == upgraded):
            d = 400
        pd = _pd(d) if d >= 0 else 1 - _pd(-d)
        total += score - pd
    if k * len(games) > 700:
        k = 700 // len(games)
    return k * total


def _opened(
    ratings: list[int],
    *,
    births: list[str] | None = None,
    records: tuple[str, ...] = (),
    tiebreaks: tuple[str, ...] = DEFAULT_TIEBREAKS,
) -> TournamentOpened:
    players = tuple(
        Player(start_no=k + 1, name=f"P{k + 1}", rating=r, birth=births[k] if births else "")
        for k, r in enumerate(ratings)
    )
    return TournamentOpened(
        id="open", tournament=TID, name="rated", players=players, records=records, tiebreaks=tiebreaks
    )


def _state(ratings: list[int], results: list[tuple[int, int, int, GameResult]], **kw: object) -> Tournament:
    events: list[Event] = [_opened(ratings, **kw), *(game(r, w, b, res) for r, w, b, res in results)]  # type: ignore[arg-type]
    return fold_all(events)


# -- the articles' cases ------------------------------------------------------------------------------------


_RESULTS_2500 = [(1, 1, 2, "1-0"), (2, 3, 1, "0-1"), (3, 1, 4, "1-0")]  # 2500 beats 2000, 2050 and 1900


def test_every_difference_over_400_counts_as_400_below_2650() -> None:
    """§8.3.1 since 1 October 2025: "a difference in rating of more than 400 points shall be counted … as though
    it were a difference of 400 points, for players rated below 2650" — in every game (the 2024 regulations
    abolished the older limit of one upgrade per event)."""
    t = _state([2500, 2000, 2050, 1900], _RESULTS_2500, records=("042 2026/04/01",))
    c = rating_change(t, 0)
    assert c.k == 10 and c.k_from == "rule"  # K = 10 once rated 2400 or more
    assert c.expected == 3 * Fraction(92, 100)  # 500, 450 and 600 all count as 400: PD .92 each
    assert one_decimal(c.change) == 2.4
    assert c.capped_round is None
    lower = rating_change(t, 1)  # 2000 lost to 2500: D = −500 counts as −400, PD = 1 − .92
    assert lower.expected == Fraction(8, 100)
    assert lower.k == 20 and lower.k_from == "default"
    assert lower.change == 20 * (0 - Fraction(8, 100))


def test_a_player_rated_2650_or_more_uses_the_real_difference() -> None:
    """§8.3.1 since 1 October 2025: "For players rated 2650 and above, the difference between ratings shall be
    used in all cases" — their opponent, rated under 2650, still counts 400."""
    t = _state([2700, 2200, 2250, 2050], _RESULTS_2500, records=("042 2025/10/01",))
    top = rating_change(t, 0)  # 500 → .96, 450 → .94, 650 → .99 (8.1(b) as printed)
    assert top.expected == Fraction(96 + 94 + 99, 100)
    assert one_decimal(top.change) == 1.1  # K 10 · (3 − 2.89)
    assert rating_change(t, 1).expected == Fraction(8, 100)  # 2200 v 2700: −500 counts −400 for them
    # a day before the amendment the 2700 player's games were capped too
    before = _state([2700, 2200, 2250, 2050], _RESULTS_2500, records=("042 2025/09/30",))
    assert rating_change(before, 0).expected == 3 * Fraction(92, 100)


def test_before_march_2024_one_upgrade_per_tournament_for_the_greatest_difference() -> None:
    """§8.3.1 before 1 March 2024: "In any tournament, a player may benefit from only one upgrade under this
    rule, for the game in which the rating difference is greatest"."""
    # only the 600 game counts as 400 (PD .92); the others keep 8.1(b) of their real difference: 500 → .96,
    # 450 → .94
    t = _state([2500, 2000, 2050, 1900], _RESULTS_2500, records=("042 2023/11/20",))
    c = rating_change(t, 0)
    assert c.expected == Fraction(92 + 96 + 94, 100)
    assert c.change == 10 * (3 - Fraction(282, 100))
    assert one_decimal(c.change) == 1.8
    assert c.capped_round == 3
    assert rating_change(t, 1).expected == Fraction(8, 100)  # the lower-rated side: capped in every game


def test_the_rule_follows_the_event_date() -> None:
    assert cap_rule(("042 2023/11/20",)) == "one-upgrade"
    assert cap_rule(("042 2024/03/01",)) == "every-game"
    assert cap_rule(("042 2025/09/30",)) == "every-game"
    assert cap_rule(("042 2025/10/01",)) == "under-2650"
    assert cap_rule(()) == "under-2650"  # no date: the rule in force now


def test_k_40_for_a_junior_under_2300_to_the_end_of_the_year_of_their_18th_birthday() -> None:
    """§8.3.3: "K = 40 for all players until the end of the year of their 18th birthday, as long as their rating
    remains under 2300"; the event's year from record 042."""
    births = ["2008/11/30", "1990", "2008", "2000"]
    ratings = [2100, 2100, 2350, 2100]
    results: list[tuple[int, int, int, GameResult]] = [(1, 1, 2, "1-0"), (1, 3, 4, "1/2-1/2")]
    in_2026 = _state(ratings, results, births=births, records=("042 2026/12/01",))
    ks = [(c.k, c.k_from) for c in rating_changes(in_2026)]
    assert ks == [(40, "rule"), (20, "rule"), (20, "rule"), (20, "rule")]  # 2350 ≥ 2300: no longer 40
    assert rating_change(in_2026, 0).change == 40 * (1 - Fraction(1, 2))
    in_2027 = _state(ratings, results, births=births, records=("042 2027/01/05",))
    assert rating_change(in_2027, 0).k == 20  # the year after the 18th birthday's year


def test_k_10_from_2400_and_the_start_lists_own_k_first() -> None:
    """§8.3.3: "K = 10 once a player's published rating has reached 2400"; the start list's K (XXK) wins."""
    t = _state([2400, 2399, 2100], [(1, 1, 2, "1/2-1/2")], records=("XXK 40 3", "XXK 15 2"))
    assert [(c.k, c.k_from) for c in rating_changes(t)] == [(10, "rule"), (15, "start-list"), (40, "start-list")]
    assert rating_change(t, 1).change == 15 * (Fraction(1, 2) - Fraction(50, 100))


def test_k_times_games_at_most_700() -> None:
    """§8.3.4: K · n above 700 makes K the largest whole number with K · n ≤ 700 (n: the games counted here)."""
    n = 21
    rounds = berger(n)
    results = [(r.number, w, b, "1-0") for r in rounds for w, b in r.pairs]
    births = ["2012"] + ["1980"] * (n - 1)
    t = _state([1800] * n, results, births=births, records=("042 2026/05/01",))  # type: ignore[arg-type]
    c = rating_change(t, 0)
    assert c.games == 20
    assert c.k == 35  # 40 · 20 = 800 > 700 → 35


def test_forfeits_byes_short_games_and_unrated_opponents_are_left_out() -> None:
    """B.02 rates games played at the board against rated opponents: no forfeit, no bye, no game under one move."""
    events: list[Event] = [
        _opened([2000, 2000, 0, 2000, 2000]),
        game(1, 1, 2, "1-0"),  # counted
        game(2, 1, 3, "1-0"),  # unrated opponent
        game(3, 1, 4, "+-"),  # forfeit
        game(4, 1, 5, "1-0", short=True),  # less than one move (TRF W)
        bye(5, 1, "full"),
    ]
    c = rating_change(fold_all(events), 0)
    assert c.games == 1 and c.change == 20 * Fraction(1, 2)
    unrated = rating_change(fold_all(events), 2)
    assert unrated.k is None and unrated.change == 0


def test_performance_is_aro_plus_dp_of_the_percentage() -> None:
    """C.07 TPR = ARO + dp (B.02 table 8.1(a)): 2 of 3 against 2400, 2500 and 2600 is p = .67 → dp 125."""
    t = _state([2000, 2400, 2500, 2600], [(1, 1, 2, "1-0"), (2, 3, 1, "1-0"), (3, 1, 4, "1-0")])
    assert rating_change(t, 0).performance == 2500 + 125
    ranked = _state(
        [2000, 2400, 2500, 2600], [(1, 1, 2, "1-0"), (2, 3, 1, "1-0"), (3, 1, 4, "1-0")], tiebreaks=("PTS", "TPR")
    )
    assert column(standings(ranked), "TPR")[1] == 2625
    assert dp_of(Fraction(1)) == 800 and dp_of(Fraction(0)) == -800 and dp_of(Fraction(1, 3)) == -125


def test_table_81b_matches_the_printed_ranges() -> None:
    for d in range(0, 900):
        assert expected(d) == _pd(d)
        assert expected(-d) == 1 - _pd(d)


def test_xxk_records_read_back() -> None:
    ks = {k: 40 if k % 3 else 10 for k in range(1, 300)}
    records = xxk_records(ks, width=60)
    assert all(len(r) <= 60 for r in records)
    assert k_records(records) == ks


# -- the property: random rated round robins against the reference ----------------------------------------

_RESULTS: tuple[GameResult, ...] = ("1-0", "1/2-1/2", "0-1", "+-", "-+")
_SCORE = {"1-0": (1, 0), "1/2-1/2": (Fraction(1, 2), Fraction(1, 2)), "0-1": (0, 1)}


@st.composite
def _tournaments(draw: st.DrawFn) -> tuple[list[int], list[int | None], list[tuple[int, int, int, GameResult]]]:
    n = draw(st.integers(3, 9))
    ratings = [draw(st.one_of(st.just(0), st.integers(1000, 2850))) for _ in range(n)]
    ks = [draw(st.one_of(st.none(), st.sampled_from([10, 15, 20, 30, 40]))) for _ in range(n)]
    games = []
    for r in berger(n):
        for w, b in r.pairs:
            if draw(st.integers(0, 5)):
                games.append((r.number, w, b, draw(st.sampled_from(_RESULTS))))
    return ratings, ks, games


_RULES = (("2026/04/01", "2650"), ("2024/06/15", "2024"), ("2022/01/10", "old"))


@settings(max_examples=150, deadline=None)
@given(_tournaments())
def test_rating_change_agrees_with_the_reference(case: tuple[list[int], list[int | None], list]) -> None:
    ratings, ks, results = case
    records = tuple(f"XXK {k} {sno}" for sno, k in enumerate(ks, start=1) if k is not None)
    date, rule = _RULES[sum(ratings) % len(_RULES)]  # each rule of §8.3.1 by the event's date
    t = _state(ratings, results, records=(f"042 {date}", *records))
    for i, rating in enumerate(ratings):
        c = rating_change(t, i)
        if rating == 0:
            assert c.k is None and c.change == 0
            continue
        sno = i + 1
        games = []
        for rnd, w, b, res in results:
            if sno not in (w, b) or res not in _SCORE:
                continue
            opp = b if sno == w else w
            if ratings[opp - 1] == 0:
                continue
            games.append((rnd, ratings[opp - 1], Fraction(_SCORE[res][0 if sno == w else 1])))
        k = ks[i] if ks[i] is not None else (10 if rating >= 2400 else 20)
        assert c.games == len(games)
        assert c.change == _reference_change(rating, k, games, rule)


# -- the CLI: rows carry the change (one decimal) and the performance ---------------------------------------


def test_standings_json_rows_carry_rating_change_and_performance(tmp_path: Path) -> None:
    opened = _opened([2500, 2000, 1900], records=("042 2026/04/01", "XXK 40 3"))
    from tracker.formats.trf import export_trf

    t = fold_all([opened, game(1, 1, 3, "1-0"), game(2, 2, 1, "0-1"), game(3, 3, 2, "1-0")])
    path = tmp_path / "rated.trf"
    path.write_text(export_trf(t), encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "tracker.cli", "standings", str(path), "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = {r["start_no"]: r for r in json.loads(out.stdout)["standings"]}
    for c in rating_changes(t):
        assert rows[c.start_no]["rating_change"] == one_decimal(c.change)
        assert rows[c.start_no]["performance"] == c.performance
    assert rows[3]["k"] == 40 and rows[3]["k_from"] == "start-list"
    # 2500 v 2000 (500) and v 1900 (600): both count as 400 in 2026 → .92 + .92
    assert rows[1]["rating_change"] == one_decimal(10 * (2 - Fraction(184, 100))) == 1.6
    # 2000 lost to 2500 (−500 counts −400: PD .08) and to 1900 (+100: PD .64), K 20 (no birth year: said)
    assert Decimal(str(rows[2]["rating_change"])) == Decimal("-14.4")
    notes = json.loads(out.stdout)["notes"]
    assert any("K = 20 assumed" in n for n in notes)


def test_tracker_new_k_column_reaches_the_rating_change(tmp_path: Path) -> None:
    """A ``k`` column in ``tracker new``'s CSV is written as XXK records and read back as the start list's K."""
    csv = tmp_path / "players.csv"
    csv.write_text("name,rating,birth,k\nA,2100,2011,\nB,2300,1990,15\nC,2200,1985,\nD,1900,,\n", encoding="utf-8")
    trf = tmp_path / "club.trf"
    subprocess.run(
        [sys.executable, "-m", "tracker.cli", "new", str(csv), "--start-date", "2026/04/01", "-o", str(trf)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "XXK 15 2" in trf.read_text(encoding="utf-8").splitlines()
    out = subprocess.run(
        [sys.executable, "-m", "tracker.cli", "standings", str(trf), "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = {r["start_no"]: (r["k"], r["k_from"]) for r in json.loads(out.stdout)["standings"]}
    assert rows == {1: (40, "rule"), 2: (15, "start-list"), 3: (20, "rule"), 4: (20, "default")}
    bad = tmp_path / "bad.csv"
    bad.write_text("name,k\nA,x\nB,20\n", encoding="utf-8")
    refused = subprocess.run([sys.executable, "-m", "tracker.cli", "new", str(bad)], capture_output=True, text=True)
    assert refused.returncode != 0 and "K factor" in refused.stderr
