"""No import cycles inside ``autodiff_tutor/tracing/``.

Every import between the package's modules counts, at module level or inside a
function (a late import is still a cycle, only hidden). The graph is read from the
source with ``ast``, so the test does not depend on import order or caching.
"""

from __future__ import annotations

import ast
from pathlib import Path

import autodiff_tutor.tracing

PACKAGE = "autodiff_tutor.tracing"
FOLDER = Path(autodiff_tutor.tracing.__file__).parent


def _module_names() -> set[str]:
    return {path.stem for path in FOLDER.glob("*.py")}


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The package's modules that ``path`` imports (``__init__`` for the package itself)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == PACKAGE:
                for alias in node.names:
                    found.add(alias.name if alias.name in modules else "__init__")
            elif node.module.startswith(PACKAGE + "."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + "."):
                    found.add(alias.name.split(".")[2])
                elif alias.name == PACKAGE:
                    found.add("__init__")
    return found


def _graph() -> dict[str, set[str]]:
    modules = _module_names()
    return {path.stem: _imports(path, modules) for path in FOLDER.glob("*.py")}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        state[node] = 2
        path.pop()
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_graph_sees_the_package_modules():
    graph = _graph()
    assert "dispatch" in graph["array"] and "traced_values" in graph["dispatch"]


def test_no_import_cycles_inside_tracing():
    assert _cycle(_graph()) is None, " -> ".join(_cycle(_graph()) or [])
