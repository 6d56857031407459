"""The standing differential fuzzer: random numpy programs against independent oracles.

- :mod:`fuzz.generator` writes seeded random programs (Python source text) over
  ``x`` (3x4) and ``w`` (4,), each tagged with the constructs it uses (the blocks of
  everyday idioms in :mod:`fuzz.idioms`, :mod:`fuzz.idioms_more` and
  :mod:`fuzz.idioms_index`: custom ops, dicts of parameters, helpers with defaults,
  scans, norms, ``np.r_``/``np.c_``/``np.s_``/``np.ix_``, ...);
- :mod:`fuzz.forms` (with :mod:`fuzz.knobs`) wraps some programs the way users organize
  them: the family ``object_method`` (a class whose attributes hold the parameters, a
  method or ``__call__`` computing the loss, differentiated as ``model.loss`` with
  ``wrt="self.W"``, ``"self"``, its own argument, or ``grad(model)``) and the family
  ``state_across_calls`` (one compiled function called again after the state it reads
  changed: attributes, lists and dicts, globals, closure cells, a helper redefined);
  :mod:`fuzz.check_forms` (with :mod:`fuzz.structured`) checks them, every call against
  central differences and, after a change, a fresh compile; :mod:`fuzz.forms_calls`
  writes the families of methods, functions as values, static structures, ``*args``,
  generated names and ``nested_grad`` (``grad``, ``value_and_grad``, ``hvp``, ``jvp``
  called inside the program);
- :mod:`fuzz.oracles` holds the references no code of autodiff_tutor controls: plain
  execution, central finite differences in float64 (trusted only where two step
  sizes agree), autograd, directional differences for jvp;
- :mod:`fuzz.check` runs one program through each mode (compiler gradient, compiler
  jvp, compiler second order, tracing) and classifies the outcome as ``right``,
  ``refused`` (an ``AutodiffError`` located in the program's source), ``wrong`` or
  ``crash`` (:mod:`fuzz.outcome`);
- :mod:`fuzz.minimize` shrinks a failing program; ``python -m fuzz`` (``make fuzz``)
  runs a long campaign and writes reproducers and a summary. Every family is on by
  default; ``--exclude`` leaves any out, ``--only`` makes every program use one.

Nothing here imports autodiff_tutor's internals: only its public API and errors.
"""
