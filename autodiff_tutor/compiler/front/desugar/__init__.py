"""Desugaring: everyday Python rewritten into the few shapes the compiler knows.

``desugar`` is the pass (loop forms and jumps); the other modules are the rewrites it
calls: early ``returns``, the ``walrus`` in a test, ``lazy`` operands, ``sequences`` read
by an indexed loop, ``python`` forms (comprehensions, ``enumerate``, ``zip``, ...),
``callees`` (what calls of known functions mean), ``nested`` and ``module_helpers``
(helpers inlined where called), ``structures``, their ``reads`` and ``unroll`` (dicts,
lists and tuples known while compiling); ``base`` holds what they share.
"""
