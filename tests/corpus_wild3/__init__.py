"""A third corpus of objectives written as people write them, not for this project
(written here; no code copied), in styles the first two wild corpora and the model
corpus leave out: deep-learning course assignments as students write them
(``deeplearning``: a conv-relu-pool-affine net with loops over filters and ``np.pad``,
``scores[np.arange(N), y]``, a skip-gram negative-sampling loss with index arrays, a
tied-weight autoencoder, residual blocks, margins with ``np.maximum(0, ...)``),
scientific-computing exercises (``numerics``: stencils with ``u[1:-1, 1:-1]`` and
``np.roll``, Simpson's rule by stepped slices, RK4 loops, a shooting method, Kepler's
equation by Newton, a reprojection error with ``np.cross``, the test functions of
optimization courses with ``x, y = p``) and habits not yet covered (``idioms``: the
walrus operator, ``itertools.combinations``, ``functools.reduce``, ``reversed``,
``try``/``except``, chained comparisons, ``x.T.dot(y)``, ``np.c_``, ``np.multiply``...).

Each module registers with :func:`corpus_wild.wild` (the same ``Wild`` entries and
``compiler=`` / ``tracing=`` / ``autograd=`` reasons); ``tests/test_corpus_wild3.py``
runs them through the checks the other wild corpora use (``tests/wild_checks.py``).
"""

from __future__ import annotations

from corpus_wild import Wild
from corpus_wild import load_all as _load_all

MODULES = ("deeplearning", "numerics", "idioms")


def load_all() -> list[Wild]:
    """Every objective of this corpus."""
    return _load_all("corpus_wild3", MODULES)
