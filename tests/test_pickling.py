"""Compiled functions, the functions ``grad`` and ``value_and_grad`` return, custom ops
and networks, pickled and loaded: by reference where they live in an importable module
(``pickle``), by value where they were defined in a function body or ``__main__``
(``cloudpickle``, as for a notebook cell); the loaded copy compiles again and gives the
client's numbers, checked against central differences, in this process and in a fresh
interpreter."""

import functools
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pickling_functions as mod
import pytest
from oracles import central_difference

from autodiff_tutor import differentiable, grad, nn, value_and_grad, vjp
from autodiff_tutor.ops import DifferentiableFunction, PReLUFunction, SReLUFunction
from autodiff_tutor.pickling import MadeFunction

cloudpickle = pytest.importorskip("cloudpickle")

RNG = np.random.default_rng(32)
W, B, X = RNG.normal(size=(3, 2)), RNG.normal(size=2), RNG.normal(size=(4, 3))


def round_trip(obj, dumps=pickle.dumps):
    return pickle.loads(dumps(obj))


def assert_close(actual, expected, tol=1e-12):
    for a, e in zip(np.atleast_1d(actual), np.atleast_1d(expected), strict=True):
        np.testing.assert_allclose(a, e, rtol=tol, atol=tol)


def test_a_module_level_compiled_function_pickles_by_reference():
    assert round_trip(mod.loss) is mod.loss
    assert b"pickling_functions" in pickle.dumps(mod.loss)


@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps], ids=["pickle", "cloudpickle"])
def test_value_and_grad_of_a_module_function_round_trips(dumps):
    both = value_and_grad(mod.loss, wrt=["W", "b"])
    value, (dW, db) = round_trip(both, dumps)(W, B, X)
    expected_value, (eW, eb) = both(W, B, X)
    assert_close(value, expected_value)
    assert_close(dW, eW)
    assert_close(db, eb)
    assert_close(dW, central_difference(mod.loss.fn, [W, B, X], 0), tol=1e-6)
    assert_close(db, central_difference(mod.loss.fn, [W, B, X], 1), tol=1e-6)


@pytest.mark.parametrize(
    "make",
    [
        lambda: grad(mod.energy),
        lambda: grad(mod.scaled_energy),
        lambda: grad(functools.partial(mod.energy, scale=2.0)),
        lambda: grad(differentiable(mod.energy)),
    ],
    ids=["plain", "module-partial", "partial", "differentiable"],
)
def test_grad_of_plain_functions_and_partials_round_trips(make):
    x = RNG.normal(size=5)
    made = make()
    copy = round_trip(made)
    assert isinstance(copy, MadeFunction)
    assert_close(copy(x), made(x))
    function = made._recipe[0]  # what grad was given: the oracle differentiates it
    assert_close(copy(x), central_difference(function, [x], 0), tol=1e-6)


def test_grad_of_a_bound_method_and_a_callable_object_round_trips():
    model = mod.Model(RNG.normal(size=(3, 2)))
    for made, function in [
        (grad(model.loss, wrt="self.W"), lambda W: mod.Model(W).loss(X)),
        (grad(model, wrt="self.W"), lambda W: mod.Model(W)(X)),
    ]:
        copy = round_trip(made)
        assert_close(copy(X), made(X))
        assert_close(copy(X), central_difference(function, [model.W], 0), tol=1e-6)


def test_grad_of_grad_still_compiles_and_round_trips():
    second = grad(grad(mod.cube))
    assert second(2.0) == 12.0
    assert round_trip(second)(2.0) == 12.0


def test_a_function_defined_in_a_body_is_sent_by_value_with_its_source():
    def helper(h):
        return np.sin(h) * h

    @differentiable
    def local_loss(W, X):
        return np.sum(helper(X @ W))

    def plain_loss(W, X):
        return np.sum(np.cos(X @ W) ** 2)

    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(local_loss)  # plain pickle cannot send a local function
    copy = round_trip(local_loss, cloudpickle.dumps)
    assert copy is not local_loss and copy.backward_source() == local_loss.backward_source()
    for f in (local_loss, plain_loss):
        both = value_and_grad(f)
        value, gradient = round_trip(both, cloudpickle.dumps)(W, X)
        expected = both(W, X)
        assert_close(value, expected[0])
        assert_close(gradient, expected[1])
        assert_close(gradient, central_difference(f, [W, X], 0), tol=1e-6)


def test_a_compiled_function_loads_where_its_source_file_is_missing():
    """A notebook cell's function: its file exists only in the sending process."""
    namespace = {"np": np, "differentiable": differentiable}
    source = "@differentiable\ndef cell_loss(x):\n    return np.sum(np.exp(x) * x)\n"
    filename = "<cell-in-another-process>"
    import linecache

    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    shipped = cloudpickle.dumps(grad(namespace["cell_loss"]))
    del linecache.cache[filename]  # as in a process that never ran the cell
    x = RNG.normal(size=3)
    assert_close(pickle.loads(shipped)(x), np.exp(x) * (1 + x))


def channel(value):
    return np.full((1, 3), value)


@pytest.mark.parametrize(
    "op, params",
    [
        (SReLUFunction("BC"), [channel(-0.5), channel(0.1), channel(0.5), channel(0.3)]),
        (PReLUFunction("BC"), [channel(0.25)]),
    ],
    ids=["srelu", "prelu"],
)
def test_custom_ops_round_trip(op, params):
    copy = round_trip(op)
    inputs = (RNG.normal(size=(4, 3)), *params)
    outputs, saved = op.op_forward(*inputs)
    copied, copied_saved = copy.op_forward(*inputs)
    assert_close(copied[0], outputs[0])
    seeds = (np.ones_like(outputs[0]),)
    flags = (True,) * len(inputs)
    for a, e in zip(
        copy.op_backward(seeds, flags, copied_saved),
        op.op_backward(seeds, flags, saved),
        strict=True,
    ):
        assert_close(a, e)


def test_a_custom_op_defined_in_a_body_is_sent_by_value():
    class Cube(DifferentiableFunction):
        def __init__(self):
            super().__init__(save_inputs_for_backward=True, name="cube")

        def forward(self, x):
            return x**3

        def backward(self, d_y, compute_gradients, x):
            return 3 * x**2 * d_y

    copy = round_trip(Cube(), cloudpickle.dumps)
    x = RNG.normal(size=4)
    outputs, saved = copy.op_forward(x)
    (d_x,) = copy.op_backward((np.ones(4),), (True,), saved)
    assert_close(outputs[0], x**3)
    assert_close(d_x, central_difference(lambda v: np.sum(v**3), [x], 0), tol=1e-6)


@pytest.mark.parametrize("autodiff", ["compiler", "tracing"])
def test_a_trained_network_round_trips_and_trains_on_identically(autodiff):
    Xn, yn = RNG.normal(size=(8, 3)), RNG.integers(0, 2, 8)
    model = nn.Sequential(
        [nn.FullyConnected(4), nn.SReLULayer(), nn.FullyConnected(2), nn.Softmax()]
    ).initialize(Xn)
    nn.train(model, Xn, yn, epochs=2, progress=False, autodiff=autodiff)
    copy = round_trip(model)
    assert_close(copy.predict(Xn), model.predict(Xn))
    kept = nn.train(model, Xn, yn, epochs=2, progress=False, optimizer=nn.SGD(0.1))
    sent = nn.train(copy, Xn, yn, epochs=2, progress=False, optimizer=nn.SGD(0.1))
    assert kept.loss == sent.loss


LOAD_AND_RUN = """
import pickle, sys, json
import numpy as np
function = pickle.loads(open(sys.argv[1], "rb").read())
args = [np.asarray(a) for a in json.loads(sys.argv[2])]
value, gradient = function(*args)
print(json.dumps([float(value), np.asarray(gradient).tolist()]))
"""


def run_in_fresh_interpreter(function, args, tmp_path, dumps):
    path = tmp_path / "function.pickle"
    path.write_bytes(dumps(function))
    root = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root.parent), str(root)])}
    done = subprocess.run(
        [sys.executable, "-c", LOAD_AND_RUN, str(path), json.dumps([a.tolist() for a in args])],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    value, gradient = json.loads(done.stdout)
    return value, np.array(gradient)


def test_a_fresh_interpreter_loads_and_runs_a_module_gradient(tmp_path):
    both = value_and_grad(mod.loss, wrt="W")
    value, gradient = run_in_fresh_interpreter(both, [W, B, X], tmp_path, pickle.dumps)
    assert_close(value, both(W, B, X)[0])
    assert_close(gradient, both(W, B, X)[1])


def test_a_fresh_interpreter_loads_and_runs_a_gradient_sent_by_value(tmp_path):
    def body_loss(W, X):
        return np.sum(np.log1p(np.exp(X @ W)))

    both = value_and_grad(body_loss)
    value, gradient = run_in_fresh_interpreter(both, [W, X], tmp_path, cloudpickle.dumps)
    assert_close(value, both(W, X)[0])
    assert_close(gradient, both(W, X)[1])
    assert_close(gradient, central_difference(body_loss, [W, X], 0), tol=1e-6)


PULL_BACK = """
import pickle, sys, json
import numpy as np
pullback = pickle.loads(open(sys.argv[1], "rb").read())
seed = np.asarray(json.loads(sys.argv[2]))
print(json.dumps([np.asarray(g).tolist() for g in pullback(seed)]))
"""


@pytest.mark.parametrize("where", ["module", "body"])
def test_a_pullback_loads_in_a_fresh_interpreter_and_pulls_back_the_same(where, tmp_path):
    """``vjp``'s pullback pickles as the call that made it (the function, the
    arguments, ``wrt``): another process runs the forward again and pulls back the same
    gradients — by reference for a module's function, by value for one defined here."""

    def body_layer(W, X):
        return np.tanh(X @ W)

    layer, dumps = (mod.squash, pickle.dumps) if where == "module" else (body_layer, None)
    args = (X @ W + B,) if where == "module" else (W, X)
    out, pullback = vjp(layer, *args)
    seed = np.linspace(-1.0, 1.0, out.size).reshape(out.shape)
    path = tmp_path / "pullback.pickle"
    path.write_bytes((dumps or cloudpickle.dumps)(pullback))
    root = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root.parent), str(root)])}
    command = [sys.executable, "-c", PULL_BACK, str(path), json.dumps(seed.tolist())]
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )
    assert done.returncode == 0, done.stderr
    there = [np.array(g) for g in json.loads(done.stdout)]
    here = pullback(seed)
    assert len(there) == len(here)
    for g_there, g_here in zip(there, here, strict=True):
        assert_close(g_there, g_here)
    dW = central_difference(lambda w: float(np.sum(layer(w, *args[1:]) * seed)), list(args[:1]), 0)
    assert_close(here[0], dW, tol=1e-6)


RUN_ON_ITS_BACKEND = """
import pickle, sys, json
import numpy as np
from autodiff_tutor import value_and_grad
compiled = pickle.loads(open(sys.argv[1], "rb").read())
x = np.asarray(json.loads(sys.argv[2]))
both = value_and_grad(compiled)
for _ in range(3):  # the fused kernel runs from the second call
    value, gradient = both(x)
notes = [p.fused_note for p in compiled.derivative(0).specializations.values() if p]
print(json.dumps([compiled.backend, notes, float(value), gradient.tolist()]))
"""


def test_a_function_on_the_fused_backend_is_loaded_on_it(tmp_path):
    """``differentiable(f, backend="numba")`` sent by value to a fresh interpreter runs
    there as the fused kernel (not as numpy code), with the gradient the numpy
    backend and central differences give."""
    pytest.importorskip("numba")

    def smooth(x):
        return np.sum(np.tanh(x[1:] - x[:-1]) ** 2) + np.sum(x * x)

    path = tmp_path / "function.pickle"
    path.write_bytes(cloudpickle.dumps(differentiable(smooth, backend="numba")))
    x = np.linspace(-1.0, 1.0, 9)
    root = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root.parent), str(root)])}
    command = [sys.executable, "-c", RUN_ON_ITS_BACKEND, str(path), json.dumps(x.tolist())]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    backend, notes, value, gradient = json.loads(done.stdout)
    assert backend == "numba" and notes == ["fused by numba"]
    expected_value, expected = value_and_grad(smooth)(x)
    assert_close(value, expected_value)
    assert_close(gradient, expected, tol=1e-11)
    assert_close(gradient, central_difference(smooth, [x], 0), tol=1e-6)
