"""Automatic feedback on exercises: compare a student's value or function with an oracle.

Every check returns a :class:`Feedback`: a verdict (``correct``, ``wrong``,
``missing`` when nothing was written yet, ``error`` when the student's code raised or
the answer could not be checked)
and a friendly message. It prints as a line that says the verdict in words
("correct", "not yet") after its mark, renders with a coloured border in a notebook
(the colour and the mark are extra cues, never the only one), and is truthy only
when the answer is correct, so a lesson can ``assert`` on a worked solution. The
checks never raise on a wrong answer: an exercise cell must run.

The expected values come from oracles the student's code does not control: a value
the lesson computed another way (sympy, a closed form), or central finite differences
in float64 (:func:`~autodiff_tutor.verify.numerical_gradient`).

>>> import numpy as np
>>> print(check_value(6.0, 6.0, name="f'(3)"))
✅ f'(3): correct.
>>> print(check_value(..., 6.0, name="f'(3)"))
✏️ f'(3): not yet — no answer yet; replace the ... with your answer.
>>> bool(check_derivative(lambda x: 2 * x, lambda x: x * x, [0.5, 3.0]))
True
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from autodiff_tutor.errors import wrap

__all__ = [
    "VERDICTS",
    "WORDS",
    "ExerciseNotPassed",
    "Feedback",
    "check_choice",
    "check_derivative",
    "check_function",
    "check_value",
    "require",
]

#: The verdicts, with the mark each one prints.
VERDICTS = {"correct": "✅", "wrong": "❌", "missing": "✏️", "error": "💥"}
#: The words that say each verdict: the mark and the colour are extra cues (a missing
#: emoji font, a colour-blind reader and a screen reader get the word).
WORDS = {"correct": "correct", "wrong": "not yet", "missing": "not yet", "error": "not yet"}
_COLOURS = {"correct": "#1a7f37", "wrong": "#cf222e", "missing": "#6e7781", "error": "#9a6700"}


@dataclass(frozen=True)
class Feedback:
    """The outcome of one exercise check: ``verdict`` (a key of :data:`VERDICTS`).

    >>> fb = Feedback("slope", "wrong", "off by 1.0")
    >>> fb.passed, str(fb)
    (False, '❌ slope: not yet — off by 1.0')
    >>> str(Feedback("slope", "correct", ""))
    '✅ slope: correct.'
    """

    exercise: str
    verdict: str
    message: str

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {list(VERDICTS)}, got {self.verdict!r}")

    @property
    def passed(self) -> bool:
        """True only for a correct answer."""
        return self.verdict == "correct"

    def __bool__(self) -> bool:
        return self.passed

    @property
    def sentence(self) -> str:
        """The verdict in words, then the message: ``"not yet — off by 1.0"``."""
        return WORDS[self.verdict] + (f" — {self.message}" if self.message else ".")

    def __str__(self) -> str:
        return wrap(f"{VERDICTS[self.verdict]} {self.exercise}: {self.sentence}")

    def _repr_html_(self) -> str:
        colour = _COLOURS[self.verdict]
        text = html.escape(self.message).replace("\n", "<br>")
        text = f" — {text}" if text else "."
        return (
            f'<div style="border-left:4px solid {colour};padding:0.3em 0.8em">'
            f"{VERDICTS[self.verdict]} <b>{html.escape(self.exercise)}</b>: "
            f'<b style="color:{colour}">{WORDS[self.verdict]}</b>{text}</div>'
        )

    def __repr__(self) -> str:
        return str(self)


class ExerciseNotPassed(AssertionError):
    """An exercise's hidden test did not pass: its message is the feedback that says why.

    An ``AssertionError``, so an autograder (nbgrader) counts the cell as failed and
    shows the message in the student's feedback.
    """


def require(*feedback: Feedback) -> None:
    """Raise :class:`ExerciseNotPassed` unless every check passed.

    The hidden tests of a graded release call it on the course's checks: a check never
    raises (an exercise cell must run for the student), a hidden test must, so that the
    autograder withholds the points; the message keeps each failing check's feedback
    (where it differs, and by how much).

    >>> require(check_value(0.5, 0.5, name="slope"))
    >>> require(check_value(0.4, 0.5, name="slope"))
    Traceback (most recent call last):
    ...
    autodiff_tutor.course.feedback.ExerciseNotPassed: ❌ slope: not yet — it is 0.4, expected 0.5.
    """
    failing = [str(f) for f in feedback if not f.passed]
    if failing:
        raise ExerciseNotPassed("\n".join(failing))


def _is_missing(value: Any) -> bool:
    return value is None or value is Ellipsis


def _has_ellipsis(value: Any) -> bool:
    """Whether ``...`` is still somewhere in an answer (a tuple of gradients, say)."""
    if value is Ellipsis:
        return True
    return isinstance(value, (tuple, list)) and any(_has_ellipsis(v) for v in value)


def describe_error(exc: BaseException) -> str:
    """An error as its type and the first line of its message, for a feedback line.

    >>> describe_error(ValueError("shapes (2,) and (3,) differ\\nmore detail"))
    'ValueError: shapes (2,) and (3,) differ'
    """
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _as_float_array(value: Any) -> np.ndarray | None:
    """``value`` as a float64 numpy array, or ``None`` when it is not numeric (text is
    not, though numpy reads ``"0.5"`` as 0.5: a student who typed the quotes has not
    written a number)."""
    if hasattr(value, "get") and type(value).__module__.startswith("cupy"):
        value = value.get()
    if _holds_text(value):
        return None
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return array


def _holds_text(value: Any) -> bool:
    """Whether ``value`` is a string or bytes, or a list or array holding one."""
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):  # ragged: its entries are not all of one kind
        return any(_holds_text(v) for v in value) if isinstance(value, (list, tuple)) else False
    if raw.dtype.kind in "SU":
        return True
    return raw.dtype.kind == "O" and any(isinstance(v, (str, bytes)) for v in raw.flat)


def compare(answer: Any, expected: Any, rtol: float = 1e-6, atol: float = 1e-9) -> str | None:
    """Why ``answer`` differs from ``expected`` (``None`` when they agree).

    >>> compare([1.0, 2.0], [1.0, 2.5])
    'element [1] is 2, expected 2.5'
    >>> compare(1.0, [1.0, 2.0])
    'it has shape (), expected shape (2,)'
    >>> compare("0.5", 0.5)
    "it is the text '0.5', not a number: a number is written without quotes"
    """
    got, want = _as_float_array(answer), _as_float_array(expected)
    if want is None:
        raise TypeError(f"the expected value {expected!r} is not numeric")
    if got is None and _holds_text(answer):
        what = f"the text {answer!r}" if isinstance(answer, (str, bytes)) else "text"
        return f"it is {what}, not a number: a number is written without quotes"
    if got is None:
        return f"it is a {type(answer).__name__}, expected a number or an array"
    if got.shape != want.shape:
        return f"it has shape {got.shape}, expected shape {want.shape}"
    if np.isnan(got).any() and not np.isnan(want).any():
        return "it contains NaN"
    close = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return None
    index = np.unravel_index(int(np.argmin(close)), got.shape)
    where = f"element {[int(i) for i in index]} is" if got.shape else "it is"
    return f"{where} {got[index]:.6g}, expected {want[index]:.6g}"


def check_value(
    answer: Any,
    expected: Any,
    *,
    name: str = "answer",
    rtol: float = 1e-6,
    atol: float = 1e-9,
    hint: str = "",
) -> Feedback:
    """Compare a number or array with the expected one (relative/absolute tolerance).

    >>> print(check_value([1.0, 2.0], [1.0, 2.5], name="gradient", hint="use the chain rule"))
    ❌ gradient: not yet — element [1] is 2, expected 2.5. Hint: use the chain rule
    """
    if _is_missing(answer) or _has_ellipsis(answer):
        return Feedback(name, "missing", "no answer yet; replace the ... with your answer.")
    problem = compare(answer, expected, rtol, atol)
    if problem is None:
        return Feedback(name, "correct", "")
    return Feedback(name, "wrong", problem + (f". Hint: {hint}" if hint else "."))


def check_choice(answer: Any, expected: Any, *, name: str = "answer", hint: str = "") -> Feedback:
    """Compare a choice (a string, or a set of names) with the right one.

    For sets, the message says how many are missing and how many do not belong, without
    giving the answer away.

    >>> print(check_choice({"a", "c"}, {"a", "b"}, name="which ones"))
    ❌ which ones: not yet — 1 right, 1 missing, 1 that does not belong.
    >>> print(check_choice("tracing", "tracing", name="which mode"))
    ✅ which mode: correct.
    """
    if _is_missing(answer) or _has_ellipsis(answer):
        return Feedback(name, "missing", "no answer yet; replace the ... with your answer.")
    tail = f" Hint: {hint}" if hint else ""
    if isinstance(expected, (set, frozenset)):
        if not isinstance(answer, (set, frozenset, list, tuple)):
            return Feedback(name, "wrong", f"give a set of choices, like {{'a', 'b'}}.{tail}")
        given = set(answer)
        if given == expected:
            return Feedback(name, "correct", "")
        right, missing, extra = len(given & expected), len(expected - given), len(given - expected)
        message = f"{right} right, {missing} missing, {extra} that does not belong."
        if extra > 1:
            message = message.replace("does not belong", "do not belong")
        return Feedback(name, "wrong", message + tail)
    if answer == expected:
        return Feedback(name, "correct", "")
    return Feedback(name, "wrong", f"{answer!r} is not it.{tail}")


def _call(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, BaseException | None]:
    try:
        return fn(*args), None
    except Exception as exc:  # the student's code: report whatever it raises
        return None, exc


def _label(args: tuple[Any, ...]) -> str:
    def one(a: Any) -> str:
        array = _as_float_array(a)
        if array is None:
            return repr(a)
        if array.shape == ():
            return f"{float(array):g}"
        return np.array2string(array, precision=4, formatter={"float_kind": "{:g}".format})

    return ", ".join(one(a) for a in args)


def check_function(
    student: Callable[..., Any] | None,
    reference: Callable[..., Any],
    inputs: Iterable[Any],
    *,
    name: str = "your function",
    rtol: float = 1e-6,
    atol: float = 1e-9,
    hint: str = "",
) -> Feedback:
    """Call ``student`` and ``reference`` on every input and compare the results.

    Each item of ``inputs`` is one argument, or a tuple of arguments.

    >>> print(check_function(lambda x: x + 1, lambda x: x * 2, [1.0, 3.0], name="double"))
    ❌ double: not yet — at x = 3: it is 4, expected 6.
    """
    if student is None or student is Ellipsis:
        return Feedback(name, "missing", "no function yet; write it in the cell above.")
    count = 0
    for item in inputs:
        args = item if isinstance(item, tuple) else (item,)
        want = reference(*args)
        got, exc = _call(student, args)
        at = f"at x = {_label(args)}" if len(args) == 1 else f"at ({_label(args)})"
        if isinstance(exc, NotImplementedError):
            return Feedback(name, "missing", "not written yet; write it in the cell above.")
        if exc is not None:
            return Feedback(name, "error", f"{at} it raised {describe_error(exc)}")
        if _has_ellipsis(got):
            return Feedback(name, "missing", f"{at} it still returns ...; finish the function.")
        if got is None:
            return Feedback(name, "missing", f"{at} it returns None; is a return missing?")
        problem = compare(got, want, rtol, atol)
        if problem is not None:
            return Feedback(
                name, "wrong", f"{at}: {problem}" + (f". Hint: {hint}" if hint else ".")
            )
        count += 1
    plural = "" if count == 1 else "s"
    return Feedback(name, "correct", f"at all {count} test point{plural}.")


def check_derivative(
    student: Callable[..., Any] | None,
    f: Callable[..., Any],
    points: Iterable[Any],
    *,
    name: str = "your derivative",
    rtol: float = 1e-5,
    atol: float = 1e-7,
    hint: str = "",
) -> Feedback:
    """Check ``student(x)`` against the central finite-difference derivative of ``f``.

    ``f`` maps an array ``x`` to a scalar (or elementwise to an array, then the oracle is
    the gradient of ``sum(f(x))``); the points are converted to float64 arrays. The
    oracle never sees the student's code. Its steps are relative to ``x`` and stay
    inside ``f``'s domain (see :mod:`~autodiff_tutor.verify.numeric.differences`); at a
    point where ``f`` is not finite there is no oracle, and the verdict is ``error``
    ("could not check"), never ``correct``.

    >>> import numpy as np
    >>> print(check_derivative(lambda x: np.cos(x), np.sin, [0.0, 1.0], name="d sin"))
    ✅ d sin: correct — at all 2 test points.
    >>> print(check_derivative(lambda x: 2 * x, lambda x: x ** 3, [2.0], name="d x^3"))
    ❌ d x^3: not yet — at x = 2: it is 4, expected 12.
    """
    from autodiff_tutor.verify.numeric import numerical_gradient

    arrays = [np.asarray(p, dtype=np.float64) for p in points]
    expected = {id(x): numerical_gradient(f, x)[0] for x in arrays}
    for x in arrays:
        if not np.isfinite(expected[id(x)]).all():  # no oracle there: never "correct"
            return Feedback(
                name,
                "error",
                f"could not check at x = {_label((x,))}: f is not finite at or next to "
                "this point, so its finite differences give no value there; check at "
                "points inside f's domain.",
            )
    return check_function(
        student,
        lambda x: expected[id(x)],
        arrays,
        name=name,
        rtol=rtol,
        atol=atol,
        hint=hint,
    )
