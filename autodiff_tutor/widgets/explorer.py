"""The derivative explorer: move a point along a function and watch its tangent.

For a scalar function of one or two scalars: one slider per input, the function's
plot with the tangent at the point (for two inputs, contours with the gradient
arrow and the two slices through the point), and the gradient from three sources,
switchable with toggle buttons:

- ``"compiler"``: the generated backward (``value_and_grad``);
- ``"tracing"``: the tracing mode on your plain function (``value_and_gradient``);
- ``"finite differences"``: 5-point central differences in float64, which also say
  when the point sits on a kink.

The table shows all three; the plot uses the chosen one.

>>> import numpy as np
>>> def f(x):
...     return np.sin(x) * x
>>> explorer = derivative_explorer(f, (-3.0, 3.0), start=1.0)
>>> bool(np.isclose(explorer.gradient[0], np.cos(1.0) + np.sin(1.0)))
True
>>> explorer.source_buttons.value = "finite differences"
>>> abs(explorer.gradient[0] - explorer.gradients["compiler"][0]) < 1e-6
True
"""

from __future__ import annotations

import functools
import html
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as widgets
import numpy as np

from autodiff_tutor.errors import ArgumentError
from autodiff_tutor.widgets.needs_kernel import needs_kernel
from autodiff_tutor.widgets.plots import ContourPlot, TangentPlot
from autodiff_tutor.widgets.render import table_html

__all__ = ["SOURCES", "DerivativeExplorer", "derivative_explorer"]

#: The gradient sources, in the order of the toggle buttons.
SOURCES = ("compiler", "tracing", "finite differences")

_TIPS = (
    "the generated backward of @differentiable",
    "operator overloading: the tracing mode on your plain function",
    "5-point central differences in float64 (an oracle)",
)

Range = tuple[float, float]


def _inputs(fn: Callable[..., Any], fixed: dict[str, Any]) -> list[str]:
    parameters = inspect.signature(fn).parameters.values()
    names = [p.name for p in parameters if p.default is p.empty and p.name not in fixed]
    if len(names) not in (1, 2):
        raise ArgumentError(
            f"the explorer needs a function of one or two scalars; {fn.__name__} has "
            f"{len(names)} inputs to vary: {names}",
            hint="hold the others fixed with fixed={'name': value}",
        )
    return names


def _ranges(ranges: Range | Sequence[Range] | None, count: int) -> list[Range]:
    if ranges is None:
        return [(-3.0, 3.0)] * count
    problem = ArgumentError(
        f"ranges should be {count} pair(s) (low, high) with low < high, got {ranges!r}",
        hint="for example ranges=(-2, 2), or [(-2, 2), (-1, 3)] for two inputs",
    )
    single = len(ranges) == 2 and all(np.isscalar(v) for v in ranges)
    items = [ranges] if single else list(ranges)
    try:
        result = [(float(lo), float(hi)) for lo, hi in items]
    except (TypeError, ValueError):
        raise problem from None
    if len(result) != count or any(not lo < hi for lo, hi in result):
        raise problem
    return result


def _error_text(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"


def _error_summary(text: str) -> str:
    """The message of an error text, its wrapped lines joined (no location, no hint).

    >>> _error_summary("TracingError: x is not\\non the trace\\n  Cell In[2], line 3")
    'TracingError: x is not on the trace'
    """
    message: list[str] = []
    for line in text.splitlines():
        if message and (not line or line.startswith(" ")):
            break
        message.append(line)
    return " ".join(message)


class DerivativeExplorer(widgets.VBox):
    """Sliders, source buttons, the table of gradients and the plot; see the module
    docstring.

    ``derivative_explorer(f, ranges)`` explores a scalar function of one or two
    scalars: ``ranges`` is ``(low, high)`` (one input) or one pair per input (default
    ``(-3, 3)``); ``start`` the first point; ``source`` one of :data:`SOURCES`;
    ``fixed`` keyword arguments held constant (for example ``fixed={"n": 3}``);
    ``samples`` the points of the curve. ``gradients`` maps each source to its
    gradient (a tuple of floats, or an error text); ``gradient`` is the chosen
    source's; ``kinks`` the inputs that finite differences found on or next to a kink.
    """

    def __init__(
        self,
        f: Callable[..., Any],
        ranges: Range | Sequence[Range] | None = None,
        *,
        start: float | Sequence[float] | None = None,
        source: str = "compiler",
        fixed: dict[str, Any] | None = None,
        samples: int = 200,
    ):
        from autodiff_tutor.api import differentiable

        self.compiled = differentiable(f)
        self.fixed = dict(fixed or {})
        self.names = _inputs(self.compiled.fn, self.fixed)
        self.ranges = _ranges(ranges, len(self.names))
        if source not in SOURCES:
            raise ArgumentError(f"source is one of {SOURCES}, not {source!r}")
        starts = self._starts(start)
        self.plain = functools.partial(self.compiled.fn, **self.fixed)
        self._check_call(starts)
        self.sliders = [
            widgets.FloatSlider(
                value=value,
                min=lo,
                max=hi,
                step=(hi - lo) / 400,
                description=name,
                readout_format=".3f",
                continuous_update=len(self.names) == 1,  # two inputs redraw three panels
            )
            for name, (lo, hi), value in zip(self.names, self.ranges, starts, strict=True)
        ]
        self.source_buttons = widgets.ToggleButtons(
            options=list(SOURCES), value=source, tooltips=list(_TIPS), description="gradient"
        )
        self.values_html = widgets.HTML()
        self.image = widgets.Image(format="png", layout=widgets.Layout(max_width="100%"))
        self._samples = samples
        self._curve = self._grid() if len(self.names) == 2 else self._line()
        self.gradients: dict[str, Any] = {}
        self.kinks: list[str] = []
        self.function_value: float = float("nan")
        if len(self.names) == 1:
            self.plot: TangentPlot | ContourPlot = TangentPlot(
                self.names[0], *self._curve, function=self.compiled.name
            )
        else:
            self.plot = ContourPlot(self.names, self._curve)
        super().__init__([*self.sliders, self.source_buttons, self.values_html, self.image])
        needs_kernel(self, "the sliders and buttons redraw the tangent and the table")
        for slider in self.sliders:
            slider.observe(self._update, names="value")
        self.source_buttons.observe(self._update, names="value")
        self._update()

    def __repr__(self) -> str:
        point = ", ".join(f"{n}={v:.4g}" for n, v in zip(self.names, self.point, strict=True))
        return (
            f"<derivative explorer of {self.compiled.name} at {point}: {self.source_buttons.value}>"
        )

    # -- state ------------------------------------------------------------------------

    @property
    def point(self) -> tuple[float, ...]:
        """The sliders' values."""
        return tuple(float(s.value) for s in self.sliders)

    @property
    def gradient(self) -> tuple[float, ...] | None:
        """The chosen source's gradient at the point (``None`` when it failed)."""
        found = self.gradients.get(self.source_buttons.value)
        return found if isinstance(found, tuple) else None

    def _starts(self, start: float | Sequence[float] | None) -> list[float]:
        if start is None:
            return [lo + 0.6 * (hi - lo) for lo, hi in self.ranges]
        values = [float(start)] if np.isscalar(start) else [float(v) for v in start]
        if len(values) != len(self.names):
            raise ArgumentError(f"start needs {len(self.names)} value(s), got {start!r}")
        return [min(max(v, lo), hi) for v, (lo, hi) in zip(values, self.ranges, strict=True)]

    # -- evaluation -------------------------------------------------------------------

    def _check_call(self, starts: list[float]) -> None:
        try:
            self._value(*starts)  # a point outside the domain is a gap: nan
        except Exception as exc:
            call = ", ".join(f"{n}={v:g}" for n, v in zip(self.names, starts, strict=True))
            raise ArgumentError(
                f"calling {self.compiled.name}({call}) failed: {_error_text(exc)}",
                hint="the explorer varies float scalars; hold other inputs fixed with "
                "fixed={'name': value}, and return a scalar",
            ) from exc

    def _value(self, *xs: float) -> float:
        try:
            return float(self.plain(*(np.float64(x) for x in xs)))
        except (ArithmeticError, ValueError):
            return float("nan")

    def _line(self) -> tuple[np.ndarray, np.ndarray]:
        xs = np.linspace(*self.ranges[0], self._samples)
        with np.errstate(all="ignore"):
            return xs, np.array([self._value(x) for x in xs])

    def _grid(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        count = max(20, self._samples // 4)
        gx, gy = np.meshgrid(
            np.linspace(*self.ranges[0], count), np.linspace(*self.ranges[1], count)
        )
        with np.errstate(all="ignore"):
            gz = np.array([self._value(a, b) for a, b in zip(gx.ravel(), gy.ravel(), strict=True)])
        return gx, gy, gz.reshape(gx.shape)

    def _compiler(self, xs: list[np.float64]) -> tuple[float, ...]:
        from autodiff_tutor.api import value_and_grad

        _, grads = value_and_grad(self.compiled, wrt=list(self.names))(*xs, **self.fixed)
        return tuple(float(g) for g in grads)

    def _tracing(self, xs: list[np.float64]) -> tuple[float, ...]:
        from autodiff_tutor.tracing import value_and_gradient

        _, grads = value_and_gradient(self.plain, *xs, wrt=list(range(len(xs))))
        return tuple(float(g) for g in grads)

    def _finite_differences(self, xs: list[np.float64]) -> tuple[float, ...]:
        from autodiff_tutor.verify.numeric import probe_input

        plain = self.plain

        class _Op:
            def op_forward(self, *inputs: Any) -> tuple[tuple[Any], None]:
                return (np.asarray(plain(*inputs), dtype=np.float64),), None

        inputs = tuple(np.asarray(x, dtype=np.float64) for x in xs)
        result, self.kinks = [], []
        for k, name in enumerate(self.names):
            (probe,) = probe_input(_Op(), inputs, (np.float64(1.0),), k, [0])
            result.append(float(probe.central))
            if probe.kink:
                self.kinks.append(name)
        return tuple(result)

    def _evaluate(self) -> None:
        xs = [np.float64(x) for x in self.point]
        with np.errstate(all="ignore"):
            self.function_value = self._value(*xs)
            methods = (self._compiler, self._tracing, self._finite_differences)
            for source, method in zip(SOURCES, methods, strict=True):
                try:
                    self.gradients[source] = method(xs)
                except Exception as exc:  # shown in the table: the student should see it
                    self.gradients[source] = _error_text(exc)

    # -- display ----------------------------------------------------------------------

    def _update(self, change: Any = None) -> None:
        self._evaluate()
        chosen = self.source_buttons.value
        rows, styles = [], []
        for source in SOURCES:
            found = self.gradients[source]
            cells = (
                [f"{g:.10g}" for g in found]
                if isinstance(found, tuple)
                else [_error_summary(found)] + [""] * (len(self.names) - 1)
            )
            rows.append([source, *cells])
            styles.append("font-weight:bold;background:#ffe680" if source == chosen else "")
        fn = html.escape(self.compiled.name)
        header = ["source", *(f"∂{fn}/∂{name}" for name in self.names)]
        point = ", ".join(f"{n} = {v:.4g}" for n, v in zip(self.names, self.point, strict=True))
        note = ""
        if self.kinks:
            note = (
                f"<br><i>finite differences: a kink at or next to this point in "
                f"{html.escape(', '.join(self.kinks))} (the slopes either side differ)</i>"
            )
        errors = "".join(
            f"<details><summary>{html.escape(source)} failed</summary>"
            # wrapped at word boundaries already; the panel scrolls, so carets stay aligned
            f'<pre style="white-space:pre;overflow-x:auto">{html.escape(found)}</pre></details>'
            for source, found in self.gradients.items()
            if isinstance(found, str)
        )
        self.values_html.value = (
            f"{fn}({html.escape(point)}) = {self.function_value:.10g}"
            + table_html(header, rows, styles=styles)
            + self._agreement()
            + note
            + errors
        )
        self._draw()
        self.image.value = self.plot.png()

    def _agreement(self) -> str:
        """Why the buttons give the same numbers: the two AD modes apply the same rules
        exactly (up to rounding); finite differences estimate the slope, to so many
        digits."""
        found = [self.gradients[source] for source in SOURCES]
        if not all(isinstance(g, tuple) for g in found):
            return ""
        compiler, tracing, differences = (np.asarray(g, dtype=float) for g in found)
        same = _digits(compiler, tracing)
        modes = "to the last digit" if same >= 16 else f"to {same} digits (rounding)"
        return (
            "<br><i>The compiler and tracing apply the same derivative rules, so they agree"
            f" {modes}; finite differences only estimate the slope from nearby values, and"
            f" agree here to about {_digits(compiler, differences)} digits.</i>"
        )

    def _draw(self) -> None:
        gradient = self.gradient
        if isinstance(self.plot, TangentPlot):
            slope = None if gradient is None else gradient[0]
            self.plot.update(self.point[0], self.function_value, slope)
            return
        gx, gy, _ = self._curve
        x0, y0 = self.point
        with np.errstate(all="ignore"):
            slices = (
                np.array([self._value(a, y0) for a in gx[0, :]]),
                np.array([self._value(x0, b) for b in gy[:, 0]]),
            )
        self.plot.update((x0, y0), self.function_value, gradient, slices)


derivative_explorer = DerivativeExplorer


def _digits(exact: np.ndarray, other: np.ndarray) -> int:
    """How many significant digits ``other`` shares with ``exact`` (16: all of them).

    >>> _digits(np.array([2.0]), np.array([2.0000001])), _digits(np.ones(2), np.ones(2))
    (7, 16)
    """
    error = float(np.max(np.abs(other - exact) / np.maximum(np.abs(exact), 1e-300)))
    return 16 if error == 0 else int(np.clip(np.floor(-np.log10(error)), 0, 16))
