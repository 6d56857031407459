"""Pictures for the derivative explorer: a function, its tangent, its gradient.

Figures are made with ``matplotlib.figure.Figure`` (no pyplot, so no global state
and no GUI backend), built once, updated in place when the point moves, and turned
into PNG bytes for an ``ipywidgets.Image`` (which keeps them in a notebook's saved
widget state).

>>> import numpy as np
>>> xs = np.linspace(-1.0, 1.0, 5)
>>> plot = TangentPlot("x", xs, xs**2, function="h")
>>> plot.update(point=0.5, value=0.25, slope=1.0)
>>> plot.panels[0].ax.get_title()
"h'(x) at x = 0.5: 1"
>>> plot.png()[:4]
b'\\x89PNG'
>>> (x0, x1), (y0, y1) = plot.tangent_data(0)
>>> float((y1 - y0) / (x1 - x0))
1.0
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["ContourPlot", "TangentPlot"]


class _Tangent:
    """One axes: a curve, a point on it, and the tangent through the point."""

    def __init__(self, ax: Axes, name: str, xs: np.ndarray, ys: np.ndarray | None, symbol: str):
        self.ax, self.name, self.symbol = ax, name, symbol
        self.window = (float(xs[-1]) - float(xs[0])) / 6
        self.curve = ax.plot(xs, np.full_like(xs, np.nan) if ys is None else ys, color="#1f77b4")[0]
        self.dot = ax.plot([], [], "o", color="#d62728", zorder=3)[0]
        self.tangent = ax.plot([], [], "--", color="#d62728")[0]
        ax.set_xlim(float(xs[0]), float(xs[-1]))
        ax.set_xlabel(name)
        ax.grid(alpha=0.3)

    def update(
        self, point: float, value: float, slope: float | None, ys: np.ndarray | None
    ) -> None:
        if ys is not None:
            self.curve.set_ydata(ys)
        self.dot.set_data([point], [value])
        if slope is not None and np.isfinite(slope):
            ts = np.array([point - self.window, point + self.window])
            self.tangent.set_data(ts, value + slope * (ts - point))
            self.ax.set_title(
                f"{self.symbol} at {self.name} = {point:.3g}: {slope:.6g}", fontsize=10
            )
        else:
            self.tangent.set_data([], [])
            self.ax.set_title(f"no {self.symbol} at {self.name} = {point:.3g}", fontsize=10)
        shown = np.asarray(self.curve.get_ydata(), dtype=float)
        finite = shown[np.isfinite(shown)]
        if finite.size:
            low, high = float(finite.min()), float(finite.max())
            if np.isfinite(value):
                low, high = min(low, value), max(high, value)
            pad = 0.1 * (high - low) + 1e-9
            self.ax.set_ylim(low - pad, high + pad)


class _Plot:
    figure: Figure
    panels: list[_Tangent]

    def png(self, dpi: int = 80) -> bytes:
        """The figure as PNG bytes."""
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png", dpi=dpi)
        return buffer.getvalue()

    def tangent_data(self, panel: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``(x, y)`` data of the tangent drawn on one panel (empty when none)."""
        line = self.panels[panel].tangent
        return np.asarray(line.get_xdata()), np.asarray(line.get_ydata())


class TangentPlot(_Plot):
    """A function of one input over ``xs``: the curve ``ys``, the point, the tangent."""

    def __init__(self, name: str, xs: np.ndarray, ys: np.ndarray, function: str = "f"):
        self.figure = Figure(figsize=(6, 3.4))
        FigureCanvasAgg(self.figure)
        self.figure.subplots_adjust(left=0.12, right=0.97, bottom=0.15, top=0.9)
        symbol = f"{function}'({name})"  # the explored function's own name: h'(x) for h
        self.panels = [_Tangent(self.figure.subplots(), name, xs, ys, symbol)]

    def update(self, point: float, value: float, slope: float | None) -> None:
        """Move the point and the tangent."""
        self.panels[0].update(point, value, slope, None)


class ContourPlot(_Plot):
    """A function of two inputs: filled contours with the gradient arrow, and the two
    slices through the point with their tangents (the partial derivatives)."""

    def __init__(self, names: Sequence[str], grid: tuple[np.ndarray, np.ndarray, np.ndarray]):
        gx, gy, gz = grid
        self.figure = Figure(figsize=(11, 3.4))
        FigureCanvasAgg(self.figure)
        self.figure.subplots_adjust(left=0.06, right=0.98, bottom=0.15, top=0.9, wspace=0.35)
        self.contour, slice_x, slice_y = self.figure.subplots(1, 3)
        filled = self.contour.contourf(gx, gy, np.ma.masked_invalid(gz), levels=20, cmap="viridis")
        self.figure.colorbar(filled, ax=self.contour)
        self.contour.set_aspect("equal", adjustable="box")  # so the arrow meets contours at 90°
        self.contour.set_xlabel(names[0])
        self.contour.set_ylabel(names[1])
        self.dot = self.contour.plot([], [], "o", color="#d62728")[0]
        self.arrow = self.contour.annotate(
            "",
            xy=(0, 0),
            xytext=(0, 0),
            arrowprops={"arrowstyle": "->", "color": "#d62728", "lw": 2},
        )
        self.span = min(float(gx.max() - gx.min()), float(gy.max() - gy.min()))
        self.panels = [
            _Tangent(slice_x, names[0], gx[0, :], None, f"∂f/∂{names[0]}"),
            _Tangent(slice_y, names[1], gy[:, 0], None, f"∂f/∂{names[1]}"),
        ]

    def update(
        self,
        point: tuple[float, float],
        value: float,
        gradient: tuple[float, float] | None,
        slices: tuple[np.ndarray, np.ndarray],
    ) -> None:
        """Move the point, the arrow, and the two slices with their tangents."""
        self.dot.set_data([point[0]], [point[1]])
        usable = gradient is not None and all(np.isfinite(gradient))
        norm = float(np.hypot(*gradient)) if usable else 0.0
        if usable and norm > 0:
            scale = 0.2 * self.span / norm
            self.arrow.xy = (point[0] + scale * gradient[0], point[1] + scale * gradient[1])
            self.arrow.set_position(point)
            self.arrow.set_visible(True)
        else:
            self.arrow.set_visible(False)
        title = f"gradient ({gradient[0]:.4g}, {gradient[1]:.4g})" if usable else "no gradient"
        self.contour.set_title(title, fontsize=10)
        for k, panel in enumerate(self.panels):
            slope = gradient[k] if gradient is not None else None
            panel.update(point[k], value, slope, slices[k])

    @property
    def arrow_direction(self) -> tuple[float, float] | None:
        """The drawn gradient arrow as ``(dx, dy)`` (``None`` when hidden)."""
        if not self.arrow.get_visible():
            return None
        (x1, y1), (x0, y0) = self.arrow.xy, self.arrow.get_position()
        return (x1 - x0, y1 - y0)
