"""The numpy / cupy switch: disabled with its reason here, and switching when possible."""

from __future__ import annotations

import array_api_strict
import numpy as np
import pytest

from autodiff_tutor import array_module, grad
from autodiff_tutor.errors import ArgumentError
from autodiff_tutor.verify.numeric.gpu import gpu_unavailable_reason
from autodiff_tutor.widgets import backend_switch
from autodiff_tutor.widgets.backend_switch import BackendSwitch


def test_cupy_is_disabled_with_the_reason_when_there_is_no_gpu():
    reason = gpu_unavailable_reason()
    if reason is None:
        pytest.skip("this machine has cupy and a GPU")
    switch = backend_switch()
    assert switch.reason == reason
    assert switch.cupy_button.disabled
    assert switch.cupy_button.tooltip == reason
    assert reason in switch.reason_html.value
    assert switch.value == "numpy" and switch.xp is np
    assert repr(switch) == "<backend switch: numpy>"
    with pytest.raises(ArgumentError, match="cannot switch to cupy"):
        switch.value = "cupy"
    assert switch.value == "numpy" and switch.numpy_button.value


def test_switching_calls_the_hook_with_the_chosen_module():
    # array_api_strict plays cupy's part: a second array library, no GPU needed
    switch = BackendSwitch(reason=None, cupy_loader=lambda: array_api_strict)
    assert not switch.cupy_button.disabled and switch.reason_html.value == ""
    seen = []

    def rerun(xp):
        x = xp.asarray([1.0, 2.0, 3.0])
        seen.append((xp.__name__, float(xp.sum(x * x))))

    switch.on_change(rerun)
    assert seen == [("numpy", 14.0)]
    switch.cupy_button.value = True  # the student clicks "cupy"
    assert switch.value == "cupy" and switch.xp is array_api_strict
    assert not switch.numpy_button.value
    assert seen[-1] == ("array_api_strict", 14.0)
    assert type(switch.asarray([1.0])).__module__.startswith("array_api_strict")
    switch.cupy_button.value = False  # un-pressing the chosen button keeps it chosen
    assert switch.cupy_button.value and switch.value == "cupy" and len(seen) == 2
    switch.value = "numpy"
    assert seen[-1] == ("numpy", 14.0) and switch.numpy_button.value
    assert not switch.cupy_button.value
    with pytest.raises(ArgumentError, match="'numpy' or 'cupy'"):
        switch.value = "jax"


def test_a_gradient_recomputed_on_the_chosen_backend():
    switch = BackendSwitch(reason=None, cupy_loader=lambda: array_api_strict)
    results = {}

    def f(x):
        xp = array_module(x)  # the cupy idiom: the module comes from the values
        return xp.sum(x * x)

    switch.on_change(lambda xp: results.update({xp.__name__: grad(f)(switch.asarray([1.0, 2.0]))}))
    switch.value = "cupy"
    assert set(results) == {"numpy", "array_api_strict"}
    assert type(results["array_api_strict"]).__module__.startswith("array_api_strict")
    np.testing.assert_allclose(np.asarray(results["numpy"]), [2.0, 4.0])
    np.testing.assert_allclose(np.asarray(results["array_api_strict"]), [2.0, 4.0])
