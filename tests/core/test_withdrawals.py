"""Withdrawals from a round, and requested byes that replace a scheduled game (issue 28, item 2).

Reproductions: after a withdrawal, a 1–0 against the withdrawn player was accepted without a note; the
game a requested bye replaced came back in the projection's pending list, unlabelled and with colours
reversed ("12 games remaining" with 11 scheduled).
"""

from __future__ import annotations

import msgspec
import pytest

from tests.builders import TID, berger, bye, fold_all, game, opened, schedule_of
from tracker.core.apply import step
from tracker.core.errors import EventRejected
from tracker.core.events import PlayerWithdrawn, decode_event, encode_event
from tracker.core.projection import project
from tracker.core.projection.model import remaining_games

EIGHT = berger(8)


def scheduled(n: int = 8) -> list[object]:
    return [opened(n, schedule=schedule_of(berger(n)))]


def round_games(r: int) -> list[object]:
    return [game(r, w, b, "1/2-1/2") for w, b in EIGHT[r - 1].pairs]


def withdraw(player: int, round_: int | None = None) -> PlayerWithdrawn:
    return PlayerWithdrawn(f"w-{player}-{round_}", TID, player, round=round_)


def test_the_game_a_requested_bye_replaced_never_comes_back_in_the_projections_pending_list() -> None:
    events = [*scheduled(), *(e for r in range(1, 5) for e in round_games(r))]
    w, b = next((w, b) for w, b in EIGHT[4].pairs if 3 in (w, b))  # player 3's round-5 game
    t = fold_all([*events, bye(5, 3, "half", replaces_game=True)])
    games = remaining_games(t)
    assert all({g[1], g[2]} != {t.index[w], t.index[b]} for g in games), "the replaced game is not pending"
    assert all(g[0] is not None for g in games), "every remaining game is a scheduled one"
    assert len(games) == 2 * 4 + 3  # rounds 6-7 and the three other games of round 5
    p = project(t, exact_limit=-1)
    assert p.remaining == len(games) == len(p.games)


def test_a_played_result_against_a_player_withdrawn_from_that_round_is_refused_with_the_reason() -> None:
    t = fold_all([*scheduled(), *round_games(1), *round_games(2), withdraw(5, 3)])
    w, b = next((w, b) for w, b in EIGHT[2].pairs if 5 in (w, b))
    with pytest.raises(EventRejected) as refused:
        step(t, game(3, w, b, "1-0"))
    assert refused.value.code == "withdrawn"
    assert "withdrew from round 3" in refused.value.reason and "forfeit" in refused.value.reason
    lost = "-+" if w == 5 else "+-"
    with pytest.raises(EventRejected):  # nor a forfeit the withdrawn player wins
        step(t, game(3, w, b, "+-" if w == 5 else "-+"))
    t, change = step(t, game(3, w, b, lost))
    assert change is not None
    assert step(t, game(4, *next((w, b) for w, b in EIGHT[3].pairs if 5 in (w, b)), "--"))[1] is not None


def test_games_before_the_withdrawal_round_are_still_played_games() -> None:
    events = [*scheduled(), *round_games(1)]
    late = next((w, b) for w, b in EIGHT[1].pairs if 5 in (w, b))  # 5's round-2 game, not entered yet
    t = fold_all([*events, withdraw(5, 3)])
    t, _ = step(t, game(2, *late, "1-0"))  # before the withdrawal: a game like any other
    p = project(fold_all([*events, withdraw(5, 3)]), exact_limit=-1)
    by_round = {(g.round, g.white, g.black): [o.result for o in g.outcomes] for g in p.games}
    assert by_round[(2, *late)] == ["1-0", "1/2-1/2", "0-1"]
    for (r, w, b), outcomes in by_round.items():
        if 5 in (w, b) and r is not None and r >= 3:
            assert outcomes == ["-+" if w == 5 else "+-"]


def test_a_withdrawal_from_a_round_the_player_has_played_is_refused() -> None:
    t = fold_all([*scheduled(), *round_games(1), *round_games(2)])
    with pytest.raises(EventRejected) as refused:
        step(t, withdraw(5, 2))
    assert refused.value.code == "withdrawn" and "played round 2" in refused.value.reason
    with pytest.raises(EventRejected) as beyond:
        step(t, withdraw(5, 9))
    assert "beyond" in beyond.value.reason
    t, _ = step(t, withdraw(5, 3))
    assert t.withdrawn[t.index[5]] and t.withdrawn_from[t.index[5]] == 3


def test_a_withdrawal_written_before_rounds_existed_decodes_and_refuses_nothing() -> None:
    old = b'{"type":"player_withdrawn","id":"quit","tournament":"test-rr","player":5,"reason":"ill"}'
    event = decode_event(old)
    assert isinstance(event, PlayerWithdrawn) and event.round is None
    t = fold_all([*scheduled(), *round_games(1), event])
    w, b = next((w, b) for w, b in EIGHT[1].pairs if 5 in (w, b))
    t, change = step(t, game(2, w, b, "1-0"))  # accepted, as before
    assert change is not None
    again = msgspec.json.decode(encode_event(event))
    assert again["round"] is None and again["reason"] == "ill"


def test_the_summary_says_from_which_round() -> None:
    from tracker.core.apply import apply

    t = fold_all([*scheduled(), *round_games(1)])
    _, update = apply(t, withdraw(5, 2))
    assert update is not None and update.summary.startswith("P5 withdraws from round 2")
