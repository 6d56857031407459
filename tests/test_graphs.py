"""The picture of the graph (``autodiff_tutor.graph``): its structure, not its pixels.

For known programs, compiled and traced: which nodes the forward has (the user's
names, operations and lines), which edges (with the shapes of the values they carry),
which gradients the adjoint computes and beside which value each is drawn; the
gradients' shapes agree with autograd's gradients; and the SVG draws every node and
edge, the forward on the left and each gradient on its value's row.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

from autodiff_tutor import AutodiffError, differentiable, grad, graph
from autodiff_tutor.tracing import evaluate, gradient, last_tape, traced

SVG = "{http://www.w3.org/2000/svg}"


def loss(W, b, X):
    h = np.tanh(X @ W + b)
    return np.sum(h * h)


def loss_autograd(W, b, X):
    h = anp.tanh(anp.dot(X, W) + b)
    return anp.sum(h * h)


def _arguments():
    rng = np.random.default_rng(0)
    return rng.normal(size=(4, 3)), rng.normal(size=3), rng.normal(size=(5, 4))


def _edges(picture, kind):
    return {
        (picture.by_id(e.source).name, picture.by_id(e.target).name, e.shape)
        for e in picture.edges
        if e.kind == kind
    }


def test_compiled_forward_has_the_users_names_operations_lines_and_shapes():
    picture = graph(loss, *_arguments())
    first = loss.__code__.co_firstlineno
    forward = {n.name: n for n in picture.side("forward")}
    assert list(forward) == ["W", "b", "X", "t1", "t2", "h", "t3", "out"]
    assert {n: forward[n].operation for n in ("t1", "t2", "h", "t3", "out")} == {
        "t1": "matmul",
        "t2": "add",
        "h": "tanh",
        "t3": "multiply",
        "out": "sum",
    }
    assert forward["h"].line == first + 1 and forward["out"].line == first + 2
    assert forward["h"].label == "" and forward["t1"].label == "X @ W"  # yours: your name
    assert [forward[n].role for n in ("W", "h", "out")] == ["input", "operation", "output"]
    assert _edges(picture, "forward") == {
        ("X", "t1", (5, 4)),
        ("W", "t1", (4, 3)),
        ("t1", "t2", (5, 3)),
        ("b", "t2", (3,)),
        ("t2", "h", (5, 3)),
        ("h", "t3", (5, 3)),
        ("t3", "out", (5, 3)),
    }


def test_compiled_adjoint_mirrors_the_forward_beside_each_value():
    picture = graph(loss, *_arguments())
    adjoint = {n.name: n for n in picture.side("adjoint")}
    assert set(adjoint) == {"d_out", "d_t3", "d_h", "d_t2", "d_t1", "d_b", "d_X", "d_W"}
    for name, node in adjoint.items():  # each gradient beside the value it is of
        assert picture.by_id(node.beside).name == name.removeprefix("d_")
    assert adjoint["d_out"].role == "seed"
    assert {n for n, node in adjoint.items() if node.role == "gradient"} == {"d_W", "d_b", "d_X"}
    assert adjoint["d_t2"].operation == "tanh backward"
    assert _edges(picture, "adjoint") == {
        ("d_out", "d_t3", ()),
        ("d_t3", "d_h", (5, 3)),
        ("d_h", "d_t2", (5, 3)),
        ("d_t2", "d_t1", (5, 3)),
        ("d_t2", "d_b", (5, 3)),
        ("d_t1", "d_X", (5, 3)),
        ("d_t1", "d_W", (5, 3)),
    }
    # the backward of tanh reads its output h, saved by the forward
    assert ("h", "d_t2") in {(s, t) for s, t, _ in _edges(picture, "saved")}


def test_compiled_gradient_shapes_agree_with_autograd():
    args = _arguments()
    picture = graph(loss, *args)
    expected = autograd.grad(loss_autograd, (0, 1, 2))(*args)
    shapes = {n.name: n.shape for n in picture.side("adjoint") if n.role == "gradient"}
    assert shapes == {f"d_{p}": g.shape for p, g in zip("WbX", expected, strict=True)}


def test_only_the_gradients_asked_for_are_drawn():
    picture = graph(loss, *_arguments(), wrt="W")
    names = {n.name for n in picture.side("adjoint")}
    assert "d_W" in names and not names & {"d_b", "d_X"}


def test_a_name_assigned_twice_is_two_nodes_and_a_branch_draws_both_sides():
    @differentiable
    def f(x):
        y = x * 2.0
        y = np.sin(y)
        if np.sum(x) > 0:
            z = y * y
        else:
            z = -y
        return np.sum(z)

    picture = graph(f, np.ones(3))
    first, second = [n for n in picture.side("forward") if "y" in (n.name, n.label)]
    assert (first.operation, second.operation) == ("multiply", "sin")
    assert second.label == "y" and picture.inputs_of(second.id) == ["y"]
    sides = {n.operation for n in picture.side("forward")} & {"multiply", "negative"}
    assert sides == {"multiply", "negative"}
    total = picture.named("out", "forward")[0]
    assert len(picture.inputs_of(total.id)) == 2  # the sum reads either side's z


def test_without_arguments_the_graph_has_no_shapes():
    picture = graph(differentiable(loss))
    assert [n.shape for n in picture.side("forward")] == [None] * 8


def test_trace_graph_has_the_arguments_names_and_the_operations_lines():
    def model(W, b, X):
        h = np.tanh(X @ W + b)
        y = np.sum(h * h)
        return y, gradient(y, W)

    W, b, X = _arguments()
    evaluate(model, traced(W), traced(b), X)
    picture = graph(last_tape())
    first = model.__code__.co_firstlineno
    forward = picture.side("forward")
    assert [(n.name, n.operation) for n in forward] == [
        ("W", "argument"),
        ("b", "argument"),
        ("v2", "matmul"),
        ("v3", "add"),
        ("v4", "tanh"),
        ("v5", "multiply"),
        ("v6", "sum"),
    ]
    assert [n.line for n in forward[2:]] == [first + 1] * 3 + [first + 2] * 2
    # X is a plain array (a constant of the trace): no edge comes from it
    assert _edges(picture, "forward") >= {("W", "v2", (4, 3)), ("b", "v3", (3,))}
    assert picture.inputs_of(forward[2].id) == ["W"]
    adjoint = {n.name: n for n in picture.side("adjoint")}
    assert set(adjoint) == {"d_W", "d_b", "d_v2", "d_v3", "d_v4", "d_v5", "d_v6"}
    assert adjoint["d_v6"].role == "seed" and adjoint["d_W"].role == "gradient"
    assert adjoint["d_W"].shape == W.shape and adjoint["d_b"].shape == b.shape
    assert ("d_v3", "d_b", (5, 3)) in _edges(picture, "adjoint")


def test_trace_operations_without_gradient_are_grey_and_have_no_adjoint():
    def model(x):
        mask = x > 0
        return np.sum(np.where(mask, x, 0.0))

    evaluate(model, traced(np.array([-1.0, 2.0])))
    picture = graph(last_tape())
    greater = next(n for n in picture.side("forward") if n.operation == "greater")
    assert greater.role == "no gradient"
    assert greater.id not in {n.beside for n in picture.side("adjoint")}


def test_a_traced_value_draws_its_trace():
    y = evaluate(lambda x: np.sin(x), traced(np.ones(2)))
    assert [n.operation for n in graph(y).side("forward")] == ["argument", "sin"]


def test_graph_of_something_else_is_refused():
    with pytest.raises(AutodiffError, match="draws a function or a trace"):
        graph(3.0)
    with pytest.raises(AutodiffError, match="never recorded on a trace"):
        graph(traced(1.0))  # made outside evaluate(): no tape to draw


def test_svg_draws_every_node_and_edge_the_adjoint_right_of_the_forward():
    picture = graph(loss, *_arguments())
    root = ET.fromstring(picture.svg())
    assert root.tag == f"{SVG}svg" and root.get("data-autodiff-graph") == "loss"
    groups = {g.get("data-node"): g for g in root.iter(f"{SVG}g") if g.get("data-node")}
    assert set(groups) == {n.id for n in picture.nodes}
    drawn_edges = {g.get("data-edge") for g in root.iter(f"{SVG}g") if g.get("data-edge")}
    assert drawn_edges == {f"{e.source}->{e.target}" for e in picture.edges}

    def box(node_id):
        rect = groups[node_id].find(f"{SVG}rect")
        return float(rect.get("x")), float(rect.get("y")), float(rect.get("width"))

    right_of_forward = max(box(n.id)[0] + box(n.id)[2] for n in picture.side("forward"))
    for node in picture.side("adjoint"):
        x, y, _ = box(node.id)
        assert x > right_of_forward and y == box(node.beside)[1]  # on its value's row
    texts = "".join(root.itertext())
    assert "h" in texts and "tanh · line" in texts and "(5, 3)" in texts


def test_a_gradient_written_element_by_element_is_a_chain_of_updates():
    @differentiable
    def energy(x):
        return x[0] * x[1] + x[2] * x[2] * x[0]

    picture = graph(energy, np.array([0.3, -1.2, 2.0]))
    updates = picture.named("d_x", "adjoint")
    assert len(updates) == 4  # zeros, then d_x[2] += ..., d_x[1] += ..., d_x[0] += ...
    for before, after in zip(updates, updates[1:], strict=False):
        assert picture.inputs_of(after.id, "adjoint")[0] == "d_x"
        assert [e.source for e in picture.edges if e.target == after.id][0] == before.id
    assert [u.role for u in updates] == ["operation"] * 3 + ["gradient"]
    assert {picture.inputs_of(u.id, "adjoint")[1] for u in updates[1:]} == {"d_t1", "d_t2", "d_t4"}


def _corpus_cases():
    from corpus_flow import load_all
    from corpus_straight import CORPUS

    programs = load_all()  # every flow program, whatever was imported before

    cases = [
        pytest.param(fn, sample, (0,) if fn.__code__.co_argcount == 1 else None, id=fn.__name__)
        for fn, sample in CORPUS
    ]
    return cases + [pytest.param(p.fn, p.sample, p.wrt, id=p.name) for p in programs if not p.bug]


@pytest.mark.parametrize(("fn", "sample", "wrt"), _corpus_cases())
def test_every_corpus_program_is_drawn_with_its_gradients_shapes(fn, sample, wrt):
    """Straight code, loops, branches and calls: every node is drawn, every edge joins
    two drawn nodes, and each gradient the backward returns has the shape of grad's."""
    args = sample(np.random.default_rng(0))
    positions = (
        wrt if wrt is not None else range(fn.__code__.co_argcount - len(fn.__defaults__ or ()))
    )
    wrt = list(positions)
    picture = graph(fn, *args, wrt=wrt)
    ids = {n.id for n in picture.nodes}
    assert all(e.source in ids and e.target in ids for e in picture.edges)
    svg = picture.svg()
    assert all(f'data-node="{node_id}"' in svg for node_id in ids)
    expected = grad(fn, wrt=wrt)(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    returned = [n for n in picture.side("adjoint") if n.role == "gradient"]
    assert returned, "no gradient drawn"
    shapes = {n.name: n.shape for n in returned}
    derivative = differentiable(fn).derivative(wrt)
    for name, value in zip(derivative.generated.gradients, expected, strict=True):
        if name in shapes:  # a gradient the backward assigns (not one it returns as zeros)
            assert shapes[name] == np.shape(value), name
