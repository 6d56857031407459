"""The compiler's architecture, checked: stages in order, memory decided with scopes,
comments naming the right user line, normalization done once per function."""

from __future__ import annotations

import inspect
import linecache
import re

import numpy as np
import pytest
from corpus_flow import load_all
from oracles import central_difference

from autodiff_tutor import differentiable, grad
from autodiff_tutor.compiler.pipeline import front_end, stages
from autodiff_tutor.errors import UnsupportedSyntaxError

FLOW = load_all()


def nested_sum(x, n, m):
    s = 0.0
    for i in range(n):
        for j in range(m):
            s = s + x[i] * x[j]
    return s


def indexed_sum(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i] * x[i]
    return s


@pytest.mark.parametrize(("n", "m"), [(0, 0), (2, 0), (0, 3), (2, 3), (3, 1)])
def test_zero_trip_loops_run_and_differentiate(n, m):
    """A loop index the backward reads is bound by the backward's own loop header: it
    is never memory, so a loop that runs zero times leaves nothing unbound."""
    x = np.array([0.5, -1.5, 2.0])
    gradient = grad(nested_sum, wrt="x")(x, n, m)
    expected = central_difference(nested_sum, (x, n, m), 0)
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-9)
    assert np.array_equal(grad(indexed_sum, wrt="x")(x, 0), np.zeros(3))


def test_a_loop_index_is_not_saved_as_memory():
    forward = differentiable(nested_sum).forward_source("x")
    memory = forward.splitlines()[-1]
    assert "return s_2, (x, t1, stack)" in memory
    assert "push((t2,))" in forward  # the inner loop's range, not its index j


def _comment_origins(backward_source: str) -> list[tuple[int, str]]:
    found = []
    for line in backward_source.splitlines():
        match = re.search(r"# line (\d+): (.*)$", line)
        if match:
            found.append((int(match.group(1)), match.group(2)))
    return found


# names the compiler makes up (temporaries, desugared loop counters, inlined results)
MADE_UP = re.compile(r"t\d+|\w+_\d+|\w+_out|count")


@pytest.mark.parametrize("program", FLOW, ids=lambda p: p.name)
def test_every_comment_names_a_line_that_holds_its_text(program):
    """'# line N: text': every name of the user's that the text quotes stands on line N
    of the user's file (the loop header for a loop, the expression's own line for an
    expression; a nested helper's code, the line that calls it), so a comment never
    points at a neighbouring line."""
    compiled = differentiable(program.fn)
    names = [compiled.params[i] for i in program.wrt]
    source = compiled.backward_source(names)
    filename = program.fn.__code__.co_filename
    origins = _comment_origins(source)
    assert origins, "a backward with no comments"
    for number, text in origins:
        file_line = linecache.getline(filename, number)
        if file_line.rstrip().endswith(("(", "[")):  # a statement over several lines
            file_line += "".join(linecache.getline(filename, number + k) for k in range(1, 6))
        words = re.findall(r"(?<![\w.])[A-Za-z_]\w*", text)  # names, not 1e-12's e
        if text.endswith("…"):
            words = words[:-1]  # the last word may be cut short
        if any(MADE_UP.fullmatch(w) for w in words):
            continue  # a desugared or inlined expression: quoted in the compiler's words
        if "    def " in inspect.getsource(program.fn):
            # a nested helper's code is inlined at its call, and so is its comment's line
            file_line += inspect.getsource(program.fn)
        missing = {w for w in words if not re.search(rf"\b{w}\b", file_line)}
        assert not missing, (number, text, file_line)


def counted_while(x):
    s = 0.0
    k = 0
    while k < 3:
        s = s + x[k] * s + x[k]
        k = k + 1
    return s


@pytest.mark.parametrize("fn", [counted_while, nested_sum], ids=lambda f: f.__name__)
def test_a_loop_carrying_gradient_later_keeps_its_own_line(fn):
    """A carried value that starts as a constant (s = 0.0) and picks up gradient in the
    body: the loop is lowered once, and the gradient copies between iterations
    (``d_s_2 = d_s_3``) name the loop's header, not a statement of its body."""
    source = differentiable(fn).backward_source("x")
    copies = [line for line in source.splitlines() if re.match(r"\s+d_\w+ = d_\w+\s+#", line)]
    assert copies
    for line in copies:
        assert re.search(r"# line \d+: (for|while) ", line), line


def two_inputs(x, y):
    return np.sum(x * y + np.sin(x))


def test_the_front_end_runs_once_per_function():
    compiled = differentiable(two_inputs)
    by_x, by_y = compiled.derivative("x"), compiled.derivative("y")
    assert by_x.program is by_y.program  # one normalized program for every wrt
    assert compiled.tangent("x") is not None
    assert compiled.front_end() is compiled.front_end()
    assert front_end(two_inputs).program.source() == by_x.program.source()


def test_stages_are_shown_in_the_order_they_run(capsys):
    names = list(stages(two_inputs, ["x"]))
    assert names == [
        "source",
        "normalize",
        "activity",
        "adjoint",
        "optimize",
        "memory",
        "forward",
        "emit",
    ]
    differentiable(two_inputs).show("x", stages=True)
    printed = capsys.readouterr().out
    positions = [printed.index(f"── {name} ") for name in names]
    assert positions == sorted(positions)
    assert "active (varied and useful)" in printed and "memory: " in printed


def optional_penalty(x, reg=None):
    reg = reg or 0.5
    return np.sum(x * x) * reg


def counts_in_float(x, w):
    return np.sum(x) * np.sum(w, dtype=np.float64)


@pytest.mark.parametrize(
    ("fn", "args", "refused_wrt"),
    [
        (optional_penalty, (np.array([1.0, 2.0]), 2.0), "reg"),
        (counts_in_float, (np.array([1.0, 2.0]), np.array([3.0, 4.0])), "w"),
    ],
)
def test_a_refusal_depends_on_what_is_differentiated(fn, args, refused_wrt):
    """Normalization does not know wrt: a construct the compiler cannot differentiate
    ('or' as a value, an unsupported option) is refused only when, for the wrt asked,
    a value it reads carries gradient; otherwise it runs as written."""
    gradient = grad(fn, wrt="x")(*args)
    np.testing.assert_allclose(gradient, central_difference(fn, args, 0), rtol=1e-6)
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(fn, wrt=refused_wrt)(*args)
    assert info.value.location is not None
    assert info.value.location.line == fn.__code__.co_firstlineno + 1
