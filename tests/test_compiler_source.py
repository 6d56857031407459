"""Source from files, notebook cells and generated code; clear errors without source."""

import linecache

import numpy as np
import pytest

from autodiff_tutor.api import grad
from autodiff_tutor.errors import NoDerivativeRuleError


def define_in_cell(source, filename):
    """Run ``source`` the way IPython runs a cell: its text registered in linecache."""
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    namespace = {"np": np}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


CELL = """\
import numpy as np

def cell_loss(w):
    return np.sum(np.tanh(w) ** 2)
"""


@pytest.mark.parametrize(
    "filename", ["<ipython-input-3-5f1e2a>", "/tmp/ipykernel_1234/2051367291.py"]
)
def test_functions_defined_in_notebook_cells_compile(filename):
    fn = define_in_cell(CELL, filename)["cell_loss"]
    w = np.array([0.1, -0.4])
    expected = 2 * np.tanh(w) * (1 - np.tanh(w) ** 2)
    np.testing.assert_allclose(grad(fn)(w), expected, rtol=1e-12)


def test_errors_in_cells_point_at_the_cell_line():
    source = "def bad(x):\n    y = x * 2\n    return np.sum(np.random.normal(y))\n"
    fn = define_in_cell(source, "<ipython-input-9-bad>")["bad"]
    with pytest.raises(NoDerivativeRuleError) as info:
        grad(fn)(np.ones(2))
    assert info.value.location.filename == "<ipython-input-9-bad>"
    assert info.value.location.line == 3
    assert "reparameterize" in info.value.hint


def test_random_noise_that_does_not_depend_on_the_input_is_fine():
    def noisy(x, seed):
        noise = np.random.default_rng(int(seed)).normal(size=3)
        return np.sum(x * noise)

    expected = np.random.default_rng(0).normal(size=3)
    np.testing.assert_allclose(grad(noisy)(np.ones(3), 0), expected)
