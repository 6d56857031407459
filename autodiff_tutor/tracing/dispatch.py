"""Run one operation on traced values: compute it on the raw arrays, and record it.

Every way of operating on a traced value (operators, numpy ufuncs and functions,
methods, the traced namespace) ends in :func:`apply`. It computes the result with
the array library of the data, and, when an input is on the running trace, appends
a record with what the backward pass needs. Operations without a derivative rule
raise :class:`~autodiff_tutor.errors.TracingError` instead of dropping the gradient;
non-differentiable ones (comparisons, ``sign``) give plain, untraced results, except
``np.zeros_like``/``ones_like``/``empty_like``: traced constants, which the values
written into them later keep their trace in.

Custom operations (any object of the op protocol, ``op_forward`` / ``op_backward``: a
``DifferentiableFunction``, a compiled ``@differentiable`` function) are primitives
too (:func:`call_op`): the forward runs on the raw arrays, one record keeps what it
saved, and the backward pass calls ``op_backward(d_outputs, compute_gradients,
saved)`` with one flag per input: true where the input is on the trace and a gradient
is asked through it.

A library call's arguments are matched to its rule's parameters by the call's
signature (:func:`bind`): ``np.sum(a, axis=0, keepdims=True)`` and the rule ``sum(g, x,
axis=None, keepdims=False)`` name things differently. The first parameters of the call
are the rule's inputs, in order; the rest are matched by name (with a few aliases such
as ``min`` for ``a_min``). Anything else that is passed (``dtype=``, ``where=``) is
reported, never ignored.

>>> import numpy as np
>>> from autodiff_tutor.tracing import evaluate, traced
>>> evaluate(lambda x: np.tanh(x) > 0, traced([-1.0, 1.0]))
array([False,  True])
>>> evaluate(lambda x: type(np.zeros_like(x)).__name__, traced([-1.0, 1.0]))
'Traced'
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autodiff_tutor.errors import AutodiffError, Location, TracingError
from autodiff_tutor.foreign_libraries import first_foreign
from autodiff_tutor.locations import here, location
from autodiff_tutor.ops.formats import strip_dims
from autodiff_tutor.protocol import register_traced_call
from autodiff_tutor.rules import registry
from autodiff_tutor.rules.einsum_plans import einsum_in_pairs, einsum_of_one
from autodiff_tutor.rules.names import ESCAPES, canonical, op_of_callable, ufunc_method_hint
from autodiff_tutor.rules.registry import Rule
from autodiff_tutor.runtime.backend import array_module, shape_of
from autodiff_tutor.tracing import messages
from autodiff_tutor.tracing.messages import foreign_operand
from autodiff_tutor.tracing.tape import active_tape, detail
from autodiff_tutor.tracing.traced_values import (
    TracedValue,
    dtype_name,
    flat_infos,
    input_info,
    is_live,
    is_traced,
    like_result,
    make,
    note_view,
    snapshot,
    traced_leaves,
    unwrap,
    wrap_untraced,
)

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


@dataclass
class CustomPayload:
    """What the backward pass of a custom-op record needs (dropped on release).

    >>> CustomPayload(op=None, saved=(), inputs=[], outputs=[]).saved
    ()
    """

    op: Any
    saved: Any
    inputs: list[Any]
    outputs: list[Any]
    called_at: Location | None = None  # the user's call of the op


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
        done = einsum_steps(fn, args, kwargs)
        if done is not None:  # three operands in pairs, one as a sum, transpose...
            return done[0]

    def forward() -> Any:
        return fn(*unwrap(args), **unwrap(kwargs))

    rule = registry.lookup(op) if op else None
    if rule is None or not live:
        return _views_noted(
            apply(op, name, forward, [*args, *kwargs.values()], {}), fn, args, kwargs
        )
    bound = bind(fn, rule, args, kwargs)
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
            if isinstance(result, (list, tuple)):  # np.split, np.unstack: views of the input
                for k, piece in enumerate(result):
                    note_view(piece, arg, lambda base, k=k, again=rebuild: again(base)[k])
    return result


def einsum_steps(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any] | None:
    """``(result,)`` of an ``np.einsum(*args)`` that the two-operand rule does not bind
    directly, traced as the steps it is: three or more operands as two-operand einsums
    in turn, one operand as the sum, transpose, trace or diagonal it is (the compiler
    makes the same steps from the einsum record's plans); ``None`` when the call is the
    rule's own case or one it refuses.

    >>> einsum_steps(np.einsum, ("ij,jk", np.eye(2), np.eye(2)), {}) is None  # the rule's
    True
    """
    if kwargs or not args or not isinstance(args[0], str):  # subscripts: a literal, as numpy's
        return None
    subscripts = args[0]
    pairs = einsum_in_pairs(subscripts) if len(args) > 3 else None
    if pairs is not None and len(pairs) == len(args) - 2:
        result = args[1]
        for spec, operand in zip(pairs, args[2:], strict=True):
            result = call_function(fn, (spec, result, operand), {})
        return (result,)
    steps = einsum_of_one(subscripts) if len(args) == 2 else None
    if steps is None:
        return None
    result, xp = args[1], array_module(getattr(args[1], "_data", args[1]))
    for function, options in steps:
        result = call_function(getattr(xp, function), (result,), dict(options))
    return (result,)


def call_op(op: Any, *inputs: Any) -> Any:
    """Run differentiable operation ``op`` on ``inputs`` (some may be traced).

    Returns the outputs as traced arrays: a bare value when ``op.num_outputs`` is 1,
    else a tuple. When an input is on the running trace, one record is added whose
    backward calls ``op.op_backward``. On plain inputs it just runs the forward. An op
    or a compiled function called on a traced value comes here by itself.

    >>> from autodiff_tutor.api import differentiable
    >>> from autodiff_tutor.tracing import evaluate, gradient, traced
    >>> @differentiable
    ... def cube(x):
    ...     return x * x * x
    >>> evaluate(lambda x: gradient(call_op(cube, x), x), traced(2.0))
    np.float64(12.0)
    """
    tape = active_tape()
    if tape is not None:
        tape.raise_pending()
    inputs = strip_dims(inputs)  # an op works on the data; its interface function relabels
    live = tape is not None and any(is_live(v, tape) for v in inputs)
    # on a trace, the op gets its own copy of each plain input: what it saves for its
    # backward must not see a later write into that array (through a view, a helper)
    raw_inputs = [unwrap(v) if is_traced(v) or not live else snapshot(v) for v in inputs]
    result = op.op_forward(*raw_inputs)
    name = getattr(op, "name", type(op).__name__)
    count = getattr(op, "num_outputs", 1)
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], tuple)):
        raise TracingError(
            f"op_forward of {name!r} must return (outputs, saved), outputs being a tuple",
            location(),
        )
    outputs, saved = result
    if len(outputs) != count:
        raise TracingError(
            f"op_forward of {name!r} returned {len(outputs)} output(s); num_outputs is {count}",
            location(),
        )
    if not live:
        wrapped = [wrap_untraced(o, traced_leaves(list(inputs))) for o in outputs]
    else:
        record = tape.add_record(
            name,
            "custom",
            [input_info(v, tape) for v in inputs],
            [(shape_of(o), dtype_name(o)) for o in outputs],
            here(),
            payload=CustomPayload(
                op,
                saved,
                [
                    snapshot(r) if is_traced(v) else r
                    for v, r in zip(inputs, raw_inputs, strict=True)
                ],
                list(outputs),
                location(),
            ),
        )
        like = traced_leaves(list(inputs))[0]
        wrapped = [make(o, like, tape, n) for o, n in zip(outputs, record.outputs, strict=True)]
    return wrapped[0] if count == 1 else tuple(wrapped)


def _call_if_traced(op: Any, inputs: tuple[Any, ...]) -> tuple[bool, Any]:
    """:func:`call_op` where an input is traced (see
    :func:`autodiff_tutor.protocol.call_if_traced`)."""
    if any(is_traced(value) for value in strip_dims(inputs)):
        return True, call_op(op, *inputs)
    return False, None


register_traced_call(_call_if_traced)  # ops and compiled functions call back through it


# call parameter name -> rule parameter name
NAME_ALIASES = {"min": "a_min", "max": "a_max", "newshape": "shape", "x1": "x", "x2": "y"}


_EMPTY = inspect.Parameter.empty


@dataclass
class Bound:
    """A call matched to a rule: the rule's inputs and options, and what did not fit.

    >>> Bound([1.0], {"axis": 0}).unsupported
    []
    """

    inputs: list[Any]
    options: dict[str, Any]
    unsupported: list[str] = field(default_factory=list)


@functools.lru_cache(maxsize=512)
def _signature(fn: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _is_default(value: Any, parameter: inspect.Parameter | None) -> bool:
    if value is None or value is np._NoValue:
        return True
    if parameter is None or parameter.default is _EMPTY:
        return False
    try:
        return bool(value == parameter.default)
    except Exception:  # arrays compare elementwise: not a default
        return False


def bind(fn: Any, rule: Rule, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Bound | None:
    """Match ``fn(*args, **kwargs)`` to ``rule``; ``None`` if the call does not bind.

    ``fn`` gives the parameter names; ufuncs (no Python signature) take their inputs
    positionally.

    >>> import numpy as np
    >>> from autodiff_tutor.rules.registry import lookup
    >>> b = bind(np.clip, lookup("clip"), (np.ones(2),), {"min": 0.0})
    >>> b.inputs[1:], b.unsupported
    ([0.0, inf], [])
    """
    if isinstance(fn, np.ufunc) or _signature(fn) is None:
        return _bind_positional(rule, args, kwargs)
    signature = _signature(fn)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return None
    parameters = [
        p
        for p in signature.parameters.values()
        if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    arguments = dict(bound.arguments)
    for p in signature.parameters.values():
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            arguments.update(arguments.pop(p.name, {}))
        elif p.kind is inspect.Parameter.VAR_POSITIONAL and arguments.get(p.name):
            return _bind_positional(rule, args, kwargs)  # np.atleast_2d(*arys), np.einsum
    by_name = {p.name: p for p in signature.parameters.values()}
    missing = _stand_ins(rule)
    inputs: dict[str, Any] = {}
    for name, parameter in zip(rule.inputs, parameters, strict=False):
        if parameter.name in arguments:
            inputs[name] = arguments.pop(parameter.name)
    options: dict[str, Any] = {}
    unsupported: list[str] = []
    for given, value in arguments.items():
        target = NAME_ALIASES.get(given, given)
        if target in rule.inputs and target not in inputs:
            inputs[target] = value
        elif target in rule.options:
            options[target] = value
        elif not _is_default(value, by_name.get(given)):
            unsupported.append(given)
    values = []
    for name in rule.inputs:
        value = inputs.get(name)
        if value is None and name in missing:
            value = missing[name]
        elif name not in inputs:
            return None
        values.append(value)
    return Bound(values, options, unsupported)


def _stand_ins(rule: Rule) -> dict[str, Any]:
    """The values that stand for an input left out or given as ``None`` (the forward
    keeps the original call): the rule's ``defaults`` and ``none_means``.

    >>> from autodiff_tutor.rules.registry import lookup
    >>> _stand_ins(lookup("clip")), _stand_ins(lookup("norm_cdf"))
    ({'a_min': -inf, 'a_max': inf}, {'loc': 0.0, 'scale': 1.0})
    """
    return {**rule.defaults, **rule.none_means}


def _bind_positional(rule: Rule, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Bound | None:
    count = len(rule.inputs)
    if len(args) < count:  # norm.logpdf(x, mu): scipy's default scale, or scale= by name
        missing, rest = _stand_ins(rule), rule.inputs[len(args) :]
        if not all(name in missing or name in kwargs for name in rest):
            return None
        kwargs = dict(kwargs)
        args = (*args, *(kwargs.pop(name) if name in kwargs else missing[name] for name in rest))
    options = dict(zip(rule.options, args[count:], strict=False))
    unsupported = [n for n, v in kwargs.items() if n not in rule.options and v is not None]
    options.update({n: v for n, v in kwargs.items() if n in rule.options})
    if len(args) > count + len(rule.options):
        return None
    return Bound(list(args[:count]), options, unsupported)
