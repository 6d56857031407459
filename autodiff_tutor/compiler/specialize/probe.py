"""Stage 6b, specialize — drop the helpers whose answer the argument shapes decide.

``unbroadcast(g, x)`` sums a gradient back down to the shape of ``x`` and casts it to
``x``'s dtype; where ``g`` already has that shape and dtype it returns ``g`` itself.
Which calls are such no-ops depends on the shapes and dtypes of the arguments, not
on their values, when the program is *shape-static* (:func:`shape_static`): no mask,
only shape-determined integers; ``while`` loops and custom operations are checked
after the probe or guarded where the code runs (:mod:`.specialize.regions`), branches are
specialized on the path the probe took (:mod:`.specialize.paths`).

At a call with shapes and dtypes not seen before, the compiled pair is *probed*: a
copy of the backward whose helper calls record whether they returned their
gradient unchanged (:func:`probe_sites`) runs once. The *specialized* backward
(:func:`drop_sites`) writes the gradient itself at every call site that was a no-op
at every run, then is simplified (:mod:`.specialize.simplify`); the memory stage then keeps
less. The specialized pair is used only for arguments of the same shapes, dtypes
and integer values (:func:`guard_key`); anything else runs the general code.

>>> import numpy as np
>>> source = "d_a = unbroadcast(d_t, t1)\\nd_b = unbroadcast(-d_t, t2)"
>>> [ast.unparse(s) for s in probe_sites(ast.parse(source).body)]  # doctest: +NORMALIZE_WHITESPACE
['d_a = probe_site(site_flags, 0, unbroadcast, d_t, t1)',
 'd_b = probe_site(site_flags, 1, unbroadcast, -d_t, t2)']
>>> [ast.unparse(s) for s in drop_sites(ast.parse(source).body, {1: "same"})]
['d_a = unbroadcast(d_t, t1)', 'd_b = -d_t']
>>> guard_key((np.zeros((2, 3)), 4))
(((2, 3), dtype('float64')), (<class 'int'>, 4))
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from autodiff_tutor.compiler import code
from autodiff_tutor.compiler.ir import Program, Step, loops_in
from autodiff_tutor.compiler.specialize.forms import form_of, written
from autodiff_tutor.compiler.specialize.paths import branches_in_loops

#: Helpers probed, with their number of arguments: ``unbroadcast`` and ``cast_like``
#: return their first argument unchanged when its shape and dtype are already those
#: of their second; ``matmul_dx``/``matmul_dy`` of matrices are one product.
PROBED = {"unbroadcast": 2, "cast_like": 2, "matmul_dx": 3, "matmul_dy": 3}
#: The names the probed and the specialized code use (a user's variable of that name:
#: no specialization): the probe's helper and record, the guards of :mod:`.specialize.regions`.
PROBE_NAMES = (
    "probe_site",
    "site_flags",
    "probe_path",
    "expect_array",
    "expect_arrays",
    "expect_fact",
    "expect_path",
)
#: Calls a shape-static program may make in its static steps (values that are not
#: differentiated): their results depend on shapes only.
_STATIC_CALLS = {"range", "len", "indexed_len", "reversed", "enumerate", "zip"}
_SHAPE_ATTRIBUTES = {"shape", "ndim", "size", "dtype", "T"}
#: Operations whose output shape depends on the values of an integer operand.
_VALUE_SHAPED = {"repeat"}


def shape_static(program: Program) -> bool:
    """Whether every value's shape and dtype follow from the arguments' shapes, dtypes
    and integer values alone (so a probe's answer holds for every such call).

    >>> from autodiff_tutor.compiler.pipeline import front_end
    >>> def f(x):
    ...     return np.sum(x[1:] * x[:-1])
    >>> def g(x):
    ...     return np.sum(x[x > 0])
    >>> shape_static(front_end(f).program), shape_static(front_end(g).program)
    (True, False)
    """
    if set(PROBE_NAMES) & (program.defined_names() | set(program.params)):
        return False
    if branches_in_loops(program):
        return False  # the path may change between iterations (see :mod:`.specialize.paths`)
    masks = _masks(program)
    if any(loop.kind == "for" and loop.iterations in masks for loop in loops_in(program.steps)):
        return False  # a range of a boolean: a count the values decide
    for step in program.all_steps():
        if step.kind == "static":
            if not set(step.defined()) & masks and not _static_value(step.value):
                return False
        elif step.kind == "primitive":
            if step.op in _VALUE_SHAPED:
                return False
            for option in step.options.values():  # axes, indices, shapes
                if not _static_value(option) or code.names(option) & masks:
                    return False
        elif step.kind not in ("copy", "op_call"):
            return False  # a helper with no rule, an escape, an effect
    return True


def value_params(program: Program) -> set[str]:
    """Parameters whose *values* (not only shapes) a shape-static program's shapes may
    depend on: read by a static value (``range(n)``) or an option (``axis=k``), directly
    or through other static values. Their integers are in the guard key; an array
    given for one is not specialized on.

    >>> from autodiff_tutor.compiler.pipeline import front_end
    >>> def f(x, n, shape):
    ...     return np.sum(np.reshape(x[:n], shape)) + x.shape[0]
    >>> sorted(value_params(front_end(f).program))
    ['n', 'shape']
    """
    masks = _masks(program)  # booleans decide no shape in a shape-static program
    statics = [s for s in program.all_steps() if s.kind == "static" and s.target not in masks]
    static = {t: s for s in statics for t in s.defined()}
    found: set[str] = set()
    for step in program.all_steps():
        for option in step.options.values():
            found |= value_reads(option)
    for step in statics:
        found |= value_reads(step.value)
    pending = list(found)
    while pending:
        name = pending.pop()
        if name in static:
            for read in value_reads(static[name].value) - found:
                found.add(read)
                pending.append(read)
    return found & set(program.params)


def _masks(program: Program) -> set[str]:
    """Boolean static values (comparisons, a branch's test) and the values made from
    them: a shape-static program reads none of them in an option or a range."""
    masks: set[str] = set()
    for step in program.all_steps():
        if step.kind == "static" and (_has_compare(step.value) or code.names(step.value) & masks):
            masks.update(step.defined())
    return masks


def value_reads(node: ast.AST) -> set[str]:
    """Names read for their value: not those only read for a shape (``x.shape``,
    ``len(x)``).

    >>> sorted(value_reads(ast.parse("np.zeros(x.shape) + len(y) * z", mode="eval")))
    ['len', 'np', 'z']
    """
    shape_only: set[int] = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Attribute) and inner.attr in _SHAPE_ATTRIBUTES - {"T"}:
            shape_only.add(id(inner.value))
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name):
            if inner.func.id in ("len", "indexed_len"):
                shape_only.update(id(a) for a in inner.args)
    return {
        n.id
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in shape_only
    }


def _has_compare(value: ast.expr) -> bool:
    return any(isinstance(n, (ast.Compare, ast.BoolOp)) for n in ast.walk(value))


def _static_value(value: ast.expr) -> bool:
    """Constants, names, shapes and lengths: no integer computed from array values."""
    if isinstance(value, (ast.Constant, ast.Name)):
        return True
    if isinstance(value, ast.Attribute):
        return value.attr in _SHAPE_ATTRIBUTES
    if isinstance(value, ast.Subscript):
        return _shape_expression(value.value) and _static_value(value.slice)
    if isinstance(value, (ast.Tuple, ast.List)):
        return all(_static_value(e) for e in value.elts)
    if isinstance(value, ast.Slice):
        parts = (value.lower, value.upper, value.step)
        return all(p is None or _static_value(p) for p in parts)
    if isinstance(value, ast.BinOp):
        return _static_value(value.left) and _static_value(value.right)
    if isinstance(value, ast.UnaryOp):
        return _static_value(value.operand)
    if isinstance(value, ast.Call):
        known = isinstance(value.func, ast.Name) and value.func.id in _STATIC_CALLS
        return known and not value.keywords and all(_static_value(a) for a in value.args)
    return False


def _shape_expression(value: ast.expr) -> bool:
    """``x.shape`` (or a tuple constant): indexing it gives a shape-determined integer."""
    if isinstance(value, ast.Attribute):
        return value.attr == "shape"
    return isinstance(value, ast.Constant)


def guard_key(args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """What a specialization depends on: each numpy array's shape and dtype, each
    number's type, and the value of integers, strings, flags and ``None``; ``None``
    for arguments of any other kind (or boolean arrays, which can select elements):
    those calls run the general code."""
    key: list[Any] = []
    for value in args:
        kind = type(value)
        if kind is np.ndarray:
            if value.dtype.kind not in "fiu":
                return None
            key.append((value.shape, value.dtype))
        elif kind in (float, np.float64, np.float32):
            key.append(kind)
        elif kind in (int, bool, str) or value is None:
            key.append((kind, value))
        else:
            return None
    return tuple(key)


class _Sites(ast.NodeTransformer):
    """Numbers the probed helper calls in one fixed order (the same for both uses)."""

    def __init__(self, forms: dict[int, str] | None):
        self.forms = forms  # None: probe every site
        self.count = 0

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        func = node.func
        if not (isinstance(func, ast.Name) and func.id in PROBED) or node.keywords:
            return node
        if len(node.args) != PROBED[func.id]:
            return node
        site = self.count
        self.count += 1
        if self.forms is None:
            flags = ast.Name(PROBE_NAMES[1], ast.Load())
            return ast.Call(
                ast.Name(PROBE_NAMES[0], ast.Load()),
                [flags, ast.Constant(site), func, *node.args],
                [],
            )
        form = self.forms.get(site)
        if form is None:
            return node
        return written(form, node.args)


def _transformed(statements: list[ast.stmt], forms: dict[int, str] | None) -> list[ast.stmt]:
    """``statements`` rewritten in place: they are the specialized pipeline's own copy
    of the reverse pass (:func:`..pipeline.generate_checked`)."""
    sites = _Sites(forms)
    return [ast.fix_missing_locations(sites.visit(s)) for s in statements]


def probe_sites(statements: list[ast.stmt]) -> list[ast.stmt]:
    """The backward (changed in place) whose probed helper calls record, by site
    number, the form each took (:func:`probe_site`)."""
    return _transformed(statements, None)


def drop_sites(statements: list[ast.stmt], forms: dict[int, str]) -> list[ast.stmt]:
    """The backward (changed in place) with the helper calls at the sites of ``forms``
    written out: the gradient itself (``same``), or one matrix product."""
    return _transformed(statements, forms)


def probe_site(flags: dict[int, Any], site: int, helper: Any, *args: Any) -> Any:
    """Run ``helper(*args)`` and record at ``site`` the form it took: ``same`` (it gave
    its gradient back), one sum, one product (:mod:`.specialize.forms`), or ``None``; a site
    that took two forms gets ``None``.

    >>> flags = {}
    >>> from autodiff_tutor.runtime.helpers import unbroadcast
    >>> _ = probe_site(flags, 0, unbroadcast, np.ones(2), np.zeros(2))
    >>> _ = probe_site(flags, 1, unbroadcast, np.ones((3, 2)), np.zeros(2))
    >>> _ = probe_site(flags, 2, unbroadcast, np.ones((3, 2)), np.zeros(2, np.float32))
    >>> flags
    {0: 'same', 1: ('sum', (0,), False), 2: None}
    """
    result = helper(*args)
    form = form_of(helper.__name__, args, result)
    flags[site] = form if flags.get(site, form) == form else None
    return result


def rematerialize(statements: list[ast.stmt], program: Program) -> list[ast.stmt]:
    """The backward reading ``c * a`` (a number times a value it reads anyway) where it
    read ``t``, for each top-level ``t = c * a`` of the program: one multiplication
    more, one array fewer in memory (``t`` is kept only if read elsewhere).

    >>> from autodiff_tutor.compiler.pipeline import front_end
    >>> def f(x):
    ...     a = x * x
    ...     return np.sum(100.0 * a * a)
    >>> tree = ast.parse("d_a = d_t2 * t1 + d_t2 * a * 100.0").body
    >>> [ast.unparse(s) for s in rematerialize(tree, front_end(f).program)]
    ['d_a = d_t2 * (100.0 * a) + d_t2 * a * 100.0']
    """
    counts = program.bindings()
    read = code.names(*statements)
    scaled: dict[str, ast.expr] = {}
    for step in program.steps:  # top level only: one value per name
        if not (isinstance(step, Step) and step.op == "multiply" and counts[step.target] == 1):
            continue
        operands = list(step.inputs.values())
        numbers = [o for o in operands if isinstance(o, ast.Constant)]
        names = [o for o in operands if isinstance(o, ast.Name)]
        if len(numbers) == 1 and len(names) == 1 and type(numbers[0].value) in (int, float):
            value = names[0].id
            if counts.get(value, 0) <= 1 and value in read:
                scaled[step.target] = ast.BinOp(numbers[0], ast.Mult(), names[0])
    if not scaled:
        return statements
    return [ast.fix_missing_locations(code.substituted(s, scaled)) for s in statements]
