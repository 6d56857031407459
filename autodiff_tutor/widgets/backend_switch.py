"""The backend switch: run a notebook's arrays on numpy or on cupy (a GPU).

Two toggle buttons behave as one choice. Where cupy is not installed or sees no
CUDA device, the cupy button is greyed out, its tooltip says why, and the reason is
written under the buttons. ``xp`` is the chosen array module; ``on_change(fn)``
registers a function that is called with the new module now and at every switch
(its printed output and errors go to the switch's own output area), so a notebook
can re-run a cell's computation on the chosen backend.

>>> switch = backend_switch()
>>> switch.value, switch.xp.__name__
('numpy', 'numpy')
>>> switch.cupy_button.disabled == (switch.reason is not None)
True
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets
import numpy as np

from autodiff_tutor.errors import ArgumentError
from autodiff_tutor.widgets.needs_kernel import needs_kernel

__all__ = ["BackendSwitch", "backend_switch"]

_AUTO: Any = object()


def _load_cupy() -> Any:
    import cupy

    return cupy


class BackendSwitch(widgets.VBox):
    """numpy / cupy toggle, cupy greyed out where it cannot run; see the module
    docstring.

    ``reason`` (why cupy cannot be chosen, or ``None``) is found with the same test as
    ``check_op``'s GPU category; ``cupy_loader`` returns the module to use for "cupy".
    Both can be given, so the switch can be tried out with another array library
    where there is no GPU.
    """

    def __init__(self, reason: str | None = _AUTO, cupy_loader: Callable[[], Any] = _load_cupy):
        if reason is _AUTO:
            from autodiff_tutor.verify.numeric.gpu import gpu_unavailable_reason

            reason = gpu_unavailable_reason()
        self.reason: str | None = reason
        self._loader = cupy_loader
        self._callbacks: list[Callable[[Any], Any]] = []
        self.numpy_button = widgets.ToggleButton(
            value=True, description="numpy", tooltip="arrays on the CPU", icon="check"
        )
        self.cupy_button = widgets.ToggleButton(
            value=False,
            description="cupy",
            disabled=reason is not None,
            tooltip=reason if reason is not None else "arrays on the GPU",
        )
        self.reason_html = widgets.HTML(
            "" if reason is None else f"<i>cupy unavailable: {html.escape(reason)}</i>"
        )
        self.output = widgets.Output()
        self._value = "numpy"
        self._syncing = False
        self.numpy_button.observe(self._clicked, names="value")
        self.cupy_button.observe(self._clicked, names="value")
        buttons = widgets.HBox([widgets.Label("backend"), self.numpy_button, self.cupy_button])
        super().__init__([buttons, self.reason_html, self.output])
        needs_kernel(self, "the buttons switch the arrays between numpy and cupy")

    def __repr__(self) -> str:
        return f"<backend switch: {self._value}>"

    # -- the choice ---------------------------------------------------------------

    @property
    def value(self) -> str:
        """``"numpy"`` or ``"cupy"``; assigning it switches (cupy only when available)."""
        return self._value

    @value.setter
    def value(self, name: str) -> None:
        if name not in ("numpy", "cupy"):
            raise ArgumentError(f"the backend is 'numpy' or 'cupy', not {name!r}")
        if name == "cupy" and self.reason is not None:
            raise ArgumentError(f"cannot switch to cupy: {self.reason}")
        (self.cupy_button if name == "cupy" else self.numpy_button).value = True

    @property
    def xp(self) -> Any:
        """The chosen array module (numpy, or cupy)."""
        return np if self._value == "numpy" else self._loader()

    def asarray(self, value: Any) -> Any:
        """``value`` as an array of the chosen module (``xp.asarray``).

        >>> backend_switch().asarray([1.0, 2.0]).tolist()
        [1.0, 2.0]
        """
        return self.xp.asarray(value)

    def _clicked(self, change: Any) -> None:
        if self._syncing:
            return
        pressed = change["owner"]
        name = "numpy" if pressed is self.numpy_button else "cupy"
        self._syncing = True
        try:
            if not change["new"]:  # un-pressing the chosen button keeps it chosen
                pressed.value = True
                return
            other = self.cupy_button if name == "numpy" else self.numpy_button
            other.value = False
            other.icon, pressed.icon = "", "check"
        finally:
            self._syncing = False
        if name != self._value:
            self._value = name
            self._notify()

    # -- the hook -----------------------------------------------------------------

    def on_change(self, callback: Callable[[Any], Any], run_now: bool = True) -> None:
        """Call ``callback(xp)`` at every switch (and now, unless ``run_now=False``).

        >>> switch = backend_switch()
        >>> seen = []
        >>> switch.on_change(lambda xp: seen.append(xp.__name__))
        >>> seen
        ['numpy']
        """
        self._callbacks.append(callback)
        if run_now:
            self._run(callback)

    def _notify(self) -> None:
        self.output.clear_output()
        for callback in self._callbacks:
            self._run(callback)

    def _run(self, callback: Callable[[Any], Any]) -> None:
        with self.output:
            callback(self.xp)


backend_switch = BackendSwitch
