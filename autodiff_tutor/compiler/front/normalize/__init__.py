"""Normalization: one operation per statement, with readable names.

``normalize`` is the pass; ``resolve`` says what a call calls; the other modules
normalize one kind of construct each: ``expressions``, ``calls`` and ``rule_calls``,
``conversions``, ``einsum``, ``effects`` (unpacking, statements kept for their effect),
``flow`` (branches and loops), ``writes`` and ``aliases`` (in-place writes), and
``sharing`` (which names see which memory: views, aliases, lists).

The class of each (``Writes``, ``Flow``, ...; and ``stacks``: a gradient function's
memory stack read again) is a :class:`Part` of the normalizer, held under its name
(``normalizer.writes``): it reads and fills the normalizer's state, and calls the other
parts, through ``self.normalizer``.
"""

from __future__ import annotations

from typing import Any


class Part:
    """One part of the normalizer, for one kind of construct (see the package docstring).

    >>> Part("the normalizer").normalizer
    'the normalizer'
    """

    def __init__(self, normalizer: Any) -> None:
        self.normalizer = normalizer  # its state, its other parts
