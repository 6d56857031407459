"""The parameters of a corpus test: one per entry, ``xfail(strict=True)`` with the
entry's written reason where a mode cannot run it (``entry.compiler``, ``entry.tracing``)."""

from typing import Any

import pytest


def marked(entries: list[Any], mode: str) -> list[Any]:
    """One ``pytest.param`` per entry, by name, marked where ``mode`` has a reason."""
    params = []
    for entry in entries:
        reason = getattr(entry, mode)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(entry.name, id=entry.name, marks=marks))
    return params
