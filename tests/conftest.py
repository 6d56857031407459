"""Shared pytest set-up: hypothesis profiles, the ``gpu`` marker, a stand-in IPython kernel.

Hypothesis profiles (pick one with ``HYPOTHESIS_PROFILE=<name>``):

- ``dev`` (default): hypothesis' usual example count, no deadline;
- ``ci`` (default when the ``CI`` environment variable is set): fewer examples, no
  deadline, derandomized so a CI failure reproduces;
- ``thorough``: many examples, for a local deep run.

No profile has a deadline: the first call of a compiled function compiles it, and a
test must never depend on timing.

Numpy print options are left at their defaults on purpose: the package doctests show
numpy's default reprs, and they run in the same session as these tests.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types

import pytest
from hypothesis import HealthCheck, settings

from autodiff_tutor.errors import InternalError

settings.register_profile("dev", deadline=None)
settings.register_profile(
    "ci",
    deadline=None,
    max_examples=30,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("thorough", deadline=None, max_examples=1000)

_default_profile = "ci" if os.environ.get("CI") else "dev"
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", _default_profile))


def _cupy_usable() -> bool:
    """True when cupy imports and sees at least one CUDA device."""
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no driver, no device, broken install: all mean "no GPU here"
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip tests marked ``gpu`` where cupy or a CUDA device is missing."""
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu_items or _cupy_usable():
        return
    skip = pytest.mark.skip(reason="needs cupy and a CUDA device")
    for item in gpu_items:
        item.add_marker(skip)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """An ``InternalError`` is a bug of the toolkit: it fails a test marked to expect a
    refusal (``xfail(raises=AutodiffError)``); a known bug is marked with
    ``raises=InternalError``, or without ``raises``."""
    outcome = yield
    report = outcome.get_result()
    mark = item.get_closest_marker("xfail")
    raises = mark.kwargs.get("raises") if mark is not None else None
    expected = raises if isinstance(raises, tuple) else (raises,)
    internal = call.excinfo is not None and call.excinfo.errisinstance(InternalError)
    if internal and hasattr(report, "wasxfail") and raises and InternalError not in expected:
        del report.wasxfail
        report.outcome = "failed"


class _CellCompiler:
    """IPython's CachingCompiler as far as the toolkit asks it: cell files to counts."""

    def __init__(self, cells: dict[str, int]):
        self.cells = cells

    def format_code_name(self, name: str):
        return ("Cell", f"In[{self.cells[name]}]") if name in self.cells else None


@pytest.fixture
def ipython_cells(monkeypatch):
    """A stand-in IPython kernel: ``ipython_cells({filename: 7})`` makes it say that
    ``filename`` is the notebook cell it ran as input 7 (``Cell In[7]``)."""

    def kernel(cells: dict[str, int]) -> types.SimpleNamespace:
        shell = types.SimpleNamespace(compile=_CellCompiler(cells))
        ipython = types.SimpleNamespace(get_ipython=lambda: shell)
        monkeypatch.setitem(sys.modules, "IPython", ipython)
        return shell

    return kernel
