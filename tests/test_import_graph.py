"""The package's import graph has no cycles (issue 12).

The graph is built statically with ``ast`` over every module of ``autodiff_tutor/``:
an edge ``a -> b`` for each ``import`` of a package module in ``a`` (relative imports
and ``from autodiff_tutor.x import y`` resolved to the module they name, imports
inside functions counted too: a late import hides a cycle, it does not remove it).
``from package import name`` is an edge to ``package.name`` when that is a module,
otherwise to ``package`` (its ``__init__``).

Every cycle is reported, and the test fails on every one: the whole package is
checked (:data:`NOT_YET_CHECKED` names a subpackage while a known cycle in it is being
removed; it is empty).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import autodiff_tutor

NOT_YET_CHECKED: tuple[str, ...] = ()
"""Subpackages of ``autodiff_tutor`` whose internal cycles are still being removed."""

ROOT = Path(autodiff_tutor.__file__).parent
PACKAGE = "autodiff_tutor"


def module_names() -> dict[str, Path]:
    """Every module of the package by dotted name (``autodiff_tutor.rules.registry``)."""
    modules = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = (PACKAGE, *path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules that module ``name`` imports, anywhere in its body."""
    tree = ast.parse(path.read_text(), filename=str(path))
    here = name if _is_package(path) else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.add(_nearest_module(alias.name, modules))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: len(here.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                found.add(submodule if submodule in modules else _nearest_module(target, modules))
    found.discard("")
    found.discard(name)
    return found


def _nearest_module(dotted: str, modules: dict[str, Path]) -> str:
    """``dotted`` if it is a package module, else its nearest enclosing one ("" if none)."""
    while dotted and dotted not in modules:
        dotted = dotted.rpartition(".")[0]
    return dotted


def import_graph() -> dict[str, set[str]]:
    modules = module_names()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each
    with its modules sorted; one import cycle or more runs through each of them."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def checked(module: str) -> bool:
    """Whether ``module`` must be on no cycle (it is outside :data:`NOT_YET_CHECKED`)."""
    return not any(
        module == f"{PACKAGE}.{package}" or module.startswith(f"{PACKAGE}.{package}.")
        for package in NOT_YET_CHECKED
    )


def describe(component: list[str], graph: dict[str, set[str]]) -> str:
    inside = set(component)
    edges = [f"{a} -> {b}" for a in component for b in sorted(graph[a] & inside)]
    return "cycle among " + ", ".join(component) + ":\n    " + "\n    ".join(edges)


def test_no_import_cycles() -> None:
    graph = import_graph()
    found = cycles(graph)
    for component in found:  # every cycle is reported, checked or not (pytest -rP)
        print(describe(component, graph))
    failing = [c for c in found if any(checked(m) for m in c)]
    assert not failing, "\n".join(describe(c, graph) for c in failing)


# --- the checks can fail ------------------------------------------------------------------


def test_a_cycle_is_found_with_its_edges() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert "c -> a" in describe(["a", "b", "c"], graph)
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_imports_are_resolved_to_modules(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    source = (
        "from . import b\n"
        "from .sub import c, not_a_module\n"
        "def late():\n"
        "    from pkg.sub.c import name\n"
        "    import pkg.b\n"
    )
    files = {"pkg.a": package / "a.py", "pkg.b": package / "b.py"}
    files |= {"pkg.sub": package / "sub" / "__init__.py", "pkg.sub.c": package / "sub" / "c.py"}
    for path in files.values():
        path.write_text("")
    files["pkg.a"].write_text(source)
    assert imports_of("pkg.a", files["pkg.a"], files) == {"pkg.b", "pkg.sub", "pkg.sub.c"}


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        ("autodiff_tutor.rules.registry", True),
        ("autodiff_tutor.verify", True),
        ("autodiff_tutor.compiler.reverse.adjoint", True),
        ("autodiff_tutor.api", True),
        ("autodiff_tutor.tracing.array", True),
    ],
)
def test_checked_packages(module: str, expected: bool) -> None:
    assert checked(module) is expected


def test_unchecked_packages_are_packages() -> None:
    """A renamed package must not stay out of the check silently."""
    for package in NOT_YET_CHECKED:
        assert (ROOT / package.replace(".", "/") / "__init__.py").is_file(), package


def test_the_graph_sees_the_package() -> None:
    graph = import_graph()
    assert "autodiff_tutor.rules.catalog" in graph["autodiff_tutor.rules.registry"]
    assert "autodiff_tutor.rules.record" in graph["autodiff_tutor.rules.elementwise"]
