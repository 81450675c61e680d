"""Synthetic round robins for the benchmarks: Berger pairings, seeded random results.

Everything here is plain values: a :class:`TournamentOpened` and the
``ResultRecorded`` events of a whole single round robin in round order, with
results drawn from a seeded generator (so every run measures the same
games).  Names look like real ones ("Surname, Given") so payload sizes are
realistic.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Final

from tracker.core.events import GameResult, Player, ResultRecorded, TournamentOpened

#: White win / draw / Black win, roughly the shares of elite classical chess.
RESULTS: Final[tuple[GameResult, ...]] = ("1-0", "1/2-1/2", "0-1")
WEIGHTS: Final = (0.30, 0.45, 0.25)

_SURNAMES: Final = (
    *("Carlsen", "Caruana", "Nepomniachtchi", "Ding", "Firouzja", "Giri", "So", "Aronian", "Nakamura", "Rapport"),
    *("Dominguez", "Mamedyarov", "Vachier-Lagrave", "Grischuk", "Radjabov", "Duda", "Karjakin", "Wesley"),
    *("Anand", "Topalov", "Kramnik", "Gelfand", "Ivanchuk", "Svidler"),
)


def berger(n: int) -> list[list[tuple[int, int]]]:
    """The rounds of an ``n``-player single round robin (circle method), as (white, black) start numbers.

    For an odd ``n`` the player paired with the dummy ``n + 1`` is free in that round.
    """
    m = n + (n % 2)
    ring = list(range(1, m))
    rounds: list[list[tuple[int, int]]] = []
    for r in range(m - 1):
        pairs = [(ring[0], m) if r % 2 == 0 else (m, ring[0])]
        pairs += [(ring[k], ring[-k]) for k in range(1, m // 2)]
        rounds.append([(w, b) for w, b in pairs if w <= n and b <= n])
        ring = ring[-1:] + ring[:-1]
    return rounds


def players(n: int) -> tuple[Player, ...]:
    return tuple(
        Player(
            start_no=k,
            name=f"{_SURNAMES[(k - 1) % len(_SURNAMES)]}{'' if k <= len(_SURNAMES) else k}, Player",
            rating=2800 - 7 * k,
        )
        for k in range(1, n + 1)
    )


def opened(tid: str, n: int) -> TournamentOpened:
    return TournamentOpened(
        id=f"{tid}/open", tournament=tid, name=f"Bench round robin {tid} ({n} players)", players=players(n)
    )


def results(tid: str, n: int, rng: random.Random) -> list[ResultRecorded]:
    """Every game of the round robin, in round order, with random results."""
    out = []
    for r, pairs in enumerate(berger(n), start=1):
        for w, b in pairs:
            result = rng.choices(RESULTS, WEIGHTS)[0]
            out.append(ResultRecorded(f"{tid}/r{r}/{w}-{b}", tid, r, w, b, result))
    return out


def tournament(tid: str, n: int, seed: int) -> tuple[TournamentOpened, list[ResultRecorded]]:
    """One whole round robin: its opening event and its results, reproducible from ``seed``."""
    return opened(tid, n), results(tid, n, random.Random(f"{seed}/{tid}"))


def tournaments(
    count: int, n: int, seed: int, prefix: str = "t"
) -> Iterator[tuple[TournamentOpened, list[ResultRecorded]]]:
    for k in range(count):
        yield tournament(f"{prefix}{k:06d}", n, seed)
