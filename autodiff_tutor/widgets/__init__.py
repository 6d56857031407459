"""ipywidgets views for the notebooks (they need the ``lab`` extra).

Each view is an ipywidgets container (display it as the last value of a cell) whose
parts can be set from Python, which is how the tests drive them:

- :func:`code_view`: your function, its generated forward and backward, line by line;
- :func:`derivative_explorer`: sliders, the tangent, and the gradient from the
  compiler, the tracing mode or finite differences;
- :func:`backward_stepper`: the generated backward, one executed line at a time;
- :func:`tape_view`: what the tracing mode recorded;
- :func:`verification_view`: a symbolic report's region and kink tables, with LaTeX;
- :func:`check_report_view`: a ``check_op`` / ``check_layer`` report;
- :func:`backend_switch`: numpy / cupy.

>>> from autodiff_tutor.widgets import backend_switch
>>> backend_switch().value
'numpy'
"""

try:
    import ipywidgets  # noqa: F401
except ModuleNotFoundError as missing:  # a plain `pip install autodiff_tutor`
    raise ModuleNotFoundError(
        "autodiff_tutor.widgets needs ipywidgets, which comes with the `lab` extra: "
        "pip install 'autodiff_tutor[lab]' (or run `make lab`)",
        name=missing.name,
    ) from missing

from autodiff_tutor.widgets.backend_switch import BackendSwitch, backend_switch
from autodiff_tutor.widgets.code_view import CodeView, code_view
from autodiff_tutor.widgets.explorer import DerivativeExplorer, derivative_explorer
from autodiff_tutor.widgets.stepper import BackwardStepper, backward_stepper
from autodiff_tutor.widgets.tape_view import TapeView, tape_view
from autodiff_tutor.widgets.verification_view import (
    CheckReportView,
    VerificationView,
    check_report_view,
    verification_view,
)

__all__ = [
    "BackendSwitch",
    "BackwardStepper",
    "CheckReportView",
    "CodeView",
    "DerivativeExplorer",
    "TapeView",
    "VerificationView",
    "backend_switch",
    "backward_stepper",
    "check_report_view",
    "code_view",
    "derivative_explorer",
    "tape_view",
    "verification_view",
]
