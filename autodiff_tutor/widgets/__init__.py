"""ipywidgets views for the notebooks (they need the ``lab`` extra).

Each view is an ipywidgets container (display it as the last value of a cell) whose
parts can be set from Python, which is how the tests drive them:

- :func:`code_view`: your function, its generated forward and backward, line by line;
- :func:`backward_stepper`: the generated backward, one executed line at a time;
- :func:`backend_switch`: numpy / cupy.

>>> from autodiff_tutor.widgets import backend_switch
>>> backend_switch().value
'numpy'
"""

from autodiff_tutor.widgets.backend_switch import BackendSwitch, backend_switch
from autodiff_tutor.widgets.code_view import CodeView, code_view
from autodiff_tutor.widgets.explorer import DerivativeExplorer, derivative_explorer
from autodiff_tutor.widgets.stepper import BackwardStepper, backward_stepper

__all__ = [
    "BackendSwitch",
    "BackwardStepper",
    "CodeView",
    "DerivativeExplorer",
    "backend_switch",
    "backward_stepper",
    "code_view",
    "derivative_explorer",
]
