"""Side-by-side benchmarks of autodiff_tutor (issue 8): run ``python -m benchmarks``.

Workloads (:mod:`benchmarks.workloads`) from small to large are timed for the plain
forward, a hand-written numpy value-and-gradient (:mod:`benchmarks.handwritten`),
``autodiff_tutor``'s compiled ``value_and_grad``, its tracing mode, and the other AD
libraries that are installed (:mod:`benchmarks.systems`). Every gradient is checked
against the hand-written one before it is timed (:mod:`benchmarks.runner`); the
report (:mod:`benchmarks.report`) is printed and saved as markdown and JSON.
"""

#: Environment variables that set the BLAS (and OpenMP) thread count; ``python -m
#: benchmarks`` sets them to 1 unless they are set already.
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
