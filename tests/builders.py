"""Plain-value builders for core tests: players, events, Berger schedules, TRF lines.

Nothing here knows the tie-break rules: it only spells events the way an
arbiter (or a TRF file) would send them.  Event ids are unique in the test
process unless a test passes its own.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Final

from tracker.core.apply import step
from tracker.core.crosstable import Tournament
from tracker.core.events import (
    DEFAULT_TIEBREAKS,
    Basis,
    ByeKind,
    ByeRecorded,
    Event,
    Format,
    GameResult,
    Player,
    PlayerWithdrawn,
    ProvisionalBasis,
    ResultCorrected,
    ResultRecorded,
    ResultVoided,
    Scoring,
    TournamentOpened,
)
from tracker.core.standings import Standings

TID: Final = "test-rr"
DATA: Final = Path(__file__).resolve().parents[1] / "tracker" / "data"

CLASSIC: Final = Scoring()
FOOTBALL: Final = Scoring(win=Decimal(3), draw=Decimal(1), loss=Decimal(0))

_ids = itertools.count(1)


def _id(given: str | None) -> str:
    return given if given is not None else f"ev-{next(_ids)}"


def players(n: int) -> tuple[Player, ...]:
    """``n`` players with start numbers 1…n, named P1…Pn."""
    return tuple(Player(start_no=k, name=f"P{k}") for k in range(1, n + 1))


def opened(
    n: int,
    *,
    format: Format = "single",
    scoring: Scoring = CLASSIC,
    tiebreaks: Sequence[str] = DEFAULT_TIEBREAKS,
    basis: Basis = "games",
    provisional: ProvisionalBasis = "percentage",
    rounds: int | None = None,
    schedule: Sequence[Sequence[tuple[int, int]]] | None = None,
    id: str | None = None,
) -> TournamentOpened:
    """The opening event of an ``n``-player round robin named after :data:`TID`."""
    return TournamentOpened(
        id=_id(id),
        tournament=TID,
        name=f"{n}-player test round robin",
        players=players(n),
        format=format,
        rounds=rounds,
        scoring=scoring,
        tiebreaks=tuple(tiebreaks),
        basis=basis,
        provisional=provisional,
        schedule=None if schedule is None else tuple(tuple(pairs) for pairs in schedule),
    )


def game(
    round_: int, white: int, black: int, result: GameResult, *, short: bool = False, id: str | None = None
) -> ResultRecorded:
    return ResultRecorded(_id(id), TID, round_, white, black, result, short=short)


def correct(
    round_: int, white: int, black: int, result: GameResult, *, short: bool = False, id: str | None = None
) -> ResultCorrected:
    return ResultCorrected(_id(id), TID, round_, white, black, result, short=short)


def void(round_: int, white: int, black: int, *, id: str | None = None) -> ResultVoided:
    return ResultVoided(_id(id), TID, round_, white, black)


def bye(
    round_: int, player: int, kind: ByeKind = "zero", *, id: str | None = None, replaces_game: bool = False
) -> ByeRecorded:
    return ByeRecorded(_id(id), TID, round_, player, kind, replaces_game=replaces_game)


def withdraw(player: int, *, id: str | None = None) -> PlayerWithdrawn:
    return PlayerWithdrawn(_id(id), TID, player)


def fold_all(events: Iterable[Event], state: Tournament | None = None) -> Tournament:
    """Fold ``events`` in order (the first must open the tournament when ``state`` is None)."""
    t = state
    for event in events:
        t, _ = step(t, event)
    assert t is not None, "no events"
    return t


def column(s: Standings, code: str) -> dict[int, Fraction]:
    """One tie-break column of the standings by start number (``"PTS"`` gives the points)."""
    if code == "PTS":
        return {row.start_no: row.points for row in s.rows}
    k = s.codes.index(code)
    return {row.start_no: row.tiebreaks[k] for row in s.rows}


def ranks(s: Standings) -> dict[int, int]:
    """Rank by start number."""
    return {row.start_no: row.rank for row in s.rows}


def order(s: Standings) -> list[int]:
    """Start numbers in standings order."""
    return [row.start_no for row in s.rows]


def pts(text: str) -> Fraction:
    """``"3½"`` or ``"3.5"`` or ``"½"`` as an exact number."""
    text = text.strip()
    if text.endswith("½"):
        return Fraction(text[:-1] or 0) + Fraction(1, 2)
    if text.endswith("¼"):
        return Fraction(text[:-1] or 0) + Fraction(1, 4)
    if text.endswith("¾"):
        return Fraction(text[:-1] or 0) + Fraction(3, 4)
    return Fraction(text)


# -- Berger tables ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BergerRound:
    """One round of a round robin: its games (white, black) and the free player of an odd n."""

    number: int
    pairs: tuple[tuple[int, int], ...]
    free: int | None


def berger(n: int, cycles: int = 1) -> list[BergerRound]:
    """Rounds of an ``n``-player round robin by the circle method (FIDE Berger tables).

    Start numbers are 1…n; for an odd ``n`` a dummy ``n + 1`` makes the free
    round.  The second cycle repeats the first with colours reversed.
    """
    m = n + (n % 2)
    dummy = m if n % 2 else None
    ring = list(range(1, m))  # m is fixed; the others rotate
    first: list[tuple[tuple[int, int], ...]] = []
    frees: list[int | None] = []
    for r in range(m - 1):
        pairs: list[tuple[int, int]] = []
        free: int | None = None
        # fixed player m alternates colours by round (Berger's pattern)
        a, b = (ring[0], m) if r % 2 == 0 else (m, ring[0])
        candidates = [(a, b)]
        for k in range(1, m // 2):
            candidates.append((ring[k], ring[-k]))
        for w, bl in candidates:
            if dummy in (w, bl):
                free = bl if w == dummy else w
            else:
                pairs.append((w, bl))
        first.append(tuple(pairs))
        frees.append(free)
        ring = ring[-1:] + ring[:-1]
    rounds = [BergerRound(r + 1, first[r], frees[r]) for r in range(m - 1)]
    if cycles == 2:
        rounds += [BergerRound(m - 1 + r + 1, tuple((b, w) for w, b in first[r]), frees[r]) for r in range(m - 1)]
    return rounds


def schedule_of(rounds: Sequence[BergerRound]) -> list[list[tuple[int, int]]]:
    """The ``TournamentOpened.schedule`` value of a Berger table."""
    return [list(r.pairs) for r in rounds]


# -- TRF lines ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TrfPlayer:
    """What a TRF ``001`` line says about a player, besides the games."""

    start_no: int
    name: str
    points: Fraction
    rank: int


def read_trf(text: str) -> tuple[TournamentOpened, list[Event], list[TrfPlayer]]:
    """A TRF16 round robin as an opening event, its results in round order, and its 001 lines.

    Only what the data sets use: ``012`` name, ``XXR`` rounds, ``001`` lines
    with games (``1 = 0 + -``) and byes (opponent ``0000``).  Each game is
    taken once, from White's line; a ``-`` for White is a forfeit loss, or a
    double forfeit when Black's code is ``-`` too.
    """
    name = "TRF tournament"
    rounds: int | None = None
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("012"):
            name = line[4:].strip()
        elif line.startswith("XXR"):
            rounds = int(line[4:].strip())
        elif line.startswith("001"):
            lines.append(line)
    info: list[TrfPlayer] = []
    cells: dict[int, dict[int, tuple[int, str, str]]] = {}
    for line in lines:
        start_no = int(line[4:8])
        info.append(TrfPlayer(start_no, line[14:47].strip(), Fraction(line[80:84].strip()), int(line[85:89])))
        own: dict[int, tuple[int, str, str]] = {}
        for r, base in enumerate(range(91, len(line), 10), start=1):
            cell = line[base : base + 8].ljust(8)
            opponent = int(cell[0:4].strip() or 0)
            own[r] = (opponent, cell[5].strip() or "-", cell[7].strip() or "Z")
        cells[start_no] = own
    event = TournamentOpened(
        id=_id(None),
        tournament=TID,
        name=name,
        players=tuple(Player(start_no=p.start_no, name=p.name) for p in info),
        rounds=rounds,
    )
    events: list[Event] = []
    for r in range(1, max(len(c) for c in cells.values()) + 1):
        for start_no, own in cells.items():
            if r not in own:
                continue
            opponent, colour, code = own[r]
            if opponent == 0:
                events.append(bye(r, start_no, _TRF_BYES[code]))
            elif colour == "w":
                their = cells[opponent][r][2]
                events.append(game(r, start_no, opponent, _trf_result(code, their)))
    return event, events, info


_TRF_BYES: Final[dict[str, ByeKind]] = {"F": "full", "H": "half", "Z": "zero", "U": "pab", "-": "zero"}


def _trf_result(white: str, black: str) -> GameResult:
    table: dict[tuple[str, str], GameResult] = {
        ("1", "0"): "1-0",
        ("=", "="): "1/2-1/2",
        ("0", "1"): "0-1",
        ("+", "-"): "+-",
        ("-", "+"): "-+",
        ("-", "-"): "--",
    }
    return table[(white, black)]


def read_data(filename: str) -> tuple[TournamentOpened, list[Event], list[TrfPlayer]]:
    """:func:`read_trf` of a file shipped in ``tracker/data``."""
    return read_trf((DATA / filename).read_text(encoding="utf-8"))
