"""The FIDE TEC tie-break server itself as the reference, when a checkout of it is at hand (issue 35).

Set ``TRACKER_TEC_SERVER`` to a checkout of https://github.com/OttoMilvang/TieBreakServer (its
``tiebreakchecker.py``); the test writes random team round robins (tests/core/test_team_standings.py's
generator: reserves, forfeits, whole matches forfeited, byes, ``352``, ``362``), runs the server on each with
a random order of team codes (every EDE form, the SBs, Koya with limits, BC, TBR, BBE, MPVGP, TPN) and
compares every value and rank.  Skipped without the variable (the server is not a dependency).  Events the
server cannot read are skipped: it fails on a long double round robin whose team colour difference passes
8 (an index error in its colour-preference bookkeeping, not in a tie-break).
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

import pytest

from tests.core.test_team_standings import generate
from tracker.core.teams.standings import team_standings
from tracker.formats import state_from
from tracker.formats.trf import parse_trf
from tracker.formats.trf.read import team_setup_of

SERVER = os.environ.get("TRACKER_TEC_SERVER", "")
CODES = ["EDE", "EDET", "EDEB", "EDEC", "EDEBT", "EDEBB", "SB:MP", "SB:GP", "ESB", "EMMSB", "EMGSB", "EGMSB"]
CODES += ["EGGSB", "KS:MP", "KS:GP", "KS:MP/L+1", "MPVGP", "BC", "TBR", "BBE", "TPN"]

pytestmark = pytest.mark.skipif(
    not (SERVER and (Path(SERVER) / "tiebreakchecker.py").exists()),
    reason="TRACKER_TEC_SERVER (a TieBreakServer checkout) is not set",
)


@pytest.mark.parametrize("seed", range(12))
def test_team_standings_equal_the_tec_servers_on_random_team_round_robins(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    ev = generate(random.Random(seed))
    first = rng.choice(["MPTS", "GPTS"])
    order = [first, "GPTS" if first == "MPTS" else "MPTS", *rng.sample(CODES, 4)]
    path = tmp_path / f"{seed}.trf"
    path.write_text(ev.text, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "tiebreakchecker.py", "-p", "-t", *order, "-b", "utf-8", "-i", str(path)],
        capture_output=True,
        text=True,
        cwd=SERVER,
        timeout=300,
        check=False,
    )
    result = json.loads(run.stdout)
    if result["status"]["code"]:
        pytest.skip(f"the TEC server cannot read this event: {result['status']['error']}")
    tf = parse_trf(ev.text, str(path))
    setup = team_setup_of(tf)
    assert setup is not None
    table = team_standings(state_from(tf), setup, tuple(order))
    ours = {row.team: row for row in table.rows}
    for competitor in result["tiebreakResult"]["competitors"]:
        row = ours[competitor["cid"]]
        theirs = [Fraction(Decimal(str(v))) for v in competitor["tiebreakScore"]]
        assert list(row.tiebreaks) == theirs, (competitor["cid"], order)
        assert row.rank == competitor["rank"], (competitor["cid"], order)
