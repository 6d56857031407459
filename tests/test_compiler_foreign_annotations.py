"""Syntax trees that other tools annotate do not leak into what the compiler copies.

``ast.parse`` shares its ``Load()``/``Store()``/``Del()`` objects between all trees;
``executing`` (behind IPython's tracebacks) sets ``parent`` on them. The compiler copies
trees with :func:`autodiff_tutor.syntax.copy_tree`, which keeps those shared objects,
so whatever hangs on them is never copied (a plain deep copy copied a whole foreign
module on every copy of an expression, about fifty times slower).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest
from oracles import central_difference

import autodiff_tutor
from autodiff_tutor import grad, jvp
from autodiff_tutor.syntax import SHARED_NODES, copy_tree

ROOT = Path(autodiff_tutor.__file__).parent


class CountsCopies:
    """Stands for a foreign annotation; counts how often it is deep-copied."""

    copies = 0

    def __deepcopy__(self, memo):
        CountsCopies.copies += 1
        return self


@pytest.fixture
def annotated_contexts():
    CountsCopies.copies = 0
    for context in SHARED_NODES:
        context.parent = CountsCopies()
    yield
    for context in SHARED_NODES:
        del context.parent


def test_executing_annotates_the_parsers_shared_contexts():
    """The premise: after ``executing`` reads a file, the shared ``Load()`` has a parent."""
    executing = pytest.importorskip("executing")
    executing.Source.for_filename(__file__)
    load = ast.parse("x", mode="eval").body.ctx
    assert any(load is node for node in SHARED_NODES)
    assert isinstance(getattr(load, "parent", None), ast.AST)


def test_every_context_and_operator_the_parser_shares_is_known():
    kinds = {
        kind
        for base in (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)
        for kind in base.__subclasses__()
        if kind.__name__ not in ("AugLoad", "AugStore", "Param")  # never made by the parser
    }
    assert {type(node) for node in SHARED_NODES} == kinds
    assert ast.parse("a or b", mode="eval").body.op in SHARED_NODES


def test_copy_tree_keeps_the_shared_contexts(annotated_contexts):
    tree = ast.parse("y = np.sin(x) + x[0] or -x\ndel z")
    copied = copy_tree(tree)
    assert ast.dump(copied) == ast.dump(tree)
    assert copied.body[0] is not tree.body[0]
    assert CountsCopies.copies == 0


def test_compiling_never_copies_a_foreign_annotation(annotated_contexts):
    """Compile (first and second order) a function with loops, branches, helpers and
    structures; nothing hung on the shared contexts is copied, and the numbers are
    right."""

    def helper(v, k):
        return np.tanh(v) * k

    def f(x):
        params = {"a": 2.0, "b": [x, x * 2]}
        total = 0.0
        for i in range(3):
            if i == 1:
                continue
            total = total + np.sum(helper(params["b"][1] * x, params["a"]))
        return total + np.sum(x[1:] ** 2)

    x = np.array([0.3, -0.2, 0.5])
    assert np.allclose(grad(f)(x), central_difference(f, (x,), 0), atol=1e-6)
    assert CountsCopies.copies == 0

    def g(x):
        return np.sum(np.sin(x) * x)

    v = np.array([1.0, 0.5, -1.0])
    _, hv = jvp(grad(g), (x,), (v,))
    assert np.allclose(hv, central_difference(lambda t: np.sum(grad(g)(t) * v), (x,), 0), atol=1e-6)
    assert CountsCopies.copies == 0


def test_the_compiler_copies_trees_only_with_copy_tree():
    """No module that handles syntax trees calls ``copy.deepcopy`` directly."""
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("compiler", "rules", "tracing")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if re.search(r"\bcopy\.deepcopy\(", path.read_text())
    ]
    offenders += [
        name
        for name in ("api/arguments.py", "api/derivatives.py")
        if re.search(r"\bcopy\.deepcopy\(", (ROOT / name).read_text())
    ]
    assert offenders == []
