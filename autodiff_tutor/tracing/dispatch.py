"""Run one operation on traced values: compute it on the raw arrays, and record it.

Every way of operating on a traced value (operators, numpy ufuncs and functions,
methods, the traced namespace) ends in :func:`apply`. It computes the result with
the array library of the data, and, when an input is on the running trace, appends
a record with what the backward pass needs. Operations without a derivative rule
raise :class:`~autodiff_tutor.errors.TracingError` instead of dropping the gradient;
non-differentiable ones (comparisons, ``sign``) give plain, untraced results, except
``np.zeros_like``/``ones_like``/``empty_like``: traced constants, which the values
written into them later keep their trace in.

>>> import numpy as np
>>> from autodiff_tutor.tracing import evaluate, traced
>>> evaluate(lambda x: np.tanh(x) > 0, traced([-1.0, 1.0]))
array([False,  True])
>>> evaluate(lambda x: type(np.zeros_like(x)).__name__, traced([-1.0, 1.0]))
'Traced'
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from autodiff_tutor.errors import AutodiffError
from autodiff_tutor.foreign_libraries import first_foreign
from autodiff_tutor.locations import here, location
from autodiff_tutor.rules import registry
from autodiff_tutor.rules.names import ESCAPES, canonical, op_of_callable, ufunc_method_hint
from autodiff_tutor.runtime.backend import shape_of
from autodiff_tutor.tracing import binding, messages
from autodiff_tutor.tracing.details import detail
from autodiff_tutor.tracing.einsum_steps import einsum_steps
from autodiff_tutor.tracing.other_libraries import foreign_operand
from autodiff_tutor.tracing.tape import active_tape
from autodiff_tutor.tracing.traced_values import (
    dtype_name,
    flat_infos,
    is_live,
    is_traced,
    like_result,
    make,
    snapshot,
    traced_leaves,
    unwrap,
    wrap_untraced,
)
from autodiff_tutor.tracing.value import TracedValue, note_view

#: new arrays shaped like a traced one: traced constants (off the trace), so that the
#: numbers written or added into them later keep their trace (acc = np.zeros_like(x);
#: acc += t; y[i] = t), as MATLAB's zeros(size(x), "like", x) gives a dlarray
LIKE_FUNCTIONS = {"zeros_like", "ones_like", "empty_like"}
#: inputs that are no other autodiff library's (the common ones, told apart at once)
_PLAIN_INPUTS = (TracedValue, np.ndarray, float, int)


@dataclass
class RulePayload:
    """What the backward pass of one rule record needs (dropped on release).

    >>> RulePayload(registry.lookup("tanh"), [0.5], [0], {}, np.tanh(0.5)).nodes
    [0]
    """

    rule: registry.Rule
    inputs: list[Any]  # raw values, one per rule input (a list for sequence inputs)
    nodes: list[Any]  # node id or None per input (a list for sequence inputs)
    options: dict[str, Any]
    out: Any


def status(op: str | None) -> str | None:
    """``"rule"``, ``"cut"`` (non-differentiable) or ``None`` (no rule) for ``op``.

    >>> status("tanh"), status("less"), status("i0")
    ('rule', 'cut', None)
    """
    if op is None:
        return None
    if registry.lookup(op) is not None:
        return "rule"
    return "cut" if registry.is_nondifferentiable(op) else None


def apply(
    op: str | None,
    name: str,
    forward: Callable[[], Any],
    inputs: list[Any],
    options: dict[str, Any],
) -> Any:
    """Compute ``forward()`` and record it as ``op`` if an input is on the trace.

    ``inputs`` and ``options`` are the rule's parameters (inputs may be traced);
    ``name`` is how the user called it, for messages.

    >>> from autodiff_tutor.tracing import traced
    >>> x = traced(0.5)
    >>> apply("tanh", "np.tanh", lambda: np.tanh(0.5), [x], {})  # not inside evaluate
    traced(np.float64(0.46...), not on a trace)
    """
    tape = active_tape()
    if tape is not None:
        tape.raise_pending()
    for value in inputs:
        if not isinstance(value, _PLAIN_INPUTS):  # autograd's, JAX's, PyTorch's values?
            foreign = first_foreign(value)
            if foreign is not None:  # neither library can follow the other
                raise foreign_operand(name, foreign[1])
    leaves = traced_leaves(inputs)
    live = tape is not None and any(t._tape is tape for t in leaves)
    kind = status(op)
    if kind is None and live:
        raise messages.no_rule(name)
    if kind == "cut":
        result = forward()
        if live:
            infos = flat_infos(inputs, tape)
            tape.add_record(op, "cut", infos, [], here(), detail(op, options))
        return wrap_untraced(result, leaves) if op in LIKE_FUNCTIONS else result
    if not live:
        return wrap_untraced(forward(), leaves)
    out = forward()
    rule = registry.lookup(op)
    raw_options = {k: snapshot(unwrap(v)) for k, v in options.items()}
    nodes = [
        [t._node if is_live(t, tape) else None for t in v]
        if rule.sequence
        else (v._node if is_live(v, tape) else None)
        for v in inputs
    ]
    payload = RulePayload(rule, [snapshot(unwrap(v)) for v in inputs], nodes, raw_options, out)
    items = list(out) if rule.list_result else [out]  # split, eigh: one node per result
    record = tape.add_record(
        op,
        "rule",
        flat_infos(inputs, tape),
        [(shape_of(o), dtype_name(o)) for o in items],
        here(),
        detail(op, raw_options),
        payload,
    )
    made = [make(o, leaves[0], tape, n) for o, n in zip(items, record.outputs, strict=True)]
    return like_result(out, made) if rule.list_result else made[0]


def _qualified(fn: Any) -> str:
    module = (getattr(fn, "__module__", None) or "numpy").replace("numpy", "np", 1)
    return f"{module}.{getattr(fn, '__name__', repr(fn))}"


def _check_out(name: str, out: Any, inputs: list[Any]) -> None:
    outs = out if isinstance(out, tuple) else (out,)
    if any(is_traced(o) for o in outs):
        raise messages.in_place(f"{name}(..., out=...)")
    if any(is_live(t) for t in traced_leaves(inputs)):
        raise messages.write_into_plain(f"{name}(..., out=...) (or an in-place operator)")


def call_ufunc(ufunc: np.ufunc, method: str, inputs: tuple[Any, ...], kwargs: dict) -> Any:
    """``np.<ufunc>(...)`` with traced inputs (numpy's ``__array_ufunc__`` protocol).

    >>> from autodiff_tutor.tracing import traced
    >>> call_ufunc(np.exp, "__call__", (traced(0.0),), {})
    traced(np.float64(1.0), not on a trace)
    """
    name = _ufunc_name(ufunc)
    out = kwargs.get("out")
    if out is not None and any(o is not None for o in (out if isinstance(out, tuple) else (out,))):
        _check_out(name, out, list(inputs))
    if method == "at":
        raise messages.in_place(f"{name}.at(...)")
    leaves = traced_leaves(list(inputs))
    live = any(is_live(t) for t in leaves)
    if method != "__call__":
        if live:
            hint = ufunc_method_hint(ufunc.__name__, method)
            raise messages.unsupported_call(f"{name}.{method}(...)", hint)
        return wrap_untraced(getattr(ufunc, method)(*unwrap(inputs), **unwrap(kwargs)), leaves)
    extra = [k for k, v in kwargs.items() if v is not None and k != "out"]
    if live and extra:
        raise messages.unsupported_arguments(name, extra, ())
    op = canonical(ufunc.__name__)
    rule = registry.lookup(op)
    if live and rule is not None and len(rule.inputs) != len(inputs):
        raise messages.unsupported_call(
            f"{name} with {len(inputs)} inputs",
            f"call {name} with {len(rule.inputs)} input(s), as its derivative rule takes",
        )
    kwargs = unwrap({k: v for k, v in kwargs.items() if v is not None})
    return apply(op, name, lambda: ufunc(*unwrap(inputs), **kwargs), list(inputs), {})


def _ufunc_name(ufunc: np.ufunc) -> str:
    """``np.exp``, or ``scipy.special.gammaln`` for scipy's ufuncs (as the user wrote it).

    >>> _ufunc_name(np.exp)
    'np.exp'
    """
    if getattr(np, ufunc.__name__, None) is ufunc:
        return f"np.{ufunc.__name__}"
    special = sys.modules.get("scipy.special")
    if special is not None and getattr(special, ufunc.__name__, None) is ufunc:
        return f"scipy.special.{ufunc.__name__}"
    return ufunc.__name__


def call_function(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any], name: str = "") -> Any:
    """An array function (``np.sum``, ``xp.concat``...) called with traced arguments.

    >>> from autodiff_tutor.tracing import traced
    >>> call_function(np.sum, (traced([1.0, 2.0]),), {"axis": 0})
    traced(np.float64(3.0), not on a trace)
    """
    name = name or _qualified(fn)
    op = op_of_callable(fn)  # np.emath.sqrt is no np.sqrt: only a function's own name counts
    leaves = traced_leaves([args, kwargs])
    live = any(is_live(t) for t in leaves)
    if kwargs.get("out") is not None:
        _check_out(name, kwargs["out"], list(args))
    if op in ESCAPES and live:
        raise messages.escape(f"{name}()", messages.COPY_HINT)

    if op == "einsum" and live:
        done = einsum_steps(fn, args, kwargs, call_function)
        if done is not None:  # three operands in pairs, one as a sum, transpose...
            return done[0]

    def forward() -> Any:
        return fn(*unwrap(args), **unwrap(kwargs))

    rule = registry.lookup(op) if op else None
    if rule is None or not live:
        return _views_noted(
            apply(op, name, forward, [*args, *kwargs.values()], {}), fn, args, kwargs
        )
    bound = binding.bind(fn, rule, args, kwargs)
    if bound is None:
        forward()  # a wrong call raises the library's own error here
        _check_leading(rule, args)  # np.einsum of one or three operands: its rule says so
        raise messages.unsupported_arguments(name, ["<this combination of arguments>"], ())
    if bound.unsupported:
        raise messages.unsupported_arguments(name, bound.unsupported, rule.options)
    check_untraced_options(name, bound.options)
    if rule.sequence and is_traced(bound.inputs[0]):  # np.concatenate(m): m's rows, in order
        bound.inputs[0] = list(bound.inputs[0])
    try:
        given = {**dict(zip(rule.inputs, bound.inputs, strict=True)), **bound.options}
        rule.check_options({**rule.options, **unwrap(given)})
    except AutodiffError as error:  # an option the rule does not cover: at the call
        raise type(error)(error.message, location(), error.hint) from None
    return _views_noted(apply(op, name, forward, bound.inputs, bound.options), fn, args, kwargs)


def check_untraced_options(name: str, options: dict[str, Any]) -> None:
    """Refuse an option that is a traced value (``np.gradient(x, h)``: its rule gives
    ``h`` no gradient, which would be silently lost).

    >>> check_untraced_options("np.gradient", {"spacing": 0.5})
    """
    for option, value in options.items():
        if any(is_live(t) for t in traced_leaves([value])):
            raise messages.option_with_gradient(name, option)


def _check_leading(rule: Any, args: tuple[Any, ...]) -> None:
    """For a call that does not bind to its rule, the rule's own check of the leading
    arguments, when it can read them all (einsum's subscripts name what it covers).

    >>> from autodiff_tutor.rules.registry import lookup
    >>> _check_leading(lookup("einsum"), ("ij,jk", None))
    """
    given = dict(zip(rule.signature_parameters(), unwrap(list(args)), strict=False))
    if rule.check is None or not set(rule.checked_parameters()) <= set(given):
        return
    try:
        rule.check_options({**rule.options, **given})
    except AutodiffError as error:
        raise type(error)(error.message, location(), error.hint) from None


def _views_noted(result: Any, fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Note ``result`` as a view of the traced positional argument it shares memory with
    (``np.transpose(t)``, ``np.reshape(t, ...)``), rebuilt by calling ``fn`` again."""
    for i, arg in enumerate(args):
        if is_traced(arg):
            rest = (args[:i], args[i + 1 :])

            def rebuild(base: Any, rest: tuple = rest) -> Any:
                return call_function(fn, (*rest[0], base, *rest[1]), kwargs)

            note_view(result, arg, rebuild)
            if isinstance(result, list):  # np.split: each piece is a view of the input
                for k, piece in enumerate(result):
                    note_view(piece, arg, lambda base, k=k, again=rebuild: again(base)[k])
    return result
