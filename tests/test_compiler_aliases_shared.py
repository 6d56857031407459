"""Writes through a name that may be one of several arrays: an item of a list or a
tuple of views, a row of a list made from an array, one of two views chosen by a
condition, a piece of np.split.

numpy shares memory between the name and every array it may be, so the write is seen
by them all. The compiler follows a write through a single view or alias
(``tests/test_compiler_aliases.py``); through these it refuses the write, at its line,
when one of those arrays is read afterwards, never a silent wrong value. Where
nothing reads them afterwards, the write compiles: the value is
numpy's and the gradient agrees with central differences.
"""

from __future__ import annotations

import numpy as np
import pytest
from fuzz.check import Loaded
from oracles import central_difference

import autodiff_tutor as ad
from autodiff_tutor.errors import UnsupportedSyntaxError

X = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5], [0.9, -0.2, 0.6]])

#: (the lines that make r and write through it), in the forms of the fuzz's
#: list_item_write (tests/fuzz/idioms.py); the last line is the write
SHARED = [
    "rows = [acc[0], acc[1]]\n    r = rows[0]\n    r += 1.0",
    "rows = [acc[0], acc[1]]\n    for r in rows:\n        r += 1.0",
    "for i, r in enumerate([acc[0], acc[1]]):\n        r += i + 1.0",
    "r = acc[0] if np.sum(x) > -100 else acc[1]\n    r += 1.0",
    "rows = list(acc)\n    r = rows[1]\n    r += 1.0",
    "rows = [q for q in acc]\n    r = rows[1]\n    r += 1.0",
    "parts = np.split(acc, 3)\n    r = parts[0]\n    r += 1.0",
    "t = (acc[0], acc[1])\n    r = t[1]\n    r += 1.0",
]


def _program(lines: str, start: str) -> Loaded:
    source = (
        "import numpy as np\n\n\ndef f(x):\n"
        f"    acc = {start}\n    {lines}\n    return np.sum(acc * x)\n"
    )
    return Loaded(source, seed=0)


@pytest.mark.parametrize("start", ["x * 1.0", "np.zeros_like(x)"])
@pytest.mark.parametrize("lines", SHARED)
def test_a_write_through_a_name_that_may_be_a_view_of_a_read_array_is_refused(lines, start):
    loaded = _program(lines, start)
    with pytest.raises(UnsupportedSyntaxError) as info:
        ad.value_and_grad(loaded.f)(X.copy())
    assert info.value.location.text.strip() == lines.splitlines()[-1].strip()
    loaded.close()


def item_of_a_list_written(x):
    parts = [x * 1.0, x * 2.0]
    p = parts[0]
    p += np.sin(x)  # writes into parts[0]; neither the list nor its arrays read afterwards
    return np.sum(p * p) + np.sum(x)


def test_a_write_through_an_item_of_a_list_nothing_reads_after_is_differentiated():
    value, gradient = ad.value_and_grad(item_of_a_list_written)(X.copy())
    assert np.isclose(value, item_of_a_list_written(X.copy()), rtol=1e-12)
    expected = central_difference(item_of_a_list_written, [X], 0)
    np.testing.assert_allclose(gradient, expected, atol=1e-6)


def written_by_name_and_index(x):
    acc = x * 1.0
    for i in range(2):
        acc[i] += 1.0  # the hint's rewrite of: for r in rows: r += 1.0 (SHARED[1])
    return np.sum(acc * x)


def test_the_hint_says_how_to_write_so_that_the_array_sees_it():
    loaded = _program(SHARED[1], "x * 1.0")
    with pytest.raises(UnsupportedSyntaxError) as info:
        ad.value_and_grad(loaded.f)(X.copy())
    assert "should see the write, write into" in " ".join(info.value.hint.split())
    loaded.close()
    fn = written_by_name_and_index
    value, gradient = ad.value_and_grad(fn)(X.copy())
    assert np.isclose(value, fn(X.copy()), rtol=1e-12)
    np.testing.assert_allclose(gradient, central_difference(fn, [X], 0), atol=1e-6)


def first_row(m):
    return m[0]


def written_through_a_helpers_view(x):
    acc = np.ones_like(x)  # no gradient: the helper call is kept as it is, not inlined
    r = first_row(acc)
    r += 1.0
    return np.sum(acc * x)


def test_a_write_through_a_view_a_helper_returns_is_refused():
    """A helper called on an array without gradient is not inlined, and a call of a
    function of the user's may return any of its arguments or a view of one: the write
    through what it returns is refused, located at the write."""
    with pytest.raises(UnsupportedSyntaxError) as info:
        ad.value_and_grad(written_through_a_helpers_view)(X.copy())
    assert info.value.location.text.strip() == "r += 1.0"
