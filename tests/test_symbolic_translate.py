"""The numpy -> sympy translator: what it reads, and clear located errors for the rest."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import sympy as sp

from autodiff_tutor.errors import TranslationError
from autodiff_tutor.verify.symbolic import verify_symbolic
from autodiff_tutor.verify.symbolic.translate import translate_function

x, t, g = sp.symbols("x t g", real=True)


def _line_of(fn, text: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def masks_and_where(x, t):
    a = (x <= t) * (x - t)
    b = np.where((x > 0) & (x < 1), x, 0.0)
    c = np.clip(x, -1, t) + np.maximum(x, t) - np.minimum(x, 0) + abs(x) * np.sign(x)
    return a + b + c


def masked_assignment(d_y, x):
    d_x = 0.5 * d_y
    d_x[x > 0] = d_y[x > 0]
    return d_x


def shape_changes(x, t):
    y = np.reshape(x, (-1,)).T[..., None]
    return y.astype(np.float32) * t.reshape(1, -1)


def test_masks_where_clip_and_kinks_translate() -> None:
    value = translate_function(masks_and_where, [x, t]).value
    for point in [(-2.0, 0.5), (0.3, 0.5), (0.7, 0.5), (3.0, 1.5), (-0.5, -1.0)]:
        expected = masks_and_where(np.array(point[0]), np.array(point[1]))
        assert float(value.subs({x: point[0], t: point[1]})) == pytest.approx(float(expected))


def test_masked_assignment_is_a_where() -> None:
    value = translate_function(masked_assignment, [g, x]).value
    assert float(value.subs({x: 2.0, g: 3.0})) == 3.0
    assert float(value.subs({x: -2.0, g: 3.0})) == 1.5


def test_shape_operations_leave_an_element_unchanged() -> None:
    assert translate_function(shape_changes, [x, t]).value == x * t


def loop_with_work(x):
    y = x
    for _ in range(3):
        y = y * x
    return y


def picks_an_element(x):
    return x[0] * 2


def branches_on_values(x):
    if x > 0:
        return x
    return 0 * x


def unknown_helper(x):
    return my_helper(x)  # noqa: F821


def my_helper(x):  # pragma: no cover - only its name matters
    return x


def sum_used_further(x):
    total = np.sum(x)
    return x * total


def matrix_product(x, t):
    return x @ t


def mixes_elements(x):
    return x - np.mean(x)


def in_place(x):
    y = x.copy()
    y.fill(0)
    return y


@pytest.mark.parametrize(
    ("fn", "line_text", "words"),
    [
        (loop_with_work, "for _ in range(3)", "For statement"),
        (picks_an_element, "x[0] * 2", "picks particular elements"),
        (branches_on_values, "if x > 0", "branch on array values"),
        (unknown_helper, "my_helper(x)", "my_helper"),
        (sum_used_further, "x * total", "is used in further computation"),
        (matrix_product, "x @ t", "MatMult"),
        (mixes_elements, "np.mean(x)", "mixes elements"),
        (in_place, "y.fill(0)", "in-place update"),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_untranslatable_code_is_refused_with_the_construct_and_line(fn, line_text, words) -> None:
    args = [x, t][: len(inspect.signature(fn).parameters)]
    with pytest.raises(TranslationError) as info:
        translate_function(fn, args)
    error = info.value
    assert words in str(error)
    assert error.lineno == _line_of(fn, line_text)
    assert f"line {error.lineno}" in error.message
    assert line_text in error.location.text


def test_a_sum_as_the_last_step_is_read_per_element_and_noted() -> None:
    def total(x, t):
        return np.sum((x > t) * x)

    result = translate_function(total, [x, t])
    assert result.value == x * sp.Piecewise((1, x > t), (0, True))
    assert any("read as a sum" in note for note in result.notes)


def test_source_strings_and_the_memory_layout() -> None:
    forward = "def f(x):\n    mask = x > 0\n    return x * mask, (mask,)\n"
    backward = "def f_backward(d_out, memory):\n    (mask,) = memory\n    return (d_out * mask,)\n"
    report = verify_symbolic(forward, backward, layout="memory")
    assert report.passed and report.region_names() == ["x < 0", "x > 0"]
    wrong = backward.replace("d_out * mask", "d_out * (1 - mask)")
    assert not verify_symbolic(forward, wrong, layout="memory").passed


def test_a_student_pair_in_the_inputs_layout() -> None:
    def softplus_like(x):
        return np.where(x > 0, x + np.log1p(np.exp(-x)), np.log1p(np.exp(x)))

    def softplus_like_backward(d_y, x):
        return d_y * np.where(x > 0, 1 / (1 + np.exp(-x)), np.exp(x) / (1 + np.exp(x)))

    report = verify_symbolic(softplus_like, softplus_like_backward)
    assert report.passed, report.text()
    assert {c.verdict for c in report.regions} <= {"proved", "numeric"}


def test_errors_from_the_algebra_get_the_line_too() -> None:
    weights = np.ones(3)

    def uses_a_global_array(x):
        return x * weights

    with pytest.raises(TranslationError) as info:
        translate_function(uses_a_global_array, [x])
    assert info.value.lineno == _line_of(uses_a_global_array, "x * weights")


def test_identity_tests_on_values_are_python_identity() -> None:
    def backward(d_y, x):
        d_x = d_y * (x > 0)
        if d_x is not None:
            return d_x
        return None

    assert translate_function(backward, [g, x]).value == g * sp.Piecewise((1, x > 0), (0, True))


def test_a_wrong_number_of_gradients_is_a_clear_error() -> None:
    def f(x, t):
        return x * t

    def f_backward(d_y, x, t):
        return d_y * t

    with pytest.raises(TranslationError, match="returns 1 value"):
        verify_symbolic(f, f_backward)
