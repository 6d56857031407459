"""Every family of primitives, in one list: the only module that imports the families.

A family module holds its primitives' records (see :mod:`autodiff_tutor.rules.record`);
to add a family, add its module here. The registry reads this list.

>>> [family.name for family in FAMILIES][:2]
['elementwise', 'trigonometric']
"""

from autodiff_tutor.rules import (
    arrangement,
    decompositions,
    elementwise,
    helper_rules,
    helper_rules_products,
    linalg,
    linalg_more,
    nondifferentiable,
    numerical,
    picking,
    reductions,
    scipy_special,
    shapes,
    splits,
    statistics,
    trigonometric,
    ufuncs,
)
from autodiff_tutor.rules.record import Family

FAMILIES: tuple[Family, ...] = (
    elementwise.family,
    trigonometric.family,
    ufuncs.family,
    reductions.family,
    statistics.family,
    linalg.family,
    linalg_more.family,
    numerical.family,
    decompositions.family,
    shapes.family,
    arrangement.family,
    splits.family,
    picking.family,
    scipy_special.family,
    helper_rules.family,
    helper_rules_products.family,
    nondifferentiable.family,
)
