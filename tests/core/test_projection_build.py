"""The compiled build: the tests run the projection users run, never a stale extension (setup.py).

``pip install -e .`` compiles the modules pyproject.toml lists under
``[tool.tracker] compiled`` and puts the extensions beside their sources; an
edit to one of those sources is not seen until the next build.  These tests
fail loudly then, instead of testing old code.  A pure-Python install is
allowed only when asked for (``TRACKER_PURE=1``, as the build itself reads it).
"""

from __future__ import annotations

import importlib
import os
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REBUILD = "rebuild with `make` or `.venv/bin/pip install -e .` (TRACKER_PURE=1 for pure Python)"


def _compiled() -> list[str]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        modules: list[str] = tomllib.load(f)["tool"]["tracker"]["compiled"]
    return modules


def _loaded() -> dict[str, Path]:
    """Each listed source and the file its module was loaded from."""
    found = {}
    for path in _compiled():
        module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
        assert module.__file__ is not None
        found[path] = Path(module.__file__)
    return found


def test_the_listed_modules_are_compiled_unless_pure_python_was_asked_for() -> None:
    loaded = _loaded()
    pure = [path for path, file in loaded.items() if file.suffix == ".py"]
    if os.environ.get("TRACKER_PURE") == "1":
        assert len(pure) in (0, len(loaded)), f"a partial build: {pure} are pure Python; {REBUILD}"
        return
    assert not pure, f"{pure} run as pure Python: {REBUILD}"


def test_no_compiled_module_is_older_than_its_source() -> None:
    stale = [
        path
        for path, file in _loaded().items()
        if file.suffix != ".py" and file.stat().st_mtime < (ROOT / path).stat().st_mtime
    ]
    if stale:
        pytest.fail(f"{stale} changed since they were compiled: {REBUILD}")
