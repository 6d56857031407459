"""Assignments that fill arrays they make: convolutions, pooling, recurrent loops."""

import numpy as np

from corpus_assignments import METHOD_BUFFER, assignment


def _image_and_kernel(rng):
    return rng.normal(size=(5, 5)), rng.normal(size=(3, 3))


@assignment(_image_and_kernel, wrt=(0, 1), autograd=False)
def conv2d_valid_by_loops(image, kernel):
    kh, kw = kernel.shape
    oh, ow = image.shape[0] - kh + 1, image.shape[1] - kw + 1
    out = np.zeros((oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[i, j] = np.sum(image[i : i + kh, j : j + kw] * kernel)
    return np.sum(np.tanh(out))


@assignment(
    lambda rng: (rng.normal(size=(2, 6, 6)), rng.normal(size=(3, 2, 3, 3))),
    wrt=(0, 1),
    autograd=False,
)
def conv2d_channels_stride_two(x, w):
    c_out, _, kh, kw = w.shape
    oh = (x.shape[1] - kh) // 2 + 1
    ow = (x.shape[2] - kw) // 2 + 1
    out = np.zeros((c_out, oh, ow))
    for f in range(c_out):
        for i in range(oh):
            for j in range(ow):
                patch = x[:, 2 * i : 2 * i + kh, 2 * j : 2 * j + kw]
                out[f, i, j] = np.sum(patch * w[f])
    return np.sum(out**2) / out.size


@assignment(lambda rng: (rng.normal(size=(6, 6)),), autograd=False)
def max_pool_2x2_by_loops(a):
    pooled = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            pooled[i, j] = np.max(a[2 * i : 2 * i + 2, 2 * j : 2 * j + 2])
    return np.sum(pooled * np.arange(9.0).reshape(3, 3))


@assignment(lambda rng: (rng.normal(size=(4, 4)),), autograd=False)
def average_pool_by_loops(a):
    pooled = np.empty((2, 2))
    for i in range(2):
        for j in range(2):
            pooled[i, j] = np.mean(a[2 * i : 2 * i + 2, 2 * j : 2 * j + 2])
    return np.sum(np.sin(pooled))


@assignment(lambda rng: (rng.normal(size=9), rng.normal(size=3)), wrt=(0, 1), autograd=False)
def conv1d_same_padding(signal, taps):
    padded = np.zeros(signal.shape[0] + 2)
    padded[1:-1] = signal
    out = np.zeros(signal.shape[0])
    for t in range(signal.shape[0]):
        out[t] = padded[t : t + 3] @ taps
    return np.sum(out**2)


def _rnn(rng):
    return rng.normal(size=(3, 4)) * 0.5, rng.normal(size=(4, 4)) * 0.5, rng.normal(size=(2, 5, 3))


@assignment(_rnn, wrt=(0, 1), autograd=False)
def rnn_forward_filling_h(Wx, Wh, x):
    n, steps, _ = x.shape
    hidden = Wh.shape[0]
    h = np.zeros((n, steps, hidden))
    prev = np.zeros((n, hidden))
    for t in range(steps):
        prev = np.tanh(x[:, t, :] @ Wx + prev @ Wh)
        h[:, t, :] = prev
    return np.sum(h**2)


def _lstm(rng):
    return rng.normal(size=(3, 8)) * 0.4, rng.normal(size=(2, 8)) * 0.4, rng.normal(size=(2, 4, 3))


@assignment(_lstm, wrt=(0, 1), autograd=False)
def lstm_forward_filling_h(Wx, Wh, x):
    n, steps, _ = x.shape
    size = Wh.shape[0]
    h = np.zeros((n, steps, size))
    c = np.zeros((n, size))
    prev = np.zeros((n, size))
    for t in range(steps):
        a = x[:, t, :] @ Wx + prev @ Wh
        i = 1 / (1 + np.exp(-a[:, :size]))
        f = 1 / (1 + np.exp(-a[:, size : 2 * size]))
        o = 1 / (1 + np.exp(-a[:, 2 * size : 3 * size]))
        g = np.tanh(a[:, 3 * size :])
        c = f * c + i * g
        prev = o * np.tanh(c)
        h[:, t, :] = prev
    return np.sum(h * np.arange(1.0, steps + 1)[None, :, None])


@assignment(_rnn, wrt=(0, 1), autograd=False)
def rnn_states_by_time_then_batch(Wx, Wh, x):
    n, steps, _ = x.shape
    states = np.zeros((steps, n, Wh.shape[0]))
    for t in range(steps):
        before = states[t - 1] if t > 0 else np.zeros((n, Wh.shape[0]))
        states[t] = np.tanh(x[:, t] @ Wx + before @ Wh)
    return np.mean(states[-1]) + np.sum(states[:, 0, :])


@assignment(
    lambda rng: (rng.normal(size=(4, 3)), rng.normal(size=(3, 5))), wrt=(0, 1), autograd=False
)
def matmul_by_columns_with_add_into(a, b):
    out = np.zeros((4, 5))
    for j in range(5):
        out[:, j] += a @ b[:, j]
    return np.sum(out**2)


@assignment(lambda rng: (rng.normal(size=(3, 4)),), autograd=False)
def add_with_out_buffer(x):
    buf = np.empty_like(np.zeros((3, 4)))
    np.add(x, x**2, out=buf)
    np.multiply(buf, 0.5, out=buf)
    return np.sum(buf)


@assignment(lambda rng: (rng.normal(size=6),), autograd=False)
def running_sum_filled(x):
    cumulative = np.zeros(6)
    total = 0.0
    for k in range(6):
        total = total + x[k]
        cumulative[k] = total
    return np.sum(cumulative**2)


@assignment(lambda rng: (rng.normal(size=(5, 3)), rng.normal(size=3)), wrt=(0, 1), autograd=False)
def softmax_rows_by_loops(scores, bias):
    probs = np.zeros_like(np.ones((5, 3)))
    for i in range(5):
        row = scores[i] + bias
        e = np.exp(row - np.max(row))
        probs[i] = e / np.sum(e)
    return -np.sum(np.log(probs[np.arange(5), [0, 1, 2, 0, 1]]))


@assignment(lambda rng: (rng.normal(size=4), rng.normal(size=4)), wrt=(0, 1), autograd=False)
def gram_matrix_filled(u, v):
    pairs = np.ones((2, 2))
    vectors = [u, v]
    for i in range(2):
        for j in range(2):
            pairs[i, j] = np.dot(vectors[i], vectors[j])
    return np.linalg.det(pairs + np.eye(2))


@assignment(lambda rng: (rng.normal(size=3),), autograd=False)
def euler_trajectory_preallocated(k):
    steps = 20
    states = np.zeros((steps + 1, 3))
    states[0] = np.array([1.0, 0.5, -0.5])
    for t in range(steps):
        states[t + 1] = states[t] + 0.05 * (-k * states[t])
    return np.sum(states[-1] ** 2)


@assignment(lambda rng: (rng.normal(size=(4, 4)),), autograd=False)
def full_and_identity_buffers(a):
    shifted = np.full((4, 4), 0.5)
    shifted[1:, :] = a[:-1, :]
    m = np.identity(4)
    m[np.diag_indices(4)] = np.exp(np.diag(a))
    return np.sum(shifted * m)


@assignment(lambda rng: (rng.normal(size=(3, 4)),), autograd=False)
def one_hot_targets_and_loss(logits):
    targets = np.zeros((3, 4))
    targets[np.arange(3), [1, 3, 0]] = 1.0
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.sum(targets * log_probs)


@assignment(lambda rng: (rng.normal(size=(6, 2)),), autograd=False)
def pairwise_distances_filled(points):
    n = points.shape[0]
    d = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            d[i, j] = np.sqrt(np.sum((points[i] - points[j]) ** 2))
            d[j, i] = d[i, j]
    return np.sum(d)


class ConvolutionLayer:
    """A layer object whose method makes and fills the output."""

    def __init__(self, kernel):
        self.kernel = kernel

    def forward(self, signal):
        out = np.zeros(signal.shape[0] - 2)
        for t in range(out.shape[0]):
            out[t] = signal[t : t + 3] @ self.kernel
        return out


@assignment(lambda rng: (rng.normal(size=3), rng.normal(size=8)), tracing=METHOD_BUFFER)
def layer_method_fills_its_output(kernel, signal):
    return np.sum(ConvolutionLayer(kernel).forward(signal) ** 2)
