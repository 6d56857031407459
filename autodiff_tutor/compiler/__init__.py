"""The source-to-source compiler. ``pipeline.py`` runs its passes in order; the folders
hold the phases:

1. ``front/``: ``source`` (read the function; ``names``: a free name the generated code
   also uses gets a stand-in), ``fence`` (refuse what is not supported, located),
   ``desugar/`` (loop forms, jumps, helpers and structures made structured),
   ``normalize/`` (one operation per statement, an ``ir.Program``, for any ``wrt``).
2. ``activity``: which values carry gradient, for the ``wrt`` asked.
3. ``reverse/``: ``adjoint`` (the backward as a tree of ``code`` statements),
   ``optimize``, ``memory`` (what the forward keeps), ``forward`` (the forward as a
   tree); forward mode instead: ``forward_mode/tangent``.
4. ``emit``: the trees as source text, compiled into Python functions.

Beside the main line: ``specialized`` (a pair compiled again for a call's shapes, with
the passes of ``specialize/``), ``second_order`` (what second derivatives refuse),
``assumptions`` (what compiled code assumed of the names it reads), and ``failures``
(an error raised while generated code runs, located at the user's line).
"""
