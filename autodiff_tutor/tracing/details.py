"""How the tape shows a record's options: the index of ``x[...]`` as written, the
other options that are set (``axis=0``).

>>> detail("getitem", {"index": (slice(None), 0)})
'[:, 0]'
"""

from __future__ import annotations

from typing import Any


def format_index(index: Any) -> str:
    """An index as the user wrote it, arrays shown by dtype and shape.

    >>> import numpy as np
    >>> format_index((slice(1, None), Ellipsis, np.array([0, 2])))
    '[1:, ..., <int64 (2,)>]'
    """
    parts = index if isinstance(index, tuple) else (index,)
    shown = []
    for part in parts:
        if isinstance(part, slice):
            ends = (
                (part.start, part.stop) if part.step is None else (part.start, part.stop, part.step)
            )
            shown.append(":".join("" if v is None else str(v) for v in ends))
        elif part is Ellipsis:
            shown.append("...")
        elif hasattr(part, "shape"):
            shown.append(f"<{part.dtype} {tuple(part.shape)}>")
        else:
            shown.append(repr(part))
    return "[" + ", ".join(shown) + "]"


def detail(op: str, options: dict[str, Any]) -> str:
    """What the tape shows of a record's options (the index of a read).

    >>> detail("sum", {"axis": 0, "keepdims": False})
    'axis=0'
    """
    if op == "getitem":
        return format_index(options.get("index"))
    shown = {k: v for k, v in options.items() if v is not None and v is not False}
    return ", ".join(f"{k}={v!r}" for k, v in shown.items())
