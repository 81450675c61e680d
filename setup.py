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

import concurrent.futures
import os
import sys
import tomllib
import types
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


def compiled() -> list[str]:
    with open("pyproject.toml", "rb") as f:
        modules: list[str] = tomllib.load(f)["tool"]["tracker"]["compiled"]
    return modules


# the build hooks that only ask for the metadata (``egg_info``, ``dist_info``: pip asks twice before it builds)
# need no extensions, and mypyc's pass over the sources costs a few seconds of every one of them
METADATA_ONLY = {"egg_info", "dist_info"}


class ParallelBuildExt(build_ext):
    """``build_ext`` compiling an extension's C files side by side, one ``gcc`` per core.

    mypyc writes the group as one C file per module (``multi_file``) and setuptools compiles an extension's sources
    one after the other: on a 2-core machine the build took about 40 s, one core busy.  The split files are
    compiled here through the compiler's own steps (``_setup_compile``, ``_compile``: distutils' per-file hook,
    the one its ``compile`` calls), several at a time; a compiler without them compiles as before.
    """

    def build_extension(self, ext: Extension) -> None:
        compiler = self.compiler
        if hasattr(compiler, "_setup_compile") and hasattr(compiler, "_compile") and len(ext.sources) > 1:
            compiler.compile = types.MethodType(_compile_in_parallel, compiler)
        super().build_extension(ext)


def _compile_in_parallel(  # the signature of CCompiler.compile
    self: Any,
    sources: list[str],
    output_dir: str | None = None,
    macros: list[Any] | None = None,
    include_dirs: list[str] | None = None,
    debug: bool = False,
    extra_preargs: list[str] | None = None,
    extra_postargs: list[str] | None = None,
    depends: list[str] | None = None,
) -> list[str]:
    macros, objects, extra_postargs, pp_opts, build = self._setup_compile(
        output_dir, macros, include_dirs, sources, depends, extra_postargs
    )
    cc_args = self._get_cc_args(pp_opts, debug, extra_preargs)
    todo = [(obj, *build[obj]) for obj in objects if obj in build]
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:  # each a gcc process
        for done in [
            pool.submit(self._compile, obj, src, ext, cc_args, extra_postargs, pp_opts) for obj, src, ext in todo
        ]:
            done.result()  # a failed file fails the build, as in the serial compile
    return objects


if os.environ.get("TRACKER_PURE") == "1" or METADATA_ONLY.issuperset(sys.argv[1:2]):
    setup()
else:
    from mypyc.build import mypycify

    # one shared library for the group, named after the distribution (a top-level module, as mypyc expects), its C
    # split a file per module so that ParallelBuildExt compiles them side by side; the modules they import are read
    # for their types, their own errors left to `make typecheck` (a work in progress elsewhere must not stop the
    # build)
    extensions = mypycify(
        ["--follow-imports=silent", *compiled()], opt_level="3", group_name="koya_tracker", multi_file=True
    )
    for extension in extensions:
        extension.optional = True  # no compiler: pure Python (the build says so), never a failed install
    setup(ext_modules=extensions, cmdclass={"build_ext": ParallelBuildExt})
