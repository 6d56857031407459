"""Random control-flow programs: the compiler is right or says no, never silently wrong.

A small generator writes seeded random programs over ``x`` (4 floats) with nested
``if``/``else``, ``for`` and ``while`` loops, ``break``/``continue``, early ``return``,
conditional expressions, ``and``/``not``, augmented assignment, tuple swaps, element
writes ``y[i] = ...``/``y[i] += ...``, list appends, constants overwriting values, a
nested helper with a default argument, a module-level helper with a loop and a
``@differentiable`` helper with a branch. Each program goes to a file (the compiler
reads source) and runs at two inputs.

The property: either the compiler rejects the program with a located error, or its
value is Python's and its gradient matches central finite differences (checked where
two step sizes agree, that is away from a branch switch).
"""

from __future__ import annotations

import importlib.util
import random

import numpy as np
import pytest

from autodiff_tutor.api import value_and_grad
from autodiff_tutor.errors import AutodiffError, InternalError

SIZE = 4
PROGRAMS = 120

HEADER = """import numpy as np

from autodiff_tutor.api import differentiable


def g(v):
    acc = v
    for _ in range(2):
        acc = np.sin(acc) + 0.5 * v
    return acc


@differentiable
def dd(a, b):
    if a > b:
        r = a * b
    else:
        r = np.tanh(a - b)
    return r


"""


class Generator:
    """Writes one random program; ``random.Random(seed)`` makes it reproducible."""

    def __init__(self, seed: int):
        self.r = random.Random(seed)
        self.loop_vars: list[str] = []
        self.counter = 0
        self.writes = self.r.random() < 0.5

    def number(self) -> str:
        return repr(round(self.r.uniform(-0.5, 0.5), 2))

    def index(self) -> str:
        if self.loop_vars and self.r.random() < 0.6:
            v = self.r.choice(self.loop_vars)
            return self.r.choice([v, f"({v} + 1) % {SIZE}", f"{SIZE - 1} - {v}"])
        return str(self.r.randrange(SIZE))

    def atom(self) -> str:
        c = self.r.random()
        if c < 0.25:
            return "s"
        if c < 0.45:
            return "t"
        if c < 0.75:
            return f"x[{self.index()}]"
        if c < 0.85 and self.writes:
            return f"y[{self.index()}]"
        return self.number()

    def expr(self, depth: int = 0) -> str:
        if depth > 2 or self.r.random() < 0.3:
            return self.atom()
        c = self.r.random()
        a, b = self.expr(depth + 1), self.expr(depth + 1)
        forms = [
            (0.3, f"({a} + {b})"),
            (0.55, f"({a} * {b})"),
            (0.7, f"np.sin({a})"),
            (0.74, f"np.tanh({a})"),
            (0.77, f"h({a}, w={self.number()})"),
            (0.8, self.r.choice([f"g({a})", f"dd({a}, {b})", f"h({a})"])),
            (0.9, f"({a} - {b})"),
        ]
        for bound, form in forms:
            if c < bound:
                return form
        return f"({a} if {self.atom()} > {self.number()} else {b})"

    def condition(self) -> str:
        c = self.r.random()
        base = f"{self.expr(1)} > {self.number()}"
        if c < 0.15:
            return f"not ({base})"
        if c < 0.3:
            return f"{base} and {self.atom()} < 0.8"
        return base

    def simple(self, ind: str) -> list[str]:
        c = self.r.random()
        var = self.r.choice(["s", "t"])
        if self.writes and c < 0.25:
            op = self.r.choice(["=", "+="])
            return [f"{ind}y[{self.index()}] {op} np.tanh({self.expr()})"]
        if c < 0.42:
            return [f"{ind}{var} = np.tanh({self.expr()} + 0.1 * x[{self.index()}])"]
        if c < 0.55:
            return [f"{ind}{var} += 0.5 * np.sin({self.expr()})"]
        if c < 0.6:
            return [f"{ind}{var} = {self.number()}"]  # a constant overwrites the value
        if c < 0.7:
            return [f"{ind}s, t = t, s"]
        if c < 0.8:
            return [f"{ind}hs.append(np.tanh({self.expr()}))"]
        return [f"{ind}{var} = {var} * 0.5 + np.tanh({self.expr()})"]

    def block(self, ind: str, size: int, depth: int) -> list[list[str]]:
        return [self.statement(ind, depth) for _ in range(size)]

    def statement(self, ind: str, depth: int) -> list[str]:
        c = self.r.random()
        inner = ind + "    "
        if depth >= 2 or c < 0.45:
            return self.simple(ind)
        if c < 0.6:
            lines = [f"{ind}if {self.condition()}:", *flat(self.block(inner, 2, depth + 1))]
            if self.r.random() < 0.6:
                lines += [f"{ind}else:", *flat(self.block(inner, 1, depth + 1))]
            return lines
        if c < 0.75:
            var = f"i{self.counter}"
            self.counter += 1
            self.loop_vars.append(var)
            body = self.jumps(inner, self.block(inner, self.r.randint(1, 3), depth + 1))
            self.loop_vars.pop()
            bounds = self.r.choice(
                [f"range({SIZE})", f"range(1, {SIZE})", f"range({SIZE} - 1, -1, -1)", "range(n)"]
            )
            return [f"{ind}for {var} in {bounds}:", *flat(body)]
        if c < 0.87:
            k = f"k{self.counter}"
            self.counter += 1
            body = self.jumps(inner, self.block(inner, self.r.randint(1, 2), depth + 1))
            trips = self.r.randint(1, 4)
            head = [f"{ind}{k} = 0", f"{ind}while {k} < {trips} and {self.condition()}:"]
            return [*head, f"{inner}{k} += 1", *flat(body)]
        if c < 0.95:
            value = f"s * t + np.sum(np.stack(hs)) + {self.expr()}"
            return [f"{ind}if {self.condition()}:", f"{inner}return {value}"]
        return self.simple(ind)

    def jumps(self, ind: str, body: list[list[str]]) -> list[list[str]]:
        c = self.r.random()
        if c < 0.35:
            jump = "break" if c < 0.2 else "continue"
            at = self.r.randint(0, len(body))
            return [*body[:at], [f"{ind}if {self.condition()}:", f"{ind}    {jump}"], *body[at:]]
        return body

    def program(self, name: str) -> str:
        lines = [
            f"def {name}(x, n):",
            "    def h(v, w=0.2):",
            "        if v > w:",
            "            out = np.tanh(v) * w",
            "        else:",
            "            out = v * v",
            "        return out",
            "",
            "    s = x[0] * 0.5",
            "    t = np.sin(x[1])",
            "    hs = [x[2] * 1.0]",
        ]
        if self.writes:
            lines.append(self.r.choice(["    y = x * 1.0", "    y = np.zeros(4)"]))
        lines += flat(self.block("    ", self.r.randint(2, 4), 0))
        final = "s * t + s + np.sum(np.array(hs) ** 2)" + (
            " + np.sum(y * y)" if self.writes else ""
        )
        lines.append(f"    return {final}")
        return "\n".join(lines) + "\n"


def flat(statements: list[list[str]]) -> list[str]:
    return [line for statement in statements for line in statement]


def central_difference(fn, x: np.ndarray, n: int, eps: float) -> np.ndarray:
    gradient = np.zeros_like(x)
    for i in range(x.size):
        plus, minus = x.copy(), x.copy()
        plus[i] += eps
        minus[i] -= eps
        gradient[i] = (fn(plus, n) - fn(minus, n)) / (2 * eps)
    return gradient


def load(tmp_path, seed: int):
    name = f"random_program_{seed}"
    path = tmp_path / f"{name}.py"
    source = HEADER + Generator(seed).program(name)
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name), source, str(path)


def check(fn, source: str, path: str) -> str:
    """'rejected', or 'checked' after comparing value and gradient with Python and FD."""
    for input_seed in (0, 1):
        x = np.random.default_rng(input_seed).uniform(-1.0, 1.0, SIZE)
        expected = fn(x, 3)
        try:
            value, gradient = value_and_grad(fn)(x, 3)
        except AutodiffError as error:
            assert not isinstance(error, InternalError), f"the toolkit failed:\n{error}\n{source}"
            assert error.location is not None, f"an error without a location:\n{error}\n{source}"
            assert error.location.filename == path
            return "rejected"
        np.testing.assert_allclose(value, expected, rtol=1e-10, atol=1e-12, err_msg=source)
        fd = central_difference(fn, x, 3, 1e-6)
        if np.allclose(fd, central_difference(fn, x, 3, 1e-7), rtol=1e-4, atol=1e-5):
            np.testing.assert_allclose(gradient, fd, rtol=1e-5, atol=1e-6, err_msg=source)
    return "checked"


@pytest.mark.parametrize("block", range(4))
def test_random_programs_are_right_or_rejected(tmp_path, block):
    seeds = range(block * PROGRAMS // 4, (block + 1) * PROGRAMS // 4)
    outcomes = [check(*load(tmp_path, seed)) for seed in seeds]
    assert outcomes.count("checked") >= len(outcomes) // 2, "most programs should compile"


def test_generator_writes_the_constructs_it_claims():
    source = "".join(Generator(seed).program("f") for seed in range(PROGRAMS))
    for construct in (
        "while ",
        "for ",
        "break",
        "continue",
        "return s * t",
        " if ",
        "else:",
        "not (",
        " and ",
        "s, t = t, s",
        "+= ",
        "y[",
        "hs.append(",
        "h(",
        "g(",
        "dd(",
        "range(n)",
    ):
        assert construct in source, construct
