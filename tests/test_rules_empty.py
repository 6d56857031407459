"""Every primitive of the catalog on zero-size inputs, in both modes.

The walk is over ``all_rules()`` (the runtime helpers that only generated code calls,
``helper_ops()``, are checked through the primitives whose gradients call them). For
each op, the first case of the finite-difference table (``CASES``) that numpy accepts
with a zero-size input is turned into a program: the op applied to its inputs, one of
them with an axis of length 0, weighted by a fixed random seed of the output's shape
(one per piece for list results) and summed. The compiler (``grad``) and tracing
(``value_and_gradient``) must each either return the gradient that central
differences give (an empty array for the empty input, and the right values for the
others), or refuse with an ``AutodiffError`` located in the program; anything else
(a crash from inside) fails. Where numpy refuses every zero-size version of the
op's cases (``max`` of an empty array), both modes must raise numpy's own error or a
located ``AutodiffError``.
"""

from __future__ import annotations

import ast
import contextlib
import linecache
import warnings
import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from oracles import central_difference
from program_checks import compiled_result
from test_rules_numeric import CASES, Case

from autodiff_tutor import grad, value_and_grad
from autodiff_tutor.errors import AutodiffError, InternalError
from autodiff_tutor.rules.registry import all_rules, helper_ops
from autodiff_tutor.tracing import value_and_gradient

OPS = sorted(set(all_rules()) - helper_ops())


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """numpy's warnings on empty inputs (``Mean of empty slice``, 0/0): expected here."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _emptied(value: Any, axis: int) -> Any:
    """``value`` with ``axis`` cut to length 0 (0-d values and non-floats as they are)."""
    if isinstance(value, list):
        return [_emptied(v, axis) for v in value]
    if not isinstance(value, np.ndarray) or value.ndim == 0 or value.dtype.kind != "f":
        return value
    return np.take(value, np.arange(0), axis=axis)


def _all_axes_emptied(value: Any) -> Any:
    """``value`` with every axis of length 0 (a (0, 0) matrix)."""
    for axis in range(np.ndim(value) if isinstance(value, np.ndarray) else 0):
        value = _emptied(value, axis)
    return value


def _variants(args: list[Any]) -> list[list[Any]]:
    """Zero-size versions of the inputs: every input or the first one, first or last
    axis, or every axis of every input."""
    return [
        [_emptied(a, 0) for a in args],
        [_emptied(args[0], 0), *args[1:]],
        [_emptied(a, -1) for a in args],
        [_emptied(args[0], -1), *args[1:]],
        [_all_axes_emptied(a) for a in args],
    ]


def _has_empty(args: list[Any]) -> bool:
    leaves = [v for a in args for v in (a if isinstance(a, list) else [a])]
    return any(isinstance(v, np.ndarray) and v.size == 0 for v in leaves)


def empty_call(op: str) -> tuple[Case, list[Any], Any, BaseException | None]:
    """The first case of ``op`` that numpy runs on a zero-size input: ``(case, inputs,
    output, None)``; else the first case's emptied inputs and numpy's error."""
    first: tuple[Case, list[Any], Any, BaseException | None] | None = None
    for case in CASES[op]:
        rng = np.random.default_rng(zlib.crc32(f"empty-{op}-{case.label}".encode()))
        for args in _variants(case.sample(rng)):
            if not _has_empty(args):
                continue
            try:
                with quiet():
                    out = case.primal(*args, **case.options)
            except Exception as error:  # numpy refuses this empty input
                first = first or (case, args, None, error)
                continue
            return case, args, out, None
    assert first is not None, f"{op}: no case has an input that can be emptied"
    return first


class Program:
    """``loss(x0, x1_0, x1_1, ...) = sum(G * op(x0, [x1_0, x1_1], **options))`` as
    source text registered with linecache (the compiler reads it), one parameter per
    differentiable array (list inputs flattened), fixed inputs and options as globals."""

    def __init__(self, op: str, case: Case, args: list[Any], out: Any) -> None:
        differentiable = case.differentiable or range(len(args))
        self.params: list[str] = []
        self.values: list[Any] = []
        namespace: dict[str, Any] = {"np": np, "fn": case.primal}
        operands = []
        for i, arg in enumerate(args):
            if i not in differentiable or not _is_float(arg):
                namespace[f"FIXED{i}"] = arg
                operands.append(f"FIXED{i}")
            elif isinstance(arg, list):
                names = [f"x{i}_{k}" for k in range(len(arg))]
                self.params += names
                self.values += arg
                operands.append("[" + ", ".join(names) + "]")
            else:
                self.params.append(f"x{i}")
                self.values.append(arg)
                operands.append(f"x{i}")
        for name, value in case.options.items():
            if _is_literal(value):
                operands.append(f"{name}={value!r}")
            else:
                namespace[f"OPTION_{name}"] = value
                operands.append(f"{name}=OPTION_{name}")
        rng = np.random.default_rng(1)
        pieces = out if isinstance(out, list) else [out]
        for k, piece in enumerate(pieces):
            namespace[f"G{k}"] = rng.normal(size=np.shape(piece))
        if isinstance(out, list):
            total = " + ".join(f"np.sum(out[{k}] * G{k})" for k in range(len(pieces)))
        else:
            total = "np.sum(out * G0)"
        self.filename = f"<empty {op}>"
        self.source = (
            f"def loss({', '.join(self.params)}):\n"
            f"    out = fn({', '.join(operands)})\n"
            f"    return {total or '0.0'}\n"
        )
        lines = self.source.splitlines(keepends=True)
        linecache.cache[self.filename] = (len(self.source), None, lines, self.filename)
        exec(compile(self.source, self.filename, "exec"), namespace)
        self.loss = namespace["loss"]

    def close(self) -> None:
        linecache.cache.pop(self.filename, None)


def _is_float(value: Any) -> bool:
    if isinstance(value, list):
        return all(_is_float(v) for v in value)
    return isinstance(value, (np.ndarray, np.floating)) and np.asarray(value).dtype.kind == "f"


def _is_literal(value: Any) -> bool:
    try:
        return ast.literal_eval(repr(value)) == value
    except (ValueError, SyntaxError, TypeError):
        return False


def _located(error: AutodiffError) -> bool:
    """Located in the user's code: the program, or a function of the table it calls."""
    location = error.location
    if location is None:
        return False
    return "autodiff_tutor/" not in location.filename and "-packages" not in location.filename


def run_mode(mode: str, program: Program) -> Any:
    if mode == "compiler":
        result = grad(program.loss, wrt=program.params)(*program.values)
    else:
        result = value_and_gradient(program.loss, *program.values, wrt=program.params)[1]
    return list(result)  # wrt is a list: one gradient per parameter


@pytest.mark.parametrize("mode", ["compiler", "tracing"])
@pytest.mark.parametrize("op", OPS)
def test_zero_size_input_gives_the_gradient_or_a_located_refusal(op: str, mode: str) -> None:
    case, args, out, numpy_error = empty_call(op)
    program = Program(op, case, args, out if numpy_error is None else np.zeros(0))
    try:
        if numpy_error is not None:  # numpy refuses: so must we, with its error or ours
            with pytest.raises((type(numpy_error), AutodiffError)) as raised:
                run_mode(mode, program)
            if isinstance(raised.value, AutodiffError):
                assert _located(raised.value), str(raised.value)
            return
        try:
            with quiet():
                got = run_mode(mode, program)
        except AutodiffError as error:
            assert not isinstance(error, InternalError), (
                f"{op} ({mode}): the toolkit failed: {error}"
            )
            assert _located(error), f"{op} ({mode}): unlocated: {error}"
            return
        for k, (name, value) in enumerate(zip(program.params, program.values, strict=True)):
            with quiet():
                want = central_difference(program.loss, program.values, k)
            assert np.shape(got[k]) == np.shape(value), f"{op} ({mode}) d/d{name}: shape"
            np.testing.assert_allclose(got[k], want, rtol=1e-6, atol=1e-7, err_msg=f"{op} {name}")
    finally:
        program.close()


def test_every_op_is_tried_on_an_empty_input() -> None:
    """The walk covers the catalog, and most ops run on an empty input (not refused)."""
    accepted = [op for op in OPS if empty_call(op)[3] is None]
    assert len(accepted) >= 0.8 * len(OPS), sorted(set(OPS) - set(accepted))


def mean_of(x):
    return np.mean(x)


@pytest.mark.parametrize("mode", ["compiler", "tracing"])
def test_the_mean_of_an_empty_array(mode):
    """``np.mean`` of an empty array compiles and traces: its value is numpy's ``nan``
    and its gradient an empty array of the input's shape."""
    if mode == "compiler":
        value, got = compiled_result(lambda: value_and_grad(mean_of)(np.zeros(0)))
    else:
        value, got = compiled_result(lambda: value_and_gradient(mean_of, np.zeros(0)))
    assert np.isnan(value) and got.shape == (0,)
