"""The standing differential fuzzer: random numpy programs against independent oracles.

- :mod:`fuzz.generator` writes seeded random programs (Python source text) over
  ``x`` (3x4) and ``w`` (4,), each tagged with the constructs it uses (the blocks of
  everyday idioms in :mod:`fuzz.idioms` and :mod:`fuzz.idioms_more`: custom ops, dicts
  of parameters, helpers with defaults, scans, norms, ...);
- :mod:`fuzz.oracles` holds the references no code of autodiff_tutor controls: plain
  execution, central finite differences in float64 (trusted only where two step
  sizes agree), autograd, directional differences for jvp;
- :mod:`fuzz.check` runs one program through each mode (compiler gradient, compiler
  jvp, compiler second order, tracing) and classifies the outcome as ``right``,
  ``refused`` (an ``AutodiffError`` located in the program's source), ``wrong`` or
  ``crash``;
- :mod:`fuzz.minimize` shrinks a failing program; ``python -m fuzz`` (``make fuzz``)
  runs a long campaign and writes reproducers and a summary.

Nothing here imports autodiff_tutor's internals: only its public API and errors.
"""
