"""The header of the code shown for a bound method, a callable object or a partial:
what it was specialized on (the object and its class, functions it holds, the count of
``*args``, methods inlined), in plain words, above code that keeps the user's names."""

import functools

import numpy as np

from autodiff_tutor import differentiable


class Model:
    def __init__(self):
        self.W = np.eye(2)
        self.b = np.zeros(2)
        self.act = np.tanh
        self.nfev = 0

    def predict(self, x):
        return self.act(x @ self.W + self.b)

    def loss(self, x, *args):
        self.nfev += 1
        hidden = self.predict(x)
        return np.sum(hidden**2)


def head(text):
    return text.split("\ndef ")[0].splitlines()


def test_header_names_the_object_its_functions_varargs_and_inlined_methods():
    compiled = differentiable(Model().loss)
    forward, backward = compiled.forward_source(), compiled.backward_source()
    lines = head(forward)
    assert lines[0] == "# loss, specialized on:"
    assert lines[1].startswith("#   self = a Model: attributes W, b, nfev read at each call")
    assert "#   self.act = numpy.tanh" in lines
    assert "#   args = 0 extra arguments" in lines
    assert "#   methods inlined: Model.predict" in lines
    assert head(backward) == lines
    # the object passed for its writes is named as itself, not as an attribute leaf
    assert "self_object" not in lines[1]
    assert any(line.startswith("#   self_object = the Model itself") for line in lines)
    # the code under the header reads like the user's: their names kept
    body = forward.split("\ndef ", 1)[1]
    assert "hidden" in body and "x" in body
    assert compiled.source().startswith("# loss, specialized on:")


def test_header_of_a_callable_object_and_a_partial():
    class Scale:
        def __init__(self):
            self.s = np.ones(2)

        def __call__(self, x):
            return np.sum(self.s * x)

    assert head(differentiable(Scale()).forward_source())[1] == (
        "#   self = a Scale: attributes s read at each call (as self_s)"
    )

    def weighted(x, n, act):
        return np.sum(act(x) * n)

    lines = head(differentiable(functools.partial(weighted, n=3, act=np.sin)).forward_source())
    assert lines[0] == "# weighted, specialized on:"
    assert "#   act = numpy.sin" in lines


def test_html_display_starts_with_the_header():
    page = differentiable(Model().loss)._repr_html_()
    assert "specialized on" in page
