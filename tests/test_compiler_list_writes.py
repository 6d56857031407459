"""Writes in place that lists and other names can see, against central differences
(or, for a refusal, its located message): arrays read from a list built in the
function and changed in place, writes into such a list (``params[0] = ...``), slices
and copies of it, an array reached again through a list or a choice and written,
``np.fill_diagonal``, and appends to an entry of a dict.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from oracles import autograd_gradient, central_difference
from program_checks import assert_right_in_mode

import autodiff_tutor as ad
from autodiff_tutor import tracing
from autodiff_tutor.errors import UnsupportedSyntaxError


def sgd_on_a_list(W, b):
    params = [W, b]
    X = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    for _ in range(3):
        out = np.tanh(X @ params[0] + params[1])
        params[0] = params[0] - 0.1 * X.T @ (1 - out**2) / 4
        params[-1] = params[-1] - 0.1 * (1 - out**2).mean(axis=0)
    return np.sum(params[0] ** 2) + np.sum(np.tanh(X @ params[0] + params[1]))


def copied_before_written(W, b):
    ys = [W[0], b]
    for k in range(2):
        ys[k] = np.sin(ys[k]) * (k + 1)
    before = list(ys)
    ys[0] = ys[1] * ys[0]
    return np.sum(np.stack(ys) ** 2) + np.sum(np.stack(before))


WB = (np.array([[0.3, -0.5], [1.2, 0.4], [-0.7, 0.9]]), np.array([0.2, -0.1]))


def _matches_differences_at_wb(fn) -> list[np.ndarray]:
    """``value_and_grad`` three times (compiled, then the fast path) against central
    differences at ``WB``; the expected gradients."""
    expected = [central_difference(fn, list(WB), k) for k in (0, 1)]
    both = ad.value_and_grad(fn, wrt=("W", "b"))
    for _ in range(3):
        value, gradients = both(*WB)
        np.testing.assert_allclose(value, fn(*WB), rtol=1e-12)
        for gradient, want in zip(gradients, expected, strict=True):
            np.testing.assert_allclose(gradient, want, rtol=1e-6, atol=1e-9)
    return expected


@pytest.mark.parametrize("fn", [sgd_on_a_list, copied_before_written])
def test_writes_into_a_list_built_here(fn):
    expected = _matches_differences_at_wb(fn)
    directions = (np.ones_like(WB[0]), np.array([0.5, -2.0]))
    _, tangent = ad.jvp(fn, WB, directions)
    want = sum(np.sum(e * d) for e, d in zip(expected, directions, strict=True))
    np.testing.assert_allclose(tangent, want, rtol=1e-6)


def item_changed_in_a_loop(W, b):
    hs = [W[0] * 1.0, W[1] * 2.0, b * 1.0]
    for h in hs:
        h += 1.0
    return np.sum(np.stack(hs) ** 2)


def item_changed_by_index(W, b):
    ys = [b.copy(), W[0]]
    y0 = ys[0]
    y0[0] = 5.0
    return np.sum(np.stack(ys) ** 2)


def slice_of_a_list_written(W, b):
    ys = [W[0], W[1], b]
    ys[0:2] = [b, b]
    return np.sum(np.stack(ys))


@pytest.mark.parametrize(
    ("fn", "words", "caret"),
    [
        (item_changed_in_a_loop, "'h += ...' would change, in place", "h += 1.0"),
        (item_changed_by_index, "'y0[...] = ...' would change, in place", "y0[0]"),
        (slice_of_a_list_written, "a slice write into the list 'ys'", "0:2"),
    ],
)
def test_writes_python_shows_through_a_list_are_refused(fn, words, caret):
    """Writes Python shows through the list (an item changed in place, in a loop or by
    index; a slice of the list written): each is refused, located at the write."""
    with pytest.raises(UnsupportedSyntaxError, match=re.escape(words)) as info:
        ad.value_and_grad(fn, wrt=("W", "b"))(*WB)
    location = info.value.location
    assert location.filename == __file__
    assert location.text[location.column :].startswith(caret)


def list_slices(W, b):
    ys = []
    for k in range(4):
        ys.append(np.sin(W[k % 3] * (k + 1)) + b)
    rest = ys[1:]
    total = np.sum(np.stack(rest) ** 2) + np.sum(rest[0] * rest[-1])
    for y in ys[::2]:
        total = total + np.sum(y**3)
    return total + sum(np.sum(y) for y in ys[-2:])


def list_copy_method(W, b):
    ys = [W[0] * b, W[1] - b]
    zs = ys.copy()
    zs[0] = zs[0] * 5.0
    return np.sum(np.stack(zs) ** 2) + np.sum(np.stack(ys))


@pytest.mark.parametrize("fn", [list_slices, list_copy_method])
def test_slices_and_copies_of_a_list_built_here(fn):
    _matches_differences_at_wb(fn)


def written_through_a_list(x):
    y = x * 1.0
    box = [y]
    z = box[0]
    z[1] = 3.0
    return np.sum(y**2)


def written_through_a_choice(x, flag=True):
    y = x * 1.0
    z = y if flag else x * 2.0
    z[0] = 9.0
    return np.sum(y**2)


def written_through_a_branch(x, flag=True):
    y = x * 1.0
    if flag:
        z = y
    else:
        z = x * 2.0
    z[0] = 9.0
    return np.sum(y**2)


@pytest.mark.parametrize(
    "fn", [written_through_a_list, written_through_a_choice, written_through_a_branch]
)
def test_writes_through_another_name_of_the_array_are_refused(fn):
    x = np.array([0.5, -1.0, 2.0])
    with pytest.raises(UnsupportedSyntaxError, match="would change, in place") as info:
        ad.value_and_grad(fn)(x)
    location = info.value.location
    assert location.filename == __file__
    assert location.text[location.column :].startswith("z[")


def kernel_without_diagonal(X):
    D = np.sum((X[:, None] - X[None]) ** 2, axis=-1)
    K = np.exp(-D)
    np.fill_diagonal(K, 0.0)
    return np.sum(K * np.arange(16.0).reshape(4, 4))


def rectangular_diagonal(x):
    M = np.outer(x, x[:2]) * 1.0
    np.fill_diagonal(M, x[:2] ** 2)
    return np.sum(M**2)


@pytest.mark.parametrize(
    ("fn", "x"),
    [
        (kernel_without_diagonal, np.linspace(-1.0, 1.2, 8).reshape(4, 2)),
        (rectangular_diagonal, np.array([0.3, -1.0, 2.0])),
    ],
)
def test_fill_diagonal_in_both_modes(fn, x):
    expected = central_difference(fn, [x], 0)
    both = ad.value_and_grad(fn)
    for _ in range(3):
        value, gradient = both(x)
        np.testing.assert_allclose(value, fn(x.copy()), rtol=1e-12)
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-9)
    value, gradient = tracing.value_and_gradient(fn, x)
    np.testing.assert_allclose(value, fn(x.copy()), rtol=1e-12)
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-9)


def fills_its_argument(A):
    np.fill_diagonal(A, 1.0)
    return np.sum(A**2)


def test_fill_diagonal_of_a_parameter_is_refused_by_the_compiler():
    with pytest.raises(UnsupportedSyntaxError, match=re.escape("'np.fill_diagonal(A, ...)'")):
        ad.grad(fills_its_argument)(np.eye(2))


def appended_copies_of_an_updated_array(W, b):
    ys = []
    h = W[0] * b
    for _ in range(3):
        ys.append(h.copy())
        h += 1.0
    return np.sum(np.stack(ys) ** 2) + np.sum(h * b)


def item_read_before_its_slot_is_written(W, b):
    ys = [W[0] * 1.0, W[1] * 2.0]
    old = ys[0]
    ys[0] = old * 3.0 + b
    return np.sum(old**2) + np.sum(ys[0] * ys[1])


@pytest.mark.parametrize(
    "fn", [appended_copies_of_an_updated_array, item_read_before_its_slot_is_written]
)
def test_appended_copies_and_an_item_read_before_its_slot_is_rewritten(fn):
    _matches_differences_at_wb(fn)


def appended_then_updated_in_place(W, b):
    ys = []
    h = W[0] * b
    for _ in range(3):
        ys.append(h)
        h += 1.0
    return np.sum(np.stack(ys) ** 2)


def alias_of_a_list_read_after_a_slot_write(W, b):
    params = [W, b]
    q = params
    params[0] = W * 3.0
    return np.sum(q[0]) + np.sum(params[1])


@pytest.mark.parametrize(
    ("fn", "caret"),
    [
        (appended_then_updated_in_place, "h += 1.0"),
        (alias_of_a_list_read_after_a_slot_write, "params[0]"),
    ],
)
def test_writes_a_list_shows_are_still_refused(fn, caret):
    """Python shows these writes through the list (``ys`` holds ``h`` itself; ``q`` is
    ``params``): compiled as if not, value and gradient would be wrong."""
    with pytest.raises(UnsupportedSyntaxError, match="would change, in place") as info:
        ad.value_and_grad(fn, wrt=("W", "b"))(*WB)
    assert info.value.location.text[info.value.location.column :].startswith(caret)


def history_in_a_dict(W, b):
    hist = {"loss": []}
    for k in range(3):
        hist["loss"].append(np.sum(W[k] * b))
    return hist["loss"][0] + sum(hist["loss"])


def history_in_its_own_list(W, b):
    losses = []
    for k in range(3):
        losses.append(np.sum(W[k] * b))
    hist = {"loss": losses}
    return hist["loss"][0] + sum(hist["loss"])


def test_appending_to_an_entry_of_a_dict_is_located_and_the_hint_compiles():
    with pytest.raises(UnsupportedSyntaxError, match="changes an entry of the structure") as info:
        ad.value_and_grad(history_in_a_dict, wrt=("W", "b"))(*WB)
    assert info.value.location.text[info.value.location.column :].startswith('hist["loss"]')
    assert "losses = []" in info.value.hint
    _matches_differences_at_wb(history_in_its_own_list)


# -- an augmented assignment to an entry: the array the entry holds changes in place --

V = np.array([0.5, -1.2, 2.0])
M = np.array([[0.3, 1.2, 0.7], [1.1, 0.4, 0.5]])
ROWS_WEIGHTS = np.arange(1.0, 7.0).reshape(2, 3)


def appended_entry_scaled(x):
    t = x * 2.0
    acc = []
    acc.append(t)
    acc[0] *= x  # numpy: t itself changes
    return np.sum(t * np.array([1.0, 2.0, 3.0]))


def dict_entry_of_an_array(x):
    t = x * 2.0
    d = {"a": t}
    d["a"] += x
    return np.sum(t * np.array([1.0, 2.0, 3.0]))


def dict_entry_views(x):
    t = x * 2.0
    d = {"head": t[:2], "tail": t[2:]}
    d["head"] -= x[2]  # numpy: t[:2] changes
    return np.sum(t**2) + np.sum(d["head"] * x[:2]) + np.sum(d["tail"])


def listed_rows_scaled(x):
    t = x * 2.0
    rows = [t[0], t[1]]
    rows[1] *= 5.0  # numpy: t[1] changes
    return np.sum(t * ROWS_WEIGHTS) + np.sum(rows[0] * rows[1])


def parameter_copied_first(x):
    x = x.copy()  # the hint's rewrite of a write into the parameter through a list
    lst = [x]
    lst[0] += 1.0
    return np.sum(x * np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize(
    ("fn", "x"),
    [
        (appended_entry_scaled, V),
        (dict_entry_of_an_array, V),
        (dict_entry_views, V),
        (listed_rows_scaled, M),
        (parameter_copied_first, V),
    ],
)
def test_an_entry_written_in_place_changes_the_array_it_holds(fn, x):
    """``ys[k] op= v`` and ``d[k] op= v`` write into the array the entry holds, as
    numpy does: the names sharing its memory (the array appended, the array whose
    views a dict or a list written out holds) see the write. Values are numpy's,
    gradients and tangents central differences, hvp the difference of gradients."""
    assert_right_in_mode("compiler", fn, x)
    assert_right_in_mode("jvp", fn, x)
    direction = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    gradient = ad.grad(fn)
    moved = (gradient(x + 1e-6 * direction) - gradient(x - 1e-6 * direction)) / 2e-6
    np.testing.assert_allclose(ad.hvp(fn)(x.copy(), direction), moved, atol=1e-5)


def number_entries(x):
    lst = [1.0, 2.0, 3.0]
    for i in range(3):
        lst[i] *= x[i]  # a number: the entry is rebound, as in Python
    d = {"s": 0.5}
    d["s"] += lst[0]
    return lst[1] * lst[2] + d["s"] * x[0]


def entries_nothing_else_sees(x):
    grads = [x * 2.0, x**2]
    grads[0] += 0.1 * x
    losses = []
    for k in range(3):
        losses.append(np.sum(np.sin(x * k)))
    losses[-1] *= 0.5
    parts = [x * 1.0, np.cos(x)]
    for i in range(2):
        parts[i] -= x[i]
    return np.sum(grads[0] * grads[1]) + sum(losses) + np.sum(parts[0] * parts[1])


@pytest.mark.parametrize("fn", [number_entries, entries_nothing_else_sees])
def test_entries_written_that_no_other_name_sees_agree_with_autograd(fn):
    """Numbers are rebound (``lst[i] *= v``), and arrays no other name shares change
    alone: the list, read afterwards, holds the new entries. autograd, whose arrays
    are never written in place, gives the same gradient here."""
    want = central_difference(fn, [V], 0)
    np.testing.assert_allclose(autograd_gradient(fn, [V], 0), want, rtol=1e-6, atol=1e-9)
    assert_right_in_mode("compiler", fn, V)
    assert_right_in_mode("jvp", fn, V)


def acts_doubled(x):
    acts = []
    a = x
    for _ in range(2):
        a = np.tanh(np.outer(x, x) @ a * 0.1)
        acts.append(a)
    acts[-1] *= 2.0  # numpy: a doubles too
    return np.sum(a**2)


def split_parts_scaled(x):
    t = x * 2.0
    parts = np.split(t, 3)
    parts[0] *= 3.0  # numpy: t[0] triples
    return np.sum(t**2)


def rows_of_a_comprehension(x):
    t = x * 2.0
    rows = [r for r in t]
    rows[1] *= 5.0
    return np.sum(t * ROWS_WEIGHTS)


def rows_of_list_call(x):
    t = x * 2.0
    rows = list(t)
    rows[1] *= 5.0
    return np.sum(t * ROWS_WEIGHTS)


def rows_of_list_call_copied(x):
    t = x * 2.0
    rows = list(t)
    rows = rows.copy()  # a shallow copy: its items are still the rows of t
    rows[1] *= 5.0
    return np.sum(t * ROWS_WEIGHTS)


def aliased_list_read(x):
    ys = [x * 1.0, x * 2.0]
    zs = ys.copy()
    ys[0] *= 3.0  # numpy: zs[0] is the same array
    return np.sum(zs[0])


@pytest.mark.parametrize(
    ("fn", "x", "shared", "caret"),
    [
        (acts_doubled, V, "'x'", "acts[-1] *= 2.0"),
        (split_parts_scaled, V, "'t' shares it", "parts[0] *= 3.0"),
        (rows_of_a_comprehension, M, "'t' shares it", "rows[1] *= 5.0"),
        (rows_of_list_call, M, "'t' shares it", "rows[1] *= 5.0"),
        (rows_of_list_call_copied, M, "'t' shares it", "rows[1] *= 5.0"),
        (aliased_list_read, V, "'zs' shares it", "ys[0] *= 3.0"),
    ],
)
def test_an_entry_write_other_names_see_is_refused_where_it_is_made(fn, x, shared, caret):
    """Where the compiler cannot follow the write to the names that see it (the list's
    items are not known here, or another list holds them), reading them afterwards is
    refused, located at the write, in both reverse and forward mode."""
    for call in (lambda: ad.value_and_grad(fn)(x.copy()), lambda: ad.jvp(fn, (x,), (x,))):
        with pytest.raises(UnsupportedSyntaxError, match="would change, in place") as info:
            call()
        location = info.value.location
        assert location.filename == __file__
        assert location.text[location.column :].startswith(caret)
        assert shared in info.value.message + info.value.hint


def t_written_by_name(x):
    t = x * 2.0
    t[1] *= 5.0  # the hint's rewrite, when t should see the write
    return np.sum(t * ROWS_WEIGHTS)


def entry_rebound(x):
    t = x * 2.0
    rows = list(t)
    rows[1] = rows[1] * 5.0  # the hint's rewrite, when t should keep its values
    return np.sum(t * ROWS_WEIGHTS)


def test_the_hints_of_a_refused_entry_write_keep_the_programs_meaning():
    """The refusal of ``rows = list(t); rows[1] *= 5.0`` offers two rewrites, each
    true: writing into ``t`` by name (which keeps numpy's value of the program) when
    ``t`` should see the write, rebinding the entry when it should not. Both compile
    and agree with numpy and central differences (a shallow copy of the list, which
    changes nothing, is refused as the list itself is)."""
    with pytest.raises(UnsupportedSyntaxError) as info:
        ad.value_and_grad(rows_of_list_call)(M.copy())
    hint = " ".join(info.value.hint.split())
    assert "write 'rows[1] = rows[1] * ...'" in hint
    assert "write into it directly (by name and index)" in hint
    assert np.isclose(t_written_by_name(M.copy()), rows_of_list_call(M.copy()))
    for fn in (t_written_by_name, entry_rebound):
        assert_right_in_mode("compiler", fn, M)


def written_into_the_parameter(x):
    lst = [x]
    lst[0] += 1.0  # numpy: the caller's x changes
    return np.sum(x * np.array([1.0, 2.0, 3.0]))


def dict_entry_of_the_parameter(x):
    d = {"w": x}
    d["w"] += 1.0
    return np.sum(x * np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize(
    ("fn", "caret"),
    [(written_into_the_parameter, "lst[0] += 1.0"), (dict_entry_of_the_parameter, 'd["w"]')],
)
def test_an_entry_write_into_the_parameter_is_refused_like_a_write_into_it(fn, caret):
    """``lst = [x]; lst[0] += 1.0`` writes into the parameter, as ``x += 1.0`` does: it
    is refused, located, and the hint's rewrite (``x = x.copy()`` where the function
    starts) compiles to numpy's value and gradient (:func:`parameter_copied_first`)."""
    with pytest.raises(UnsupportedSyntaxError, match="would change, in place") as info:
        ad.value_and_grad(fn)(V.copy())
    location = info.value.location
    assert location.text[location.column :].startswith(caret)
    assert "(x = x.copy())" in " ".join(info.value.hint.split())
    assert np.isclose(parameter_copied_first(V.copy()), fn(V.copy()))


def items_sharing_memory(x):
    t = x * 2.0
    rows = [t, t[1:]]
    rows[0] *= 3.0  # numpy: rows[1] changes too
    return np.sum(rows[1])


def the_same_array_twice(x):
    t = x * 2.0
    rows = [t, t]
    rows[0] *= 3.0
    return np.sum(rows[1] * x)


@pytest.mark.parametrize("fn", [items_sharing_memory, the_same_array_twice])
def test_an_entry_write_another_item_of_the_list_sees_is_refused_when_it_runs(fn):
    """Whether another item of the list shares the entry's memory is checked when the
    write runs: refused there, located at the write."""
    with pytest.raises(UnsupportedSyntaxError) as info:
        ad.value_and_grad(fn)(V.copy())
    assert "another item of the list shares" in " ".join(info.value.message.split())
    location = info.value.location
    assert location.filename == __file__
    assert location.text.strip().startswith("rows[0] *= 3.0")


def list_of_lists_entry_extended(x):
    cols = [x[0] * 1.0]
    rows = []
    rows.append(cols)
    rows[0] += [x[1] * 2.0]  # numpy: cols itself grows
    return sum(cols) * x[2]


def test_an_entry_write_into_a_list_held_in_a_list_is_refused():
    """``rows[0] += [v]`` extends the list ``rows[0]`` is, which every name holding it
    sees: refused, located."""
    with pytest.raises(UnsupportedSyntaxError, match="changes the list rows") as info:
        ad.value_and_grad(list_of_lists_entry_extended)(V.copy())
    assert info.value.location.text.strip().startswith("rows[0] += [x[1] * 2.0]")


def list_alias_appended(x):
    a = [x[2] * 1.0]
    b = a  # one list, two names
    b.append(x[0] * 1.0)
    return sum(a) * x[1]


def list_alias_extended(x):
    a = [x[2] * 1.0]
    b = a
    b += [x[0] * 1.0]
    return sum(a) * x[1]


@pytest.mark.parametrize(
    ("fn", "caret"),
    [(list_alias_appended, "b.append"), (list_alias_extended, "b += [x[0] * 1.0]")],
)
def test_a_list_changed_through_another_of_its_names_is_refused(fn, caret):
    """``b = a`` names one list twice: an append or ``+=`` through ``b`` changes ``a``
    too, so reading ``a`` afterwards is refused, located at the write."""
    with pytest.raises(UnsupportedSyntaxError, match="would change, in place") as info:
        ad.value_and_grad(fn)(V.copy())
    location = info.value.location
    assert location.text[location.column :].startswith(caret)
    assert "'a' shares it" in " ".join(info.value.message.split())


# -- second derivatives through a list's entry written ------------------------------


def list_entry_rewritten(x):
    lst = [x * 1.0, x * 2.0]
    lst[0] = lst[0] * x
    lst[1] = lst[1] * np.sin(x)
    return np.sum(lst[0] * lst[1])


def number_entries_rewritten(x):
    lst = [1.0, 2.0, 3.0]
    for i in range(3):
        lst[i] = lst[i] * x[i]
    return lst[0] + lst[1] * lst[2]


@pytest.mark.parametrize("fn", [list_entry_rewritten, number_entries_rewritten])
def test_second_derivatives_through_a_lists_entry_written(fn):
    """A gradient function that writes a list's entry (``assign_at(ys, at[k], v)``),
    differentiated again: forward over reverse (hvp) and reverse over reverse agree
    with the difference of gradients (the tangent and the gradient of a list there
    are lists, added item by item)."""
    direction = np.array([0.3, 0.4, 0.5])
    gradient = ad.grad(fn)
    moved = (gradient(V + 1e-6 * direction) - gradient(V - 1e-6 * direction)) / 2e-6
    np.testing.assert_allclose(ad.hvp(fn)(V.copy(), direction), moved, atol=1e-5)

    def along(z):
        return np.sum(gradient(z) * direction)

    np.testing.assert_allclose(ad.grad(along)(V.copy()), moved, atol=1e-5)
