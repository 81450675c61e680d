"""FIDE Berger tables (Handbook C.05, Annex 1): the pairings of every round of a round robin.

How the tables are built
------------------------

For an even number of players ``m`` (an odd field gets a dummy ``m = n + 1``:
whoever is paired with it has the round free), player ``m`` is fixed and the
others turn around it.  In round ``r`` (1-based) player ``m`` meets

* ``a = (r + 1) / 2`` with ``a`` White, when ``r`` is odd;
* ``a = m / 2 + r / 2`` with ``m`` White, when ``r`` is even;

and the other players meet in pairs ``(a + k, a − k)`` for ``k = 1 … m/2 − 1``,
White first, counted modulo ``m − 1`` in ``1 … m − 1``.  Board 1 is the game
of player ``m``, then ``k = 1, 2, …``.  That gives FIDE's published tables:
for 8 players round 1 is 1–8, 2–7, 3–6, 4–5 and round 2 is 8–5, 6–4, 7–3, 1–2
(the tests hold the 8- and 10-player tables in full).

A double round robin plays the table twice, the second cycle with colours
reversed; as C.05 Annex 1 recommends, the first cycle's last two rounds are
swapped, so that nobody plays three games running with the same colour
across the two cycles (TRF26 record 192 calls this ``FIDE_DOUBLEROUNDROBIN``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BergerRound:
    """One round: its games ``(white, black)`` in board order, and the player with the free round (odd fields)."""

    number: int
    pairs: tuple[tuple[int, int], ...]
    free: int | None


def berger_table(n: int) -> list[BergerRound]:
    """The single round robin of players ``1 … n`` (``n ≥ 2``) by FIDE's Berger table, round by round.

    Raises :class:`ValueError` for fewer than two players.
    """
    if n < 2:
        raise ValueError(f"a round robin needs at least 2 players, not {n}")
    m = n + n % 2
    ring = m - 1

    def turned(x: int) -> int:
        return (x - 1) % ring + 1

    rounds = []
    for r in range(1, m):
        a = (r + 1) // 2 if r % 2 else m // 2 + r // 2
        games = [(a, m) if r % 2 else (m, a)]
        games += [(turned(a + k), turned(a - k)) for k in range(1, m // 2)]
        free = None
        if m != n:  # the dummy's opponent has the round free
            free = a
            games = games[1:]
        rounds.append(BergerRound(r, tuple(games), free))
    return rounds


def berger_schedule(n: int, cycles: int = 1) -> list[BergerRound]:
    """Every round of an ``n``-player round robin of ``cycles`` (1 or 2) cycles.

    The second cycle reverses the colours; the first cycle's last two rounds
    are swapped when there are two cycles (see the module docstring).
    Raises :class:`ValueError` for fewer than two players or a cycle count other than 1 or 2.
    """
    if cycles not in (1, 2):
        raise ValueError(f"a round robin has 1 or 2 cycles, not {cycles}")
    first = berger_table(n)
    if cycles == 1:
        return first
    played = [*first[:-2], first[-1], first[-2]] if len(first) >= 2 else first
    per = len(first)
    rounds = [BergerRound(k + 1, r.pairs, r.free) for k, r in enumerate(played)]
    rounds += [BergerRound(per + r.number, tuple((b, w) for w, b in r.pairs), r.free) for r in first]
    return rounds


__all__ = ["BergerRound", "berger_schedule", "berger_table"]
