"""The worker's cheaper encodings give the very bytes of the plain ones, on random tournaments.

:func:`~tracker.protocol.shapes.encoding_payload` (rows written column by column, each number's JSON
written once per value) against :func:`~tracker.protocol.shapes.standings_payload` in the payload, the
``update`` and the ``snapshot``; and :func:`~tracker.core.apply.summary_text`'s English joints against
the phrases said and rendered one joint at a time, as it wrote them before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import CLASSIC, FOOTBALL, berger, bye, correct, game, opened, void, withdraw
from tracker.core.apply import PARTS, SUMMARY, Update, _namer, apply, summary_text
from tracker.core.crosstable import Tournament
from tracker.core.errors import EventRejected
from tracker.core.events import Event, GameResult
from tracker.core.phrases import ENGLISH, Said, render
from tracker.core.standings import Row, Standings
from tracker.protocol import encode, encoding_payload, shapes, snapshot_message, standings_payload, update_message

RESULTS: st.SearchStrategy[GameResult] = st.sampled_from(["1-0", "0-1", "1/2-1/2", "1/2-1/2", "+-", "-+", "--"])
CODES = ["DE", "SB", "WON", "KS", "KS/L+1", "KS/L-1", "BPG", "BWG"]


def joined_one_by_one(said: Sequence[Said], names: Callable[[int], str]) -> str:
    """The summary as it was written before: each joint a phrase said and rendered."""
    head = render(said[0], names)
    if len(said) == 1:
        return head
    parts = render(said[-1], names)
    for part in reversed(said[1:-1]):
        parts = render(PARTS(first=render(part, names), next=parts), names)
    return render(SUMMARY(head=head, parts=parts), names)


def check(t: Tournament, update: Update) -> None:
    plain, cheap = standings_payload(update.standings), encoding_payload(update.standings)
    assert encode(cheap) == encode(plain)
    assert update_message(update, cheap) == update_message(update, plain) == update_message(update)
    assert snapshot_message(cheap) == snapshot_message(plain)
    names = _namer(t)
    assert update.summary == summary_text(update.said, names) == joined_one_by_one(update.said, names)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_the_worker_encodings_are_the_plain_ones_byte_for_byte(data: st.DataObject) -> None:
    n = data.draw(st.integers(2, 14), label="n")
    codes = data.draw(st.lists(st.sampled_from(CODES), unique=True, max_size=5), label="tiebreaks")
    scoring = data.draw(st.sampled_from([CLASSIC, FOOTBALL]), label="scoring")
    provisional = data.draw(st.sampled_from(["percentage", "max-games", "rounds"]), label="provisional")
    t, update = apply(None, opened(n, tiebreaks=["PTS", *codes], scoring=scoring, provisional=provisional))
    assert update is not None
    check(t, update)
    pending = [(r.number, w, b) for r in berger(n) for w, b in r.pairs]
    frees = [(r.number, r.free) for r in berger(n) if r.free is not None]
    recorded: list[tuple[int, int, int]] = []
    steps = data.draw(st.integers(1, len(pending) + len(frees) + 6), label="steps")
    for _ in range(steps):
        action = data.draw(st.integers(0, 19), label="action")
        event: Event
        if action == 0 and recorded:
            r, w, b = data.draw(st.sampled_from(recorded), label="corrected")
            event = correct(r, w, b, data.draw(RESULTS))
        elif action == 1 and recorded:
            r, w, b = recorded.pop(data.draw(st.integers(0, len(recorded) - 1), label="voided"))
            event = void(r, w, b)
            pending.append((r, w, b))
        elif action == 2:
            event = withdraw(data.draw(st.integers(1, n), label="withdrawn"))
        elif action == 3 and frees:
            r, player = frees.pop()
            event = bye(r, player, data.draw(st.sampled_from(["zero", "half", "full", "pab"])))
        elif pending:
            r, w, b = pending.pop(data.draw(st.integers(0, len(pending) - 1), label="next"))
            event = game(r, w, b, data.draw(RESULTS))
            recorded.append((r, w, b))
        else:
            break
        try:
            t, update = apply(t, event, update.standings)
        except EventRejected:
            continue  # a correction to the same result, a second withdrawal: nothing changed
        assert update is not None
        check(t, update)


def test_numbers_that_are_not_the_tables_own_objects_are_written_as_their_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rows made by hand (fresh Fractions, equal values in other objects) and a number table that fills up
    and is cleared mid-run still give the plain bytes."""
    monkeypatch.setattr(shapes, "_NUMBERS_HELD", 7)
    rows = tuple(
        Row(
            rank=k,
            start_no=k,
            name=f'Player, {k} ü"',
            points=Fraction(7 * k, 4),
            tiebreaks=(Fraction(k, 2), Fraction(-k, 3), Fraction(10**k, 3)),
            games=k,
            withdrawn=k == 2,
            qualified=k % 2 == 0,
            line=Fraction(k, 1),
            results=((1, k + 1, "w", "1"), (2, 0, "-", "U")),
        )
        for k in range(1, 9)
    )
    s = Standings("t", "T", 3, 9, True, "games", "games", ("SB", "KS", "WON"), rows)
    for _ in range(3):
        assert encode(encoding_payload(s)) == encode(standings_payload(s))
    assert len(shapes._numbers_held) <= 7 + 8 * 5


def test_a_summary_in_a_language_with_other_joints_is_rendered_joint_by_joint() -> None:
    """The English shortcut applies only where the language's joints are the English ones."""

    class Semicolons:
        def forms(self, key: str) -> Sequence[str] | None:
            return {"summary.parts": ("{first}; {next}",), "summary": ("{head} — {parts}",)}.get(key) or (
                ENGLISH.forms(key)
            )

        def plural(self, n: int) -> int:
            return ENGLISH.plural(n)

        def points(self, value: Fraction) -> str:
            return ENGLISH.points(value)

        def join(self, items: Sequence[str]) -> str:
            return ENGLISH.join(items)

    t, _ = apply(None, opened(4))
    said = (
        Said("summary.recorded", {"white": 1, "black": 2, "result": "1-0", "round": 1}),
        Said("summary.reaches", {"player": 1}),
        Said("summary.falls", {"player": 2}),
    )
    assert summary_text(said, _namer(t), Semicolons()) == "P1–P2 1–0 (round 1) — P1 reaches 50%; P2 falls below 50%"
    assert summary_text(said, _namer(t)) == "P1–P2 1–0 (round 1): P1 reaches 50%, P2 falls below 50%"
