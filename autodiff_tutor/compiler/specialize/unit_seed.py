"""Stage 6f, unit seed — a specialized backward for the seed 1.

``value_and_grad`` seeds the backward of a scalar output with 1, and it is the only
caller of a specialized pair (:mod:`.specialized`): there, a product with
the seed ``d_out`` is the product without it, and ``200.0 * d_out * a`` is one pass
over ``a`` fewer when ``d_out * b`` is ``b``. The seed leaves a product only where
another factor has its dtype, so no result changes dtype.
"""

from __future__ import annotations

import ast
import functools
from typing import Any

from autodiff_tutor.compiler import code


def unit_seed(statements: list[ast.stmt], seed: str, facts: dict[str, Any]) -> list[ast.stmt]:
    """The backward for the seed 1: the factor ``seed`` leaves every product that has
    a factor of the seed's dtype besides it (see the module).

    >>> tree = ast.parse("d_a = 200.0 * d_out * a\\nd_b = d_out * 2.0").body
    >>> facts = {"d_out": ("scalar", (), "float64"), "a": ("array", (3,), "float64")}
    >>> [ast.unparse(s) for s in unit_seed(tree, "d_out", facts)]
    ['d_a = 200.0 * a', 'd_b = d_out * 2.0']
    """
    fact = facts.get(seed)
    if not (isinstance(fact, tuple) and fact[0] == "scalar"):
        return statements
    return [_UnitSeed(seed, fact[2], facts).visit(s) for s in statements]


class _UnitSeed(ast.NodeTransformer):
    def __init__(self, seed: str, dtype: str, facts: dict[str, Any]):
        self.seed, self.dtype, self.facts = seed, dtype, facts

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        if not isinstance(node.op, ast.Mult):
            return node
        factors = code.factors(node)
        rest = [f for f in factors if not code.is_name(f, self.seed)]
        if len(rest) == len(factors) or not any(self._typed(f) for f in rest):
            return node
        product = functools.reduce(lambda a, b: ast.BinOp(a, ast.Mult(), b), rest)
        return ast.copy_location(product, node)

    def _typed(self, node: ast.expr) -> bool:
        fact = self.facts.get(node.id) if isinstance(node, ast.Name) else None
        return isinstance(fact, tuple) and fact[0] in ("array", "scalar") and fact[2] == self.dtype
