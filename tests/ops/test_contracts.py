"""The import contracts catch what they claim to, and no module of ``tracker/`` is in an import circle.

Each probe is an import someone could add by mistake; the test copies the
package and pyproject.toml to a temporary directory, adds the probe to the
copy, runs ``lint-imports`` there and expects the named contract broken
(and the untouched copy keeps every contract, so the probes are what break
them).  The circle test builds the import graph with grimp (import-linter's
own library), ``TYPE_CHECKING`` imports and imports inside functions
included, and looks for strongly connected components.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grimp
import pytest

from tests.conftest import REPO

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
PROTOCOL = "tracker/protocol/__init__.py" if (REPO / "tracker" / "protocol").is_dir() else "tracker/protocol.py"
PROBES = {
    "the feed reaches Faust's internals": (
        "tracker/kafka/feed.py",
        "import tracker.kafka._faust_patch",
        "faust-patch",
    ),
    "a server opens websocket client connections": (
        "tracker/gateway/http.py",
        "import tracker.client",
        "client-only",
    ),
    "the core reads configuration": (
        "tracker/core/scoring.py",
        "import tracker.config",
        "core-pure",
    ),
    "the protocol imports its schema (a circle)": (
        PROTOCOL,
        "import tracker.schema",
        "layers",
    ),
}


def copy_tree(where: Path) -> Path:
    shutil.copytree(REPO / "tracker", where / "tracker", ignore=shutil.ignore_patterns("__pycache__", "web", "data"))
    shutil.copy(REPO / "pyproject.toml", where / "pyproject.toml")
    return where


def lint(where: Path, contract: str | None = None) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` in ``where`` (the copy's tracker is found first: it puts its directory on the path)."""
    only = ["--contract", contract] if contract else []
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", *only], cwd=where, capture_output=True, text=True, timeout=300
    )


@pytest.mark.timeout(600)
def test_each_probe_import_breaks_its_contract_and_the_untouched_tree_keeps_them_all(tmp_path: Path) -> None:
    copies = {"untouched": copy_tree(tmp_path / "untouched")}
    for k, (name, (path, line, _)) in enumerate(PROBES.items()):
        copy = copies[name] = copy_tree(tmp_path / f"probe-{k}")
        module = copy / path
        module.write_text(module.read_text() + f"\n{line}  # probe\n")
    contracts = [None, *(contract for _, _, contract in PROBES.values())]
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = dict(zip(copies, pool.map(lint, copies.values(), contracts), strict=True))
    untouched = done.pop("untouched")
    assert untouched.returncode == 0 and "0 broken" in untouched.stdout, untouched.stdout + untouched.stderr
    for name, result in done.items():
        path, line, contract = PROBES[name]
        # only the contract named is checked: its failure is the probe's
        assert result.returncode == 1 and "1 broken" in result.stdout, f"{name}: `{line}` in {path} kept {contract}"


def strongly_connected(graph: grimp.ImportGraph) -> list[list[str]]:
    """The import circles of ``graph``: its strongly connected components of two or more modules (Tarjan)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in order:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        order[root] = low[root] = len(order)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in order:
                    order[child] = low[child] = len(order)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[module] = min(low[module], order[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == order[module]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == module:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_the_circle_finder_finds_a_circle(tmp_path: Path) -> None:
    copy = copy_tree(tmp_path)
    scoring = copy / "tracker" / "core" / "scoring.py"
    scoring.write_text(scoring.read_text() + "\nif False:\n    import tracker.core.apply  # probe\n")
    found = subprocess.run(
        [sys.executable, "-c", "import grimp, json, sys; from tests.ops.test_contracts import strongly_connected;"
         " print(json.dumps(strongly_connected(grimp.build_graph('tracker', exclude_type_checking_imports=False))))"],
        cwd=copy, env={"PYTHONPATH": f"{copy}:{REPO}"}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert found.returncode == 0, found.stderr
    assert any("tracker.core.scoring" in circle for circle in json.loads(found.stdout))


def test_no_module_of_tracker_is_in_an_import_circle_type_checking_imports_included() -> None:
    graph = grimp.build_graph("tracker", exclude_type_checking_imports=False, cache_dir=None)
    assert strongly_connected(graph) == []
