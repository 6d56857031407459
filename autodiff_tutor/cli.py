"""The command line: ``autodiff-tutor show|check|verify FILE::NAME``.

- ``show``: print the generated forward and backward of a function (``--wrt`` names
  the inputs, ``--jvp`` prints the forward-mode function instead);
- ``check``: compare the compiled gradient with central finite differences at a random
  point (``--shape`` gives each argument's shape, ``--seed`` the point);
- ``verify``: prove a custom op's backward (a ``DifferentiableFunction`` class or
  instance) or a function's (plain, compiled here, or ``@differentiable``) with sympy,
  region by region.

Errors are the library's own, printed without a traceback (exit status 1).

>>> import pathlib, tempfile
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> source = "import numpy as np\\n\\ndef f(x):\\n    return np.sum(x * x)\\n"
>>> _ = (folder / "model.py").write_text(source)
>>> main(["check", f"{folder}/model.py::f", "--shape", "3"])
f: the compiled gradient matches central finite differences (max difference ...)
0
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from autodiff_tutor.api import differentiable, value_and_grad
from autodiff_tutor.errors import ArgumentError, AutodiffError


def load(target: str) -> Any:
    """The object ``NAME`` of ``FILE::NAME`` (a path) or ``module::NAME`` (importable).

    >>> load("autodiff_tutor.ops::PReLUFunction").__name__
    'PReLUFunction'
    """
    if "::" not in target:
        raise ArgumentError(f"{target!r}: give FILE::NAME, e.g. model.py::loss")
    where, name = target.rsplit("::", 1)
    if where.endswith(".py") or Path(where).exists():
        path = Path(where)
        if not path.exists():
            raise ArgumentError(f"no file {where!r}")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules.setdefault(path.stem, module)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    if not hasattr(module, name):
        raise ArgumentError(f"{where!r} has no {name!r}")
    return getattr(module, name)


def _show(args: argparse.Namespace) -> int:
    compiled = differentiable(load(args.target))
    wrt = args.wrt or None
    print(compiled.jvp_source(wrt) if args.jvp else compiled.source(wrt))
    return 0


def _check(args: argparse.Namespace) -> int:
    fn = load(args.target)
    compiled = differentiable(fn)
    count = len(compiled.params)
    shapes = [tuple(int(n) for n in s.split("x") if n) for s in (args.shape or [])]
    if len(shapes) != count:
        raise ArgumentError(f"{compiled.name} takes {count} argument(s): give one --shape each")
    rng = np.random.default_rng(args.seed)
    values = [rng.uniform(-1.0, 1.0, shape) for shape in shapes]
    _, gradients = value_and_grad(fn, wrt=list(range(count)))(*values)
    worst = 0.0
    for i, gradient in enumerate(gradients):
        expected = _central_difference(fn, values, i)
        worst = max(worst, float(np.max(np.abs(np.asarray(gradient) - expected), initial=0.0)))
    if worst <= 1e-5 * (1 + max(float(np.max(np.abs(g), initial=0.0)) for g in gradients)):
        print(
            f"{compiled.name}: the compiled gradient matches central finite differences "
            f"(max difference {worst:.2e})"
        )
        return 0
    print(
        f"{compiled.name}: the compiled gradient differs from central finite differences "
        f"by up to {worst:.2e} (a kink at this point? try another --seed)"
    )
    return 1


def _central_difference(fn: Any, values: list[Any], index: int, eps: float = 1e-6) -> Any:
    x = values[index]
    result = np.zeros_like(x)
    for position in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[position] += eps
        minus[position] -= eps
        high = fn(*values[:index], plus, *values[index + 1 :])
        low = fn(*values[:index], minus, *values[index + 1 :])
        result[position] = (float(high) - float(low)) / (2 * eps)
    return result


def _verify(args: argparse.Namespace) -> int:
    from autodiff_tutor.verify import verify_symbolic

    target = load(args.target)
    if inspect.isclass(target):
        target = target(*args.args)
    elif inspect.isfunction(target):  # a plain function, as `show` and `check` take
        target = differentiable(target)
    report = verify_symbolic(target, assume=args.assume or ())
    print(report.text())
    return 0 if report.passed else 1


def parser() -> argparse.ArgumentParser:
    """The argument parser (subcommands ``show``, ``check``, ``verify``)."""
    top = argparse.ArgumentParser(prog="autodiff-tutor", description=__doc__.split("\n\n")[0])
    commands = top.add_subparsers(dest="command", required=True)
    show = commands.add_parser("show", help="print the generated forward and backward")
    show.add_argument("target", help="FILE::NAME or module::NAME")
    show.add_argument("--wrt", nargs="*", help="the inputs to differentiate (names)")
    show.add_argument("--jvp", action="store_true", help="print the forward-mode function")
    show.set_defaults(run=_show)
    check = commands.add_parser("check", help="compare the gradient with finite differences")
    check.add_argument("target", help="FILE::NAME or module::NAME")
    check.add_argument(
        "--shape", action="append", help="an argument's shape, e.g. 3x2 ('' = scalar)"
    )
    check.add_argument("--seed", type=int, default=0, help="the random point")
    check.set_defaults(run=_check)
    verify = commands.add_parser("verify", help="prove a backward with sympy, region by region")
    verify.add_argument("target", help="FILE::NAME (an op class or instance, or a function)")
    verify.add_argument("--assume", action="append", help="a condition such as 'tl < tr'")
    verify.add_argument("--args", nargs="*", default=[], help="arguments of the op class")
    verify.set_defaults(run=_verify)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except AutodiffError as error:
        print(f"{type(error).__name__}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
