"""What results are worth, live (issue 39): the stakes message's rating changes, performances and norms, and
the norm each outcome of a pending game decides — checked against the norm computed afresh after that outcome."""

from __future__ import annotations

import json
import random
from decimal import Decimal
from fractions import Fraction

import msgspec
import pytest

from tests.builders import TID, berger, fold_all, game, opened, schedule_of
from tests.core.test_norms import _field, _state
from tracker.core.crosstable import Tournament
from tracker.core.events import GameResult
from tracker.core.projection.stakes import stakes
from tracker.core.standings import standings
from tracker.core.worth.live import live_worth
from tracker.core.worth.norms import norm
from tracker.core.worth.prizes import money, money_at_stake, paid
from tracker.core.worth.rating import rating_changes
from tracker.protocol import stakes_message

RESULTS: tuple[GameResult, ...] = ("1-0", "1/2-1/2", "0-1")


def _mine(t_rounds: list, round_: int) -> tuple[int, int]:
    return next(p for p in t_rounds[round_ - 1].pairs if 1 in p)


def _gm_decided(t: Tournament, rounds: list) -> tuple[dict[str, list[tuple[str, str]]], str, str]:
    """What each result of player 1's round-8 game decides of the GM norm, and the results that are a win and a
    loss for player 1."""
    white, black = _mine(rounds, 8)
    win, lose = ("1-0", "0-1") if white == 1 else ("0-1", "1-0")
    decides = live_worth(t).decides[(8, white, black)]
    return (
        {result: [(s.after, s.text) for s in found if s.title == "GM"] for result, found in decides.items()},
        win,
        lose,
    )


def test_a_win_secures_the_norm_and_a_loss_puts_it_out() -> None:
    """Against nine 2600 GMs a GM norm needs 4½ of 9.  With 3½ of 7 a win in round 8 secures it, a draw or a
    loss leaves it to round 9; with 3 of 7 a loss in round 8 puts it out, a win or a draw leaves it open."""
    t, rounds = _state(_field(10, 2600), 7, ["W", "D", "D", "L", "W", "D", "L"])
    gm = norm(t, 0, "GM")
    assert (gm.status, gm.scored, gm.needed, gm.remaining) == ("possible", Fraction(7, 2), Fraction(9, 2), 2)
    w = live_worth(t)
    assert w.players[0].texts[[n.title for n in w.players[0].norms].index("GM")] == (
        "Me needs 1 from the last 2 games for a GM norm"
    )
    decided, win, lose = _gm_decided(t, rounds)
    assert decided.get(win) == [("secured", "Me secures a GM norm")]
    assert not decided.get("1/2-1/2") and not decided.get(lose)

    t, rounds = _state(_field(10, 2600), 7, ["W", "D", "L", "L", "W", "D", "L"])
    assert norm(t, 0, "GM").scored == 3
    decided, win, lose = _gm_decided(t, rounds)
    assert decided.get(lose) == [("out", "Me can no longer make a GM norm")]
    assert not decided.get("1/2-1/2") and not decided.get(win)


@pytest.mark.parametrize("seed", range(12))
def test_each_outcome_decides_a_norm_exactly_when_the_norm_computed_after_it_changes(seed: int) -> None:
    """Random fields and results: for every pending game and outcome, the norms listed as decided are the
    possible norms whose status, computed afresh after that one result, becomes secured or out; none else."""
    rng = random.Random(seed)
    rating = rng.choice([2450, 2550, 2600])
    me_title = rng.choice(["", "IM", "FM", "WGM"])
    players = _field(10, rating, "GM", (rng.choice([2300, 2450, 2550]), me_title, "USA"))
    for _ in range(100):  # results that leave some norm possible (else nothing is decided to check)
        played = rng.randint(4, 8)
        mine = [rng.choice("WDL") for _ in range(played)]
        t, rounds = _state(players, played, mine)
        w = live_worth(t)
        if any(n.status == "possible" for p in w.players for n in p.norms):
            break
    checked = 0
    for r in rounds[played:]:
        for white, black in r.pairs:
            for result in RESULTS:
                # a fresh crosstable each time: folding into one changes it in place
                after = fold_all([game(r.number, white, black, result)], state=_state(players, played, mine)[0])
                decided = {
                    (s.start_no, s.title): s.after for s in w.decides.get((r.number, white, black), {}).get(result, ())
                }
                for i, p in enumerate(players):
                    for before in w.players[i].norms:
                        now = norm(after, i, before.title).status
                        changed = before.status == "possible" and now != "possible"
                        assert decided.get((p.start_no, before.title)) == (now if changed else None), (
                            r.number,
                            white,
                            black,
                            result,
                            p.start_no,
                            before.title,
                            now,
                        )
                        checked += 1
    assert checked > 0


def test_the_stakes_message_carries_worth_and_the_norms_each_outcome_decides() -> None:
    t, _ = _state(_field(10, 2600), 7, ["W", "D", "L", "L", "W", "D", "L"])  # 3 of 7: 1½ of 2 for the GM norm
    message = json.loads(stakes_message(stakes(t), None, live_worth(t)))
    worth = {row["start_no"]: row for row in message["worth"]}
    changes = {c.start_no: c for c in rating_changes(t)}
    assert set(worth) == set(changes)
    me = worth[1]
    assert me["rating_change"] == round(float(changes[1].change), 1) and me["performance"] == changes[1].performance
    gm = next(n for n in me["norms"] if n["title"] == "GM")
    assert (gm["status"], gm["needed"], gm["scored"], gm["remaining"]) == ("possible", 4.5, 3.0, 2)
    assert gm["said"] == {"key": "norm.needs", "args": {"who": 1, "points": 1.5, "n": 2, "title": "GM"}}
    mine = [g for g in message["games"] if 1 in (g["white"], g["black"]) and g["round"] == 8]
    assert len(mine) == 1
    norms = {o["result"]: o.get("norms", []) for o in mine[0]["outcomes"]}
    white = mine[0]["white"] == 1
    lose = "0-1" if white else "1-0"
    gm_out = [s for s in norms[lose] if s["title"] == "GM"]
    assert gm_out == [
        {
            "start_no": 1,
            "title": "GM",
            "after": "out",
            "text": "Me can no longer make a GM norm",
            "said": {"key": "norm.out", "args": {"who": 1, "title": "GM"}},
        }
    ]
    assert not [s for r in ("1/2-1/2", "1-0" if white else "0-1") for s in norms[r] if s["title"] == "GM"]
    assert message["tournament"] == TID


def test_with_prizes_declared_the_stakes_message_carries_the_money_and_what_each_game_puts_at_stake() -> None:
    """A 6-player round robin with 1000/600/400 declared (hort) and its last round to play: every player's least
    and most money, and per outcome of each last-round game its players' money, as the prize search gives them."""
    n = 6
    rounds = berger(n)
    first = opened(n, schedule=schedule_of(rounds))
    first = msgspec.structs.replace(first, prizes=(Decimal(1000), Decimal(600), Decimal(400)), sharing="hort")
    rng = random.Random(3)
    events = [first] + [game(r.number, w, b, rng.choice(RESULTS)) for r in rounds[:-1] for w, b in r.pairs]
    t = fold_all(events)
    prizes = (Fraction(1000), Fraction(600), Fraction(400))
    message = json.loads(stakes_message(stakes(t), None, live_worth(t)))
    expected = {m.start_no: m for m in money(t, standings(t), prizes, "hort")}
    for row in message["worth"]:
        m = expected[row["start_no"]]
        assert (row["prize_min"], row["prize_max"], row["prize_exact"]) == (float(m.least), float(m.most), True)
        assert "prize" not in row
    at_stake = money_at_stake(t, prizes, "hort")
    assert at_stake, "the last round decides somebody's money"
    seen = 0
    for g in message["games"]:
        for o in g["outcomes"]:
            want = at_stake.get((g["round"], g["white"], g["black"]), {}).get(o["result"], ())
            got = o.get("money", [])
            assert got == [
                {"start_no": x.start_no, "least": float(x.least), "most": float(x.most), "exact": x.exact} for x in want
            ]
            seen += len(got)
    assert seen > 0
    done = fold_all([game(rounds[-1].number, w, b, "1-0") for w, b in rounds[-1].pairs], state=fold_all(events))
    final = json.loads(stakes_message(stakes(done), None, live_worth(done)))["worth"]
    paid_now = paid(standings(done), prizes, "hort")
    assert {row["start_no"]: row["prize"] for row in final} == {k: float(v) for k, v in paid_now.items()}
