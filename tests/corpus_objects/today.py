"""What each mode refuses, as ``measure`` last recorded it, by program name:
``"ErrorClass: the first line of its message"`` (``WRONG: ...`` where a mode gives a
wrong number). The tests mark these
``xfail(strict=True)``, so a fix shows up as a failure until its line goes.
Regenerate with ``python -m corpus_objects.measure --write-today`` (from ``tests/``)."""

COMPILER: dict[str, str] = {
    "batch_attribute_changes_shape": "UnsupportedSyntaxError: this index into a structure is not known while compiling: the compiler picks a structure's entries while compiling, from Python ints known when the function is called (numbers written out, len(params), indices of loops over such ranges, int arguments and global ints), and this index is computed from something else (a value of an array, computed at run time) [training.py:170]",
}

TRACING: dict[str, str] = {}
