"""Optimizers: SGD with momentum and Adam, updating a model's parameters in place.

``update(net, grads)`` takes the ``{(node, name): gradient}`` dict that
``gradient(loss, net.learnables)`` (or :meth:`~autodiff_tutor.nn.Network.backward`)
returns; ``step(grads)`` the same keyed by ``(layer, name)``. Each parameter is
replaced by its updated value (new arrays: nothing is written into the old ones, so
this works with array libraries that have no in-place updates).

>>> import numpy as np
>>> from autodiff_tutor.nn import PReLULayer, Sequential
>>> net = Sequential([PReLULayer(initial_alpha=0.25)]).initialize(np.zeros((1, 1)))
>>> SGD(learning_rate=0.1, momentum=0.0).update(net, {("PReLULayer", "alpha"): np.ones((1, 1))})
>>> net.learnables
{('PReLULayer', 'alpha'): array([[0.15]])}
"""

from __future__ import annotations

from typing import Any

from autodiff_tutor.errors import ArgumentError
from autodiff_tutor.locations import location
from autodiff_tutor.runtime.backend import array_module

__all__ = ["SGD", "Adam", "Optimizer"]


def _positive(value: float, what: str) -> float:
    if not value > 0:
        raise ArgumentError(f"{what} must be positive, got {value!r}", location())
    return float(value)


def _fraction(value: float, what: str) -> float:
    if not 0 <= value < 1:
        raise ArgumentError(f"{what} must be in [0, 1), got {value!r}", location())
    return float(value)


class Optimizer:
    """Base class: keeps per-parameter state keyed by ``(id(layer), name)``.

    Subclasses write ``rule(key, param, grad)`` returning the new value.

    >>> import numpy as np
    >>> from autodiff_tutor.nn import PReLULayer
    >>> class Halve(Optimizer):
    ...     def rule(self, key, param, grad):
    ...         return param / 2
    >>> layer = PReLULayer(initial_alpha=0.25).initialize(np.zeros((1, 1)))
    >>> Halve().step({(layer, "alpha"): None})
    >>> layer.params["alpha"].tolist()
    [[0.125]]
    """

    def __init__(self) -> None:
        self.state: dict[tuple[int, str], Any] = {}
        self.iteration = 0

    def step(self, grads: dict[tuple[Any, str], Any]) -> None:
        """Update every parameter in ``grads``, keyed by ``(layer, name)``."""
        self.iteration += 1
        for (layer, name), g in grads.items():
            key = (id(layer), name)
            layer.params[name] = self.rule(key, layer.params[name], g)

    def update(self, net: Any, grads: dict[tuple[str, str], Any]) -> None:
        """Update ``net``'s parameters from ``grads``, keyed by ``(node, name)`` like
        ``net.learnables`` (what ``gradient(loss, net.learnables)`` returns)."""
        from autodiff_tutor.tracing import is_traced

        if not isinstance(grads, dict):
            raise ArgumentError(
                f"update(net, grads) needs a dict of gradients, got {type(grads).__name__}",
                location(),
                hint="grads = gradient(loss, net.learnables) gives one",
            )
        plain = {key: g._data if is_traced(g) else g for key, g in grads.items()}
        self.step({(net.layer(node), name): g for (node, name), g in plain.items()})

    def rule(self, key: tuple[int, str], param: Any, grad: Any) -> Any:
        """The new value of one parameter."""
        raise NotImplementedError


class SGD(Optimizer):
    """Stochastic gradient descent with momentum: ``v = m v - lr g; p = p + v``.

    >>> SGD(learning_rate=0.01, momentum=0.9).momentum
    0.9
    """

    def __init__(self, learning_rate: float = 0.01, momentum: float = 0.9) -> None:
        super().__init__()
        self.learning_rate = _positive(learning_rate, "learning_rate")
        self.momentum = _fraction(momentum, "momentum")

    def rule(self, key: tuple[int, str], param: Any, grad: Any) -> Any:
        """One momentum step."""
        velocity = self.state.get(key)
        step = -self.learning_rate * grad
        velocity = step if velocity is None else self.momentum * velocity + step
        self.state[key] = velocity
        return param + velocity


class Adam(Optimizer):
    """Adam: bias-corrected running means of the gradient and its square.

    >>> import numpy as np
    >>> from autodiff_tutor.nn import PReLULayer
    >>> layer = PReLULayer(initial_alpha=0.25).initialize(np.zeros((1, 1)))
    >>> Adam(learning_rate=0.1).step({(layer, "alpha"): np.array([[5.0]])})
    >>> round(float(layer.params["alpha"][0, 0]), 6)           # first step moves by lr
    0.15
    """

    def __init__(
        self,
        learning_rate: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-8,
    ) -> None:
        super().__init__()
        self.learning_rate = _positive(learning_rate, "learning_rate")
        self.beta1 = _fraction(beta1, "beta1")
        self.beta2 = _fraction(beta2, "beta2")
        self.epsilon = _positive(epsilon, "epsilon")

    def rule(self, key: tuple[int, str], param: Any, grad: Any) -> Any:
        """One Adam step (``self.iteration`` is the step count used for bias correction)."""
        xp = array_module(param, grad)
        m, v = self.state.get(key, (0.0, 0.0))
        m = self.beta1 * m + (1 - self.beta1) * grad
        v = self.beta2 * v + (1 - self.beta2) * grad * grad
        self.state[key] = (m, v)
        m_hat = m / (1 - self.beta1**self.iteration)
        v_hat = v / (1 - self.beta2**self.iteration)
        return param - self.learning_rate * m_hat / (xp.sqrt(v_hat) + self.epsilon)
