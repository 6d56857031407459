"""Desugaring of the walrus operator in an ``if`` test: ``if (n := f(x)) > 1:``
becomes ``n = f(x)`` then ``if n > 1:``, and so does one in a comprehension's
condition (``[v for xi in x if (v := g(xi)) > 0]``), once the comprehension is a loop.

Only where the hoisted assignment means what Python does (:func:`hoistable`): the
walrus is evaluated whenever the test is (not after ``and``/``or``, not in one side of
``a if c else b``, not in a nested comprehension or lambda), and its name is read
nowhere else in the test. The fence (:mod:`.front.fence`) refuses the others, located.

>>> tree = ast.parse('''
... if (n := np.sum(x ** 2)) > 1.0:
...     y = np.log(n)
... else:
...     y = n
... ''')
>>> print(ast.unparse(ast.Module(hoist_walrus(tree.body), [])))
n = np.sum(x ** 2)
if n > 1.0:
    y = np.log(n)
else:
    y = n
"""

from __future__ import annotations

import ast

from autodiff_tutor.compiler.front.desugar.base import assign_like, name_node, rewrite_bodies

# where a walrus inside is not always evaluated, or binds in another scope
_LAZY = (ast.BoolOp, ast.IfExp, ast.Lambda, ast.ListComp, ast.GeneratorExp, ast.SetComp,
         ast.DictComp)  # fmt: skip


def hoistable(test: ast.expr) -> list[ast.NamedExpr]:
    """The walruses of ``test`` that can become assignments before it, in the order
    Python evaluates them.

    >>> [ast.unparse(w) for w in hoistable(ast.parse("(a := f(x)) > (b := g(x))").body[0].value)]
    ['(a := f(x))', '(b := g(x))']
    >>> hoistable(ast.parse("c and (a := f(x)) > 0").body[0].value)
    []
    >>> hoistable(ast.parse("(a := f(x)) > a + 1").body[0].value)
    []
    """
    found: list[ast.NamedExpr] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, _LAZY):
            return
        for child in ast.iter_child_nodes(node):
            visit(child)
        if isinstance(node, ast.NamedExpr):
            found.append(node)

    visit(test)
    reads = [n.id for n in ast.walk(test) if isinstance(n, ast.Name)]
    return [
        w
        for w in found
        if reads.count(w.target.id) == 1
        and not any(isinstance(n, (ast.NamedExpr, *_LAZY)) for n in ast.walk(w.value))
    ]


def hoist_walrus(body: list[ast.stmt]) -> list[ast.stmt]:
    """``body`` with each ``if`` test's hoistable walruses assigned before it (at any
    depth, helpers defined inside included).

    >>> body = hoist_walrus(ast.parse("if (n := len(x)) > 2:\\n    y = n").body)
    >>> [ast.unparse(s).splitlines()[0] for s in body]
    ['n = len(x)', 'if n > 2:']
    """
    out: list[ast.stmt] = []
    for node in body:
        rewrite_bodies(node, hoist_walrus)
        if isinstance(node, ast.If):
            for walrus in hoistable(node.test):
                name = walrus.target.id
                out.append(assign_like(name, walrus.value, walrus))
                node.test = _replaced(node.test, walrus, name_node(name))
        out.append(node)
    return out


def _replaced(tree: ast.expr, old: ast.AST, new: ast.expr) -> ast.expr:
    class Replace(ast.NodeTransformer):
        def visit_NamedExpr(self, node: ast.NamedExpr) -> ast.AST:
            return ast.copy_location(new, node) if node is old else self.generic_visit(node)

    return Replace().visit(tree)
