"""The package's import graph: no cycles, and dependencies that run one way.

The graph is built statically with ``ast`` over every module of ``autodiff_tutor/``:
an edge ``a -> b`` for each ``import`` of a package module in ``a`` (relative imports
and ``from autodiff_tutor.x import y`` resolved to the module they name, imports
inside functions counted too: a late import hides a cycle, it does not remove it).
``from package import name`` is an edge to ``package.name`` when that is a module,
otherwise to ``package`` (its ``__init__``).

Every cycle is reported, and the test fails on every one: the whole package is
checked (:data:`NOT_YET_CHECKED` names a subpackage while a known cycle in it is being
removed; it is empty). Between packages (the compiler counted as one) the graph has no
cycle either, so tracing, ops and the compiler never import each other in a circle;
inside the compiler no pass imports a later one (:data:`STAGES`, with the exceptions
:data:`EARLIER_ASKS_LATER` names and says why).
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


def package_of(module: str) -> str:
    """The unit of the one-way rule: ``autodiff_tutor.tracing.array`` is ``tracing``,
    ``autodiff_tutor.compiler.front.fence`` is ``compiler``, a top module is itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else module


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    packages: dict[str, set[str]] = {}
    for module, targets in graph.items():
        edges = packages.setdefault(package_of(module), set())
        edges.update(package_of(t) for t in targets if package_of(t) != package_of(module))
    return packages


#: The compiler's modules by stage, in the order the pipeline runs them (a module
#: may import its own stage or earlier ones). Shared data structures come first;
#: the drivers that run the passes last.
STAGES: list[tuple[str, ...]] = [
    ("ir", "code", "rule_inline", "assumptions"),
    ("front.source", "front.lambdas", "front.names", "origins"),
    ("front.fence",),
    ("front.desugar",),
    ("front.normalize", "front.called"),  # called: the user functions a program calls
    ("activity", "reverse.optimize"),  # optimize folds both modes' trees
    ("reverse.adjoint", "reverse.lists", "reverse.shapes", "forward_mode"),
    ("specialize",),
    ("reverse.memory", "reverse.slots"),
    ("reverse.forward",),
    ("emit",),
    ("failures", "mixed_arrays"),
    ("pipeline", "specialized", "second_order"),
    ("fused",),  # another backend lowers the specialized pairs
]

#: Earlier stages that ask a later one a question (not a pass run out of order).
EARLIER_ASKS_LATER = {
    # the fence accepts the forms desugaring rewrites: it asks desugar which they are
    ("front.fence", "front.desugar.callees"),
    ("front.fence", "front.desugar.walrus"),
}


def stage_of(module: str) -> int:
    """The index in :data:`STAGES` of a compiler module (by its longest listed prefix)."""
    name = module.removeprefix("autodiff_tutor.compiler.")
    for index, members in enumerate(STAGES):
        if any(name == m or name.startswith(m + ".") for m in members):
            return index
    raise AssertionError(f"{module} is in no stage of STAGES: add it where it runs")


def test_no_import_cycles() -> None:
    graph = import_graph()
    found = cycles(graph)
    for component in found:  # every cycle is reported, checked or not (pytest -rP)
        print(describe(component, graph))
    failing = [c for c in found if any(checked(m) for m in c)]
    assert not failing, "\n".join(describe(c, graph) for c in failing)


def test_packages_depend_one_way() -> None:
    """No cycle between packages: tracing, ops, the compiler and the front door import
    each other in one direction only."""
    packages = package_graph(import_graph())
    found = cycles(packages)
    assert not found, "\n".join(describe(c, packages) for c in found)
    assert "compiler" not in packages["tracing"] and "tracing" not in packages["compiler"]
    assert "tracing" not in packages["ops"]


def test_no_compiler_stage_imports_a_later_one() -> None:
    graph = import_graph()
    compiler = "autodiff_tutor.compiler."
    later = []
    for module, targets in graph.items():
        if not module.startswith(compiler):
            continue
        for target in targets:
            if not target.startswith(compiler) or target == "autodiff_tutor.compiler":
                continue
            pair = (module.removeprefix(compiler), target.removeprefix(compiler))
            if stage_of(target) > stage_of(module) and pair not in EARLIER_ASKS_LATER:
                later.append(f"{module} -> {target}")
    assert not later, "stages importing later ones:\n    " + "\n    ".join(sorted(later))


# --- the checks can fail ------------------------------------------------------------------


def test_a_later_stage_is_told_from_an_earlier_one() -> None:
    assert stage_of("autodiff_tutor.compiler.front.normalize.calls") < stage_of(
        "autodiff_tutor.compiler.emit"
    )
    with pytest.raises(AssertionError, match="in no stage"):
        stage_of("autodiff_tutor.compiler.not_a_stage")
    graph = {"autodiff_tutor.a.x": {"autodiff_tutor.b.y"}, "autodiff_tutor.b.y": set()}
    assert package_graph(graph) == {"a": {"b"}, "b": set()}


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


def private_imports() -> list[str]:
    """``module: line imports name from other`` for each underscore name one module
    of the package imports from another (a shared helper belongs public in one home)."""
    found = []
    for module, path in module_names().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE):
                found += [
                    f"{module}:{node.lineno} imports {alias.name} from {node.module}"
                    for alias in node.names
                    if alias.name.startswith("_") and not alias.name.startswith("__")
                ]
    return found


def test_no_module_imports_another_modules_private_name() -> None:
    assert private_imports() == []
