"""Reverse mode: the backward as a tree, optimized, and the forward that feeds it.

``adjoint`` writes the backward's statements (with ``lists`` and ``shapes``),
``optimize`` folds what is known while compiling, ``memory`` decides what the forward
keeps (``slots`` for a counted loop's numbers), and ``forward`` writes the forward.
"""
