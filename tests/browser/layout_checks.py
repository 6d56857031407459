"""What a student sees at 1280 px: code that never wraps and is never cut off (a panel
too narrow for its code would take the whole row and show a shadow at its edge), line
numbers that agree with the captions, a gradient table that keeps its width, messages
the browser never breaks.

Used by the lab and the book tests. Each check reads the page as drawn (visible
elements only: a ``Stack`` shows one page at a time) and returns what it found, so a
failure says which line or which message was wrong.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

# The shown page of a stepper or code view: its code panels (title, the CSS white-space
# of the code, the number in front of each highlighted line), the caption, and the
# width of the gradient table.
VIEW_STATE = """(output) => {
  const shown = el => el.offsetParent !== null;
  const panels = [...output.querySelectorAll('pre')].filter(shown).map(pre => {
    const box = pre.parentElement;
    const title = box.querySelector('div') ? box.querySelector('div').innerText : '';
    const row = pre.closest('[style*="flex-flow"]');
    return {
      title,
      whiteSpace: getComputedStyle(pre).whiteSpace,
      overflows: pre.scrollWidth > pre.clientWidth + 1,
      width: pre.getBoundingClientRect().width,
      rowWidth: row ? row.getBoundingClientRect().width : null,
      shadow: getComputedStyle(pre).backgroundImage.includes('radial-gradient'),
      marked: [...pre.querySelectorAll('[data-autodiff-line] [data-lineno]')]
                .map(n => parseInt(n.innerText.trim())),
      numbers: [...pre.querySelectorAll('[data-lineno]')].map(n => parseInt(n.innerText.trim())),
    };
  });
  const tables = [...output.querySelectorAll('table')].filter(shown);
  const picker = output.querySelector('.widget-dropdown select');
  return {
    text: output.innerText,
    panels,
    tableWidth: tables.length ? tables[0].getBoundingClientRect().width : null,
    outputWidth: output.getBoundingClientRect().width,
    chosen: picker ? picker.options[picker.selectedIndex].text : null,
  };
}"""

# Every text output that holds an error or a warning, and whether its longest line is
# wider than the output: JupyterLab then breaks it anywhere, even mid-word
# (`word-break: break-all`), so a message must come with lines that fit.
MESSAGES_OVERFLOWING = """(selector) => {
  const found = [];
  for (const pre of document.querySelectorAll(selector)) {
    const text = pre.innerText;
    if (!/(Error|Warning)\\b/.test(text)) continue;
    const before = pre.style.whiteSpace;
    pre.style.whiteSpace = 'pre';          // no wrapping: how wide is the longest line?
    const overflow = pre.scrollWidth > pre.clientWidth + 1;
    pre.style.whiteSpace = before;
    found.push({text: text.slice(0, 120), overflow, width: pre.clientWidth});
  }
  return found;
}"""

MESSAGE = re.compile(r"(Error|Warning)\b")  # the outputs MESSAGES_OVERFLOWING reads
STEP = re.compile(r"step (\d+) of \d+:\s*backward line (\d+)\s*(?:, from your line (\d+))?")
CHOSEN = re.compile(r"line (\d+):")


def view_state(output: Any) -> dict:
    """The drawn state of one widget output (see :data:`VIEW_STATE`)."""
    return output.evaluate(VIEW_STATE)


def check_stepper(state: dict) -> None:
    """The caption's backward line is the one marked in the numbered backward panel,
    and its "your line" the one marked in your function; code never wraps."""
    found = STEP.search(state["text"])
    assert found, f"no stepper caption in {state['text'][:200]!r}"
    backward_line, user_line = int(found.group(2)), found.group(3)
    panels = {p["title"]: p for p in state["panels"]}
    assert panels["generated backward"]["marked"] == [backward_line], panels
    if user_line is not None:
        assert panels["your function"]["marked"] == [int(user_line)], panels
    _code_never_wraps(state)


def check_code_view(state: dict) -> None:
    """The line picked in the drop-down is the one marked, by its file line number, in
    your function's numbered panel; code never wraps."""
    chosen = CHOSEN.match(state["chosen"] or "")
    if chosen is not None:
        panels = {p["title"]: p for p in state["panels"]}
        assert panels["your function"]["marked"] == [int(chosen.group(1))], panels
    _code_never_wraps(state)


def _code_never_wraps(state: dict) -> None:
    for panel in state["panels"]:
        assert panel["whiteSpace"] == "pre", f"{panel['title']} wraps its code"
        assert panel["numbers"] == sorted(panel["numbers"]), panel  # numbered in order
        _code_not_cut(panel)


def _code_not_cut(panel: dict) -> None:
    """A panel shows all its code, or is as wide as the whole row and shows a shadow at
    the edge that has more (a scrollbar is hidden on many systems until one scrolls)."""
    if not panel["overflows"]:
        return
    assert panel["rowWidth"] is not None and panel["width"] >= panel["rowWidth"] - 2, (
        f"{panel['title']}: code cut off at {panel['width']:.0f} px, though the row has "
        f"{panel['rowWidth']} px"
    )
    assert panel["shadow"], f"{panel['title']}: code scrolls out of sight with no sign of it"


def operate_and_check(
    output: Any, operate: Any, check: Any, folder: Path, name: str, steps: int = 1
) -> tuple[dict, dict]:
    """Screenshot ``output`` (``<name>-before.png``), ``operate`` it ``steps`` times,
    screenshot it again (``<name>-after.png``); ``check`` the view both times."""
    output.scroll_into_view_if_needed()
    before = view_state(output)
    check(before)
    output.screenshot(path=folder / f"{name}-before.png")
    for _ in range(steps):
        operate()
    output.page.wait_for_function(
        f"([el, text]) => ({VIEW_STATE})(el).text !== text",
        arg=[output.element_handle(), before["text"]],
        timeout=10_000,
    )
    output.page.wait_for_timeout(300)
    after = view_state(output)
    check(after)
    output.screenshot(path=folder / f"{name}-after.png")
    return before, after


def overflowing_messages(page: Any, selector: str) -> tuple[int, list[str]]:
    """How many error/warning outputs ``selector`` finds, and the start of each one
    whose longest line does not fit its output's width."""
    found = page.evaluate(MESSAGES_OVERFLOWING, selector)
    return len(found), [f"{m['text']!r} ({m['width']} px)" for m in found if m["overflow"]]
