"""Habits of everyday Python, differentiated by the compiler against central
differences and autograd (the same function with autograd's numpy), or refused
located with a hint that works: ``list(zip(...))`` of list parameters, ``map(f, xs)``
of values with gradient, the walrus in
a test, lists of functions, ``*p`` into a fixed number of parameters, loops over dicts
and sets (their keys, as in Python), a loop that rebinds its sequence (read once), a
write into the array a loop reads, swaps, the gradient of a list of lists, a list
item changed in place and read again, and a compiled forward failing where the
function itself runs.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from corpus_python.structures import l2_over_list
from oracles import autograd_gradient, central_difference, structured_central_difference

import autodiff_tutor as ad
from autodiff_tutor.errors import UnsupportedSyntaxError

SCALES = {1: 10.0, 0: 20.0}  # a loop gives its keys, 1 then 0
WEIGHTS = {0.5, 2.0}


class Config:
    scales = {3: 1.0, 2: 5.0}


def compiled_matches_oracles(fn, x, autograd: bool = True) -> None:
    """The compiler's value and gradient of ``fn`` at ``x``: Python's value, central
    differences, and autograd (the same function with autograd's numpy)."""
    value, gradient = ad.value_and_grad(fn)(x)
    np.testing.assert_allclose(value, fn(x), rtol=1e-12)
    np.testing.assert_allclose(gradient, central_difference(fn, [x], 0), rtol=1e-6, atol=1e-8)
    if autograd:
        np.testing.assert_allclose(gradient, autograd_gradient(fn, [x], 0), rtol=1e-10)


def nested_list_building(x):
    maps = []
    for f in range(2):
        rows = []
        for i in range(2):
            cols = []
            for j in range(3):
                cols.append(x[i, j] * (f + 1) + x[i, 0] * x[1, j])
            rows.append(np.stack(cols))
        maps.append(np.stack(rows))
    return np.sum(np.tanh(np.stack(maps)) ** 2)


def tuple_of_generator(p):
    state = (p[0], p[1] * 1.0)
    for _ in range(3):
        slope = (state[1], -state[0])
        state = tuple(s + 0.1 * k for s, k in zip(state, slope, strict=True))
    x, v = state
    return x**2 + 3 * v


def list_of_zip_pairs(Ws, bs):
    pairs = list(zip(Ws, bs, strict=True))
    total = 0.0
    for (W1, b1), (W2, b2) in zip(pairs[::2], pairs[1::2], strict=True):
        total = total + np.sum(np.tanh(W1 @ W2)) + b1 @ b2
    indexed = tuple(enumerate(reversed(Ws)))
    return total + sum(k * np.sum(W**2) for k, W in indexed)


def test_list_of_zip_of_list_parameters_is_written_out() -> None:
    rng = np.random.default_rng(3)
    Ws = [rng.normal(size=(2, 2)) for _ in range(4)]
    bs = [rng.normal(size=2) for _ in range(4)]
    value, (d_Ws, d_bs) = ad.value_and_grad(list_of_zip_pairs, wrt=("Ws", "bs"))(Ws, bs)
    np.testing.assert_allclose(value, list_of_zip_pairs(Ws, bs), rtol=1e-12)
    for k, (got, arrays) in enumerate(((d_Ws, Ws), (d_bs, bs))):
        want = structured_central_difference(list_of_zip_pairs, [Ws, bs], k)
        assert len(got) == len(arrays) == len(want)
        for g, e in zip(got, want, strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)


def pairs_of(n):
    for i in range(n):
        for j in range(i + 1, n):
            yield i, j


def loop_over_combinations(x):
    energy = 0.0
    for i, j in pairs_of(len(x)):  # a generator function of the user's
        energy = energy + x[i] * x[j]
    for i, j in itertools.combinations(range(len(x)), 2):
        energy = energy + (x[i] - x[j]) ** 2 * (i + 1)
    for a in map(np.sin, [1.0, 2.0]):
        energy = energy + a * x[0]
    weights = {"first": 1.0, "last": 2.0}
    for _name, w in weights.items():
        energy = energy + w * x[-1] ** 2
    return energy


@pytest.mark.parametrize("fn", [nested_list_building, tuple_of_generator, loop_over_combinations])
def test_nested_lists_tuples_of_generators_and_iterators_are_differentiated(fn) -> None:
    x = np.array([[0.3, -0.8, 0.5], [1.1, 0.4, -0.6]]) if fn is nested_list_building else None
    x = np.array([0.3, -0.8, 0.5]) if x is None else x
    compiled_matches_oracles(fn, x)


def _squared(a):
    return a * a


def _product(a, b):
    return a * b


def map_over_differentiated_values(x):
    total = sum(map(np.sum, [x, x**2]))
    for part in map(_product, [x, 2 * x], [x, np.sin(x)]):  # two sequences: pairs
        total = total + np.sum(part)
    total = total + np.sum(np.stack(list(map(_squared, [x, np.cos(x)]))))
    act = lambda a: np.tanh(a)  # noqa: E731 - a local lambda mapped
    return total + sum(np.sum(v) for v in map(act, [x, 3 * x]))


def test_map_over_values_with_gradient_calls_the_function_on_each() -> None:
    compiled_matches_oracles(map_over_differentiated_values, np.array([0.3, -0.8, 0.5]))


def aliased_user_variable_named_unbound(x):
    unbound = np.tanh(x)
    seen = unbound
    for k in range(3):
        unbound *= 1.0 + k
    return np.sum(seen) + np.sum(unbound)


def test_a_variable_named_like_the_marker_keeps_its_aliases() -> None:
    # the marker ties no names together; a user's variable of that name still does
    with pytest.raises(UnsupportedSyntaxError, match="'seen' shares it"):
        ad.grad(aliased_user_variable_named_unbound)(np.array([0.5, -1.0]))


def walrus_in_tests(x):
    if (n := np.sum(x**2)) > 10.0:
        y = np.log(n)
    elif (m := np.max(x)) > 0.5:
        y = m * n
    else:
        y = n
    kept = [v for xi in x if (v := np.tanh(xi)) > -0.5]
    return y + sum(kept) + v * 2.0


@pytest.mark.parametrize("x", [[0.3, -0.8, 0.9], [0.3, -0.8, 0.2], [3.0, 2.0, -2.5]])
def test_a_walrus_in_a_test_is_an_assignment_before_it(x) -> None:
    x = np.array(x)
    compiled_matches_oracles(walrus_in_tests, x)


def walrus_after_and(x):
    if x[0] > 0 and (s := np.sum(x)) > 0:
        return s
    return -np.sum(x)


def walrus_read_again_in_the_test(x):
    if (s := np.sum(x)) > 0 and s < 2:
        return s
    return -np.sum(x)


@pytest.mark.parametrize("fn", [walrus_after_and, walrus_read_again_in_the_test])
def test_a_walrus_not_always_evaluated_stays_refused(fn) -> None:
    with pytest.raises(UnsupportedSyntaxError, match="':=' is not supported here") as caught:
        ad.grad(fn)(np.array([0.5, 1.0]))
    assert "(s := np.sum(x))" in str(caught.value)


def lambdas_in_a_list(w):
    fns = []
    for k in range(3):
        fns.append(lambda v, k=k: np.sin(v * (k + 1)))
    return sum(np.sum(f(w)) for f in fns)


def named_lambdas_in_a_list(w):
    fns = []
    for k in range(3):
        g = lambda v, k=k: np.sin(v * (k + 1))  # noqa: E731
        fns.append(g)
    return sum(np.sum(f(w)) for f in fns)


def test_a_list_of_functions_is_refused_with_hints_that_agree() -> None:
    with pytest.raises(UnsupportedSyntaxError) as caught:
        ad.grad(lambdas_in_a_list)(np.ones(3))
    assert "a lambda is supported only assigned to a name" in caught.value.message
    assert "kept in a list of functions is not compiled" in caught.value.hint
    with pytest.raises(UnsupportedSyntaxError) as caught:
        ad.grad(named_lambdas_in_a_list)(np.ones(3))
    assert "calling the local variable 'f' is not supported" in caught.value.message
    assert "not through a variable that holds one of several" in caught.value.hint


def decay(t, a, b, c):
    return a * np.exp(-b * t) + c


def curve_fit_residual(p):
    t = np.linspace(0.0, 2.0, 7)
    return np.sum((decay(t, *p) - np.cos(t)) ** 2) + np.hypot(*p[:2]) + np.sum(decay(*p, 0.5))


def with_defaults(x, y=2.0):
    return x * y


def star_into_defaults(p):
    return np.sum(with_defaults(*p))


def test_star_arguments_into_a_fixed_number_of_parameters_are_spread() -> None:
    p = np.array([1.2, 0.7, -0.3])
    compiled_matches_oracles(curve_fit_residual, p)


def test_star_arguments_of_the_wrong_length_raise_as_python_does() -> None:
    with pytest.raises(TypeError):
        curve_fit_residual(np.ones(4))
    with pytest.raises(TypeError, match=r"decay\(t, \*p\): p must have 3 items") as caught:
        ad.grad(curve_fit_residual)(np.ones(4))
    assert "raised in curve_fit_residual" in caught.value.__notes__[0]  # at the user's line


def test_star_arguments_into_parameters_with_defaults_stay_refused() -> None:
    # how many items *p fills depends on its length: not known while compiling
    with pytest.raises(UnsupportedSyntaxError, match="'\\*' unpacking is not supported"):
        ad.grad(star_into_defaults)(np.ones(2))


def loop_over_global_dict_and_set(x):
    s = 0.0
    for k in SCALES:
        s = s + k * np.sum(x**2)
    for w in WEIGHTS:
        s = s + w * np.sum(np.sin(x))
    for i, k in enumerate(Config.scales):
        s = s + (i + k) * x[0]
    return s


def loop_over_dict_argument_keys(x, scales):
    s = 0.0
    for k in list(scales):
        s = s + k * np.sum(x**2)
    for k, v in scales.items():
        s = s + v * x[k]
    return s


def loop_over_dict_argument(x, scales):
    s = 0.0
    for k in scales:
        s = s + k * np.sum(x**2)
    return s


def test_a_loop_over_a_dict_or_set_gives_its_keys_as_in_python() -> None:
    x = np.array([0.3, -0.8, 0.5])
    value, gradient = ad.value_and_grad(loop_over_global_dict_and_set)(x)
    np.testing.assert_allclose(value, loop_over_global_dict_and_set(x), rtol=1e-12)
    want = central_difference(loop_over_global_dict_and_set, [x], 0)
    np.testing.assert_allclose(gradient, want, rtol=1e-6, atol=1e-8)
    scales = {1: 10.0, 0: 20.0}
    value, gradient = ad.value_and_grad(loop_over_dict_argument_keys)(x, scales)
    np.testing.assert_allclose(value, loop_over_dict_argument_keys(x, scales), rtol=1e-12)
    want = central_difference(loop_over_dict_argument_keys, [x, scales], 0)
    np.testing.assert_allclose(gradient, want, rtol=1e-6, atol=1e-8)


def test_a_loop_over_a_dict_argument_by_position_raises_saying_what_to_write() -> None:
    x = np.array([0.3, -0.8, 0.5])
    with pytest.raises(ad.AutodiffError, match="this one is a dict") as caught:
        ad.value_and_grad(loop_over_dict_argument)(x, {1: 10.0, 0: 20.0})
    assert "for k in scales" in str(caught.value)  # located at the user's loop
    assert "list(xs) (a dict's keys" in caught.value.hint
    value, gradient = ad.value_and_grad(loop_over_dict_argument)(x, [1, 0])  # a list: fine
    np.testing.assert_allclose(value, loop_over_dict_argument(x, [1, 0]), rtol=1e-12)
    np.testing.assert_allclose(gradient, 2 * x, rtol=1e-12)


def rebinds_the_array_it_loops_over(x):
    s = 0.0
    for v in x:
        s = s + v**2
        x = x * 2
    return s + np.sum(x)


def rebinds_the_list_it_loops_over(x):
    s = 0.0
    ys = [x[0], x[1]]
    for y in ys:
        s = s + y
        ys = [y * 3, y * 4, y]
    return s + ys[0]


def rebinds_in_enumerate_and_reversed(x):
    s = 0.0
    for i, v in enumerate(x):
        x = x + 1.0
        s = s + v * x[i]
    for v in reversed(x):
        x = x * 0.5
        s = s + v * np.sum(x)
    return s


def changes_in_place_the_array_it_loops_over(x):
    y = x * 1.0
    s = 0.0
    for v in y:
        v = v.copy()  # what the refusal below says to write
        y += 1.0  # the same array: Python's loop sees the change
        s = s + v * 2.0
    return s


def changes_in_place_without_a_copy(x):
    y = x * 1.0
    s = 0.0
    for v in y:
        y += 1.0
        s = s + v * 2.0
    return s


def test_a_write_into_the_array_a_loop_reads_names_the_loop_variable() -> None:
    # the hint said "v = y[k_1].copy()", a name the user never wrote
    with pytest.raises(UnsupportedSyntaxError) as caught:
        ad.grad(changes_in_place_without_a_copy)(np.array([1.0, -2.0, 0.5]))
    assert "'v' may share it" in caught.value.message
    assert "v = v.copy()" in caught.value.hint


@pytest.mark.parametrize(
    "fn",
    [
        rebinds_the_array_it_loops_over,
        rebinds_the_list_it_loops_over,
        rebinds_in_enumerate_and_reversed,
        changes_in_place_the_array_it_loops_over,
    ],
)
def test_a_loop_reads_its_sequence_once_as_python_does(fn) -> None:
    x = np.array([1.0, -2.0, 0.5])
    compiled_matches_oracles(fn, x, autograd=False)  # autograd cannot write in place


def swap_in_place(x):
    y = x * 1.0
    y[0], y[2] = y[2], y[0]
    return np.sum(y * np.arange(1.0, 5.0))


def swap_by_lists_of_indices(x):
    y = x * 1.0
    y[[0, 2]] = y[[2, 0]]  # what the refusal of swap_in_place says to write
    return np.sum(y * np.arange(1.0, 5.0))


def test_a_swap_is_refused_with_a_hint_that_works() -> None:
    x = np.array([0.3, -0.7, 1.1, 0.4])
    with pytest.raises(UnsupportedSyntaxError) as caught:
        ad.grad(swap_in_place)(x)
    assert "y[[i, j]] = y[[j, i]]" in caught.value.hint
    value, gradient = ad.value_and_grad(swap_by_lists_of_indices)(x)
    np.testing.assert_allclose(value, swap_in_place(x), rtol=1e-12)
    np.testing.assert_allclose(gradient, central_difference(swap_in_place, [x], 0), atol=1e-8)


def lists_appended_into_a_list(x):
    a = []
    a.append(x[0] * 2)
    a.append(x[1])
    b = [x[2] * 3, x[3]]
    rows = []
    rows.append(a)
    rows.append(b)
    twice = [a, a]
    return rows[1][1] + rows[0][0] * rows[1][0] + twice[1][0] + twice[0][0]


def nested_comprehension(x):
    rows = [[x[i] * (j + 1) for j in range(3)] for i in range(2)]
    return sum(sum(r) for r in rows) + rows[1][2] * rows[0][1] + np.sum(np.array(rows) ** 2)


def rows_stacked_from_a_list_of_lists(x):
    rows = [[x[i] * (j + 1) for j in range(3)] for i in range(2)]
    return np.sum(np.stack([np.stack(r) for r in rows]) ** 2) + np.sum(np.array(rows[0]))


def three_levels_in_loops(x):
    cube = []
    for i in range(2):
        plane = []
        for j in range(2):
            line = []
            for k in range(2):
                line.append(x[i] * x[j] + k * x[k])
            plane.append(line)
        cube.append(plane)
    pair = [cube[0], cube[0], cube[1]]
    return cube[0][1][0] + cube[1][1][1] * cube[1][0][1] + pair[0][0][1] * pair[1][1][1]


@pytest.mark.parametrize(
    "fn",
    [
        lists_appended_into_a_list,
        nested_comprehension,
        rows_stacked_from_a_list_of_lists,
        three_levels_in_loops,
    ],
)
def test_the_gradient_of_a_list_of_lists_is_added_item_by_item(fn) -> None:
    x = np.array([0.3, -0.7, 1.1, 0.4])
    compiled_matches_oracles(fn, x)


def list_made_anew_on_one_path(x):
    rows = []
    cols = []
    for i in range(2):
        if x[0] > 0:
            cols = []
        cols.append(x[i] * 2)  # into the list rows holds, when x[0] <= 0
        rows.append(cols)
    return rows[0][-1] * 3 + rows[1][0]


def test_a_list_made_anew_on_one_path_only_stays_refused() -> None:
    # only a list made at the top of each iteration is known to be another list
    with pytest.raises(UnsupportedSyntaxError, match="'rows' shares it"):
        ad.grad(list_made_anew_on_one_path)(np.array([0.5, -0.7]))


def item_of_a_list_changed_then_read_again(x):
    rows = [x * 2.0, x * 3.0]
    r = rows[1]
    r += 1.0
    return np.sum(rows[1] * x)


def item_changed_in_a_loop_then_read_again(x):
    rows = [x * 2.0, x * 3.0]
    r = rows[1]
    s = 0.0
    for _ in range(2):
        s = s + np.sum(rows[1])
        r += 1.0
    return s + np.sum(rows[1] * x)


@pytest.mark.parametrize(
    "fn", [item_of_a_list_changed_then_read_again, item_changed_in_a_loop_then_read_again]
)
def test_an_item_of_a_list_changed_in_place_and_read_again_is_refused(fn) -> None:
    with pytest.raises(UnsupportedSyntaxError) as caught:
        ad.value_and_grad(fn)(np.array([0.3, -0.7, 1.1]))
    assert "'rows' shares it and is read after the write" in caught.value.message
    assert caught.value.location.text.strip() == "r += 1.0"


def test_a_compiled_forward_failing_where_the_function_runs_is_an_internal_error(monkeypatch):
    # the hint "calling f directly raises the same error" is checked before it is given
    from autodiff_tutor.compiler import emit

    def broken(sequence):
        return sequence.no_such_attribute  # a helper of the generated code failing

    monkeypatch.setitem(emit.RUNTIME, "indexed_len", broken)
    with pytest.raises(ad.AutodiffError) as caught:
        ad.grad(l2_over_list)(np.ones((2, 3)))  # a loop over the rows of an array
    assert type(caught.value).__name__ == "InternalError"
    assert "l2_over_list itself runs on these arguments (checked)" in caught.value.hint


def weighted_if_tuple(x):
    pair = (x, 2.0 * x)
    return np.sum(pair[1] ** 2) if isinstance(pair, tuple) else -1.0


def weighted_if_type_is_tuple(x):
    pair = (np.sin(x), x)
    scale = 3.0 if type(pair) is tuple else -3.0
    first, second = pair
    return scale * np.sum(first * second) + len(pair)


def weighted_if_list(x):
    items = [x, x * x]
    return np.sum(items[1]) if isinstance(items, list) else -1.0


@pytest.mark.parametrize(
    "fn", [weighted_if_tuple, weighted_if_type_is_tuple, weighted_if_list], ids=lambda f: f.__name__
)
def test_a_tuple_stays_a_tuple_and_a_list_a_list(fn) -> None:
    """A tuple written out with values carrying gradient is a tuple in compiled code,
    as ``isinstance`` and ``type`` see it (value and gradient as Python's)."""
    x = np.array([0.3, -1.2, 2.0])
    value, gradient = ad.value_and_grad(fn)(x)
    assert np.isclose(value, fn(x))
    np.testing.assert_allclose(gradient, central_difference(fn, [x], 0), rtol=1e-6, atol=1e-8)


def two_scaled(x):
    pair = (2.0 * x, 3.0 * x)
    return pair


def test_a_tuple_output_and_its_tangent_are_tuples() -> None:
    x, v = np.array([0.3, -1.2]), np.array([1.0, 0.5])
    out, tangent = ad.jvp(two_scaled, (x,), (v,))
    assert type(out) is tuple and type(tangent) is tuple
    np.testing.assert_allclose(tangent[1], 3.0 * v)
    out, pullback = ad.vjp(two_scaled, x)
    assert type(out) is tuple
    np.testing.assert_allclose(pullback((v, v))[0], 5.0 * v)


def doubled_and_sine(x):
    return x * 2.0, np.sin(x)


def doubled_and_sine_as_one_tuple(x):
    pair = (x * 2.0, np.sin(x))
    return pair


def unpacks_a_helpers_tuple(x):
    a, b = doubled_and_sine_as_one_tuple(x)
    return np.sum(a * b)


def keeps_a_helpers_two_results_whole(x):
    both = doubled_and_sine(x)
    return np.sum(both[0] * both[1])


def test_a_helper_returning_one_tuple_is_unpacked_at_its_call() -> None:
    """``a, b = helper(x)`` where the helper returns one tuple (``return pair``): each
    item (value and gradient as Python's); a helper returning two results kept whole
    is refused at the call with the form that works, not an internal error."""
    x = np.array([0.3, -1.2, 2.0])
    value, gradient = ad.value_and_grad(unpacks_a_helpers_tuple)(x)
    assert np.isclose(value, unpacks_a_helpers_tuple(x))
    np.testing.assert_allclose(
        gradient, central_difference(unpacks_a_helpers_tuple, [x], 0), rtol=1e-6
    )
    with pytest.raises(UnsupportedSyntaxError) as refused:
        ad.grad(keeps_a_helpers_two_results_whole)(x)
    assert "y1, y2 = doubled_and_sine(x)" in refused.value.hint
