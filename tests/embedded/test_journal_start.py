"""What ``tracker up`` says about a journal it cannot trust: an empty file, a row it cannot replay."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

from tests.conftest import TOKEN, start_tracker
from tests.processes import spawn


def test_an_empty_journal_file_is_reported_not_silently_started_from(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "journal.sqlite3").write_bytes(b"")  # a power cut right after the file was created
    tracker = start_tracker(data)
    try:
        assert any("is an empty file (0 bytes)" in line for line in tracker.output), tracker.output
    finally:
        tracker.stop()


def test_a_journal_row_that_cannot_be_replayed_names_the_file_and_the_row(tmp_path: Path) -> None:
    data = tmp_path / "data"
    tracker = start_tracker(data)
    tracker.stop()
    journal = data / "journal.sqlite3"
    db = sqlite3.connect(journal)
    with db:
        db.execute("INSERT INTO events (tournament, id, body) VALUES ('t', 'x', ?)", (b'{"type": "nonsense"}',))
    db.close()
    cmd = [sys.executable, "-m", "tracker.cli", "up", "--port", "0", "--data-dir", str(data), "--token", TOKEN]
    process = spawn("tracker up (damaged journal)", cmd)
    process.expect(rf"{journal}: row 1 cannot be replayed")
    assert process.proc.wait(timeout=30) == 1
    output = "".join(process.output)
    assert "Traceback" not in output
