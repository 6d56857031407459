"""What compiling and specializing cost, against the size of the program.

``python -m benchmarks.specialization [LINES ...] [--repeat N]`` (default 10 20 40 80
160 lines, 5 repeats) generates loop programs of that many lines (:func:`loop_program`:
a ``for`` loop of elementwise statements, each reading the one before), and times, in
CPU seconds, the first call of ``value_and_grad`` (the general pair compiled) and the
second (the pair specialized on the arguments' shapes) on a fresh function each
repeat; the medians side by side, their ratio, and how each grows when the program
doubles (2 where the cost is linear in the program's size, 4 where it is quadratic).
Every gradient is checked against central differences before anything is timed.

Run it against another checkout (``PYTHONPATH=/other/checkout python -m
benchmarks.specialization``) to compare two versions of the compiler on one machine.

>>> row = measure(10, repeat=1)
>>> row.lines, row.first > 0, row.second > 0
(10, True, True)
"""

from __future__ import annotations

import argparse
import linecache
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

DEFAULT_LINES = (10, 20, 40, 80, 160)

#: The statements of the loop body, in turn: ``{p}`` is the previous value, ``{q}`` an
#: earlier one (so values are read more than once, and gradients add up).
_STATEMENTS = (
    "np.tanh(a{p})",
    "a{p} * w",
    "a{p} + x",
    "np.sin(a{p}) * a{q}",
    "a{p} - 0.5 * x",
    "np.exp(-a{p}) + a{q}",
)

_generated = 0  # each program gets its own file name: a fresh function, nothing cached


@dataclass
class Row:
    """Median CPU seconds of the first call (compile) and of the second (specialize)."""

    lines: int
    first: float
    second: float


def loop_program(lines: int) -> Callable:
    """A function of ``lines`` source lines: a loop of elementwise statements.

    >>> f = loop_program(8)
    >>> float(f(np.ones(3), np.ones(3))) > 0
    True
    """
    global _generated
    _generated += 1
    source = ["def loop_program(x, w):", "    s = x * 0.0", "    for i in range(3):"]
    source.append("        a0 = x * w")
    count = max(lines - 5, 1)
    for k in range(1, count):
        statement = _STATEMENTS[k % len(_STATEMENTS)].format(p=k - 1, q=max(0, k - 3))
        source.append(f"        a{k} = {statement}")
    source += [f"        s = s + a{count - 1}", "    return np.sum(s * s)"]
    text = "\n".join(source) + "\n"
    filename = f"<benchmarks.specialization {lines} lines #{_generated}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"np": np}
    exec(compile(text, filename, "exec"), namespace)  # the compiler reads it via linecache
    return namespace["loop_program"]


def _arguments() -> tuple[np.ndarray, np.ndarray]:
    return np.linspace(0.1, 1.0, 5), np.linspace(0.2, 0.9, 5)


def _check(lines: int) -> None:
    """The second call runs a specialized pair (not the general one, after a failed
    probe), whose gradient of ``x`` agrees with central differences."""
    from autodiff_tutor import differentiable, value_and_grad

    f = loop_program(lines)
    x, w = _arguments()
    compiled = differentiable(f)
    both = value_and_grad(compiled)
    both(x, w)
    _, gradient = both(x, w)  # the specialized pair's
    made = list(compiled.derivative(["x"]).specializations.values())
    if not made or None in made:
        raise AssertionError(f"{lines} lines: no specialized pair (the general one ran)")
    step = 1e-6
    expected = np.array(
        [(f(x + step * e, w) - f(x - step * e, w)) / (2 * step) for e in np.eye(x.size)]
    )
    if not np.allclose(gradient, expected, rtol=1e-5, atol=1e-7):
        raise AssertionError(f"{lines} lines: the specialized gradient is wrong")


def measure(lines: int, repeat: int = 5) -> Row:
    """Medians over ``repeat`` fresh functions of ``lines`` lines."""
    from autodiff_tutor import value_and_grad

    _check(lines)
    firsts, seconds = [], []
    x, w = _arguments()
    for _ in range(repeat):
        both = value_and_grad(loop_program(lines))
        start = time.process_time()
        both(x, w)
        middle = time.process_time()
        both(x, w)
        firsts.append(middle - start)
        seconds.append(time.process_time() - middle)
    return Row(lines, statistics.median(firsts), statistics.median(seconds))


def main(argv: list[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.specialization")
    parser.add_argument("lines", nargs="*", type=int, default=list(DEFAULT_LINES))
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args(argv)
    print("Median CPU ms of the first call (compile) and the second (specialize):\n")
    print("| lines | first | second | second / first | first grows | second grows |")
    print("|---|---|---|---|---|---|")
    previous = None
    for lines in options.lines:
        row = measure(lines, options.repeat)
        growth = ("", "")
        if previous is not None:
            factor = row.lines / previous.lines
            growth = (
                f"{row.first / previous.first:.2f} (x{factor:g} lines)",
                f"{row.second / previous.second:.2f}",
            )
        print(
            f"| {row.lines} | {1e3 * row.first:.1f} | {1e3 * row.second:.1f} | "
            f"{row.second / row.first:.2f} | {growth[0]} | {growth[1]} |"
        )
        previous = row


if __name__ == "__main__":
    main()
