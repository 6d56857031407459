"""The derivative explorer, driven by setting its sliders and source buttons."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from oracles import autograd_gradient, central_difference  # noqa: E402

from autodiff_tutor.errors import ArgumentError  # noqa: E402
from autodiff_tutor.widgets import derivative_explorer  # noqa: E402


def wave(x):
    return np.sin(x) * x


def bowl(x, y):
    return np.sin(x) * y + x * x


def relu(x):
    return np.maximum(x, 0.0)


def escapes(x):
    return float(x) * x


def three(x, y, z):
    return x * y * z


def power(x, n):
    y = x
    for _ in range(n - 1):
        y = y * x
    return y


def _bold_row(page):
    import re

    (source,) = re.findall(r'<tr style="font-weight:bold[^"]*"><td[^>]*>([^<]*)</td>', page)
    return source


def _slope(plot, panel=0):
    (x0, x1), (y0, y1) = plot.tangent_data(panel)
    return (y1 - y0) / (x1 - x0)


def test_one_input_slider_moves_the_tangent_and_the_values():
    explorer = derivative_explorer(wave, (-3.0, 3.0), start=1.0)
    assert explorer.point == (1.0,)
    before_png, before_html = explorer.image.value, explorer.values_html.value
    (g,) = explorer.gradient
    assert g == pytest.approx(np.sin(1.0) + np.cos(1.0), rel=1e-14)
    assert _slope(explorer.plot) == pytest.approx(g, rel=1e-9)
    # the tangent touches the curve at the point
    (x0, x1), (y0, y1) = explorer.plot.tangent_data(0)
    assert (y0 + y1) / 2 == pytest.approx(wave(1.0), rel=1e-12) and (x0 + x1) / 2 == 1.0

    explorer.sliders[0].value = -2.0
    (g2,) = explorer.gradient
    fd = central_difference(wave, [np.array(-2.0)], 0)
    assert g2 == pytest.approx(float(fd), rel=1e-7)
    assert g2 == pytest.approx(float(autograd_gradient(wave, [np.array(-2.0)], 0)), rel=1e-12)
    assert _slope(explorer.plot) == pytest.approx(g2, rel=1e-9)
    assert explorer.image.value != before_png and explorer.image.value[:4] == b"\x89PNG"
    assert explorer.values_html.value != before_html
    assert f"{g2:.10g}" in explorer.values_html.value
    assert explorer.function_value == pytest.approx(wave(-2.0))
    # the title names the explored function's derivative: wave'(x), not f'(x)
    assert explorer.plot.panels[0].ax.get_title().startswith("wave'(x) at x = -2")
    shown = explorer.values_html.value
    assert shown.startswith("wave(x = -2) =") and "∂wave/∂x" in shown
    # a word on why the three buttons give (nearly) the same number
    assert "same derivative rules" in shown and "agree here to about" in shown


def test_switching_the_source_shows_each_gradient():
    explorer = derivative_explorer(wave, (-3.0, 3.0), start=0.7)
    compiler = explorer.gradients["compiler"]
    # the table always shows the three values
    for source in ("compiler", "tracing", "finite differences"):
        assert f"{explorer.gradients[source][0]:.10g}" in explorer.values_html.value
    explorer.source_buttons.value = "finite differences"
    fd = explorer.gradient
    assert abs(fd[0] - compiler[0]) < 1e-6
    assert fd == explorer.gradients["finite differences"] and fd != compiler  # not a copy
    assert _bold_row(explorer.values_html.value) == "finite differences"
    assert _slope(explorer.plot) == pytest.approx(fd[0], rel=1e-9)
    explorer.source_buttons.value = "tracing"
    assert _bold_row(explorer.values_html.value) == "tracing"
    assert explorer.gradient[0] == pytest.approx(compiler[0], rel=1e-14)


def test_two_inputs_contours_arrow_and_slices():
    explorer = derivative_explorer(bowl, [(-2.0, 2.0), (-1.0, 3.0)], start=(0.5, 2.0))
    gx, gy = explorer.gradient
    assert gx == pytest.approx(np.cos(0.5) * 2.0 + 1.0, rel=1e-14)
    assert gy == pytest.approx(np.sin(0.5), rel=1e-14)
    dx, dy = explorer.plot.arrow_direction
    assert dx / dy == pytest.approx(gx / gy, rel=1e-9)  # the arrow points along the gradient
    assert _slope(explorer.plot, 0) == pytest.approx(gx, rel=1e-9)
    assert _slope(explorer.plot, 1) == pytest.approx(gy, rel=1e-9)
    explorer.sliders[1].value = -0.5  # moving y changes d/dx
    gx2, gy2 = explorer.gradient
    assert gx2 == pytest.approx(np.cos(0.5) * -0.5 + 1.0, rel=1e-12)
    assert gy2 == pytest.approx(gy, rel=1e-12)
    assert _slope(explorer.plot, 0) == pytest.approx(gx2, rel=1e-9)
    explorer.source_buttons.value = "finite differences"
    assert np.allclose(explorer.gradient, (gx2, gy2), atol=1e-6)


def test_kinks_and_errors_are_shown_not_raised():
    on_kink = derivative_explorer(relu, (-1.0, 1.0), start=0.0)
    assert on_kink.kinks == ["x"] and "kink" in on_kink.values_html.value
    on_kink.sliders[0].value = 0.5
    assert on_kink.kinks == [] and on_kink.gradient == (1.0,)

    escaped = derivative_explorer(escapes, start=1.5)
    assert escaped.gradient is None  # the compiler refuses float(x)
    assert escaped.gradients["compiler"].startswith("GradientEscapeError")
    assert escaped.gradients["tracing"].startswith("TracingEscapeError")
    assert "GradientEscapeError" in escaped.values_html.value
    assert escaped.plot.tangent_data(0)[0].size == 0  # no tangent drawn
    escaped.source_buttons.value = "finite differences"
    assert escaped.gradient[0] == pytest.approx(3.0, rel=1e-9)
    assert escaped.plot.tangent_data(0)[0].size == 2


def test_arguments_are_checked():
    with pytest.raises(ArgumentError, match="one or two scalars"):
        derivative_explorer(three)
    with pytest.raises(ArgumentError, match="fixed="):
        derivative_explorer(power)  # n is an input too, and range() refuses a float
    explorer = derivative_explorer(power, (0.5, 2.0), start=1.5, fixed={"n": 3})
    assert explorer.gradient[0] == pytest.approx(3 * 1.5**2, rel=1e-12)
    with pytest.raises(ArgumentError, match="low < high"):
        derivative_explorer(wave, (2.0, -2.0))
    with pytest.raises(ArgumentError, match="2 pair"):
        derivative_explorer(bowl, (-1.0, 1.0))
    with pytest.raises(ArgumentError, match="source"):
        derivative_explorer(wave, source="symbolic")
    with pytest.raises(ArgumentError, match="start"):
        derivative_explorer(wave, start=(1.0, 2.0))


def test_explorer_repr_names_the_point_and_the_source():
    explorer = derivative_explorer(bowl, start=(0.5, 2.0), source="tracing")
    assert repr(explorer) == "<derivative explorer of bowl at x=0.5, y=2: tracing>"
