"""Every course notebook run top to bottom in JupyterLab, in headless Chromium.

For each notebook, as a student would: open it in a fresh JupyterLab (a scratch copy
of ``notebooks/``), choose *Run > Run All Cells*, wait for the kernel, then check that
no cell shows an error output, no widget shows a failure text, the console logged no
error, every widget output was drawn, and that operating one widget of each kind (a
slider, toggle buttons, a drop-down, a checkbox, Play, ...) changes what its output
shows. The page is 1280 px wide with the file browser open, as a student sees it, and
at that width every error and warning printed fits its output (no line broken by the
browser), the backward stepper's caption names the line its numbered panels mark
(before and after moving its slider), code never wraps, and the gradient table keeps
its width from step to step; the code view marks the line its drop-down names; every
cell that calls ``graph(...)`` shows its picture; no view says it needs a kernel.
Screenshots (the lab after the run, and each interaction's output before/after) go
to ``build/screenshots/lab/<notebook>/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser_support import NOTEBOOKS, LabServer, screenshot_folder
from layout_checks import (
    MESSAGE,
    check_code_view,
    check_stepper,
    operate_and_check,
    overflowing_messages,
)
from widget_driver import interact_with_each_kind, widget_failures

pytestmark = pytest.mark.browser

RUN_TIMEOUT_MS = 240_000

# The notebook panel's state, read from the app's own model (window.jupyterapp).
NOTEBOOK_STATE = """() => {
  const view = 'application/vnd.jupyter.widget-view+json';
  const panel = window.jupyterapp.shell.currentWidget;
  const cells = panel.content.model.cells;
  const state = {kernel: panel.sessionContext.session?.kernel?.status, cells: []};
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type !== 'code') continue;
    const outputs = cell.outputs.toJSON();
    state.cells.push({
      source: cell.sharedModel.getSource(),
      count: cell.executionCount,
      errors: outputs.filter(o => o.output_type === 'error')
                     .map(o => o.ename + ': ' + o.evalue),
      widgets: outputs.filter(o => o.data && o.data[view]).length,
    });
  }
  return state;
}"""


def _notebook_names() -> list[str]:
    return [p.name for p in sorted(NOTEBOOKS.glob("*.ipynb"))]


def _run_all(page: Any) -> dict:
    """Clear the saved outputs, *Run All Cells*, wait until every code cell has run."""
    page.get_by_role("menuitem", name="Edit", exact=True).click()
    page.get_by_role("menuitem", name="Clear Outputs of All Cells", exact=True).click()
    page.wait_for_function(f"() => ({NOTEBOOK_STATE})().cells.every(c => c.count === null)")
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    page.wait_for_function(
        f"""() => {{
          const state = ({NOTEBOOK_STATE})();
          return state.kernel === 'idle' &&
                 state.cells.every(c => !c.source.trim() || c.count !== null);
        }}""",
        timeout=RUN_TIMEOUT_MS,
        polling=500,
    )
    return page.evaluate(NOTEBOOK_STATE)


def _open(page: Any, lab: LabServer, name: str) -> None:
    page.goto(lab.notebook_url(name))
    page.wait_for_function(
        """() => window.jupyterapp && window.jupyterapp.shell.currentWidget &&
                 window.jupyterapp.shell.currentWidget.sessionContext &&
                 window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel?.status
                   === 'idle'""",
        timeout=120_000,
        polling=500,
    )


@pytest.mark.parametrize("name", _notebook_names())
def test_notebook_runs_in_the_lab_and_its_widgets_respond(
    page: Any, lab_server: LabServer, name: str
):
    folder = screenshot_folder("lab", Path(name).stem)
    _open(page, lab_server, name)
    state = _run_all(page)

    errors = [e for cell in state["cells"] for e in cell["errors"]]
    assert errors == [], f"{name}: cells show errors"
    expected_views = sum(cell["widgets"] for cell in state["cells"])
    drawn = page.locator(".jp-OutputArea-output .jupyter-widgets").count()
    page.wait_for_timeout(500)
    assert drawn >= expected_views, f"{name}: {expected_views} widget outputs, {drawn} drawn"
    assert widget_failures(page) == [], f"{name}: a widget failed to render"
    page.screenshot(path=folder / "notebook.png", full_page=True)
    messages, overflowing = overflowing_messages(page, ".jp-OutputArea-output pre")
    assert overflowing == [], f"{name}: messages wider than their output (broken mid-word)"
    if messages:  # the first error or warning, as drawn
        shown = page.locator(".jp-OutputArea-output pre").filter(has_text=MESSAGE).first
        shown.scroll_into_view_if_needed()
        shown.screenshot(path=folder / "message.png")
    _check_stepper_and_code_view(page, folder)
    _check_graph_pictures(page, state, folder)
    hidden = page.evaluate(KERNEL_NOTES_SHOWN)
    assert hidden == 0, f"{name}: a view says it needs a kernel, in the lab where one runs"

    changed = interact_with_each_kind(page, ".jp-OutputArea-output", folder)
    if expected_views:
        assert changed, f"{name}: shows widgets but none could be operated"
    problems = page.log.problems()
    assert problems == [], f"{name}: the page reported errors:\n" + "\n".join(problems)


# The notes of views that need a kernel, shown: none in the lab, where the kernel runs.
KERNEL_NOTES_SHOWN = """() => [...document.querySelectorAll('.autodiff-kernel-note')]
  .filter(n => n.innerText.trim() !== '').length"""


def _check_graph_pictures(page: Any, state: dict, folder: Path) -> None:
    """Each cell that calls graph(...) shows a picture of the graph, drawn."""
    expected = sum(1 for cell in state["cells"] if "graph(" in cell["source"])
    pictures = page.locator(".jp-RenderedSVG img")
    assert pictures.count() >= expected, f"{expected} graph cells, {pictures.count()} pictures"
    for k in range(pictures.count()):
        picture = pictures.nth(k)
        drawn = picture.evaluate("img => img.complete && img.naturalWidth > 0")
        assert drawn and picture.bounding_box()["width"] > 200, "a graph picture is not drawn"
    if expected:
        pictures.first.scroll_into_view_if_needed()
        pictures.first.screenshot(path=folder / "graph.png")


def _check_stepper_and_code_view(page: Any, folder: Path) -> None:
    """The first stepper and code view of the notebook, operated as a student would."""
    steppers = page.locator(".jp-OutputArea-output:has(.widget-play)")
    if steppers.count():
        stepper = steppers.first
        handle = stepper.locator(".widget-slider .noUi-handle").first
        handle.focus()
        before, after = operate_and_check(
            stepper, lambda: handle.press("ArrowRight"), check_stepper, folder, "stepper", 3
        )
        assert before["tableWidth"] == after["tableWidth"], "the gradient table changed width"
    views = page.locator(".jp-OutputArea-output:has(.widget-dropdown)").filter(
        has_text="your function"
    )
    if views.count():
        view = views.first
        select = view.locator(".widget-dropdown select")
        options = select.locator("option").count()
        operate_and_check(
            view,
            lambda: select.select_option(
                index=(select.evaluate("s => s.selectedIndex") + 1) % options
            ),
            check_code_view,
            folder,
            "code-view",
        )
