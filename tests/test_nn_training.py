"""Training: a tiny SReLU network learns two moons; the optimizers follow their formulas."""

from __future__ import annotations

import numpy as np
import pytest

from autodiff_tutor.errors import ArgumentError
from autodiff_tutor.nn import (
    SGD,
    Adam,
    Dropout,
    FullyConnected,
    Layer,
    PReLULayer,
    Sequential,
    Softmax,
    SReLULayer,
    accuracy,
    one_hot,
    train,
)

#: The held-out accuracy the SReLU network must reach (a linear model gets about 0.86-0.90).
TARGET_ACCURACY = 0.97


def two_moons(n, noise, seed):
    """Two interleaved half circles with Gaussian noise, labels 0 and 1."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, np.pi, n)
    label = rng.integers(0, 2, n)
    x = np.where(label == 0, np.cos(t), 1 - np.cos(t))
    y = np.where(label == 0, np.sin(t), 0.5 - np.sin(t))
    return np.stack([x, y], axis=1) + noise * rng.standard_normal((n, 2)), label


def srelu_network():
    return Sequential([FullyConnected(16), SReLULayer(), FullyConnected(2), Softmax()])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_srelu_network_learns_two_moons_with_adam(seed):
    X, y = two_moons(200, 0.1, seed)
    X_test, y_test = two_moons(500, 0.1, 100 + seed)
    model = srelu_network().initialize(X, seed=seed)
    history = train(model, X, y, optimizer=Adam(0.03), epochs=150, progress=False, seed=seed)
    assert len(history.loss) == 150
    assert history.final_loss < 0.05 < history.loss[0]
    assert accuracy(model, X, y) >= 0.98
    assert accuracy(model, X_test, y_test) >= TARGET_ACCURACY


def test_srelu_network_learns_two_moons_with_sgd_momentum():
    X, y = two_moons(200, 0.1, 0)
    X_test, y_test = two_moons(500, 0.1, 100)
    model = srelu_network().initialize(X, seed=0)
    history = train(model, X, y, optimizer=SGD(0.1, momentum=0.9), epochs=200, progress=False)
    assert history.final_loss < 0.05 < history.loss[0]
    assert accuracy(model, X_test, y_test) >= TARGET_ACCURACY


def test_a_linear_model_cannot_reach_the_target():
    """The toy problem needs the nonlinearity: the target above is not trivial."""
    X, y = two_moons(200, 0.1, 0)
    X_test, y_test = two_moons(500, 0.1, 100)
    model = Sequential([FullyConnected(2), Softmax()]).initialize(X, seed=0)
    train(model, X, y, optimizer=Adam(0.03), epochs=150, progress=False)
    assert accuracy(model, X_test, y_test) < 0.93


def test_mini_batches_and_one_hot_targets():
    X, y = two_moons(120, 0.1, 4)
    a = srelu_network().initialize(X, seed=4)
    b = srelu_network().initialize(X, seed=4)
    history_a = train(a, X, y, optimizer=Adam(0.03), epochs=5, batch_size=32, progress=False)
    history_b = train(
        b, X, one_hot(y, 2), optimizer=Adam(0.03), epochs=5, batch_size=32, progress=False
    )
    assert history_a.loss == history_b.loss


def test_progress_bar_shows_epochs_and_loss(capsys):
    X, y = two_moons(40, 0.1, 5)
    model = Sequential([FullyConnected(4), PReLULayer(), FullyConnected(2), Softmax()]).initialize(
        X
    )
    train(model, X, y, epochs=3, progress=True)
    err = capsys.readouterr().err
    assert "training" in err and "3/3" in err and "loss=" in err


def test_train_arguments_are_checked():
    X, y = two_moons(10, 0.1, 0)
    model = srelu_network().initialize(X)
    with pytest.raises(ArgumentError, match="epochs must be a positive integer"):
        train(model, X, y, epochs=0)
    with pytest.raises(ArgumentError, match="X has 10 observations but y has 9"):
        train(model, X, y[:9])
    with pytest.raises(ArgumentError, match="batch_size"):
        train(model, X, y, batch_size=0)
    with pytest.raises(ArgumentError, match="momentum must be in"):
        SGD(0.1, momentum=1.0)
    with pytest.raises(ArgumentError, match="learning_rate must be positive"):
        Adam(learning_rate=0.0)


def one_parameter():
    layer = PReLULayer().initialize(np.zeros((1, 1)))
    layer.params["alpha"] = np.array([[1.0]])
    return layer


def test_sgd_momentum_follows_its_formula():
    layer = one_parameter()
    sgd = SGD(learning_rate=0.1, momentum=0.5)
    for g in (2.0, -4.0):
        sgd.step({(layer, "alpha"): np.array([[g]])})
    # v1 = -0.1*2 = -0.2, p1 = 0.8; v2 = 0.5*(-0.2) + 0.4 = 0.3, p2 = 1.1
    np.testing.assert_allclose(layer.params["alpha"], [[1.1]], rtol=1e-14)


def test_adam_follows_its_formula():
    layer = one_parameter()
    adam = Adam(learning_rate=0.01, beta1=0.9, beta2=0.99, epsilon=1e-8)
    p, m, v = 1.0, 0.0, 0.0
    for t, g in enumerate((2.0, -4.0, 0.5), start=1):
        adam.step({(layer, "alpha"): np.array([[g]])})
        m = 0.9 * m + 0.1 * g
        v = 0.99 * v + 0.01 * g * g
        p -= 0.01 * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.99**t)) + 1e-8)
        np.testing.assert_allclose(layer.params["alpha"], [[p]], rtol=1e-13)


def test_history_plots_the_loss_per_epoch():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from autodiff_tutor.nn import History

    fig, ax = plt.subplots()
    History([3.0, 2.0, 1.5]).plot(ax)
    (line,) = ax.get_lines()
    assert list(line.get_xdata()) == [1, 2, 3] and list(line.get_ydata()) == [3.0, 2.0, 1.5]
    assert ax.get_xlabel() == "epoch" and ax.get_ylabel() == "loss"
    plt.close(fig)


def test_a_rate_out_of_range_is_located_at_the_users_line():
    """A fraction out of [0, 1) (SGD's momentum, Dropout's rate) is refused with the
    message's interval intact and located at the line that passed it."""
    for make, what in [
        (lambda: SGD(0.1, momentum=1.0), "momentum"),
        (lambda: Dropout(1.5), "rate"),
    ]:
        with pytest.raises(ArgumentError, match=r"must be in \[0, 1\), got") as info:
            make()
        assert what in str(info.value)
        assert info.value.location is not None
        assert info.value.location.filename == __file__


class ForgetsItsOutputs(Layer):
    learnables = ("w",)

    def initial_values(self, layout, rng):
        return {"w": np.ones((1, layout.shape[1]))}

    def predict(self, X):
        return np.tanh(X) * self.params["w"]

    def backward(self, X, dY):  # Y and memory left out
        t = np.tanh(X)
        return dY * (1 - t * t) * self.params["w"], np.sum(dY * t, axis=0, keepdims=True)


def test_a_layer_backward_with_the_wrong_parameters_is_refused_at_the_users_call():
    """Not a raw TypeError from inside the toolkit: the parameters it must take."""
    X, y = two_moons(8, 0.1, 0)
    model = Sequential(
        [FullyConnected(3), ForgetsItsOutputs(), FullyConnected(2), Softmax()]
    ).initialize(X)
    with pytest.raises(ArgumentError) as raised:
        train(model, X, y, optimizer=SGD(0.1), epochs=1, progress=False)
    assert "backward of 'ForgetsItsOutputs' cannot take" in " ".join(str(raised.value).split())
    assert raised.value.hint.endswith("X, Y, dY, memory")
    assert raised.value.location.filename == __file__
