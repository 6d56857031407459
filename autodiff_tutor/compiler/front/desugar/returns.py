"""Stage 2, desugar: early returns. A ``return`` before the end of the function stores
its value in ``result``, sets ``returned``, and guards what follows (inside a loop, it
also leaves the loop), so that the function ends in one ``return``.

>>> import ast
>>> tree = ast.parse('''
... def f(x):
...     if x > 0:
...         return x
...     return -x
... ''').body[0]
>>> print(ast.unparse(rewrite_returns(tree.body, Names(tree))))
returned = False
if x > 0:
    result = x
    returned = True
if not returned:
    result = -x
    returned = True
return result
"""

from __future__ import annotations

import ast

from autodiff_tutor.compiler.code import Names
from autodiff_tutor.compiler.front.desugar.base import assign_like, name_node, negation, reject


def rewrite_returns(body: list[ast.stmt], names: Names) -> list[ast.stmt]:
    """Early returns store into ``result`` and set ``returned``; what follows is guarded."""
    returns = [
        n
        for n in ast.walk(ast.Module(body[:-1] + _inner(body[-1:]), []))
        if isinstance(n, ast.Return)
    ]
    if not returns:
        return body
    result, returned = names.exact("result"), names.exact("returned")
    arity = {len(r.value.elts) if isinstance(r.value, ast.Tuple) else 1 for r in returns}
    if len(arity) != 1:
        reject(returns[0], "every return must give the same number of values")
    results = [result] if arity == {1} else [f"{result}{i + 1}" for i in range(arity.pop())]

    def store(node: ast.Return, in_loop: bool) -> list[ast.stmt]:
        if node.value is None:
            reject(node, "the function must return a value")
        if len(results) == 1:
            stored = [assign_like(results[0], node.value, node)]
        else:
            target = ast.Tuple([name_node(r, True) for r in results], ast.Store())
            stored = [ast.copy_location(ast.Assign([target], node.value), node)]
        stored.append(assign_like(returned, ast.Constant(True), node))
        if in_loop:
            stored.append(ast.copy_location(ast.Break(), node))
        return stored

    def rewrite(nodes: list[ast.stmt], in_loop: bool) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for i, node in enumerate(nodes):
            if isinstance(node, ast.Return):
                out.extend(store(node, in_loop))
                return out
            if isinstance(node, (ast.If, ast.For, ast.While)) and _has_return(node):
                loop = isinstance(node, (ast.For, ast.While))
                node.body = rewrite(node.body, in_loop or loop)
                node.orelse = rewrite(node.orelse, in_loop)
                out.append(node)
                rest = nodes[i + 1 :]
                if in_loop and loop:  # a return in an inner loop leaves the enclosing loop too
                    brk = ast.copy_location(ast.Break(), node)
                    out.append(ast.copy_location(ast.If(name_node(returned), [brk], []), node))
                if in_loop:  # the return's break left this loop's body
                    out.extend(rewrite(rest, in_loop))
                elif rest:
                    guarded = ast.If(negation(returned), rewrite(rest, in_loop), [])
                    out.append(ast.copy_location(guarded, node))
                return out
            out.append(node)
        return out

    first = body[0] if body else None
    init = [assign_like(returned, ast.Constant(False), first)]
    rewritten = rewrite(body, False)
    reads = [name_node(r) for r in results]
    value = reads[0] if len(reads) == 1 else ast.Tuple(reads, ast.Load())
    final = ast.copy_location(ast.Return(value), returns[-1])
    return init + rewritten + [final]


def _inner(last: list[ast.stmt]) -> list[ast.stmt]:
    """A final top-level ``return`` is not early; returns nested in a final block are."""
    return [] if last and isinstance(last[0], ast.Return) else last


def _has_return(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Return) for n in ast.walk(node))
