"""Passes of the specialized pair (see :mod:`autodiff_tutor.compiler.specialized`):
a derivative's pair compiled again for the argument shapes and dtypes of a call.

``probe`` runs the pair once and drops the helpers whose answer the shapes decide;
``facts``, ``forms``, ``paths`` and ``regions`` are what the probe saw and how it is
guarded; ``simplify``, ``signs``, ``shifts``, ``scalars``, ``unit_seed``,
``first_writes``, ``owned``, ``inplace``, ``into_slots``, ``stacked`` and ``direct_ops``
rewrite the specialized code to make fewer passes over the arrays.
"""
