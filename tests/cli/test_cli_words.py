"""The CLI as a new user meets it (issue 28, items 6 and 8).

Reproductions: DE was a bare place in the table and JSON and "(DE: 3 against 1)" in ``tracker check``
while the pages wrote points; ``tracker standings … | head`` printed "[Errno 32] Broken pipe"; a busy port
printed errno text after creating the journal; the demo left its temporary journal folder behind.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import TOKEN, data_file
from tests.processes import spawn, stop_process
from tracker.cli import main
from tracker.core.standings import standings
from tracker.formats import state_from
from tracker.formats.files import read_file
from tracker.formats.trf import export_trf

SINQUEFIELD = data_file("sinquefield-cup-2021.trf")
CLI = [sys.executable, "-m", "tracker.cli"]


def test_the_table_writes_de_as_a_place_and_stars_a_tie_whose_players_have_not_all_met(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["standings", str(SINQUEFIELD), "--after-round", "8"]) == 0
    out = capsys.readouterr().out
    line = {row.split("│")[3].strip(): row for row in out.splitlines() if row.count("│") > 8}
    de = lambda name: line[name].split("│")[5].strip()  # noqa: E731  (Rk, No, Player, Pts, DE)
    # Caruana, Dominguez and So are tied on 5; Dominguez and So meet in round 9
    assert (de("Caruana, Fabiano"), de("Dominguez Perez, Leinier"), de("So, Wesley")) == ("1st*", "2nd*", "2nd*")
    assert de("Shankland, Sam") == "1st" and de("Vachier-Lagrave, Maxime") == "—"
    assert "* the tied players have not all met yet" in " ".join(out.split())


def test_the_json_keeps_the_place_and_notes_which_des_are_provisional(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["standings", str(SINQUEFIELD), "--after-round", "8", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    rows = {r["start_no"]: r for r in document["standings"]}
    assert [rows[n]["tiebreaks"]["DE"] for n in (1, 2, 6)] == [1.0, 2.0, 2.0], "the value is unchanged: a place"
    (note,) = [n for n in document["notes"] if n.startswith("DE is provisional")]
    assert "Caruana" in note and "So" in note and "Shankland" not in note


def test_tracker_check_names_a_de_as_a_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = state_from(read_file(str(SINQUEFIELD)))
    table = standings(state)
    codes = [c for c in table.codes if c != "PTS"]
    k = table.codes.index("DE")
    wrong = next(r for r in table.rows if r.tiebreaks[k] == 1)  # published as 2nd among the tied, not 1st
    xxt = []
    for row in sorted(table.rows, key=lambda r: r.start_no):
        values = [float(row.tiebreaks[table.codes.index(c)]) for c in codes]
        if row is wrong:
            values[codes.index("DE")] = 2.0
        xxt.append(f"XXT {row.start_no} {' '.join(str(v) for v in values)}")
    path = tmp_path / "published.trf"
    path.write_text(export_trf(state) + "\n".join(xxt) + "\n", encoding="utf-8")
    assert main(["check", str(path)]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert f"{wrong.name} ({wrong.start_no}): DE 2nd in the official standings, 1st computed" in out, out


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 300-player start list (44,850 pairings; its JSON and TRF are far past a pipe's buffer), made once."""
    where = tmp_path_factory.mktemp("big")
    players = "\n".join(f"Player, Number {k} {2000 + k}" for k in range(1, 301))
    (where / "players.txt").write_text(players, encoding="utf-8")
    assert main(["new", str(where / "players.txt"), "--name", "Big", "-o", str(where / "big.trf")]) == 0
    return where / "big.trf"


@pytest.mark.parametrize("form", ["table", "json", "trf"])
def test_standings_into_a_pipe_that_closes_says_nothing(form: str, big: Path) -> None:
    reader = subprocess.Popen(["head", "-c", "10"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    writer = subprocess.run(
        [*CLI, "standings", str(big), "--format", form], stdout=reader.stdin, stderr=subprocess.PIPE, timeout=120
    )
    assert reader.stdin is not None
    reader.stdin.close()
    reader.wait(timeout=30)
    assert writer.stderr == b"", writer.stderr.decode()


def test_a_busy_port_is_one_sentence_and_creates_nothing(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        data = tmp_path / "data"
        done = subprocess.run(
            [*CLI, "up", "--port", str(port), "--data-dir", str(data), "--token", TOKEN],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"tracker up: port {port} on 127.0.0.1 is already in use (another tracker up?): stop it or choose another "
        "with --port; nothing was created"
    ), done.stderr
    assert not data.exists(), "no journal, no folder"


def test_the_demo_removes_its_temporary_journal_folder(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {"TMPDIR": str(scratch)}
    process = spawn("tracker up --demo", [*CLI, "up", "--demo", "--rate", "50", "--port", "0", "--token", TOKEN], env)
    try:
        process.expect(r"listening on http://127\.0\.0\.1:(\d+)/", timeout=60)
        assert [p.name for p in scratch.iterdir() if p.name.startswith("tracker-demo-")], "the demo's journal"
        process.expect(r"demo: all 46 events acknowledged", timeout=120)  # generous: a busy machine
    finally:
        code = stop_process(process.proc, signal.SIGTERM)
    assert code in (0, -signal.SIGTERM, 130), process.output
    left = [p.name for p in scratch.iterdir() if p.name.startswith("tracker-demo-")]
    assert left == [], f"left behind: {left} ({os.listdir(scratch)})"
