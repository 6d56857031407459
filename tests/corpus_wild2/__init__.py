"""A second corpus of objectives written as people write them, not for this project
(written here; no code copied), in styles the first (``tests/corpus_wild/``) and the
model corpus leave out: statistics and machine learning as in lecture notes and
scikit-learn-like scripts (``stats``), engineering and finance scripts
(``engineering``), and everyday habits (``habits``: keyword-only arguments,
``keepdims``, ``np.linalg.norm(v, axis=1)``, lists built in loops, ``float()`` and
``max()`` on Python floats, ``np.einsum``...).

Each module registers with :func:`corpus_wild.wild` (the same ``Wild`` entries, the
same ``compiler=`` / ``tracing=`` / ``autograd=`` reasons); ``tests/test_corpus_wild2.py``
runs them through the checks the first corpus uses (``tests/wild_checks.py``).
"""

from __future__ import annotations

from corpus_wild import Wild
from corpus_wild import load_all as _load_all

MODULES = ("stats", "engineering", "habits")


def load_all() -> list[Wild]:
    """Every objective of this corpus."""
    return _load_all("corpus_wild2", MODULES)
