"""The derivative-rule registry: every primitive's record, looked up by op name.

The records live in their family modules (:mod:`~autodiff_tutor.rules.elementwise`,
:mod:`~autodiff_tutor.rules.reductions`, ...), gathered by
:mod:`~autodiff_tutor.rules.catalog`; the record type and its calling convention are
in :mod:`~autodiff_tutor.rules.record`. This module merges the families and answers
lookups; :func:`defvjp`, :func:`defjvp` and :func:`nondifferentiable` add a rule at run
time (an exercise's rule, a doctest's).

>>> rule = lookup("tanh")
>>> rule.inputs, rule.uses_out, rule.shape
(('x',), True, 'elementwise')
>>> import numpy as np
>>> rule.vjp(np.float64(2.0), np.tanh(0.5), 0.5)  # called directly, as tracing does
np.float64(1.57...)
"""

from __future__ import annotations

from collections.abc import Iterable

from autodiff_tutor.rules.catalog import FAMILIES
from autodiff_tutor.rules.record import HELPER, Family, Rule

__all__ = [
    "NONDIFFERENTIABLE",
    "RULES",
    "Rule",
    "all_rules",
    "defjvp",
    "defvjp",
    "helper_ops",
    "is_nondifferentiable",
    "lookup",
    "merge",
    "nondifferentiable",
]


def merge(families: Iterable[Family]) -> tuple[dict[str, Rule], set[str]]:
    """The rules and the non-differentiable ops of ``families``; an op may have one home.

    >>> one, two = Family("one"), Family("two")
    >>> for family in (one, two):
    ...     _ = family.defvjp("twice")(lambda g, x: 2 * g)
    >>> merge([one, two])
    Traceback (most recent call last):
    ValueError: rules defined in two families: ['twice']
    """
    rules: dict[str, Rule] = {}
    nondifferentiable: set[str] = set()
    for family in families:
        twice = rules.keys() & family.rules.keys()
        if twice:
            raise ValueError(f"rules defined in two families: {sorted(twice)}")
        rules.update(family.rules)
        nondifferentiable.update(family.nondifferentiable)
    return rules, nondifferentiable


RULES, NONDIFFERENTIABLE = merge(FAMILIES)

_run_time = Family("run time", rules=RULES, nondifferentiable=NONDIFFERENTIABLE, redefine=True)

defvjp = _run_time.defvjp
"""Add a reverse-mode rule to the registry (see :meth:`Family.defvjp`).

>>> @defvjp("cube_example", math="3 x^2")
... def cube_example(g, x):
...     return g * 3 * x * x
>>> lookup("cube_example").inputs
('x',)
>>> del RULES["cube_example"]
"""

defjvp = _run_time.defjvp
"""Add the forward-mode rule of a registered op (see :meth:`Family.defjvp`).

>>> @defvjp("twice_example")
... def twice_example(g, x):
...     return 2 * g
>>> @defjvp("twice_example")
... def twice_example_tangent(x, d_x):
...     return 2 * d_x
>>> lookup("twice_example").jvp(1.0, 0.5)
1.0
>>> del RULES["twice_example"]
"""


def nondifferentiable(*ops: str) -> None:
    """Declare primitives whose output carries no gradient (comparisons, ``sign``...).

    >>> is_nondifferentiable("less")
    True
    """
    NONDIFFERENTIABLE.update(ops)


def is_nondifferentiable(op: str) -> bool:
    """Whether ``op``'s output never carries gradient.

    >>> is_nondifferentiable("tanh")
    False
    """
    return op in NONDIFFERENTIABLE


def lookup(op: str) -> Rule | None:
    """The rule registered for ``op``, or ``None``.

    >>> lookup("no_such_op") is None
    True
    """
    return RULES.get(op)


def views(*kinds: str) -> frozenset[str]:
    """The ops whose result may share memory with their first input, of the ``kinds``
    given (``"view"``, ``"reshape"``, ``"split"``, ``"read"``: see ``Rule.view``).

    >>> sorted(views("split"))[:2], "getitem" in views("view")
    (['array_split', 'dsplit'], True)
    """
    return frozenset(op for op, rule in RULES.items() if rule.view in kinds)


def helper_ops() -> frozenset[str]:
    """The runtime helpers that generated gradients call, each a primitive of its own
    (its rule's shape ``HELPER``) so that a gradient can be differentiated again; the
    rule of one sits in its family module, beside its primitive's where it has one.

    >>> "unbroadcast" in helper_ops(), "unpad" in helper_ops(), "sin" in helper_ops()
    (True, True, False)
    """
    return frozenset(op for op, rule in RULES.items() if rule.shape == HELPER)


def all_rules() -> dict[str, Rule]:
    """Every registered rule, by op name (the registry walk of the tests uses this).

    >>> "matmul" in all_rules()
    True
    """
    return dict(RULES)
