"""The worker's standings without rows give the very bytes of the plain ones, on many seeded tournaments.

A worker applies each result with ``apply(..., rows=False)``: its standings carry the rows' values as
integer columns (:class:`~tracker.core.standings.Table`) and no rows, and
:func:`~tracker.protocol.shapes.encoding_payload` writes the rows' JSON from those columns.  Against the
plain path (rows made, :func:`~tracker.protocol.shapes.standings_payload` encoded as is), event by event:
the payload, the ``update`` and the ``snapshot``, byte for byte, and the keys the next diff compares.  The
tournaments mix single and double round robins, 1-½-0 and 3-1-0 scoring, forfeits, double forfeits,
byes of every kind, corrections, voids and withdrawals, over every provisional basis and many tie-break
orders.
"""

from __future__ import annotations

import random
from decimal import Decimal

import pytest

from tests.builders import CLASSIC, FOOTBALL, berger, bye, correct, game, opened, void, withdraw
from tracker.core.apply import Update, apply
from tracker.core.crosstable import Tournament
from tracker.core.errors import EventRejected
from tracker.core.events import ByeKind, Event, Format, GameResult, Scoring
from tracker.core.standings import Standings, _rows, standings
from tracker.protocol import encode, encoding_payload, shapes, snapshot_message, standings_payload, update_message

RESULTS: tuple[GameResult, ...] = ("1-0", "0-1", "1/2-1/2", "1/2-1/2", "1-0", "+-", "-+", "--")
BYES: tuple[ByeKind, ...] = ("full", "half", "zero", "pab")
CODES = ("DE", "SB", "WON", "KS", "KS/L+1", "KS/L-1", "KS/L-2", "BPG", "BWG")
#: forfeits and byes worth other points than a game: the columns get denominators of their own
ODD = Scoring(win=Decimal(3), draw=Decimal(1), loss=Decimal(0), forfeit_win=Decimal("2.5"), half_bye=Decimal("1.25"))


def tournament(seed: int) -> list[Event]:
    """A seeded round robin: its opening, then results in a shuffled order with the odd correction, void,
    bye, withdrawal and re-delivery."""
    rng = random.Random(seed)
    n = rng.randint(3, 12)
    form: Format = rng.choice(("single", "double"))
    cycles = 2 if form == "double" else 1
    codes = rng.sample(CODES, rng.randint(0, 4))
    out: list[Event] = [
        opened(
            n,
            format=form,
            scoring=rng.choice((CLASSIC, FOOTBALL, ODD)),
            tiebreaks=["PTS", *codes],
            basis=rng.choice(("games", "rounds")),
            provisional=rng.choice(("percentage", "max-games", "rounds")),
        )
    ]
    rounds = berger(n, cycles)
    games = [(r.number, w, b) for r in rounds for w, b in r.pairs]
    frees = [(r.number, r.free) for r in rounds if r.free is not None]
    rng.shuffle(games)
    recorded: list[tuple[int, int, int]] = []
    while games or frees:
        roll = rng.random()
        if roll < 0.06 and recorded:
            out.append(correct(*rng.choice(recorded), rng.choice(RESULTS)))
        elif roll < 0.09 and recorded:
            r, w, b = recorded.pop(rng.randrange(len(recorded)))
            out.append(void(r, w, b))
            games.append((r, w, b))
        elif roll < 0.11:
            out.append(withdraw(rng.randint(1, n)))
        elif roll < 0.2 and frees:
            r, player = frees.pop(rng.randrange(len(frees)))
            out.append(bye(r, player, rng.choice(BYES)))
        elif roll < 0.23:
            out.append(out[rng.randrange(len(out))])  # a re-delivery: no update
        elif games:
            r, w, b = games.pop()
            out.append(game(r, w, b, rng.choice(RESULTS), short=rng.random() < 0.1))
            recorded.append((r, w, b))
        else:
            r, player = frees.pop()
            out.append(bye(r, player, rng.choice(BYES)))
    return out


def check(t: Tournament, fast: Update, plain: Update) -> None:
    s, full = fast.standings, plain.standings
    assert s.rows == () and s.table is not None
    assert _rows(s.table) == full.rows
    assert s.keys == full.keys
    reference = standings_payload(full)  # rows as dicts of floats, encoded as they are
    cheap = encoding_payload(s)
    assert encode(cheap) == encode(reference)
    assert update_message(fast, cheap) == update_message(plain, reference) == update_message(plain)
    assert snapshot_message(cheap) == snapshot_message(reference)
    assert (fast.changed, fast.reached, fast.fell, fast.summary) == (
        plain.changed,
        plain.reached,
        plain.fell,
        plain.summary,
    )


def run(seed: int) -> int:
    """Apply a seeded tournament both ways, checking every update; returns how many were checked."""
    fast_state: Tournament | None = None
    plain_state: Tournament | None = None
    before: Standings | None = None
    checked = 0
    for event in tournament(seed):
        try:
            fast_state, fast = apply(fast_state, event, before, rows=False)
        except EventRejected:
            with pytest.raises(EventRejected):
                apply(plain_state, event)
            continue
        plain_state, plain = apply(plain_state, event)
        if fast is None:
            assert plain is None
            continue
        assert plain is not None
        check(fast_state, fast, plain)
        before = fast.standings
        checked += 1
    assert fast_state is not None and plain_state is not None
    assert standings(fast_state, rows=False).keys == standings(plain_state).keys
    return checked


@pytest.mark.parametrize("block", range(4))
def test_the_worker_standings_encode_to_the_plain_bytes(block: int) -> None:
    checked = sum(run(seed) for seed in range(25 * block, 25 * (block + 1)))
    assert checked > 25 * 10  # the tournaments are not all rejected at once


def test_a_number_table_that_fills_up_and_starts_again_still_writes_each_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shapes, "_UNITS_HELD", 3)
    monkeypatch.setattr(shapes, "_UNIT_JSON", {})
    assert run(7) > 10
    assert all(len(table) <= 3 for table in shapes._UNIT_JSON.values())
