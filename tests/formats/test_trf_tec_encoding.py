"""The TRF tracker writes is read by the FIDE TEC tie-break server with its default options (issue 38).

The server reads a TRF as Latin-1 unless told otherwise, and refuses a file whose columns do not line up in
bytes.  Set ``TRACKER_TEC_SERVER`` to a checkout of the server (its ``tiebreakchecker.py``, as for
tests/formats/test_team_tec_server.py); skipped without it.  A start list with names Latin-1 cannot hold is
made by ``tracker new``, results are recorded, the file is exported both ways: the default (Latin-1) export is
read with no encoding option and its points and Sonneborn-Berger equal tracker's; the UTF-8 export, read the
same way, is refused (what the default export avoids).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from tracker.cli import main
from tracker.core.apply import apply
from tracker.core.events import GameResult, ResultRecorded
from tracker.core.standings import standings
from tracker.formats import state_from
from tracker.formats.files import read_file
from tracker.formats.trf.write import trf_bytes

SERVER = os.environ.get("TRACKER_TEC_SERVER", "")

pytestmark = pytest.mark.skipif(
    not (SERVER and (Path(SERVER) / "tiebreakchecker.py").exists()),
    reason="TRACKER_TEC_SERVER (a TieBreakServer checkout) is not set",
)

NAMES = ["Łukasz Wójcik 2400", "Ševčík, Ondřej 2350", "Щукин, Иван 2300", "Müller, Jörg 2250", "Özgür Şahin 2200"]
NAMES += ["Nguyễn Văn An 2150"]


def _tec(path: Path) -> dict[str, Any]:
    run = subprocess.run(
        [sys.executable, "tiebreakchecker.py", "-p", "-t", "PTS", "SB", "-i", str(path)],
        capture_output=True,
        text=True,
        cwd=SERVER,
        timeout=120,
        check=False,
    )
    result: dict[str, Any] = json.loads(run.stdout)
    return result


def test_the_default_export_is_read_by_the_tec_server_with_its_default_options(tmp_path: Path) -> None:
    (tmp_path / "players.txt").write_text("\n".join(NAMES) + "\n", encoding="utf-8")
    start = tmp_path / "start.trf"
    assert main(["new", str(tmp_path / "players.txt"), "--name", "Accents Open", "-o", str(start)]) == 0
    t = state_from(read_file(str(start)))
    assert t.opened.schedule is not None
    results: tuple[GameResult, ...] = ("1-0", "1/2-1/2", "0-1")
    k = 0
    for r, pairs in enumerate(t.opened.schedule[:4], start=1):
        for w, b in pairs:
            t, _ = apply(t, ResultRecorded(f"r{k}", t.id, r, w, b, results[k % 3]))
            k += 1
    latin1, utf8 = tmp_path / "latin1.trf", tmp_path / "utf8.trf"
    latin1.write_bytes(trf_bytes(t, "latin-1"))
    utf8.write_bytes(trf_bytes(t, "utf-8"))

    read = _tec(latin1)
    assert read["status"]["code"] == 0, read["status"]
    theirs = {c["cid"]: [Fraction(v) for v in c["tiebreakScore"]] for c in read["tiebreakResult"]["competitors"]}
    s = standings(t)
    codes = s.codes
    ours = {row.start_no: [row.points, row.tiebreaks[codes.index("SB")]] for row in s.rows}
    assert theirs == ours

    refused = _tec(utf8)  # the same names in UTF-8, read as the server reads by default
    assert refused["status"]["code"] != 0
