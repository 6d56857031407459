"""The code view and the backward stepper, driven from Python as a student would click."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest
from oracles import autograd_gradient, central_difference

from autodiff_tutor import differentiable, grad
from autodiff_tutor.widgets import backward_stepper, code_view
from autodiff_tutor.widgets.render import highlighted_lines


@differentiable
def loss(W, b, X):
    h = np.tanh(X @ W + b)
    return np.sum(h * h)


@differentiable
def power(x, n):
    y = x
    for _ in range(n - 1):
        y = y * x
    if y > 0:
        z = np.sin(y)
    else:
        z = y * 2
    return z


def _file_line(view, text):
    lines = view.correspondence
    for k, line in enumerate(lines.user_lines):
        if line.strip() == text:
            return lines.first_line + k
    raise AssertionError(f"{text!r} not in the user's source")


def _strip_comment(line: str) -> str:
    return line.split("#")[0].strip()


def test_code_view_highlights_the_lines_of_the_chosen_user_line():
    view = code_view(loss)
    tanh_line = _file_line(view, "h = np.tanh(X @ W + b)")
    sum_line = _file_line(view, "return np.sum(h * h)")
    assert {value for _, value in view.line_picker.options} >= {tanh_line, sum_line}

    view.line_picker.value = tanh_line
    first = view.highlighted
    assert first["user"] == ["    h = np.tanh(X @ W + b)"]
    assert [_strip_comment(t) for t in first["forward"]] == [
        "t1 = X @ W",
        "t2 = t1 + b",
        "h = np.tanh(t2)",
    ]
    assert {_strip_comment(t).split(" =")[0] for t in first["backward"]} == {
        "d_t2",
        "d_t1",
        "d_b",
        "d_X",
        "d_W",
    }
    # every highlighted backward line names the chosen user line in its comment
    assert all(f"# line {tanh_line}:" in t for t in first["backward"])

    view.line_picker.value = sum_line
    second = view.highlighted
    assert second["user"] == ["    return np.sum(h * h)"]
    assert {_strip_comment(t).split(" =")[0] for t in second["backward"]} == {"d_t3", "d_h"}
    assert all(f"# line {sum_line}:" in t for t in second["backward"])
    assert view.summary.count(str(sum_line)) >= 1

    view.line_picker.value = 0  # "(none)"
    assert view.highlighted == {"user": [], "forward": [], "backward": []}


def test_code_view_covers_every_commented_backward_line():
    """Each backward line with a 'line N:' comment is reachable from the picker."""
    view = code_view(power, wrt="x")
    commented = [
        line for line in view.correspondence.backward_source.splitlines() if "# line " in line
    ]
    seen = []
    for _, value in view.line_picker.options:
        view.line_picker.value = value
        seen += view.highlighted["backward"]
    assert sorted(set(commented)) == sorted({t for t in seen if "#" in t})
    # the rest are the backward's own 'if'/'else'/'for' headers, highlighted with the
    # user's branch or loop they replay (the generated code has no comment on them)
    headers = [t.strip() for t in seen if "#" not in t]
    assert headers and all(t.endswith(":") for t in headers)
    assert "if t2:" in headers and "else:" in headers


def test_code_view_wrt_changes_the_backward():
    only_w = code_view(loss, wrt="W").correspondence.backward_source
    assert "d_W" in only_w and "d_X" not in only_w


def test_stepper_slider_moves_the_highlight_and_the_values():
    x = np.array([[0.3, -0.2], [0.1, 0.4]])
    W, b = np.array([0.5, -1.0]), np.array(0.1)
    stepper = backward_stepper(loss, W, b, x)
    executed = [step.number for step in stepper.recording.steps]
    assert len(executed) == stepper.slider.max
    source = stepper.correspondence.backward_source.splitlines()
    seen_lines, seen_values = [], []
    for value in range(1, stepper.slider.max + 1):
        stepper.slider.value = value
        assert stepper.current_line == source[executed[value - 1] - 1]
        seen_lines.append(stepper.current_line)
        seen_values.append(sorted(stepper.values))
        assert highlighted_lines(stepper.backward_html) == [stepper.current_line]
    assert len(set(seen_lines)) == len(seen_lines)  # straight-line code: each line once
    # the set of gradients computed so far grows as the slider moves
    assert seen_values[0] == ["d_out"]
    assert len(seen_values[-1]) > len(seen_values[1]) > 1
    # at the end, the values equal what grad returns
    final = stepper.values
    dW, db, dX = grad(loss, wrt=[0, 1, 2])(W, b, x)
    np.testing.assert_allclose(final["d_W"], dW, rtol=1e-12)
    np.testing.assert_allclose(final["d_b"], db, rtol=1e-12)
    np.testing.assert_allclose(final["d_X"], dX, rtol=1e-12)
    for got, want in zip(stepper.gradients, (dW, db, dX), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    # and both agree with the oracles
    plain = loss.fn
    for index, name in enumerate(["d_W", "d_b", "d_X"]):
        args = [W, b, x]
        np.testing.assert_allclose(final[name], central_difference(plain, args, index), atol=1e-8)
        np.testing.assert_allclose(final[name], autograd_gradient(plain, args, index), rtol=1e-10)


def test_stepper_shows_the_changed_values_and_the_users_line():
    stepper = backward_stepper(loss, np.array([0.5, -1.0]), np.array(0.1), np.ones((2, 2)))
    line = next(i for i, s in enumerate(stepper.recording.steps, 1) if "d_h" in s.changed)
    stepper.slider.value = line
    assert stepper.current_line.strip().startswith("d_h = ")
    assert "return np.sum(h * h)" in highlighted_lines(stepper.user_html)[0]
    assert "d_h" in stepper.values_html and "changed by this line: d_h" in stepper.values_html
    stepper.slider.value = line - 1
    assert "d_h" not in stepper.values


def test_stepper_follows_loops_iteration_by_iteration():
    x = 1.5
    stepper = backward_stepper(power, x, 4)  # y = x**4, then sin(y)
    texts = [
        stepper.correspondence.backward_text(s.number).strip() for s in stepper.recording.steps
    ]
    pops = [t for t in texts if t.startswith("(y_2,) = stack.pop()")]
    assert len(pops) == 3  # three iterations, replayed in reverse
    assert not any("d_z_2 = d_z_3" in t for t in texts)  # the else branch did not run
    # d_x grows over the loop's iterations; its values are snapshots, not one shared array
    d_x_values = [s.gradients["d_x"] for s in stepper.recording.steps if "d_x" in s.changed]
    assert len(d_x_values) == 5  # zeros, three loop updates, the last 'y = x'
    assert len({float(v) for v in d_x_values}) == 5
    expected = 4 * x**3 * np.cos(x**4)
    fd = central_difference(lambda v: power.fn(v, 4), [np.array(x)], 0)
    assert expected == pytest.approx(float(fd), rel=1e-7)
    assert float(stepper.gradients[0]) == pytest.approx(expected, rel=1e-12)
    stepper.slider.value = stepper.slider.max
    assert float(stepper.values["d_x"]) == pytest.approx(expected, rel=1e-12)
    # the other branch, taken for a negative y
    other = backward_stepper(power, -1.5, 3)
    others = [other.correspondence.backward_text(s.number) for s in other.recording.steps]
    assert any("d_z_2 = d_z_3" in t for t in others)
    assert float(other.gradients[0]) == pytest.approx(2 * 3 * 1.5**2, rel=1e-12)


def test_stepper_restores_an_existing_trace_function():
    import sys

    calls = []

    def tracer(frame, event, arg):
        calls.append(event)
        return None

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        backward_stepper(power, 1.5, 2)
        assert sys.gettrace() is tracer
    finally:
        sys.settrace(previous)


def test_stepper_errors_are_clear():
    from autodiff_tutor.errors import (
        ArgumentError,
        NonDifferentiableInputError,
        NonScalarOutputError,
    )

    @differentiable
    def vector(x):
        return 2 * x

    with pytest.raises(NonScalarOutputError, match="seed="):
        backward_stepper(vector, np.ones(3))
    stepper = backward_stepper(vector, np.ones(3), seed=np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(stepper.gradients[0], [2.0, 4.0, 6.0])
    with pytest.raises(ArgumentError, match="shape"):
        backward_stepper(vector, np.ones(3), seed=np.ones(2))
    with pytest.raises(NonDifferentiableInputError):
        backward_stepper(vector, np.arange(3))


def test_views_have_short_stable_reprs():
    """Notebooks show the repr as text/plain: short, without addresses or trace ids."""
    view = code_view(loss)
    assert repr(view) == f"<code view of loss: line {view.line_picker.value}>"
    stepper = backward_stepper(power, 1.5, 2)
    stepper.slider.value = 2
    assert repr(stepper) == f"<backward stepper of power: step 2 of {stepper.slider.max}>"


def test_stepper_pages_follow_the_slider_without_a_kernel():
    """Each step is a page of a Stack linked to the slider in the browser (the book's
    saved widgets move with no kernel); the slider leads Play, and every page numbers
    the backward so that "backward line k" can be found."""
    stepper = backward_stepper(loss, np.array([0.5, -1.0]), np.array(0.1), np.ones((2, 2)))
    steps = len(stepper.recording.steps)
    assert stepper.prerendered and len(stepper.pages) == steps
    stepper.slider.value = 3
    assert stepper.view.selected_index == 3 and stepper.play.value == 3
    page = stepper.pages[2].value
    number = stepper.recording.steps[2].number
    assert f"step 3 of {steps}" in page and f"backward line {number}" in page
    assert highlighted_lines(stepper.backward_html) == [stepper.current_line]
    numbered = re.findall(r"data-lineno>\s*(\d+)\s*</span>", stepper.backward_html)
    lines = stepper.correspondence.backward_source.splitlines()
    assert [int(n) for n in numbered] == list(range(1, len(lines) + 1))
    assert "white-space:pre" in page and "table-layout:fixed" in page


def test_code_view_pages_follow_the_picker_without_a_kernel():
    """One page per choice, in a Stack that the drop-down's index picks in the browser."""
    view = code_view(loss)
    assert len(view.pages) == len(view.line_picker.options)
    for index, (_, value) in enumerate(view.line_picker.options):
        view.line_picker.value = value
        assert view.view.selected_index == index
        assert view.pages[index].value.count("generated backward") == 1
        assert highlighted_lines(view.pages[index].value) == (
            view.highlighted["user"] + view.highlighted["forward"] + view.highlighted["backward"]
        )


def test_a_compiled_functions_display_numbers_its_panels_and_never_wraps_code():
    """f in a notebook cell: your lines numbered as the comments name them, the
    generated code numbered from 1, each panel scrolling sideways (white-space: pre)."""
    from autodiff_tutor import differentiable
    from autodiff_tutor.display import generated_code_html

    def layer(w, x):
        h = np.tanh(x @ w + 1.0)
        return np.sum(h * h)

    compiled = differentiable(layer)
    page = compiled._repr_html_()
    assert page == generated_code_html(compiled)
    numbers = [int(n) for n in re.findall(r"data-lineno>\s*(\d+)\s*</span>", page)]
    first = layer.__code__.co_firstlineno
    derivative = compiled.derivative()
    forward = len(derivative.forward_source.rstrip("\n").splitlines())
    backward = len(derivative.backward_source.rstrip("\n").splitlines())
    assert numbers == [
        *range(first, first + 3),
        *range(1, forward + 1),
        *range(1, backward + 1),
    ]
    for comment in re.findall(r"# line (\d+)", html.unescape(re.sub(r"<[^>]+>", "", page))):
        assert first <= int(comment) < first + 3  # every comment names a numbered line
    assert page.count("white-space:pre;overflow-x:auto") == 3
