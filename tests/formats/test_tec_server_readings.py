"""``BWG``, ``BPG``, ``ARO`` and ``TPR`` against the FIDE TEC tie-break server itself, in both editions (issues 38, 39).

tests/core/test_tec_readings.py holds tracker to a reference written from the server's reading; this file asks
the server.  Set ``TRACKER_TEC_SERVER`` to a checkout of https://github.com/OttoMilvang/TieBreakServer (its
``tiebreakchecker.py``); skipped without it (the server is not a dependency).  Random rated round robins, single
and double, some rounds entered, with byes of every kind (``U``, ``H``, ``Z``, ``F``, also replacing a scheduled
game), forfeits, double forfeits and short games, are written as tracker exports them (the ``042`` start date
says the edition: 2025 for 2024, 2026 for 2026) and read by the server with its default options; every player's
four values must equal tracker's (an ARO or TPR over no game at the board: the server's null, tracker's 0), and
the performance a standings row carries (``tracker standings --format json``'s ``performance``, issue 39) must be
the server's TPR (``null`` both where there is none).  Every
player is rated: with an unrated player in the file and no ``-u RATING`` the server computes no ARO (nor TPR,
RTNG) for anyone (``compute_rtng``'s ``allrated``), so there is no reading to compare (tracker leaves an unrated
opponent out, docs/tiebreaks.md).  Every free round of an odd round robin carries its bye, as ``tracker new``'s
start lists write it (``0000 - Z``): the server (1.9.57) fails to read a wholly blank round cell in the middle of a
row (``KeyError: 'wResult'`` or "No result for black"), though TRF16 reads a blank as ``Z``; the exports of an
event opened without its free rounds recorded have such cells.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import msgspec
import pytest

from tests.builders import berger, bye, column, fold_all, game, opened, schedule_of
from tracker.cli import main
from tracker.core.events import ByeKind, Event, GameResult, Player, Rules
from tracker.core.standings import standings
from tracker.formats.trf.write import trf_bytes

SERVER = os.environ.get("TRACKER_TEC_SERVER", "")
CODES = ("PTS", "BWG", "BPG", "ARO", "TPR")
START = {"2024": "042 2025/06/01", "2026": "042 2026/06/01"}
RESULTS: tuple[GameResult, ...] = ("1-0", "1/2-1/2", "0-1", "+-", "-+", "--")
BYES: tuple[ByeKind, ...] = ("pab", "half", "zero", "full")

pytestmark = pytest.mark.skipif(
    not (SERVER and (Path(SERVER) / "tiebreakchecker.py").exists()),
    reason="TRACKER_TEC_SERVER (a TieBreakServer checkout) is not set",
)


def _events(rng: random.Random, rules: Rules) -> list[Event]:
    n = rng.randint(3, 8)
    cycles = rng.choice([1, 1, 2])
    table = berger(n, cycles)
    first = opened(n, format="double" if cycles == 2 else "single", tiebreaks=CODES, schedule=schedule_of(table))
    rated = tuple(
        Player(start_no=p.start_no, name=p.name, rating=rng.choice([1450, 1800, 1999, 2000, 2001, 2350, 2700]))
        for p in first.players
    )
    events: list[Event] = [msgspec.structs.replace(first, players=rated, rules=rules, records=(START[rules],))]
    entered = rng.randint(1, len(table))
    # as tracker new's start list has it, every free round is a bye: Z ahead, a drawn kind once entered
    events += [bye(rnd.number, rnd.free, "zero") for rnd in table[entered:] if rnd.free is not None]
    for rnd in table[:entered]:
        if rnd.free is not None:
            events.append(bye(rnd.number, rnd.free, rng.choice(("zero", *BYES))))
        for white, black in rnd.pairs:
            what = rng.choice(["game", "game", "game", "byes", "pending"])
            if what == "byes":
                events += [bye(rnd.number, p, rng.choice(BYES), replaces_game=True) for p in (white, black)]
            elif what == "game":
                result = rng.choice(RESULTS)
                short = result in ("1-0", "1/2-1/2", "0-1") and rng.random() < 0.15
                events.append(game(rnd.number, white, black, result, short=short))
    return events


def _server(path: Path) -> dict[str, Any]:
    run = subprocess.run(
        [sys.executable, "tiebreakchecker.py", "-p", "-t", *CODES, "-i", str(path)],
        capture_output=True,
        text=True,
        cwd=SERVER,
        timeout=120,
        check=False,
    )
    result: dict[str, Any] = json.loads(run.stdout)
    return result


@pytest.mark.parametrize("rules", ["2024", "2026"])
@pytest.mark.parametrize("seed", range(50))
def test_bwg_bpg_aro_tpr_equal_the_tec_servers_on_random_rated_round_robins(
    seed: int, rules: Rules, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    t = fold_all(_events(random.Random(f"{seed}-{rules}"), rules))
    path = tmp_path / "event.trf"
    path.write_bytes(trf_bytes(t))
    read = _server(path)
    assert read["status"]["code"] == 0, read["status"]
    assert read["tiebreakResult"]["rules"].startswith("2024" if rules == "2024" else "2026")
    s = standings(t)
    assert main(["standings", str(path), "--format", "json"]) == 0
    rows = {row["start_no"]: row for row in json.loads(capsys.readouterr().out)["standings"]}
    ours = {code: column(s, code) for code in CODES[1:]}
    for competitor in read["tiebreakResult"]["competitors"]:
        # the server writes null for an ARO over no rated game at the board; tracker's column says 0
        theirs = [Fraction(Decimal(str(v if v is not None else 0))) for v in competitor["tiebreakScore"]]
        mine = [ours[code][competitor["cid"]] for code in CODES[1:]]
        assert mine == theirs[1:], (competitor["cid"], path.read_text(encoding="latin-1"))
        tpr = competitor["tiebreakScore"][CODES.index("TPR")]
        assert rows[competitor["cid"]]["performance"] == tpr, (competitor["cid"], path.read_text(encoding="latin-1"))
