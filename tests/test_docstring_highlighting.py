"""Every doctest block of the package's docstrings highlights in a bounded time.

The book's API pages (autodoc) render each ``>>>`` block with pygments' Python console
lexer. Output that looks like a traceback (our located errors print ``  File "f.py",
line 2``) sends it into its traceback state, and a block ending on the caret line
there made the lexer loop forever: the book build (and CI) hung with no error. Each
block is highlighted here as Sphinx does (errors raised), with an alarm.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import signal
import textwrap

import pytest
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonConsoleLexer

import autodiff_tutor


def _docstrings() -> dict[str, str]:
    found = {}
    for module_info in pkgutil.walk_packages(autodiff_tutor.__path__, "autodiff_tutor."):
        module = importlib.import_module(module_info.name)
        found[module.__name__] = module.__doc__ or ""
        for name, value in vars(module).items():
            if getattr(value, "__module__", None) != module.__name__:
                continue
            found[f"{module.__name__}.{name}"] = inspect.getdoc(value) or ""
            for member, inner in vars(value).items() if inspect.isclass(value) else ():
                doc = inspect.getdoc(inner) if callable(inner) else None
                found[f"{module.__name__}.{name}.{member}"] = doc or ""
    return found


def _doctest_blocks(doc: str) -> list[str]:
    """Paragraphs starting with ``>>>``: docutils' doctest blocks."""
    paragraphs = textwrap.dedent(doc).split("\n\n")
    return [p.strip("\n") + "\n" for p in paragraphs if p.lstrip().startswith(">>>")]


def _alarm(signum, frame):
    raise TimeoutError("pygments did not finish highlighting this block")


def test_the_caret_ending_that_hung_pygments_is_still_caught_here():
    hanging = (
        '>>> print(e)\nbad\n  File "f.py", line 2, column 5\n        y = f(x)\n        ^^^^^\n'
    )
    with pytest.raises(TimeoutError):
        _highlight(hanging, seconds=2)


def _highlight(block: str, seconds: int) -> None:
    lexer = PythonConsoleLexer()
    lexer.add_filter("raiseonerror")  # as Sphinx's first attempt does
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        highlight(block, lexer, HtmlFormatter())
    except TimeoutError:
        raise
    except Exception:  # a lexing error: Sphinx falls back to plain text, no hang
        pass
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_every_doctest_block_highlights_quickly():
    slow = []
    for where, doc in _docstrings().items():
        for block in _doctest_blocks(doc):
            try:
                _highlight(block, seconds=5)
            except TimeoutError:
                slow.append(f"{where}:\n{block}")
    assert not slow, "pygments loops on these doctest blocks:\n" + "\n".join(slow)
