"""What a mode did on a program (:class:`Outcome`), how an exception is classified,
and a program loaded from its source text (:class:`Loaded`).

>>> failure("compiler", ValueError("boom"), "<fuzz>")
Outcome(mode='compiler', kind='crash', detail='ValueError: boom')
>>> from autodiff_tutor.errors import InternalError, Location
>>> internal = InternalError("the forward raised", Location("<fuzz>", 3, 4, "y = x"))
>>> failure("compiler", internal, "<fuzz>")
Outcome(mode='compiler', kind='crash', detail='InternalError: the forward raised')
"""

from __future__ import annotations

import hashlib
import linecache
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from autodiff_tutor.errors import AutodiffError, InternalError


@dataclass(frozen=True)
class Outcome:
    """How one mode did on one program."""

    mode: str
    kind: str  # right, refused, wrong, crash, unchecked
    detail: str = ""


class Loaded:
    """A program exec'd from its source text, registered with ``linecache`` so that
    the compiler can read it and errors can point into it."""

    def __init__(self, source: str, seed: int):
        digest = hashlib.sha1(source.encode()).hexdigest()[:10]
        self.filename = f"<fuzz seed={seed} {digest}>"
        self.source = source
        lines = source.splitlines(keepends=True)
        linecache.cache[self.filename] = (len(source), None, lines, self.filename)
        self.namespace: dict[str, Any] = {
            "__name__": "fuzz_program",
            "__file__": self.filename,
            "__source__": source,
        }
        try:
            exec(compile(source, self.filename, "exec"), self.namespace)
        except BaseException:
            self.close()
            raise
        self.f: Callable[..., Any] = self.namespace.get("f")

    def again(self) -> dict[str, Any]:
        """A namespace of the program exec'd anew (new functions, classes and globals;
        the source stays registered under the same name while this one is open)."""
        namespace = {"__name__": "fuzz_program", "__file__": self.filename}
        namespace["__source__"] = self.source
        exec(compile(self.source, self.filename, "exec"), namespace)
        return namespace

    def close(self) -> None:
        """Forget the source (long runs would otherwise keep every program)."""
        linecache.cache.pop(self.filename, None)


def located(error: BaseException, filename: str) -> bool:
    """An ``AutodiffError`` whose location is a line of the program ``filename``."""
    location = getattr(error, "location", None)
    return (
        isinstance(error, AutodiffError)
        and location is not None
        and location.filename == filename
        and location.line >= 1
    )


def failure(mode: str, error: BaseException, filename: str) -> Outcome:
    """A located refusal, or a crash: any other exception, and an ``InternalError``
    even where located (the library failed on code Python runs)."""
    if located(error, filename) and not isinstance(error, InternalError):
        return Outcome(mode, "refused", f"{type(error).__name__}: {error.message}")
    unlocated = isinstance(error, AutodiffError) and not located(error, filename)
    what = "unlocated " if unlocated else ""
    first = str(error).splitlines()[0] if str(error) else ""
    return Outcome(mode, "crash", f"{what}{type(error).__name__}: {first}"[:300])
