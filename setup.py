"""The compiled build: the projection's search and the per-result core compiled by mypyc (the rest: pyproject.toml).

The modules listed under ``[tool.tracker] compiled`` in pyproject.toml (the
projection's branch and bound, its flow, its ranking of scenarios, and the
tie-break rule types and DE they read at every node; and what every accepted
result runs: the step's checks, the standings, the diff and the summary's
phrases) are compiled to C extensions by mypyc from their own type-checked
source: the same code and the same answers, faster (the projection's search
two to three times; the per-result core, mostly calls into C already, less).  ``pip install .``,
``pip install -e .`` (``make``) and ``pip wheel .`` compile them.

Without a C compiler (a slim image) the extensions are skipped and the
modules run as pure Python; ``TRACKER_PURE=1`` asks for that on purpose.
``tests/core/test_projection_build.py`` fails unless they are compiled (or
``TRACKER_PURE=1`` is set), so CI runs what users run, and fails on an
extension older than its source: an editable install puts the extensions
beside the sources, so after editing one of those modules run ``make`` (or
``pip install -e .``) again.
"""

from __future__ import annotations

import os
import tomllib

from setuptools import setup


def compiled() -> list[str]:
    with open("pyproject.toml", "rb") as f:
        modules: list[str] = tomllib.load(f)["tool"]["tracker"]["compiled"]
    return modules


if os.environ.get("TRACKER_PURE") == "1":
    setup()
else:
    from mypyc.build import mypycify

    # one shared library for the group, named after the distribution (a top-level module, as mypyc expects); the
    # modules they import are read for their types, their own errors left to `make typecheck` (a work in progress
    # elsewhere must not stop the build)
    extensions = mypycify(["--follow-imports=silent", *compiled()], opt_level="3", group_name="koya_tracker")
    for extension in extensions:
        extension.optional = True  # no compiler: pure Python (the build says so), never a failed install
    setup(ext_modules=extensions)
