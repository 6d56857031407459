"""Networks: layers in a small graph (``Network``), or one after the other (``Sequential``).

A :class:`Network` has named inputs and named nodes; each node is a layer reading
network inputs or other nodes' outputs (``"fc"`` is node ``fc``'s first output,
``"split:1"`` its second), so layers with several inputs (an addition, a
concatenation) and several outputs fit in. Its interface is MATLAB's:

- ``predict(X)``: the output at inference;
- ``forward(X)`` -> ``(Y, state)``: the output at training time and the new state
  (running means, hidden states), to store with ``net.state = state``;
- ``learnables``: the learnable parameters, ``{(node, name): array}``; inside
  ``evaluate`` they are variables of the running trace, so
  ``gradient(loss, net.learnables)`` gives a dict of the same keys, which an
  optimizer's ``update(net, grads)`` consumes.

Inside ``evaluate`` a layer with a backward is one op on the tape (its backward is
used); a layer without one is compiled (``autodiff="compiler"``, one op on the tape)
or traced through (``autodiff="tracing"``, its numpy operations on the tape).
``record`` and ``backward`` are the hand-written training pass ``train`` uses.

>>> import numpy as np
>>> from autodiff_tutor.nn import FullyConnected, PReLULayer
>>> model = Sequential([FullyConnected(3), PReLULayer()]).initialize(np.zeros((4, 2)))
>>> Y, tape = model.record(np.ones((4, 2)))
>>> grads = model.backward(tape, np.ones_like(Y))
>>> for key, g in grads.items():
...     print(key, g.shape)
('FullyConnected', 'W') (2, 3)
('FullyConnected', 'b') (1, 3)
('PReLULayer', 'alpha') (1, 3)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from autodiff_tutor.errors import ArgumentError
from autodiff_tutor.locations import location
from autodiff_tutor.nn.autodiff import check_autodiff
from autodiff_tutor.nn.layer import Layer, Layout, as_outputs
from autodiff_tutor.nn.layer_op import LayerOp
from autodiff_tutor.runtime.backend import zeros_like

__all__ = ["Network", "Sequential"]

Key = tuple[str, str]


@dataclass
class Node:
    """One layer of a network and where its inputs come from."""

    name: str
    layer: Layer
    inputs: tuple[str, ...]


def _source(ref: str) -> tuple[str, int]:
    name, _, index = ref.partition(":")
    return name, int(index) if index else 0


class Network:
    """Layers in a graph (see the module docstring).

    >>> import numpy as np
    >>> from autodiff_tutor.nn import Addition, FullyConnected
    >>> net = Network(inputs=("X",))
    >>> net = net.add("a", FullyConnected(2)).add("b", FullyConnected(2), inputs=("X",))
    >>> net = net.add("sum", Addition(), inputs=("a", "b"))
    >>> net.initialize(np.zeros((3, 4))).predict(np.zeros((3, 4))).shape
    (3, 2)
    """

    def __init__(self, inputs: tuple[str, ...] = ("X",), autodiff: str = "compiler") -> None:
        self.input_names = tuple(inputs)
        self.nodes: list[Node] = []
        self.outputs: tuple[str, ...] = ()
        self.autodiff = check_autodiff(autodiff)
        self._bound: tuple[Any, dict[Key, Any]] | None = None

    # --- building ----------------------------------------------------------------------

    def add(
        self, name: str, layer: Layer, inputs: tuple[str, ...] | list[str] | None = None
    ) -> Network:
        """Add ``layer`` as node ``name`` reading ``inputs`` (default: the last node, or
        the network's inputs for the first); the last node added is the output."""
        if not isinstance(layer, Layer):
            raise ArgumentError(
                f"node {name!r} is a {type(layer).__name__}, not a Layer",
                location(),
                hint="build the network from autodiff_tutor.nn layers",
            )
        known = {*self.input_names, *(n.name for n in self.nodes)}
        if name in known:
            raise ArgumentError(
                f"the network already has a node or input named {name!r}", location()
            )
        if inputs is None:
            inputs = (self.nodes[-1].name,) if self.nodes else self.input_names
        inputs = tuple(inputs)
        for ref in inputs:
            if _source(ref)[0] not in known:
                raise ArgumentError(
                    f"node {name!r} reads {ref!r}, which is not an input or an earlier node",
                    location(),
                    hint=f"known so far: {sorted(known)}",
                )
        if len(inputs) != layer.num_inputs:
            raise ArgumentError(
                f"node {name!r}: layer {layer.name!r} takes {layer.num_inputs} input(s), "
                f"given {len(inputs)}",
                location(),
            )
        earlier = next((node.name for node in self.nodes if node.layer is layer), None)
        if earlier is not None:  # its parameters would be stepped by one node's gradient
            raise ArgumentError(
                f"node {name!r}: this {type(layer).__name__} is already node {earlier!r}; "
                "a layer object is one node of a network",
                location(),
                hint=f"make a second layer ({type(layer).__name__}(...) again); for weights "
                "shared by two nodes, write one layer that applies them twice",
            )
        self.nodes.append(Node(name, layer, inputs))
        self.outputs = (name,)
        return self

    @property
    def layers(self) -> list[Layer]:
        """The layers, in the order they run."""
        return [node.layer for node in self.nodes]

    def initialize(self, layout: Any, seed: int = 0) -> Network:
        """Initialize every layer, passing example inputs (or layouts) through the network."""
        rng = np.random.default_rng(seed)
        examples = layout if isinstance(layout, tuple) else (layout,)
        examples = tuple(e.example() if isinstance(e, Layout) else e for e in examples)
        values = dict(zip(self.input_names, ((e,) for e in examples), strict=True))
        for node in self.nodes:
            X = tuple(values[n][k] for n, k in map(_source, node.inputs))
            node.layer.initialize(X if len(X) > 1 else X[0], rng)
            values[node.name] = as_outputs(node.layer, node.layer.predict(*X))
        return self

    # --- running -----------------------------------------------------------------------

    def _run(self, X: tuple[Any, ...], step: Any) -> tuple[Any, dict[Key, Any]]:
        if len(X) != len(self.input_names):
            raise ArgumentError(
                f"the network takes {len(self.input_names)} input(s) {self.input_names}, "
                f"got {len(X)}",
                location(),
            )
        values = {name: (x,) for name, x in zip(self.input_names, X, strict=True)}
        state: dict[Key, Any] = {}
        for node in self.nodes:
            inputs = tuple(values[n][k] for n, k in map(_source, node.inputs))
            outputs = step(node, inputs)
            m = node.layer.num_outputs
            values[node.name] = outputs[:m]
            state.update(
                {(node.name, s): v for s, v in zip(node.layer.states, outputs[m:], strict=True)}
            )
        results = tuple(values[n][k] for n, k in map(_source, self.outputs))
        return (results[0] if len(results) == 1 else results), state

    def predict(self, *X: Any) -> Any:
        """The network's output for ``X`` (inference: every layer's ``predict``);
        differentiable inside ``evaluate``, as ``forward``."""
        out, _ = self._run(X, self._step("predict"))
        return out

    def forward(self, *X: Any) -> tuple[Any, dict[Key, Any]]:
        """``(Y, state)`` at training time: the output and every layer's new state.

        Inside ``evaluate`` the learnable parameters are the trace's variables
        (``learnables``), so ``gradient(loss, net.learnables)`` works.
        """
        return self._run(X, self._step("forward"))

    def _step(self, method: str) -> Any:
        """How one node runs: plainly, or inside ``evaluate`` on the trace's variables."""
        from autodiff_tutor.tracing import active_tape, call_op

        if active_tape() is None:
            return lambda node, x: as_outputs(node.layer, getattr(node.layer, method)(*x))
        learnables = self.learnables

        def step(node: Node, x: tuple[Any, ...]) -> tuple[Any, ...]:
            layer = node.layer
            params = tuple(learnables[(node.name, n)] for n in layer.learnables)
            state = layer.state_values()
            if not layer.has_backward and self.autodiff == "tracing":
                clone = layer.with_params(params, state)
                return as_outputs(layer, getattr(clone, method)(*x))  # numpy ops on the tape
            result = call_op(LayerOp(layer, self.autodiff, method), *x, *params, *state)
            return result if isinstance(result, tuple) else (result,)

        return step

    # --- parameters and state ------------------------------------------------------------

    def parameters(self) -> Iterator[tuple[Layer, str]]:
        """Every learnable parameter as ``(layer, name)``."""
        for node in self.nodes:
            for name in node.layer.learnables:
                yield node.layer, name

    def layer(self, name: str) -> Layer:
        """The layer of node ``name``."""
        for node in self.nodes:
            if node.name == name:
                return node.layer
        raise ArgumentError(f"the network has no node named {name!r}", location())

    @property
    def learnables(self) -> dict[Key, Any]:
        """``{(node, name): value}``; inside ``evaluate``, variables of its trace."""
        from autodiff_tutor.tracing import active_tape, new_variables

        plain = {
            (node.name, n): node.layer.params[n]
            for node in self.nodes
            for n in node.layer.learnables
        }
        tape = active_tape()
        if tape is None:
            return plain
        if self._bound is None or self._bound[0] is not tape:
            bound = {key: new_variables(v, "/".join(key)) for key, v in plain.items()}
            self._bound = (tape, bound)
        return self._bound[1]

    @property
    def state(self) -> dict[Key, Any]:
        """``{(node, name): value}`` of every state parameter; assign a ``forward``'s
        state to keep it (traced values are stored as their data)."""
        return {
            (node.name, n): node.layer.state[n] for node in self.nodes for n in node.layer.states
        }

    @state.setter
    def state(self, values: dict[Key, Any]) -> None:
        from autodiff_tutor.tracing import is_traced

        for (name, n), value in values.items():
            self.layer(name).state[n] = value._data if is_traced(value) else value

    def reset_state(self) -> Network:
        """Put every layer's state back to its initial value; returns the network."""
        for node in self.nodes:
            node.layer.reset_state()
        return self

    # --- the hand-written training pass ------------------------------------------------------

    def record(self, *X: Any, autodiff: str | None = None) -> tuple[Any, list]:
        """The training output and a tape of what each layer's backward needs
        (the new state is stored in the layers)."""
        mode = check_autodiff(autodiff or self.autodiff)
        tape: list[tuple[Node, LayerOp, Any]] = []

        def step(node: Node, x: tuple[Any, ...]) -> tuple[Any, ...]:
            layer = node.layer
            op = LayerOp(layer, mode)
            outputs, saved = op.op_forward(*x, *layer.parameters(), *layer.state_values())
            tape.append((node, op, saved))
            return outputs

        Y, state = self._run(X, step)
        self.state = state
        return Y, tape

    def backward(self, tape: list, dY: Any) -> dict[Key, Any]:
        """Gradients of every learnable parameter, ``{(node, name): gradient}``."""
        outputs = self.outputs
        adjoints: dict[tuple[str, int], Any] = {_source(outputs[0]): dY}
        grads: dict[Key, Any] = {}
        for node, op, saved in reversed(tape):
            layer = node.layer
            produced = saved[2]
            d_outputs = tuple(adjoints.pop((node.name, k), None) for k in range(len(produced)))
            d_outputs = tuple(
                d if d is not None else zeros_like(y)
                for d, y in zip(d_outputs, produced, strict=True)
            )
            from_nodes = tuple(_source(r)[0] not in self.input_names for r in node.inputs)
            flags = from_nodes + (True,) * len(layer.learnables) + (False,) * len(layer.states)
            result = op.op_backward(d_outputs, flags, saved)
            n = layer.num_inputs
            for ref, d in zip(node.inputs, result[:n], strict=True):
                if d is not None and _source(ref)[0] not in self.input_names:
                    key = _source(ref)
                    adjoints[key] = d if key not in adjoints else adjoints[key] + d
            for name, g in zip(layer.learnables, result[n:], strict=False):
                grads[(node.name, name)] = g
        order = [(node.name, n) for node in self.nodes for n in node.layer.learnables]
        return {key: grads[key] for key in order}

    def __repr__(self) -> str:
        lines = "".join(
            f"  {node.name} <- {', '.join(node.inputs)}: {node.layer!r}\n" for node in self.nodes
        )
        return f"{type(self).__name__}(\n{lines})"


class Sequential(Network):
    """A list of layers applied in order (a network whose nodes form a chain).

    Node names are the layers' names, numbered where two are the same.

    >>> import numpy as np
    >>> from autodiff_tutor.nn import FullyConnected, Softmax
    >>> model = Sequential([FullyConnected(2), FullyConnected(2), Softmax()])
    >>> [node.name for node in model.nodes]
    ['FullyConnected', 'FullyConnected_2', 'Softmax']
    >>> model.initialize(np.zeros((1, 2))).predict(np.zeros((1, 2))).tolist()
    [[0.5, 0.5]]
    """

    def __init__(self, layers: list[Layer], autodiff: str = "compiler") -> None:
        super().__init__(("X",), autodiff)
        counts: dict[str, int] = {}
        for i, layer in enumerate(layers):
            if not isinstance(layer, Layer):
                raise ArgumentError(
                    f"Sequential: item {i} is a {type(layer).__name__}, not a Layer",
                    location(),
                    hint="build the model from autodiff_tutor.nn layers",
                )
            counts[layer.name] = counts.get(layer.name, 0) + 1
            suffix = f"_{counts[layer.name]}" if counts[layer.name] > 1 else ""
            self.add(layer.name + suffix, layer)
