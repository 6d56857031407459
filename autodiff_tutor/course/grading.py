"""Grade a student's hand-written backward: numerically (``check_op``) or with sympy.

Both graders turn the toolkit's full reports into one :class:`Feedback` line per
exercise: what passed, or the first things to fix. The reports themselves stay
available (``feedback_and_report``) for a lesson that wants to show the table.

>>> import numpy as np
>>> from autodiff_tutor.ops import DifferentiableFunction
>>> class Square(DifferentiableFunction):
...     def __init__(self):
...         super().__init__(save_inputs_for_backward=True)
...     def forward(self, x):
...         return x * x
...     def backward(self, d_y, compute_gradients, x):
...         return x * d_y                    # forgot the 2
>>> print(check_backward(Square(), np.array([0.5, -1.0, 2.0])))
❌ Square: not yet — finite differences: ...
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

from autodiff_tutor.course.feedback import Feedback, describe_error
from autodiff_tutor.verify.numeric.checks import check_op
from autodiff_tutor.verify.numeric.common import backward_raw, is_float_array
from autodiff_tutor.verify.numeric.layer_check import check_layer
from autodiff_tutor.verify.numeric.report import CheckReport

__all__ = ["check_backward", "check_backward_report", "grade_backward"]


def _unwritten(op: Any, inputs: tuple[Any, ...]) -> str | None:
    """Why the backward looks unwritten (``None`` when it returns something)."""
    try:
        outputs, saved = op.op_forward(*inputs)
    except NotImplementedError:
        return "forward is not written yet"
    except Exception:  # a broken forward is check_op's to report
        return None
    flags = tuple(is_float_array(x) for x in inputs)
    try:
        result = backward_raw(op, tuple(outputs), flags, saved)
    except NotImplementedError:
        return "backward is not written yet"
    except Exception:  # a broken backward is check_op's to report
        return None
    if result is None or result is Ellipsis:
        return "backward returns None: write the gradients and return them"
    return None


def _raises_not_implemented(backward: Any) -> bool:
    """Whether a backward (function or source) is still a stub: it raises
    ``NotImplementedError`` before it returns anything. A solution written above the
    stub's ``raise`` (as in a course's source notebook) returns first, and is no stub.

    >>> _raises_not_implemented("def b(d_y, x):\\n    raise NotImplementedError('todo')")
    True
    >>> _raises_not_implemented("def b(d_y, x):\\n    return d_y\\n    raise NotImplementedError")
    False
    """
    if backward is None:
        return False
    if isinstance(backward, str):
        source = backward
    else:
        try:
            source = inspect.getsource(backward)
        except (OSError, TypeError):
            return False
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return "raise NotImplementedError" in source
    function = next(
        (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))),
        None,
    )
    for statement in function.body if function is not None else tree.body:
        if isinstance(statement, ast.Return):
            return False
        if isinstance(statement, ast.Raise) and "NotImplementedError" in ast.unparse(statement):
            return True
    return False


def check_backward_report(
    op: Any, *inputs: Any, name: str | None = None, **options: Any
) -> tuple[Feedback, CheckReport | None]:
    """``check_backward``'s feedback together with the full ``check_op`` report
    (``None`` when the backward is not written yet).

    >>> import numpy as np
    >>> from autodiff_tutor.ops import PReLUFunction
    >>> X = np.random.default_rng(0).standard_normal((4, 3))
    >>> feedback, report = check_backward_report(PReLUFunction("BC"), X, np.full((1, 3), 0.25))
    >>> feedback.passed, report["finite differences"].status
    (True, 'passed')
    """
    name = name or getattr(op, "name", type(op).__name__)
    from autodiff_tutor.nn.layer import Layer
    from autodiff_tutor.nn.layer_op import LayerOp

    if isinstance(op, Layer):
        if len(inputs) != 1:
            raise TypeError("check a layer on one sample input: check_backward(layer, X)")
        op.initialize(inputs[0])
        unwritten = _unwritten(LayerOp(op), (inputs[0], *op.parameters(), *op.state_values()))
    else:
        unwritten = _unwritten(op, inputs)
    if unwritten is not None:
        return Feedback(name, "missing", unwritten + "."), None
    if isinstance(op, Layer):
        report = check_layer(op, inputs[0], **options)
    else:
        report = check_op(op, *inputs, **options)
    if report.passed:
        warned = [e.category for e in report.entries if e.status == "warning"]
        note = f" (note: {', '.join(warned)}: see the report)" if warned else ""
        checked = [e.category for e in report.entries if e.status == "passed"]
        return Feedback(name, "correct", "passed " + ", ".join(checked) + "." + note), report
    # what makes the gradient wrong first; compute_gradients' strictness (a gradient
    # computed though not requested: wasted work) last
    failures = sorted(report.failures(), key=lambda e: e.category == "compute_gradients")
    problems = [f"{e.category}: {_summary(e.message)}" for e in failures]
    return Feedback(name, "wrong", "; ".join(problems)), report


def _summary(message: str) -> str:
    """A check's message on one line: its first line, with the list it introduces (the
    elements that differ, after a line that ends in ":") kept.

    >>> _summary("1 of 2 elements differ:\\n  d/d x[0]: backward 2, finite differences 3")
    '1 of 2 elements differ: d/d x[0]: backward 2, finite differences 3'
    """
    first, *rest = message.splitlines()
    if not first.endswith(":") or not rest:
        return first
    return first + " " + "; ".join(line.strip() for line in rest)


def check_backward(op: Any, *inputs: Any, name: str | None = None, **options: Any) -> Feedback:
    """Check a custom op's backward with ``check_op`` (finite differences, shapes,
    dtypes, ``compute_gradients``) and summarise the result as one feedback line.

    For a layer (:class:`~autodiff_tutor.nn.Layer`), give one sample input: it is
    initialized for it and checked with ``check_layer``. ``options`` go to the check
    (``batch_axis``, ``rtol``...). A backward that is not written yet gets "missing",
    not a failure.

    >>> import numpy as np
    >>> from autodiff_tutor.ops import PReLUFunction
    >>> X = np.random.default_rng(0).standard_normal((4, 3))
    >>> check_backward(PReLUFunction("BC"), X, np.full((1, 3), 0.25)).passed
    True
    """
    return check_backward_report(op, *inputs, name=name, **options)[0]


def grade_backward(
    forward: Any, backward: Any = None, *, name: str | None = None, **options: Any
) -> tuple[Feedback, Any]:
    """Prove a backward right with sympy (``verify_symbolic``), region by region.

    Give a forward and a backward function, or a custom op (or compiled function)
    alone. Returns the feedback and the symbolic report (whose table shows each region).
    ``options`` go to :func:`~autodiff_tutor.verify.symbolic.functions.verify_symbolic`.

    >>> import numpy as np
    >>> def f(x):
    ...     return np.abs(x)
    >>> def f_backward(d_y, x):
    ...     return d_y * np.sign(x)
    >>> feedback, report = grade_backward(f, f_backward)
    >>> print(feedback)
    ✅ f: correct — proved right in every region (x < 0, x > 0); every kink takes a
    valid value.
    """
    from autodiff_tutor.verify.symbolic import verify_symbolic

    label = name or getattr(forward, "__name__", None) or getattr(forward, "name", "backward")
    written = backward if backward is not None else getattr(forward, "backward", None)
    if backward is Ellipsis or _raises_not_implemented(written):
        return Feedback(label, "missing", "no backward yet; write it in the cell above."), None
    try:
        report = verify_symbolic(forward, backward, name=name, **options)
    except NotImplementedError:
        return Feedback(label, "missing", "backward is not written yet."), None
    except Exception as exc:  # the student's code or an untranslatable construct
        return Feedback(label, "error", f"could not verify: {describe_error(exc)}"), None
    if report.passed:
        regions = ", ".join(report.region_names())
        numeric = sorted({c.region for c in report.regions if c.verdict == "numeric"})
        how = "proved right" if not numeric else "right"
        unjudged = sorted({k.boundary for k in report.kinks if k.verdict == "not analysed"})
        kinks = "every kink takes a valid value"
        if unjudged:  # said, so that "correct" claims no more than was checked
            kinks = f"the kink(s) at {', '.join(unjudged)} could not be analysed"
        message = f"{how} in every region ({regions}); {kinks}."
        if numeric:  # sympy could not simplify there: the agreement was checked numerically
            message += f" (checked numerically, not proved, in: {', '.join(numeric)})"
        return Feedback(label, "correct", message), report
    if all(check.got is None for check in report.regions):
        return Feedback(label, "missing", "your backward returns no gradient yet."), report
    problems = []
    for check in report.failures():
        if hasattr(check, "region"):
            where = f"d{check.input}" + (
                "" if check.region == "everywhere" else f" for {check.region}"
            )
            found = check.detail or f"expected {check.expected}, your backward gives {check.got}"
            problems.append(f"{where}: {found}{_counterexample(check)}")
        elif check.weight is not None or not check.detail:
            problems.append(
                f"d{check.input} at {check.boundary}: {check.value} is not between the "
                f"one-sided derivatives {check.derivative_a} and {check.derivative_b}"
            )
        else:  # what numpy gives there, or inputs on different sides of one kink
            inputs = f"d({check.input})" if "," in check.input else f"d{check.input}"
            problems.append(f"{inputs} at {check.boundary}: {check.detail}{_counterexample(check)}")
    return Feedback(label, "wrong", "; ".join(problems[:3])), report


def _counterexample(check: Any) -> str:
    """Where a region check failed, as a point the student can try (empty when the
    report has none).

    >>> from types import SimpleNamespace
    >>> _counterexample(SimpleNamespace(counterexample={"x": 0.2, "d_y": -0.1},
    ...                                 expected_value=0.1, got_value=-0.1))
    ' (at x = 0.2, d_y = -0.1: expected 0.1, got -0.1)'
    """
    point = getattr(check, "counterexample", None)
    if not point:
        return ""
    where = ", ".join(f"{name} = {value:.6g}" for name, value in point.items())
    expected, got = getattr(check, "expected_value", None), getattr(check, "got_value", None)
    if expected is None or got is None:
        return f" (at {where})"
    return f" (at {where}: expected {expected:.6g}, got {got:.6g})"
