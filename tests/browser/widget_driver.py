"""Driving ipywidgets in a page as a student would: one interaction per widget kind.

Used by the lab and the book tests alike. Each kind is found by the CSS class that
ipywidgets 8 gives its view; the interaction is the one a person would make (a key on
a slider handle, a click on a button, a choice in a drop-down), and the change it
must cause is checked on what the output shows: its text, or else its pixels.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Text that ipywidgets or a manager shows when a view could not be drawn.
WIDGET_FAILURES = (
    "Error displaying widget",
    "Error rendering",
    "Failed to load model class",
    "Could not create a view",
    "model not found",
    "Loading widget...",
)


@dataclass(frozen=True)
class Kind:
    """A widget kind: the selector of its control and how a person operates it."""

    name: str
    control: str
    operate: Callable[[Any], None]


def _press_right(handle: Any) -> None:
    handle.focus()
    for _ in range(3):
        handle.press("ArrowRight")


def _click_inactive(group: Any) -> None:
    group.locator("button:not(.mod-active)").first.click()


def _choose_next(select: Any) -> None:
    """Pick the option after the current one (the first, after the last)."""
    options = select.locator("option").all_inner_texts()
    current = select.evaluate("s => s.selectedIndex")
    select.select_option(index=(current + 1) % len(options))


KINDS = (
    Kind("slider", ".widget-slider .noUi-handle", _press_right),
    Kind("toggle-buttons", ".widget-toggle-buttons", _click_inactive),
    Kind(
        "toggle-button",
        "button.widget-toggle-button:not(.widget-toggle-buttons button)",
        lambda b: b.click(),
    ),
    Kind("dropdown", ".widget-dropdown select", _choose_next),
    Kind("checkbox", ".widget-checkbox input", lambda c: c.click()),
    Kind("play", ".widget-play button", lambda b: b.click()),
)


def widget_failures(page: Any) -> list[str]:
    """The failure messages of widget managers visible in the page."""
    text = page.locator("body").inner_text()
    return [message for message in WIDGET_FAILURES if message in text]


def _snapshot(output: Any) -> tuple[str, bytes]:
    return output.inner_text(), output.screenshot()


def interact_with_each_kind(
    page: Any, output_selector: str, folder: Path, wait: float = 10.0
) -> dict[str, str]:
    """Operate the first widget of each kind in the page; check that its output changes.

    ``output_selector`` names the element that holds one widget's whole view (a cell's
    output in the lab, a widget container in the book): the before/after screenshots
    are taken of it, into ``folder`` as ``<kind>-before.png`` and ``<kind>-after.png``.
    Returns, per kind found, what changed (``"text"`` or ``"pixels"``); a kind whose
    output did not change within ``wait`` seconds fails the calling test.
    """
    changed: dict[str, str] = {}
    for kind in KINDS:
        controls = page.locator(f"{output_selector} {kind.control}")
        if controls.count() == 0:
            continue
        control = controls.first
        output = page.locator(output_selector).filter(has=page.locator(kind.control)).first
        output.scroll_into_view_if_needed()
        text, pixels = _snapshot(output)
        output.screenshot(path=folder / f"{kind.name}-before.png")
        kind.operate(control)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            page.wait_for_timeout(250)
            after_text, after_pixels = _snapshot(output)
            if after_text != text or after_pixels != pixels:
                changed[kind.name] = "text" if after_text != text else "pixels"
                break
        output.screenshot(path=folder / f"{kind.name}-after.png")
        assert kind.name in changed, f"operating a {kind.name} changed nothing in its output"
    return changed
