"""An engine's failures are each reported once (no answer to ``uci``, a crash, a hang); closing leaves no traceback.

The engines are small Python scripts speaking as much UCI as each case needs.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
from pathlib import Path

import pytest

from tracker.follow.engine import Engine

START = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"

#: A UCI engine that answers ``uci`` and ``isready`` and then, at ``go``, does what ``{go}`` says.
SCRIPT = """\
import sys, time
for line in sys.stdin:
    word = line.split()[0] if line.split() else ""
    if word == "uci":
        {uci}
    elif word == "isready":
        print("readyok", flush=True)
    elif word == "go":
        {go}
    elif word == "quit":
        {quit}
"""

ANSWERS = 'print("id name Fake", flush=True); print("uciok", flush=True)'
BEST = 'print("info depth 1 score cp 20", flush=True); print("bestmove e7e5", flush=True)'


def engine_script(tmp_path: Path, *, uci: str = ANSWERS, go: str = BEST, quit: str = "sys.exit(0)") -> str:
    path = tmp_path / "engine.py"
    path.write_text(f"#!{sys.executable}\n" + SCRIPT.format(uci=uci, go=go, quit=quit), encoding="utf-8")
    path.chmod(0o755)
    return str(path)


async def until_dead(engine: Engine) -> None:
    async with asyncio.timeout(20):  # a flag the engine's own task sets: nothing else to wait on
        while not engine.dead:  # noqa: ASYNC110  # the engine's task sets it; nothing to wait on but the flag
            await asyncio.sleep(0.02)


def stopped(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "stopped" in r.getMessage()]


def tracebacks(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "asyncio" or r.exc_info or "never retrieved" in r.getMessage() or "Traceback" in r.getMessage()
    ]


@pytest.mark.parametrize(
    ("kind", "script", "said"),
    [
        ("silent", {"uci": "pass"}, "no answer to uci within 0.5 s"),
        ("crash", {"go": "sys.exit(3)"}, "died"),
        ("hang", {"go": "time.sleep(3600)", "quit": "time.sleep(3600)"}, "hung: no answer to a search within 0.5 s"),
    ],
)
async def test_an_engine_failure_is_reported_once_and_closing_leaves_no_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, kind: str, script: dict[str, str], said: str
) -> None:
    caplog.set_level(logging.INFO)
    engine = Engine(engine_script(tmp_path, **script), nodes=100, start_timeout=0.5, analysis_timeout=0.5)
    engine.want((1, 1, 2), START)
    await until_dead(engine)
    engine.want((1, 3, 4), START)  # later positions are not analysed and not reported again
    await asyncio.sleep(0)
    await engine.aclose()
    gc.collect()
    await asyncio.sleep(0.05)
    lines = stopped(caplog)
    assert len(lines) == 1 and said in lines[0], (kind, lines)
    assert engine.failure is not None and said in engine.failure
    assert tracebacks(caplog) == [], tracebacks(caplog)


async def test_a_working_engine_analyses_and_closes_quietly(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    engine = Engine(engine_script(tmp_path), nodes=100, start_timeout=5, analysis_timeout=5)
    engine.want((1, 1, 2), START)
    async with asyncio.timeout(20):
        while engine.analysis((1, 1, 2), START) is None:  # noqa: ASYNC110 - a dict entry the engine's task fills
            await asyncio.sleep(0.02)
    found = engine.analysis((1, 1, 2), START)
    assert found is not None and found.evaluation.cp == -20  # Black to move: the score from White's side
    await engine.aclose()
    gc.collect()
    assert stopped(caplog) == [] and tracebacks(caplog) == []
