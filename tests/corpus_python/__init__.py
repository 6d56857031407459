"""Programs in the Python people write: unpacking, statements kept for their
effect, comprehensions and builtins, structured arguments. Written for this project in
the style of course assignments and public examples (no code copied).

Each module lists ``PROGRAMS``: :class:`Program` entries (the function, a sampler of
its arguments from a random generator, the positions to differentiate, whether the
program has no loop, whether autograd can run it as written).
"""

from corpus_python import builtins_, comprehensions, effects, structures, unpacking
from corpus_python.common import Program

PROGRAMS: list[Program] = [
    *unpacking.PROGRAMS,
    *effects.PROGRAMS,
    *comprehensions.PROGRAMS,
    *builtins_.PROGRAMS,
    *structures.PROGRAMS,
]
