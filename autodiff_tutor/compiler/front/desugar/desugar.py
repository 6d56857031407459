"""Stage 2, desugar: rewrite jumps and loop forms into the few shapes the compiler knows.

Before normalization, the syntax tree is rewritten (still plain Python, still the
user's semantics) so that later stages only see structured control flow:

- ``for row in X`` / ``zip`` / ``enumerate`` become loops over ``range(len(...))``
  that read ``X[k]``;
- ``break`` and ``continue`` become flags that guard the rest of the loop body;
- an early ``return`` stores its value in ``result`` and guards what follows
  (:mod:`~.front.desugar.returns`);
- ``c[k] op= v`` stays whole: normalization tells an array's element (``y[i] = y[i]
  + v``) from a list's entry (written in place, :mod:`~.front.normalize.writes`);
- helper functions defined inside the function are inlined where they are called.

>>> import ast
>>> tree = ast.parse('''
... def f(x, n):
...     for i in range(n):
...         if x[i] > 1:
...             break
...         x = x * 2
...     return x
... ''').body[0]
>>> print(ast.unparse(desugar(tree)))
def f(x, n):
    break_1 = False
    for i in range(n):
        if not break_1:
            if x[i] > 1:
                break_1 = True
            else:
                x = x * 2
    return x
"""

from __future__ import annotations

import ast
import builtins

from autodiff_tutor.compiler.code import Names, bindings
from autodiff_tutor.compiler.front.desugar.base import (
    DesugarError,
    assign_like,
    name_node,
    negation,
    reject,
)
from autodiff_tutor.compiler.front.desugar.callees import assigned_names
from autodiff_tutor.compiler.front.desugar.nested import InlineNested
from autodiff_tutor.compiler.front.desugar.python import LowerPython, lambdas_to_defs
from autodiff_tutor.compiler.front.desugar.returns import rewrite_returns
from autodiff_tutor.compiler.front.desugar.sequences import gives_view, hold_rebound
from autodiff_tutor.compiler.front.desugar.state import refuse_reads_after_state_writes
from autodiff_tutor.compiler.front.desugar.structures import Structures
from autodiff_tutor.compiler.front.desugar.walrus import hoist_walrus
from autodiff_tutor.errors import UnsupportedSyntaxError
from autodiff_tutor.syntax import copy_tree


def desugar(
    tree: ast.FunctionDef,
    namespace: dict | None = None,
    structures: dict[str, ast.expr] | None = None,
    statics: dict[str, int] | None = None,
) -> ast.FunctionDef:
    """Rewrite ``tree`` (a copy) into structured form; see the module docstring.

    ``namespace``: the function's globals (to tell the builtin ``sum`` from another);
    ``structures``: structured parameters, as literals of their leaf parameters;
    ``statics``: int parameters whose values the call made known (``range(n_layers)``).
    The tree's ``static_globals`` names the global ints its indexes and ranges read,
    its ``made_from`` the name each name the rewrites made was made from (``f_2``: ``f``).
    """
    tree = copy_tree(tree)
    names = Names(tree)
    for literal in (structures or {}).values():
        names.taken |= {n.id for n in ast.walk(literal) if isinstance(n, ast.Name)}
    # comprehensions become loops first, so that a nested helper called in one is
    # inlined inside the loop, where its loop variable is bound
    lower = LowerPython(names, _builtin_test(tree, namespace), namespace, assigned_names(tree))
    tree.body = lower.run(lambdas_to_defs(tree.body))
    tree.body = hoist_walrus(tree.body)  # after the comprehensions' conditions became ifs
    tree.body = InlineNested(names).run(tree.body)
    local = frozenset(assigned_names(tree))  # after inlining: the helpers' names too
    once = frozenset(_assigned_once(tree))
    structured = Structures(names, structures or {}, statics, namespace, local, once)
    tree.body = structured.run(tree.body)
    tree.output_keys = structured.output_keys  # a returned dict: its keys, in order
    tree.static_globals = tuple(sorted(structured.globals_used))
    tree.made_from = names.made_from  # filled by the rewrites below too
    refuse_reads_after_state_writes(tree)  # bn_param["running_mean"] = ...: effect only
    tree.body = rewrite_returns(tree.body, names)
    tree.body = _flatten([_rewrite_statement(s, names) for s in tree.body])
    return ast.fix_missing_locations(tree)


def _assigned_once(tree: ast.FunctionDef) -> set[str]:
    """The names ``tree`` binds exactly once (and not as a parameter)."""
    body = ast.Module(tree.body, [])
    counts = bindings(body)
    for node in ast.walk(body):
        if isinstance(node, (ast.FunctionDef, ast.arg)):
            counts[node.name if isinstance(node, ast.FunctionDef) else node.arg] += 2
    parameters = {a.arg for a in ast.walk(tree.args) if isinstance(a, ast.arg)}
    return {name for name, count in counts.items() if count == 1 and name not in parameters}


def _builtin_test(tree: ast.FunctionDef, namespace: dict | None):
    """Whether a name (``sum``, ``max``) means the Python builtin inside ``tree``."""
    local = assigned_names(tree)

    def builtin(name: str) -> bool:
        if name in local:
            return False
        value = (namespace or {}).get(name, getattr(builtins, name, None))
        return value is getattr(builtins, name, None)

    return builtin


# -- statements inside loops and branches -------------------------------------------


def _rewrite_statement(node: ast.stmt, names: Names) -> ast.stmt | list[ast.stmt]:
    if isinstance(node, ast.For):
        held = hold_rebound(node, names)  # for v in x: x = x * 2 (Python keeps the old x)
        indexed = _index_loop(node, names)
        if isinstance(indexed, list):  # the sequence is computed once, before the loop
            return [*held, *indexed[:-1], *_rewrite_loop(indexed[-1], names)]
        return [*held, *_rewrite_loop(indexed, names)]
    if isinstance(node, ast.While):
        return _rewrite_loop(node, names)
    if isinstance(node, ast.If):
        node.body = _flatten([_rewrite_statement(s, names) for s in node.body])
        node.orelse = _flatten([_rewrite_statement(s, names) for s in node.orelse])
        return node
    return node


def _flatten(items: list) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for item in items:
        out.extend(item if isinstance(item, list) else [item])
    return out


def _index_loop(node: ast.For, names: Names) -> ast.For | list[ast.stmt]:
    """``for v in X`` (and zip/enumerate of arrays) -> ``for k in range(len(X)): v = X[k]``."""
    iterable = node.iter
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name):
        if iterable.func.id == "range":
            return node
        if iterable.func.id == "enumerate":
            return _enumerate(node, iterable, names)
        if iterable.func.id == "zip" and iterable.args:
            strict = _zip_strict(iterable)
            if not (
                isinstance(node.target, ast.Tuple) and len(node.target.elts) == len(iterable.args)
            ):
                reject(node.target, "unpack zip into one name per sequence")
            loop = _indexed(node, names.fresh("k"), node.target.elts, iterable.args)
            return [_same_lengths(iterable.args, node), loop] if strict else loop
        if iterable.func.id == "reversed" and len(iterable.args) == 1:
            return _reversed(node, iterable.args[0], names)
    if isinstance(iterable, (ast.Name, ast.Attribute, ast.Subscript)):
        return _indexed(node, names.fresh("k"), [node.target], [iterable])
    if isinstance(iterable, (ast.Call, ast.Tuple, ast.List)):  # sorted(keys), (0.1, 0.01), x.T
        if gives_view(iterable):  # indexed below: its items, in a list
            iterable = ast.copy_location(ast.Call(name_node("list"), [iterable], []), iterable)
        held = names.fresh("sequence")
        loop = _indexed(node, names.fresh("k"), [node.target], [name_node(held)])
        return [assign_like(held, iterable, node), loop]
    reject(iterable, "loops must go over range(...), an array, zip(...) or enumerate(...)")


def _zip_strict(call: ast.Call) -> bool:
    """``zip(a, b, strict=True)`` (the linters' advice, ruff's B905) or ``strict=False``."""
    strict = False
    for keyword in call.keywords:
        if not (
            keyword.arg == "strict"
            and isinstance(keyword.value, ast.Constant)
            and isinstance(keyword.value.value, bool)
        ):
            reject(
                keyword,
                f"zip(..., {keyword.arg}=...) is not supported in a differentiated loop",
                "write strict=True or strict=False, or loop over indices: "
                "'for k in range(len(a)):' and read a[k], b[k]",
            )
        strict = keyword.value.value
    return strict


def _same_lengths(sequences: list[ast.expr], like: ast.AST) -> ast.If:
    """``zip(..., strict=True)``'s check, before the loop: ``if len(a) != len(b) or ...:
    raise ValueError(...)``."""
    lengths = [ast.Call(name_node("len"), [copy_tree(s)], []) for s in sequences]
    differ = [ast.Compare(lengths[0], [ast.NotEq()], [n]) for n in lengths[1:]]
    test = differ[0] if len(differ) == 1 else ast.BoolOp(ast.Or(), differ)
    message = ast.Constant("zip() arguments have different lengths (strict=True)")
    error = ast.Raise(ast.Call(name_node("ValueError"), [message], []), None)
    return ast.copy_location(ast.If(test, [ast.copy_location(error, like)], []), like)


def _reversed(node: ast.For, sequence: ast.expr, names: Names) -> ast.For:
    """``for v in reversed(X)`` -> ``for k in range(indexed_len(X)): v = X[-1 - k]``."""
    counter = names.fresh("k")
    length = ast.Call(name_node("indexed_len"), [copy_tree(sequence)], [])
    last = ast.BinOp(ast.Constant(-1), ast.Sub(), name_node(counter))
    element = ast.Subscript(copy_tree(sequence), last, ast.Load())
    element.loop_item = True
    read = ast.copy_location(ast.Assign([node.target], element), node)
    bound = ast.Call(name_node("range"), [length], [])
    loop = ast.For(name_node(counter, True), bound, [read, *node.body], node.orelse)
    return ast.copy_location(loop, node)


def _enumerate(node: ast.For, iterable: ast.Call, names: Names) -> ast.For | list[ast.stmt]:
    """``for i, v in enumerate(X, start)`` -> a loop over ``range(len(X))`` reading ``X[k]``."""
    start: ast.expr | None = iterable.args[1] if len(iterable.args) == 2 else None
    for keyword in iterable.keywords:
        if keyword.arg != "start":
            reject(keyword, f"enumerate(..., {keyword.arg}=...) is not supported")
        start = keyword.value
    if not iterable.args or len(iterable.args) > 2:
        reject(iterable, "enumerate takes one sequence (and a start)")
    if not (isinstance(node.target, ast.Tuple) and len(node.target.elts) == 2):
        reject(node.target, "unpack enumerate as 'for i, value in enumerate(...)'")
    index, value = node.target.elts
    sequence = iterable.args[0]
    if (  # enumerate(zip(x, y)) with 'i, (u, v)': one index over both sequences
        isinstance(sequence, ast.Call)
        and isinstance(sequence.func, ast.Name)
        and sequence.func.id == "zip"
        and isinstance(value, ast.Tuple)
        and len(value.elts) == len(sequence.args)
        and start is None
        and isinstance(index, ast.Name)
    ):
        loop = _indexed(node, index.id, value.elts, sequence.args)
        return [_same_lengths(sequence.args, node), loop] if _zip_strict(sequence) else loop
    if not isinstance(index, ast.Name):
        reject(index, "the index of enumerate must be a name")
    if start is None:
        return _indexed(node, index.id, [value], [iterable.args[0]])
    counter = names.fresh("k")
    loop = _indexed(node, counter, [value], [iterable.args[0]])
    shifted = ast.BinOp(name_node(counter), ast.Add(), start)
    loop.body.insert(0, assign_like(index.id, shifted, node))
    return loop


def _indexed(
    node: ast.For, index: str, targets: list[ast.expr], sequences: list[ast.expr]
) -> ast.For:
    lengths = [ast.Call(name_node("indexed_len"), [copy_tree(s)], []) for s in sequences]
    bound = lengths[0] if len(lengths) == 1 else ast.Call(name_node("min"), lengths, [])
    reads = []
    for target, sequence in zip(targets, sequences, strict=True):
        if not isinstance(target, (ast.Name, ast.Tuple, ast.List)):
            reject(target, "loop variables must be names or tuples of names")
        element = ast.Subscript(copy_tree(sequence), name_node(index), ast.Load())
        element.loop_item = True  # for v in X: the user wrote no X[k] (said so in messages)
        reads.append(ast.copy_location(ast.Assign([target], element), node))
    loop = ast.For(
        name_node(index, True),
        ast.Call(name_node("range"), [bound], []),
        reads + node.body,
        node.orelse,
    )
    return ast.copy_location(loop, node)


def _contains(nodes: list[ast.stmt], kinds: tuple[type, ...]) -> bool:
    """Whether a jump of ``kinds`` occurs in ``nodes`` at this loop level (not in inner loops)."""
    for node in nodes:
        if isinstance(node, kinds):
            return True
        if isinstance(node, ast.If) and (
            _contains(node.body, kinds) or _contains(node.orelse, kinds)
        ):
            return True
    return False


def _rewrite_loop(node: ast.For | ast.While, names: Names) -> list[ast.stmt]:
    if node.orelse:
        reject(node.orelse[0], "'else' on a loop is not supported")
    node.body = _flatten([_rewrite_statement(s, names) for s in node.body])
    has_break = _contains(node.body, (ast.Break,))
    has_continue = _contains(node.body, (ast.Continue,))
    if not (has_break or has_continue):
        return [node]
    brk = names.fresh("break") if has_break else None
    cont = names.fresh("continue") if has_continue else None
    flags = [f for f in (brk, cont) if f]
    body = _guard(node.body, brk, cont, flags)
    before: list[ast.stmt] = []
    if brk:
        before.append(assign_like(brk, ast.Constant(False), node))
    if cont:
        body.insert(0, assign_like(cont, ast.Constant(False), node))
    if brk and isinstance(node, ast.For):
        body = [ast.copy_location(ast.If(negation(brk), body, []), node)]
    elif brk:
        node.test = ast.BoolOp(ast.And(), [negation(brk), node.test])
    node.body = body
    return [*before, node]


def _guard(
    body: list[ast.stmt], brk: str | None, cont: str | None, flags: list[str]
) -> list[ast.stmt]:
    """Replace jumps by flag assignments; statements after a possible jump are guarded."""
    out: list[ast.stmt] = []
    for i, node in enumerate(body):
        if isinstance(node, ast.Break):
            out.append(assign_like(brk, ast.Constant(True), node))
            return out
        if isinstance(node, ast.Continue):
            out.append(assign_like(cont, ast.Constant(True), node))
            return out
        if isinstance(node, ast.If) and _contains([node], (ast.Break, ast.Continue)):
            rest = body[i + 1 :]
            node.body = _guard(node.body, brk, cont, flags)
            node.orelse = _guard(node.orelse, brk, cont, flags)
            out.append(node)
            if not rest:
                return out
            # the jump happens in one branch: the rest runs in the other, or under a guard
            guarded = _guard(rest, brk, cont, flags)
            if _ends_in_jump(node.body) and not _contains(node.orelse, (ast.Break, ast.Continue)):
                node.orelse = node.orelse + guarded
            else:
                out.append(ast.copy_location(ast.If(negation(*flags), guarded, []), node))
            return out
        out.append(node)
    return out


def _ends_in_jump(body: list[ast.stmt]) -> bool:
    """Whether ``body`` ends setting a jump's flag (``break_1 = True``)."""
    last = body[-1] if body else None
    return (
        isinstance(last, ast.Assign)
        and isinstance(last.targets[0], ast.Name)
        and last.targets[0].id.startswith(("break_", "continue_"))
        and isinstance(last.value, ast.Constant)
        and last.value.value is True
    )


def desugar_function(parsed) -> ast.FunctionDef:
    """The pipeline's desugar stage: :func:`desugar` on a parsed function, its failures
    turned into located errors."""
    try:
        return desugar(
            parsed.tree,
            parsed.namespace(),
            getattr(parsed, "structures", None),
            getattr(parsed, "statics", None),
        )
    except DesugarError as error:
        hint = error.hint or "see the supported forms in the book's compiler page"
        raise UnsupportedSyntaxError(
            error.message, parsed.location(error.node), hint=hint
        ) from None
