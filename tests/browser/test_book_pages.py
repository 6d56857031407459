"""Every page of the built book (``make book``), served on loopback, in headless Chromium.

For each page listed in ``book/_toc.yml``: it loads with no failed request (no 404),
no JavaScript exception and no console error; every formula is typeset by MathJax;
every widget is drawn from the saved state, with no failure text; one widget of each
kind responds without a kernel (the stepper's Play advances the step shown), and a
view that answers only through Python says so, with its controls switched off (no
slider moves while nothing else does); the graph pictures are drawn.
Screenshots go to ``build/screenshots/book/<page>/`` (the stepper's to
``build/screenshots/book/stepper/<page>/``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from browser_support import ROOT, screenshot_folder
from layout_checks import check_code_view, check_stepper, operate_and_check, view_state
from widget_driver import interact_with_each_kind, widget_failures

pytestmark = pytest.mark.browser

# The element the widget embedder draws one saved view into.
WIDGET_OUTPUT = ".cell_output:has(.jupyter-widgets)"
# A view that answers only through Python (widgets/needs_kernel.py): no kernel here.
NEEDS_KERNEL = ".autodiff-needs-kernel"
LIVE_OUTPUT = f"{WIDGET_OUTPUT}:not(:has({NEEDS_KERNEL}))"
# What a view that needs a kernel shows in the book: its note, and controls switched off.
KERNEL_NOTES = """() => [...document.querySelectorAll('.autodiff-needs-kernel')].map(view => {
  const note = view.querySelector('.autodiff-kernel-note .widget-html-content > div');
  const controls = [...view.querySelectorAll('input, select, button, .noUi-handle')];
  return {
    note: note ? note.innerText : '',
    shown: note !== null && note.offsetParent !== null && note.getBoundingClientRect().height > 0,
    live: controls.filter(c => getComputedStyle(c).pointerEvents !== 'none').length,
  };
})"""


def _toc_pages(node: object) -> list[str]:
    if isinstance(node, dict):
        found = [node[k] for k in ("root", "file") if isinstance(node.get(k), str)]
        return found + [
            p for k, v in node.items() if k not in {"root", "file"} for p in _toc_pages(v)
        ]
    if isinstance(node, list):
        return [p for item in node for p in _toc_pages(item)]
    return []


def _pages() -> list[str]:
    toc = yaml.safe_load((ROOT / "book" / "_toc.yml").read_text(encoding="utf-8"))
    return [str(Path(p).with_suffix("")) for p in _toc_pages(toc)]


@pytest.mark.parametrize("name", _pages())
def test_book_page_loads_cleanly_renders_math_and_widgets(page: Any, book_url: str, name: str):
    folder = screenshot_folder("book", name.replace("/", "__"))
    page.goto(f"{book_url}/{name}.html", wait_until="load")
    page.wait_for_load_state("networkidle")

    formulas = page.locator(".math").count()
    if formulas:
        page.wait_for_function(
            f"document.querySelectorAll('mjx-container').length >= {formulas}", timeout=30_000
        )
        assert page.locator("mjx-merror").count() == 0, f"{name}: MathJax could not typeset"

    views = page.locator('script[type="application/vnd.jupyter.widget-view+json"]').count()
    if views:
        page.wait_for_function(
            f"document.querySelectorAll('{WIDGET_OUTPUT} .jupyter-widgets').length >= {views}",
            timeout=30_000,
        )
    assert widget_failures(page) == [], f"{name}: a widget failed to render"
    page.screenshot(path=folder / "page.png", full_page=True)

    notes = page.evaluate(KERNEL_NOTES)
    for note in notes:  # a view that would not respond says so, and cannot be moved
        assert note["shown"] and "Needs a running Python kernel" in note["note"], (name, note)
        assert note["live"] == 0, f"{name}: a view that needs a kernel has live controls"
    changed = interact_with_each_kind(page, LIVE_OUTPUT, folder)
    if page.locator(LIVE_OUTPUT).count():
        assert changed, f"{name}: shows widgets that need no kernel, but none responds"
    problems = page.log.problems()
    assert problems == [], f"{name}: the page reported errors:\n" + "\n".join(problems)


STEP = re.compile(r"step (\d+) of (\d+)")


@pytest.mark.parametrize("name", ["howto/read_generated_code"])
def test_book_stepper_starts_in_sync_and_play_advances(page: Any, book_url: str, name: str):
    """The saved stepper opens with the slider on the step its caption names, and Play
    moves both, with no kernel (each step is a page the slider picks in the browser)."""
    folder = screenshot_folder("book", "stepper", name.replace("/", "__"))
    page.goto(f"{book_url}/{name}.html", wait_until="load")
    stepper = page.locator(".cell_output:has(.widget-play)").first
    stepper.locator(".widget-readout").wait_for()
    stepper.scroll_into_view_if_needed()

    def shown() -> tuple[int, int]:
        step = int(STEP.search(stepper.inner_text()).group(1))
        return step, int(stepper.locator(".widget-readout").inner_text())

    before, slider = shown()
    assert before == slider, "the slider and the caption disagree on the step shown"
    first = view_state(stepper)
    check_stepper(first)  # the caption's backward line is the one marked, by its number
    stepper.screenshot(path=folder / "stepper-before.png")
    stepper.locator(".widget-play button").first.click()
    page.wait_for_function(
        "([el, step]) => !el.innerText.includes(`step ${step} of`)",
        arg=[stepper.element_handle(), before],
        timeout=10_000,
    )
    stepper.locator(".widget-play button").first.click()  # pause, to read a still page
    page.wait_for_timeout(800)
    after, slider = shown()
    assert after != before and after == slider
    later = view_state(stepper)
    check_stepper(later)
    assert later["tableWidth"] == first["tableWidth"], "the gradient table changed width"
    stepper.screenshot(path=folder / "stepper-after.png")
    problems = page.log.problems()
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("name", ["howto/read_generated_code"])
def test_book_code_view_marks_the_line_its_drop_down_names(page: Any, book_url: str, name: str):
    """Your function numbered by its file lines, the chosen one marked, in every panel
    code that scrolls instead of wrapping (before and after choosing another line)."""
    folder = screenshot_folder("book", "code_view", name.replace("/", "__"))
    page.goto(f"{book_url}/{name}.html", wait_until="load")
    view = (
        page.locator(WIDGET_OUTPUT)
        .filter(has_text="your function")
        .filter(has=page.locator(".widget-dropdown select"))
        .first
    )
    view.locator("pre").first.wait_for()
    select = view.locator(".widget-dropdown select")
    options = select.locator("option").count()
    operate_and_check(
        view,
        lambda: select.select_option(index=(select.evaluate("s => s.selectedIndex") + 1) % options),
        check_code_view,
        folder,
        "code-view",
    )
    problems = page.log.problems()
    assert problems == [], "\n".join(problems)


def test_conventions_page_shows_every_formula_as_typeset_math(page: Any, book_url: str):
    """The rules' formulas are MathJax output (their LaTeX from the rule records), one in
    each row of the conventions tables, with no MathJax error and no ASCII left over."""
    from autodiff_tutor.rules.registry import all_rules

    folder = screenshot_folder("book", "conventions")
    page.goto(f"{book_url}/reference/conventions.html", wait_until="load")
    rules = [r for r in all_rules().values() if r.convention]
    rows = page.locator("table tr:has(td code)")
    page.wait_for_function(
        "n => document.querySelectorAll('table td mjx-container').length >= n",
        arg=len(rules),
        timeout=30_000,
    )
    listed = {
        rows.nth(k).locator("td").first.inner_text(): rows.nth(k) for k in range(rows.count())
    }
    missing = [r.op for r in rules if r.op not in listed]
    assert missing == [], f"rules with a convention not in the tables: {missing}"
    for rule in rules:
        formula = listed[rule.op].locator("td").nth(1)
        assert formula.locator("mjx-container").count() == 1, f"{rule.op}: not typeset"
    assert page.locator("mjx-merror").count() == 0, "MathJax could not typeset a formula"
    assert "prod_{" not in page.locator("article").inner_text()
    page.locator("table").first.screenshot(path=folder / "formulas.png")
    problems = page.log.problems()
    assert problems == [], "\n".join(problems)


GRAPH_PICTURES = """() => [...document.querySelectorAll('.cell_output img')]
  .filter(img => img.src.endsWith('.svg'))
  .map(img => ({src: img.src, drawn: img.complete && img.naturalWidth > 0,
                width: img.getBoundingClientRect().width}))"""


@pytest.mark.parametrize("name", ["howto/read_generated_code"])
def test_book_shows_the_graph_pictures(page: Any, book_url: str, name: str):
    """The compiled pair's graph and the trace's, drawn as pictures on the page (SVG
    written by the toolkit, no graphviz): loaded, visible, with the forward's and the
    adjoint's nodes in them."""
    folder = screenshot_folder("book", "graph", name.replace("/", "__"))
    page.goto(f"{book_url}/{name}.html", wait_until="load")
    page.wait_for_load_state("networkidle")
    pictures = page.evaluate(GRAPH_PICTURES)
    graphs = []
    for picture in pictures:
        text = page.request.get(picture["src"]).text()
        if "data-autodiff-graph" in text:
            graphs.append(text)
            assert picture["drawn"] and picture["width"] > 200, picture
    assert len(graphs) == 2, f"{name}: {len(graphs)} graph pictures"
    compiled, trace = graphs
    assert 'data-autodiff-graph="loss"' in compiled and 'data-node="a:d_W"' in compiled
    assert 'data-node="f:h"' in compiled and "tanh · line" in compiled
    assert "evaluate(traced_loss)" in trace and 'data-side="adjoint"' in trace
    page.locator(".cell_output img[src$='.svg']").first.screenshot(path=folder / "graph.png")
    problems = page.log.problems()
    assert problems == [], "\n".join(problems)
