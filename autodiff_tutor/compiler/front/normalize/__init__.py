"""Normalization: one operation per statement, with readable names.

``normalize`` is the pass; ``resolve`` says what a call calls; the other modules
normalize one kind of construct each: ``expressions``, ``calls`` and ``rule_calls``,
``conversions``, ``einsum``, ``effects`` (unpacking, statements kept for their effect),
``flow`` (branches and loops), ``writes`` and ``aliases`` (in-place writes), and
``sharing`` (which names see which memory: views, aliases, lists).
"""
