"""The book's scripts, in an order that works offline: a local Sphinx extension.

Jupyter Book 1.x leaves every page with scripts that clash (issue 17, item 3):

- ``sphinx-thebe`` and ``sphinx-togglebutton`` add their inline settings twice, so
  ``const THEBE_JS_URL`` is declared twice (a SyntaxError on every page). Thebe is off
  in this book (it would fetch from unpkg), so its scripts are dropped, and any other
  script that appears twice is kept once (the first);
- MathJax is added twice on pages with math (once deferred after its configuration,
  once more, on every page, without ``defer``): the second copy fails ("Cannot set
  property Package ... only a getter"), so the one without ``defer`` is dropped there;
- the widget scripts are added here, after MathJax: require.js, then
  ``widgets/embed-setup.js`` (font paths, the MathJax 2 call of the embedder, Font
  Awesome), then the embedder; and ``needs_kernel.css``, which shows the note of a
  view that updates only through Python (there is no kernel in the book).
"""

from __future__ import annotations

from typing import Any

# After sphinx.ext.mathjax (which adds MathJax at the default priority, 500).
WIDGET_SCRIPTS = ("widgets/require.js", "widgets/embed-setup.js", "widgets/embed-amd.js")
WIDGET_PRIORITY = 900
THEBE_MARKERS = ("THEBE_JS_URL", "sphinx-thebe.js")


def _key(script: Any) -> str:
    """What makes two script tags the same: the file, or for an inline script its body."""
    return str(script.filename or script.attributes.get("body", ""))


def tidy_scripts(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """Drop thebe's scripts, repeated scripts and the second MathJax from a page."""
    scripts = context.get("script_files")
    if scripts is None:
        return
    mathjax = f"_static/{app.config.mathjax_path}"
    configured = any("window.MathJax" in s.attributes.get("body", "") for s in scripts)
    seen, kept = set(), []
    for script in scripts:
        text = f"{script.filename} {script.attributes.get('body', '')}"
        # sphinx.ext.mathjax loads its own deferred copy after its configuration
        second_mathjax = configured and str(script.filename) == mathjax
        second_mathjax = second_mathjax and "defer" not in script.attributes
        if any(m in text for m in THEBE_MARKERS) or _key(script) in seen or second_mathjax:
            continue
        seen.add(_key(script))
        kept.append(script)
    scripts[:] = kept


def add_widget_scripts(app: Any, config: Any) -> None:
    for offset, filename in enumerate(WIDGET_SCRIPTS):
        app.add_js_file(filename, priority=WIDGET_PRIORITY + offset)
    app.add_css_file("widgets/embed.css")  # one icon per widget button
    app.add_css_file("needs_kernel.css")  # views that need a kernel say so here


def setup(app: Any) -> dict:
    app.connect("config-inited", add_widget_scripts)
    app.connect("html-page-context", tidy_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
