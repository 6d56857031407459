"""The source-to-source compiler. Its stages, in the order ``pipeline.py`` runs them
(the file names carry the numbers, so a listing of this folder reads in that order):

1. ``s1_source``, ``s1_names``, ``s1_fence``: read the function's source (a free name
   that is also a helper's is read through a stand-in); reject what is not supported.
2. ``s2_desugar``: loop forms, jumps and nested helpers made structured.
3. ``s3_normalize``: one operation per statement (``ir.Program``), for any ``wrt``.
4. ``s4_activity``: which values carry gradient, for the ``wrt`` asked.
5. ``s5_adjoint``: the backward as a tree of statements (``code``);
   forward mode instead: ``s5_tangent``.
6. ``s6_optimize``: fold what is known at compile time, in the backward tree.
7. ``s7_memory``: what the forward keeps for the backward (read off the final backward).
8. ``s8_forward``: the forward as a tree.
9. ``s9_emit``: the trees as source text (the user's names given back), compiled into
   Python functions.
"""
