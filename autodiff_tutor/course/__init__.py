"""Helpers for the course notebooks: exercise feedback, errors shown on purpose, grading.

- :func:`check_value`, :func:`check_function`, :func:`check_derivative`: compare a
  student's answer with an oracle (a value computed another way, or central finite
  differences in float64) and say what is wrong in one friendly line;
- :func:`check_backward` (numeric, ``check_op``) and :func:`grade_backward`
  (symbolic, ``verify_symbolic``): grade a hand-written backward;
- :func:`require`: what a graded release's hidden tests call: raise unless every check
  passed, with the feedback as the message;
- :func:`explain_errors`: run code that fails on purpose and print the error the way
  a student should read it, so the notebook cell still runs.

>>> from autodiff_tutor.course import check_value
>>> check_value(0.5, 0.5, name="slope").passed
True
"""

from autodiff_tutor.course.feedback import (
    VERDICTS,
    ExerciseNotPassed,
    Feedback,
    check_choice,
    check_derivative,
    check_function,
    check_value,
    require,
)
from autodiff_tutor.course.grading import check_backward, check_backward_report, grade_backward
from autodiff_tutor.course.problems import Seen, explain_errors, render_error, tidy

__all__ = [
    "VERDICTS",
    "ExerciseNotPassed",
    "Feedback",
    "Seen",
    "check_backward",
    "check_backward_report",
    "check_choice",
    "check_derivative",
    "check_function",
    "check_value",
    "explain_errors",
    "grade_backward",
    "render_error",
    "require",
    "tidy",
]
