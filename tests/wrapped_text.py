"""Matching the toolkit's messages, which are wrapped at word boundaries.

Errors and warnings break their lines between words (``autodiff_tutor.errors.wrap``),
so a phrase a test looks for may span two lines.

>>> import re
>>> bool(re.search(wrapped("not a Python function"), "it is not\\na Python function"))
True
"""

from __future__ import annotations


def wrapped(pattern: str) -> str:
    """``pattern`` for ``pytest.raises(match=...)`` that also finds the text wrapped
    across lines: each space matches any run of whitespace, and ``.`` matches a newline.
    """
    return "(?s)" + pattern.replace(" ", r"\s+")


def flat(text: str) -> str:
    """``text`` with every run of whitespace (line breaks included) made one space.

    >>> flat("a plain array instead of\\ntraced().")
    'a plain array instead of traced().'
    """
    return " ".join(text.split())
