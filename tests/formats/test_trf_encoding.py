"""The TRF tracker writes is one the FIDE TEC tie-break server reads with its default options (issue 38).

The server reads a TRF as Latin-1 and refuses a line whose columns do not line up in bytes
("misaligned data, may be bad character encoding"), which a name with an accent written in UTF-8 makes.
So ``tracker new``, ``tracker standings FILE --format trf`` and the live export (``/api/tournaments/ID/trf``)
write Latin-1 by default — a name Latin-1 cannot hold transliterated as the FIDE rating list writes it
(``Ł`` → ``L``, ``Ş`` → ``S``, Cyrillic in Latin letters) — and UTF-8 when asked (``--encoding utf-8``,
``?encoding=utf-8``).  Tracker's reader reads either.  Columns are checked here on the bytes, as the
server cuts them (TRF16/TRF26: start rank 5–8, name 15–47, rating 49–52, points 81–84, rank 86–89, round
blocks of ten from column 92), not through tracker's reader.
"""

from __future__ import annotations

import asyncio
import dataclasses
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import start_tracker
from tracker.cli import main
from tracker.client import replay_ws
from tracker.core.events import Event, ResultRecorded
from tracker.formats import state_from
from tracker.formats.files import read_file
from tracker.formats.startlist import berger_tournament, parse_startlist
from tracker.formats.trf.write import latin1, trf_bytes

#: Names as a start list gives them, and as the Latin-1 file must hold them.
NAMES = {
    "Żebrowski, Łukasz": "Zebrowski, Lukasz",
    "Yılmaz, Şirin": "Yilmaz, Sirin",
    "Щукин, Пётр": "Shchukin, Petr",
    "Müller, José": "Müller, José",
    "Ørsted, Åsa": "Ørsted, Åsa",
    "Andreikin, Dmitry": "Andreikin, Dmitry",
}
RATINGS = [2400, 2310, 2205, 2100, 1999, 1850]
START_LIST = "".join(f"{name} {rating}\n" for name, rating in zip(NAMES, RATINGS, strict=True))


def test_names_latin1_cannot_hold_are_written_as_fides_list_writes_them() -> None:
    assert latin1("Łukasz Şirin Ğ ő Đ ı") == "Lukasz Sirin G o D i"
    assert latin1("Щукин") == "Shchukin" and latin1("ЩУКИН") == "SHCHUKIN"
    assert latin1("Ильин Ъ") == "Ilin "  # the hard and soft signs are dropped
    assert latin1("Ødegård, Müller, Nuñez") == "Ødegård, Müller, Nuñez"  # Latin-1's own letters kept
    assert latin1("a\x85b\x9fc") == "a b c"  # C1 controls, which Windows-1252 reads as letters
    for name in NAMES:
        latin1(name).encode("latin-1")


def columns_of(raw: bytes) -> dict[int, tuple[str, str, list[bytes]]]:
    """Per start rank: the name and rating cut from the ``001`` line's bytes, and its round blocks."""
    found = {}
    for line in raw.split(b"\n"):
        if not line.startswith(b"001 "):
            continue
        assert line[8:9] == line[47:48] == line[52:53] == b" ", line
        blocks = [line[k : k + 10].ljust(10) for k in range(91, len(line), 10)]
        for block in blocks:
            assert block[4:5] == block[6:7] == b" " and block[5:6] in b"wb- ", (line, block)
            assert block[:4].strip().isdigit() or block[:4].strip() == b"", (line, block)
        assert line[80:84].strip().replace(b".", b"").isdigit() and line[85:89].strip().isdigit(), line
        found[int(line[4:8])] = (line[14:47].decode("latin-1").rstrip(), line[48:52].decode("ascii").strip(), blocks)
    return found


def _with_round_one(path: Path) -> list[Event]:
    """``tracker new``'s file, read back, with round 1 played: every kind of block in the lines."""
    tf = read_file(str(path))
    assert tf.opened.schedule is not None
    results = ("1-0", "1/2-1/2", "-+")
    return [
        ResultRecorded(f"r1-{w}", tf.opened.tournament, 1, w, b, results[k % 3])
        for k, (w, b) in enumerate(tf.opened.schedule[0])
    ]


def test_tracker_new_and_standings_write_latin1_with_the_columns_aligned_in_bytes(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    players = tmp_path / "players.txt"
    players.write_text(START_LIST, encoding="utf-8")
    out = tmp_path / "club.trf"
    assert main(["new", str(players), "-o", str(out)]) == 0
    raw = out.read_bytes()
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")  # é, ü, Ø, Å as single Latin-1 bytes
    got = columns_of(raw)
    assert {k: v[:2] for k, v in got.items()} == {
        k: (written, str(rating))
        for k, (written, rating) in enumerate(zip(NAMES.values(), RATINGS, strict=True), start=1)
    }
    capsysbinary.readouterr()
    assert main(["standings", str(out), "--format", "trf"]) == 0
    again = capsysbinary.readouterr().out
    assert again == raw, "tracker standings writes back the same Latin-1 file"
    tf = read_file(str(out))
    assert [p.name for p in tf.opened.players] == list(NAMES.values())
    assert any("not UTF-8" in note for note in tf.notes)  # read as Latin-1, and said so


def test_a_latin1_file_with_results_round_trips_to_the_same_tournament(tmp_path: Path) -> None:
    players = tmp_path / "players.txt"
    players.write_text(START_LIST, encoding="utf-8")
    first = tmp_path / "new.trf"
    assert main(["new", str(players), "-o", str(first)]) == 0
    tf = read_file(str(first))
    played = dataclasses.replace(tf, events=(*tf.events, *_with_round_one(first)))
    state = state_from(played)
    raw = trf_bytes(state)
    assert all(len(v[2]) >= 1 for v in columns_of(raw).values())
    path = tmp_path / "played.trf"
    path.write_bytes(raw)
    back = state_from(read_file(str(path)))
    assert [p.name for p in back.opened.players] == list(NAMES.values())
    assert [back.results_of(i) for i in range(back.n)] == [state.results_of(i) for i in range(state.n)]
    assert trf_bytes(back) == raw, "read → write is a fixed point"


def test_utf8_when_asked_keeps_every_name(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    players = tmp_path / "players.txt"
    players.write_text(START_LIST, encoding="utf-8")
    capsysbinary.readouterr()
    assert main(["new", str(players), "--encoding", "utf-8"]) == 0
    raw = capsysbinary.readouterr().out
    text = raw.decode("utf-8")
    lines = [line for line in text.splitlines() if line.startswith("001")]
    assert [line[14:47].rstrip() for line in lines] == list(NAMES)  # columns in characters, as TRF26 says
    assert [line[48:52].strip() for line in lines] == [str(r) for r in RATINGS]
    path = tmp_path / "utf8.trf"
    path.write_bytes(raw)
    tf = read_file(str(path))
    assert [p.name for p in tf.opened.players] == list(NAMES) and tf.notes == ()
    assert main(["standings", str(path), "--format", "trf", "--encoding", "utf-8"]) == 0
    assert capsysbinary.readouterr().out == raw


def test_the_live_export_is_latin1_and_utf8_when_asked(tmp_path: Path) -> None:
    players = tmp_path / "players.txt"
    players.write_text(START_LIST, encoding="utf-8")
    tf = berger_tournament(parse_startlist(START_LIST, str(players)), "Club", path=str(players))
    tid = tf.opened.tournament
    running = start_tracker(tmp_path / "data")
    try:
        result = asyncio.run(replay_ws(tf, running.ws_url, running.token))
        assert not result.rejected
        with urllib.request.urlopen(f"{running.http_url}/api/tournaments/{tid}/trf", timeout=10) as response:
            raw, content_type = response.read(), response.headers.get("Content-Type", "")
        with urllib.request.urlopen(
            f"{running.http_url}/api/tournaments/{tid}/trf?encoding=utf-8", timeout=10
        ) as response:
            utf8, utf8_type = response.read(), response.headers.get("Content-Type", "")
    finally:
        running.stop()
    assert content_type == "text/plain; charset=iso-8859-1"
    assert [v[0] for v in columns_of(raw).values()] == list(NAMES.values())
    assert raw == trf_bytes(state_from(tf))
    assert utf8_type == "text/plain; charset=utf-8"
    assert [line[14:47].rstrip() for line in utf8.decode("utf-8").splitlines() if line.startswith("001")] == list(NAMES)
