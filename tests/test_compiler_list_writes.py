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
from oracles import central_difference

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


# -- second derivatives through a list's entry written ------------------------------

V = np.array([0.5, -1.2, 2.0])


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
