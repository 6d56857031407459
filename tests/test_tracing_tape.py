"""The tape inspector: what tracing recorded, as data, as a text table and as HTML."""

import numpy as np

from autodiff_tutor.tracing import (
    active_tape,
    evaluate,
    extract_data,
    gradient,
    last_tape,
    tape_of,
    traced,
)


def loss(w, x):
    h = np.tanh(x @ w)
    mask = h > 0
    return np.sum(h * mask, axis=0, keepdims=True).sum()


def test_rows_are_the_recorded_operations_as_data():
    y = evaluate(loss, traced(np.ones((3, 2))), np.ones((4, 3)))
    tape = tape_of(y)
    rows = tape.rows()
    assert [r["op"] for r in rows] == ["input", "matmul", "tanh", "greater", "multiply"] + [
        "sum",
        "sum",
    ]
    argument, matmul, tanh, greater, multiply, sum_axis, sum_all = rows
    assert argument["outputs"] == ["w"] and argument["output_shapes"] == [(3, 2)]
    # x is a plain array: a constant input, no node id
    assert matmul["inputs"] == ["const", "w"] and matmul["input_ids"] == [None, 0]
    assert matmul["input_shapes"] == [(4, 3), (3, 2)] and matmul["output_shapes"] == [(4, 2)]
    assert tanh["input_ids"] == matmul["output_ids"]
    # a comparison is seen, but no gradient flows through it and it makes no node
    assert greater["needs_gradient"] is False and greater["output_ids"] == []
    assert sum_axis["detail"] == "axis=0, keepdims=True" and sum_axis["output_shapes"] == [(1, 2)]
    assert sum_all["output_shapes"] == [()]
    assert all(r["where"].startswith("test_tracing_tape.py:") for r in rows[1:])
    assert tape.ended and len(tape) == 6


def test_text_table_is_readable():
    evaluate(lambda x: gradient(np.sum(x[1:] * 2.0), x), traced([1.0, 2.0, 3.0]))
    text = last_tape().table()
    lines = text.splitlines()
    assert lines[0].endswith("ended: 1 argument, 3 operations")
    assert lines[1].split() == ["#", "operation", "inputs", "output", "grad", "line"]
    assert lines[2].split()[:4] == ["-", "input", "-", "x"]
    assert "getitem [1:]" in lines[3]
    assert "v1 (2,), 2.0" in lines[4]
    assert str(last_tape()) == text


def test_html_table_for_notebooks():
    evaluate(lambda x: x * (x > 0), traced([-1.0, 2.0]))
    html = last_tape()._repr_html_()
    assert html.startswith("<table><caption>trace ")
    assert "<td>multiply</td>" in html and "<td>greater</td>" in html
    assert 'style="color: #888"' in html  # the comparison carries no gradient


def test_extract_data_and_custom_ops_appear_on_the_tape():
    class Double:
        name, num_outputs = "double", 1

        def op_forward(self, x):
            return (2 * x,), None

        def op_backward(self, d_outputs, compute_gradients, saved):
            return (2 * d_outputs[0],)

    from autodiff_tutor.tracing import call_op

    def f(x):
        y = call_op(Double(), x)
        extract_data(y)
        return gradient(np.sum(y), x)

    assert evaluate(f, traced([1.0, 2.0])).tolist() == [2.0, 2.0]
    ops = [(r.op, r.kind, r.needs_gradient) for r in last_tape().records]
    assert ops == [
        ("double", "custom", True),
        ("extract_data", "cut", False),
        ("sum", "rule", True),
    ]


def test_the_tape_is_active_only_during_evaluate_and_releases_its_arrays():
    seen = []

    def f(x):
        seen.append(active_tape())
        y = np.sum(x * x)
        gradient(y, x)
        seen.append(active_tape().released_at)
        return y

    y = evaluate(f, traced([1.0]))
    assert seen[0] is tape_of(y) and active_tape() is None
    assert seen[1].startswith("test_tracing_tape.py:")
    assert all(r.payload is None for r in tape_of(y).records)  # arrays freed, records kept
    assert len(tape_of(y).records) == 2
