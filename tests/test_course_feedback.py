"""Exercise feedback: each verdict is reached, the messages say what is wrong, and the
oracle (finite differences) is independent of the student's code."""

import re

import numpy as np
import pytest

from autodiff_tutor.course import (
    ExerciseNotPassed,
    Feedback,
    check_choice,
    check_derivative,
    check_function,
    check_value,
    require,
)
from autodiff_tutor.course.feedback import VERDICTS


def test_value_verdicts():
    assert check_value(2.0, 2.0).verdict == "correct"
    assert check_value(..., 2.0).verdict == "missing"
    assert check_value(None, 2.0).verdict == "missing"
    wrong = check_value(2.1, 2.0, name="slope", hint="differentiate the outer function")
    assert wrong.verdict == "wrong" and not wrong
    assert "it is 2.1, expected 2" in wrong.message
    assert "Hint: differentiate the outer function" in wrong.message


def test_value_shape_type_and_nan_are_named():
    assert "shape (3,), expected shape (2,)" in check_value(np.ones(3), np.ones(2)).message
    assert "it is the text 'two', not a number" in check_value("two", 2.0).message
    assert "NaN" in check_value(np.array([np.nan]), np.array([1.0])).message
    assert "element [1, 0]" in check_value(np.eye(2), np.array([[1.0, 0], [5, 1]])).message


def test_value_tolerance():
    assert check_value(1.0 + 1e-9, 1.0).passed
    assert not check_value(1.0 + 1e-3, 1.0).passed
    assert check_value(1.0 + 1e-3, 1.0, rtol=1e-2).passed


def test_function_verdicts():
    def reference(x):
        return 3 * x

    assert check_function(lambda x: x * 3, reference, [1.0, -2.0]).passed
    assert check_function(None, reference, [1.0]).verdict == "missing"
    unfinished = check_function(lambda x: ..., reference, [1.0])
    assert unfinished.verdict == "missing" and "still returns ..." in unfinished.message
    half_done = check_function(lambda x: (3 * x, ...), lambda x: (3 * x, x), [1.0])
    assert half_done.verdict == "missing" and "still returns ..." in half_done.message
    assert check_value((1.0, ...), (1.0, 2.0)).verdict == "missing"
    no_return = check_function(lambda x: None, reference, [1.0])
    assert no_return.verdict == "missing" and "return missing" in no_return.message
    raised = check_function(lambda x: 1 / 0, reference, [1.0])
    assert raised.verdict == "error" and "ZeroDivisionError" in raised.message
    wrong = check_function(lambda x: x * x, reference, [3.0, 2.0])
    assert wrong.verdict == "wrong" and "at x = 2" in wrong.message


def test_function_with_several_arguments():
    fb = check_function(lambda a, b: a - b, lambda a, b: a + b, [(1.0, 0.0), (1.0, 2.0)])
    assert fb.verdict == "wrong" and "at (1, 2)" in fb.message


def test_derivative_against_finite_differences():
    def f(x):
        return np.sum(np.sin(x) * x)

    def right(x):
        return np.cos(x) * x + np.sin(x)

    def wrong(x):
        return np.cos(x) * x  # product rule: second term forgotten

    points = [np.array([0.3, -1.2]), np.array([2.0, 0.5])]
    assert check_derivative(right, f, points).passed
    fb = check_derivative(wrong, f, points)
    assert fb.verdict == "wrong" and "element [" in fb.message
    # the oracle agrees with the closed form, independently of the student's function
    from autodiff_tutor.verify import numerical_gradient

    for x in points:
        np.testing.assert_allclose(numerical_gradient(f, x)[0], right(x), rtol=1e-8)


def test_feedback_renders_text_and_html():
    fb = Feedback("ex 1", "wrong", "a < b")
    assert str(fb) == "❌ ex 1: not yet — a < b"
    assert "&lt;" in fb._repr_html_() and "ex 1" in fb._repr_html_()


@pytest.mark.parametrize("verdict", sorted(VERDICTS))
def test_a_verdict_is_said_in_words_not_by_its_mark_or_colour_alone(verdict):
    """With no emoji font and no colour, the text still says which verdict it is."""
    fb = Feedback("ex 1", verdict, "details")
    word = "correct" if verdict == "correct" else "not yet"
    plain = str(fb).replace(VERDICTS[verdict], "")
    assert plain.strip().startswith(f"ex 1: {word}")
    page = re.sub(r"<[^>]+>", "", fb._repr_html_()).replace(VERDICTS[verdict], "")
    assert page.strip().startswith(f"ex 1: {word}")
    with pytest.raises(ValueError, match="verdict"):
        Feedback("x", "maybe", "")


def test_choice_verdicts():
    assert check_choice({"b", "a"}, {"a", "b"}).passed
    assert check_choice(["a", "b"], {"a", "b"}).passed
    assert check_choice(..., {"a"}).verdict == "missing"
    partial = check_choice({"a", "x", "y"}, {"a", "b"})
    assert partial.verdict == "wrong"
    assert partial.message == "1 right, 1 missing, 2 that do not belong."
    assert "give a set" in check_choice("a", {"a"}).message
    assert check_choice("compiler", "compiler").passed
    assert "'tracing' is not it" in check_choice("tracing", "compiler").message


def test_text_is_not_a_number_even_when_numpy_reads_it_as_one():
    for typed in ("0.5", ["0.5", 1.0], np.array(["0.5"])):
        feedback = check_value(typed, 0.5 if isinstance(typed, str) else [0.5, 1.0][: len(typed)])
        assert feedback.verdict == "wrong"
        assert "not a number: a number is written without quotes" in feedback.message
    assert "the text '0.5'" in check_value("0.5", 0.5).message
    assert check_value(0.5, 0.5).verdict == "correct"


def test_require_passes_silently_and_raises_with_every_failing_feedback():
    """What a graded release's hidden tests call: no exception for correct answers; an
    AssertionError (the autograder's failure) whose message is each failing feedback."""
    require(check_value(0.5, 0.5, name="a"), check_choice("x", "x", name="b"))
    with pytest.raises(ExerciseNotPassed) as raised:
        require(
            check_value(0.5, 0.5, name="right"),
            check_value(0.4, 0.5, name="wrong"),
            check_value(..., 0.5, name="missing"),
        )
    assert isinstance(raised.value, AssertionError)
    lines = str(raised.value).splitlines()
    assert lines == [
        "❌ wrong: not yet — it is 0.4, expected 0.5.",
        "✏️ missing: not yet — no answer yet; replace the ... with your answer.",
    ]


def test_a_function_that_still_raises_not_implemented_is_missing_not_an_error():
    """The skeleton of an exercise raises NotImplementedError("your code here")."""

    def unwritten(x):
        raise NotImplementedError("your code here")

    feedback = check_function(unwritten, np.sin, [0.5])
    assert feedback.verdict == "missing" and "not written yet" in feedback.message
    feedback = check_derivative(unwritten, np.sin, [0.5])
    assert feedback.verdict == "missing"


@pytest.mark.parametrize(
    ("right", "f", "x"),
    [
        (lambda x: 0.5 / np.sqrt(x), np.sqrt, 1e-4),
        (lambda x: 1 / x, np.log, 1e-3),
        (lambda x: 1000 * np.cos(1000 * x), lambda x: np.sin(1000 * x), 1.7),
    ],
)
def test_derivative_exact_answers_near_a_domain_edge_or_fast_are_correct(right, f, x):
    """The exact derivative passes; off by one part in 10**4 it fails."""
    assert check_derivative(right, f, [x]).passed
    fb = check_derivative(lambda v: right(v) * (1 + 1e-4), f, [x])
    assert fb.verdict == "wrong" and "expected" in fb.message


def test_derivative_where_f_is_not_finite_cannot_be_checked():
    """No oracle at log(-1): never "correct", even for an answer that is nan there too."""
    with np.errstate(all="ignore"):
        for answer in (lambda x: 1 / x, lambda x: np.log(x)):
            fb = check_derivative(answer, np.log, [-1.0, 2.0])
            assert fb.verdict == "error" and not fb.passed
            assert "could not check at x = -1" in fb.message
