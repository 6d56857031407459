"""Rich display of generated code for notebooks (syntax-highlighted HTML).

>>> import numpy as np
>>> from autodiff_tutor.api import differentiable
>>> @differentiable
... def f(x):
...     return np.sum(x * x)
>>> "f_backward" in generated_code_html(f)
True
"""

from __future__ import annotations

import html
import inspect
import textwrap
from typing import Any


def highlight(source: str) -> str:
    """Python source as HTML with inline styles (plain ``<pre>`` without pygments).

    >>> "<pre" in highlight("x = 1")
    True
    """
    try:
        from pygments import highlight as pygments_highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:  # pygments comes with the 'lab' extra
        return f"<pre>{html.escape(source)}</pre>"
    return pygments_highlight(
        source, PythonLexer(), HtmlFormatter(noclasses=True, nobackground=True)
    )


def _panel(title: str, source: str) -> str:
    return (
        '<div style="flex:1;min-width:18em;margin:0 0.5em">'
        f'<div style="font-weight:bold;margin-bottom:0.3em">{html.escape(title)}</div>'
        f"{highlight(source)}</div>"
    )


def generated_code_html(compiled: Any, wrt: Any = None) -> str:
    """The user's function, its generated forward and backward, side by side."""
    user = textwrap.dedent(inspect.getsource(compiled.fn))
    derivative = compiled.derivative(wrt)
    panels = [
        _panel("your function", user),
        _panel("generated forward", derivative.forward_source),
        _panel("generated backward", derivative.backward_source),
    ]
    return '<div style="display:flex;flex-wrap:wrap">' + "".join(panels) + "</div>"
