"""Source from files, notebook cells and generated code; clear errors without source."""

import gc
import linecache
import weakref

import numpy as np
import pytest
from program_checks import assert_right_in_mode

from autodiff_tutor.api import grad
from autodiff_tutor.compiler.emit import forget_source
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


def test_a_helper_defined_in_code_without_a_module_name():
    """A function and its helper run from source registered in linecache under a name
    that is no module's (``<cell>``): the helper is found in the function's globals and
    inlined; the gradient agrees with central differences."""
    source = (
        "import numpy as np\n\ndef h(a):\n    return np.tanh(a)\n\n"
        "def f(x):\n    return np.sum(h(x))\n"
    )
    linecache.cache["<cell>"] = (len(source), None, source.splitlines(True), "<cell>")
    namespace: dict = {}
    exec(compile(source, "<cell>", "exec"), namespace)
    assert_right_in_mode("compiler", namespace["f"], np.array([0.2, -0.4]))


def _make_loss():
    def loss(x):
        return np.sum(x * x)

    return loss


def test_a_compiled_function_is_freed_with_its_function():
    """What ``grad`` compiles for a function holds it weakly: dropping the function
    frees both."""
    loss = _make_loss()
    grad(loss)(np.ones(2))
    ref = weakref.ref(loss)
    del loss
    gc.collect()
    assert ref() is None


def test_generated_sources_leave_linecache_with_their_function():
    """The generated source registered in linecache (for tracebacks) leaves it once its
    function is freed, at the latest at the next compile; ``linecache.checkcache``
    meanwhile raises nothing."""
    before = set(linecache.cache)
    loss = _make_loss()
    grad(loss)(np.ones(2))
    generated = [n for n in set(linecache.cache) - before if "autodiff_tutor generated" in n]
    assert generated
    del loss
    gc.collect()
    linecache.checkcache()  # no KeyError, whenever the collector took the source away
    grad(_make_loss())(np.ones(2))  # gone at the latest at the next compile
    assert not set(generated) & set(linecache.cache)


def test_generated_sources_freed_inside_linecache_leave_it_at_the_next_compile():
    """A generated function freed while linecache's own code runs (the collector can
    run while ``checkcache`` reads its keys one by one) leaves its source there until
    the next compile, a safe point."""
    name = "<autodiff_tutor generated freed #0>"
    linecache.cache[name] = (0, None, [], name)
    inside_linecache = compile("forget_source(name)", linecache.__file__, "exec")
    exec(inside_linecache, {"forget_source": forget_source, "name": name})
    assert name in linecache.cache

    def fresh(x):
        return np.sum(x * x)

    grad(fresh)(np.ones(2))  # compiles: a safe point
    assert name not in linecache.cache
