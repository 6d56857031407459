"""Programs that write into arrays where numpy's write loses values, shared by the
compiler's tests (``test_compiler_array_writes.py``) and tracing's
(``test_tracing_inplace.py``).

- ``REPEATED``: an index naming one position twice, in any spelling (two integer
  arrays, ``np.ix_``, a negative index, a mask beside an array, broadcast arrays):
  numpy keeps only the last value written there, so the first one has no gradient.
  Every mode refuses the write, located at it.
- ``DISTINCT``: the same spellings naming each position once: right in every mode.
- ``TRUNCATED``: a float written into an integer or boolean array, which numpy casts
  silently: refused in every mode, located at the write.
- ``NUMPY_REFUSES``: ``y op= v`` on an integer array with a float result, which numpy
  itself refuses (``UFuncTypeError``): refused in every mode, located.
- ``INTEGERS_RIGHT``: integer buffers used as numpy allows (integers written into them,
  the cast written out with ``astype``, the loop the refusal's hint suggests): right
  in every mode.

Each entry is ``(function, the text of the line a refusal points at)``; ``X`` is the
argument (no integer values, where a truncation's finite differences would jump).
"""

from __future__ import annotations

import numpy as np

X = np.array([0.4, 1.3, 0.7, -0.3])
K = np.arange(1.0, 10.0).reshape(3, 3)
W3 = np.array([1.0, 2.0, 3.0])
IDX = np.array([0, 0, 1])


def pairs(x):
    m = np.zeros((3, 3))
    m[[0, 0], [1, 1]] = x[:2]
    return np.sum(m * K)


def ix_rows(x):
    m = np.zeros((3, 3))
    m[np.ix_([0, 0], [1, 2])] = x.reshape(2, 2)
    return np.sum(m * K)


def negative_alias(x):
    y = np.zeros(3)
    y[[0, -3]] = x[:2]
    return np.sum(y * W3) + x[2]


def negative_in_a_row(x):
    m = np.zeros((3, 2))
    m[0, [0, -2]] = x[:2]
    return np.sum(m * K[:, :2])


def mask_beside_an_array(x):
    m = np.zeros((2, 3))
    m[np.array([True, False]), [1, 1]] = x[:2]
    return np.sum(m * K[:2])


def broadcast_rows(x):
    m = np.zeros((3, 3))
    m[[[0], [0]], [1, 2]] = x.reshape(2, 2)
    return np.sum(m * K)


def pairs_added(x):
    m = np.zeros((3, 3))
    m[[0, 0], [1, 1]] += x[:2]
    return np.sum(m * K)


def split_by_a_slice(x):
    t = np.zeros((2, 2, 3))
    t[[0, 0], :, [1, 1]] = x.reshape(2, 2)
    return np.sum(t * np.arange(12.0).reshape(2, 2, 3))


REPEATED = [
    (pairs, "m[[0, 0], [1, 1]] = x[:2]"),
    (ix_rows, "m[np.ix_([0, 0], [1, 2])] = x.reshape(2, 2)"),
    (negative_alias, "y[[0, -3]] = x[:2]"),
    (negative_in_a_row, "m[0, [0, -2]] = x[:2]"),
    (mask_beside_an_array, "m[np.array([True, False]), [1, 1]] = x[:2]"),
    (broadcast_rows, "m[[[0], [0]], [1, 2]] = x.reshape(2, 2)"),
    (pairs_added, "m[[0, 0], [1, 1]] += x[:2]"),
    (split_by_a_slice, "t[[0, 0], :, [1, 1]] = x.reshape(2, 2)"),
]


def pairs_distinct(x):
    m = np.zeros((3, 3))
    m[[0, 1], [1, 1]] = x[:2]
    m[[2, -1], [0, 2]] += x[2:] ** 2  # two positions of row 2
    return np.sum(m * K)


def ix_distinct(x):
    m = np.zeros((3, 3))
    m[np.ix_([0, 2], [0, -1])] = np.sin(x.reshape(2, 2))
    return np.sum(m * K)


def negative_distinct(x):
    y = np.zeros(3)
    y[[0, -1]] = x[:2]
    return np.sum(y * W3) + x[2]


def mask_beside_an_array_distinct(x):
    m = np.zeros((2, 3))
    m[np.array([True, True]), [1, 1]] = x[:2]  # (0, 1) and (1, 1)
    return np.sum(m * K[:2])


def split_by_a_slice_distinct(x):
    t = np.zeros((2, 2, 3))
    t[[0, 1], :, [1, 1]] = x.reshape(2, 2)
    return np.sum(t * np.arange(12.0).reshape(2, 2, 3))


def repeats_that_write_nothing(x):
    m = x.reshape(2, 2) * 1.0
    m[[0, 0], 2:] = 5.0  # no column: nothing is written
    return np.sum(m * m)


DISTINCT = [
    pairs_distinct,
    ix_distinct,
    negative_distinct,
    mask_beside_an_array_distinct,
    split_by_a_slice_distinct,
    repeats_that_write_nothing,
]


def int_zeros(x):
    y = np.zeros(2, dtype=int)
    y[0] = x[0]
    return np.sum(y * 1.0) + x[1]


def int32_slice(x):
    y = np.zeros(3, np.int32)
    y[:2] = x[:2] * 3.0
    return np.sum(y * 1.0) + x[2]


def bool_buffer(x):
    y = np.zeros(2, dtype=bool)
    y[0] = x[0]
    return np.sum(y * x[:2])


def zeros_like_int(x):
    y = np.zeros_like(x, dtype=int)
    y[0] = x[0] * 4.0
    return np.sum(y * 1.0) + x[1]


def element_added(x):
    y = np.zeros(2, dtype=int)
    y[0] += x[0] * 4.0  # numpy: y[0] = int64(0) + 1.6, truncated when stored
    return np.sum(y * 1.0) + x[1]


TRUNCATED = [
    (int_zeros, "y[0] = x[0]"),
    (int32_slice, "y[:2] = x[:2] * 3.0"),
    (bool_buffer, "y[0] = x[0]"),
    (zeros_like_int, "y[0] = x[0] * 4.0"),
    (element_added, "y[0] += x[0] * 4.0"),
]


def int_list(x):
    y = np.array([0, 0])  # a common slip: an array of integers
    y[0] = x[0] ** 2
    return np.sum(y * 1.0) + x[1]


def arange_buffer(x):
    y = np.arange(2)
    y[1] = x[0] * 5.0
    return np.sum(y * 1.0) + x[1]


#: truncations in arrays tracing does not follow (made by np.array and np.arange: plain
#: arrays, into which a traced value is refused as such)
TRUNCATED_IN_PLAIN_ARRAYS = [
    (int_list, "y[0] = x[0] ** 2"),
    (arange_buffer, "y[1] = x[0] * 5.0"),
]


def int_buffer_updated(x):
    y = np.zeros(4, dtype=int)
    y += x
    return np.sum(y**2)


def int_buffer_divided(x):
    y = np.ones(4, dtype=int)
    y /= 2
    return np.sum(x * y)


def slice_of_ints_updated(x):
    y = np.zeros(4, dtype=int)
    y[:] += x
    return np.sum(y**2)


NUMPY_REFUSES = [
    (int_buffer_updated, "y += x"),
    (int_buffer_divided, "y /= 2"),
    (slice_of_ints_updated, "y[:] += x"),
]


def astype_written(x):
    y = np.zeros(2, dtype=int)
    y[0] = (x[0] * 4.0).astype(int)  # the cast written out: no gradient through it
    return np.sum(y * x[:2]) + x[1]


def float_buffer(x):
    y = np.zeros(2)  # the hint's float buffer
    y[0] = x[0] ** 2
    y += x[2:]
    return np.sum(y * W3[:2])


def integers_written_and_added(x):
    y = np.zeros(4, dtype=int)
    y[0] = 3
    y[x > 0.5] = 2
    y += 1
    return np.sum(x * y)


def repeats_added_in_a_loop(x):
    y = np.zeros(2)
    for k in range(len(IDX)):  # the refusal's hint: each value added in turn
        y[IDX[k]] += x[k]
    return np.sum(y**2) + x[3]


INTEGERS_RIGHT = [astype_written, float_buffer, integers_written_and_added, repeats_added_in_a_loop]
