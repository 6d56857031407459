"""Graders of a hand-written backward: a right one passes, a wrong one fails with the
category or region that is wrong, an unwritten one is "missing" (not a crash)."""

import re

import numpy as np

from autodiff_tutor.course import check_backward, check_backward_report, grade_backward
from autodiff_tutor.nn import Layer
from autodiff_tutor.ops import DifferentiableFunction, PReLUFunction


class Cube(DifferentiableFunction):
    def __init__(self, factor=3.0):
        super().__init__(save_inputs_for_backward=True)
        self.factor = factor

    def forward(self, x):
        return x * x * x

    def backward(self, d_y, compute_gradients, x):
        return self.factor * x * x * d_y


class Unwritten(Cube):
    def backward(self, d_y, compute_gradients, x):
        pass


class NotImplemented_(Cube):
    def backward(self, d_y, compute_gradients, x):
        raise NotImplementedError("your code here")


X = np.array([0.5, -1.0, 2.0])


def test_numeric_grader_verdicts():
    assert check_backward(Cube(), X).passed
    wrong = check_backward(Cube(factor=2.0), X)
    assert wrong.verdict == "wrong" and "finite differences" in wrong.message
    assert check_backward(Unwritten(), X).verdict == "missing"
    assert check_backward(NotImplemented_(), X).verdict == "missing"


def test_numeric_grader_report_and_kinks():
    X = np.array([[-1.0, 0.0, 2.0]])
    feedback, report = check_backward_report(PReLUFunction("BC"), X, np.full((1, 3), 0.25))
    assert feedback.passed and report.passed
    assert "kinks" in feedback.message  # an input on the kink is noted, not failed


def test_symbolic_grader_proves_and_refutes():
    def leaky(x):
        return np.where(x > 0, x, 0.1 * x)

    def right(d_y, x):
        return d_y * np.where(x > 0, 1.0, 0.1)

    def wrong(d_y, x):
        return d_y * np.where(x > 0, 1.0, 0.0)

    feedback, report = grade_backward(leaky, right)
    assert feedback.passed and report.passed
    feedback, report = grade_backward(leaky, wrong)
    assert feedback.verdict == "wrong" and not report.passed
    assert "x < 0" in feedback.message or "x <= 0" in feedback.message


def test_symbolic_grader_missing_and_error():
    def f(x):
        return x * x

    def raises(d_y, x):
        raise NotImplementedError("your code here")

    def stub(d_y, x):
        return None

    def untranslatable(d_y, x):
        try:
            return 2 * x * d_y
        except ValueError:
            return d_y

    assert grade_backward(f, ...)[0].verdict == "missing"
    assert grade_backward(f, raises)[0].verdict == "missing"
    assert grade_backward(f, stub)[0].verdict == "missing"
    feedback, report = grade_backward(f, untranslatable)
    assert feedback.verdict == "error" and report is None
    assert "could not verify" in feedback.message


def test_symbolic_grader_names_the_kink():
    def relu(x):
        return np.maximum(x, 0.0)

    def outside(d_y, x):
        return d_y * np.where(x >= 0, 2.0, 0.0)

    feedback, _ = grade_backward(relu, outside)
    assert feedback.verdict == "wrong"
    assert "dx for x > 0: expected d_y, your backward gives 2*d_y" in feedback.message


class Scale(Layer):
    learnables = ("gamma",)

    def initial_values(self, layout, rng):
        return {"gamma": np.full((1, layout.shape[1]), 2.0)}

    def predict(self, X):
        return self.params["gamma"] * X

    def backward(self, X, Y, dY, memory):
        return self.params["gamma"] * dY, np.sum(dY * X, axis=0, keepdims=True)


class ScaleWrongSum(Scale):
    def backward(self, X, Y, dY, memory):
        return self.params["gamma"] * dY, np.sum(dY, axis=0, keepdims=True)


class ScaleUnwritten(Scale):
    def backward(self, X, Y, dY, memory):
        raise NotImplementedError


def test_layers_are_checked_with_check_layer():
    X = np.random.default_rng(1).standard_normal((5, 3))
    feedback, report = check_backward_report(Scale(), X)
    assert feedback.passed and report.entries[0].category == "initialize"
    wrong = check_backward(ScaleWrongSum(), X)
    assert wrong.verdict == "wrong" and "finite differences" in wrong.message
    assert check_backward(ScaleUnwritten(), X).verdict == "missing"


class Leaky(DifferentiableFunction):
    def __init__(self):
        super().__init__(save_inputs_for_backward=True, name="leaky")

    def forward(self, x):
        return np.where(x > 0, x, 0.1 * x)

    def backward(self, d_y, compute_gradients, x):
        return d_y * (x >= 0) + 0.1 * d_y * (x <= 0)  # both masks hold at 0: 1.1 there


class LeakyFixed(Leaky):
    def backward(self, d_y, compute_gradients, x):
        return d_y * (x > 0) + 0.1 * d_y * (x <= 0)


class LeakyUnwritten(Leaky):
    def backward(self, d_y, compute_gradients, x):
        raise NotImplementedError


def test_symbolic_grader_on_ops_finds_a_kink_bug_numeric_checks_miss():
    x = np.random.default_rng(2).standard_normal(6)
    assert check_backward(Leaky(), x).passed  # random points never hit x == 0
    feedback, report = grade_backward(Leaky())
    assert feedback.verdict == "wrong" and "dx at x = 0" in feedback.message
    assert [k.verdict for k in report.kinks] == ["invalid"]
    assert grade_backward(LeakyFixed())[0].passed
    assert grade_backward(LeakyUnwritten())[0].verdict == "missing"


class Product(DifferentiableFunction):
    """x * w, with a backward that computes both gradients whatever is requested."""

    def __init__(self):
        super().__init__(save_inputs_for_backward=True)

    def forward(self, x, w):
        return x * w

    def backward(self, d_y, compute_gradients, x, w):
        return d_y * w, d_y * x[::-1]  # the gradient for w is wrong: x reversed


def test_backward_feedback_lists_the_elements_that_differ_before_the_wasted_work():
    feedback, report = check_backward_report(Product(), np.array([1.0, 2.0]), np.array([3.0, 5.0]))
    assert feedback.verdict == "wrong"
    differing = report["finite differences"].message.splitlines()
    assert differing[0].endswith(":") and len(differing) == 3  # w[0] and w[1] differ
    message = " ".join(feedback.message.split())
    for line in differing[1:]:
        assert line.strip() in message  # each element, with its two numbers
    assert message.index("finite differences:") < message.index("compute_gradients:")
    assert "wasted work" in message


def test_symbolic_grader_reads_a_solution_written_above_the_exercise_stub():
    """A course's solutions' version keeps the student's stub below the solution (the
    release removes the solution, leaving the stub): the solution returns first, so it
    is graded, not taken for the unwritten stub."""

    def f(x):
        return x * x

    def solved(d_y, x):
        ### BEGIN SOLUTION
        return 2 * x * d_y
        ### END SOLUTION
        raise NotImplementedError("your code here")

    def still_a_stub(d_y, x):
        """Docstring first."""
        raise NotImplementedError("your code here")
        return 2 * x * d_y

    assert grade_backward(f, solved)[0].passed
    assert grade_backward(f, still_a_stub)[0].verdict == "missing"


def test_symbolic_grader_gives_a_counterexample_that_the_code_confirms():
    """A wrong region names a point; there, finite differences of the forward (the
    oracle) give the expected value and the student's backward the other one."""

    def soft_threshold(x, lam):
        return np.where(x > lam, x - lam, np.where(x < -lam, x + lam, 0.0))

    def wrong_sign(d_y, x, lam):
        d_x = d_y * (np.abs(x) > lam)
        d_lam = d_y * np.where(x > lam, 1.0, np.where(x < -lam, 1.0, 0.0))
        return d_x, d_lam

    feedback, _ = grade_backward(soft_threshold, wrong_sign, assume=["lam > 0"])
    found = re.search(
        r"dlam for x > lam: .*\(at x = (\S+), lam = (\S+), d_y = (\S+): "
        r"expected (\S+), got (\S+)\)",
        " ".join(feedback.message.split()),
    )
    assert feedback.verdict == "wrong" and found, feedback.message
    x, lam, d_y, expected, got = (float(v) for v in found.groups())
    step = 1e-6
    slope = (soft_threshold(x, lam + step) - soft_threshold(x, lam - step)) / (2 * step)
    assert np.isclose(d_y * slope, expected, atol=1e-6)
    assert np.isclose(wrong_sign(d_y, x, lam)[1], got)
    assert not np.isclose(expected, got)


class NanCube(Cube):
    def backward(self, d_y, compute_gradients, x):
        return d_y * np.nan * x


class CubeOnLog(Cube):
    """The forward is nan at negative inputs: they cannot be checked."""

    def forward(self, x):
        return np.log(x) * x * x * x


def test_numeric_grader_never_passes_nan():
    wrong = check_backward(NanCube(), X)
    assert wrong.verdict == "wrong" and "backward nan" in wrong.message
    with np.errstate(all="ignore"):
        unchecked = check_backward(CubeOnLog(), X)
    assert unchecked.verdict == "wrong" and "could not be checked" in unchecked.message
