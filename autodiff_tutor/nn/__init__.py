"""Layers with learnable parameters, a loss, optimizers and a small training loop.

>>> import numpy as np
>>> from autodiff_tutor.nn import FullyConnected, SReLULayer, Softmax, Sequential
>>> model = Sequential([FullyConnected(8), SReLULayer(), FullyConnected(2), Softmax()])
>>> model.initialize(np.zeros((16, 2))).predict(np.zeros((3, 2))).shape
(3, 2)
"""

from autodiff_tutor.nn.autodiff import AUTODIFF_MODES
from autodiff_tutor.nn.combine import Addition, Concatenation
from autodiff_tutor.nn.layer import Layer, Layout
from autodiff_tutor.nn.layer_op import LayerOp
from autodiff_tutor.nn.layers import Dropout, FullyConnected, PReLULayer, Softmax, SReLULayer
from autodiff_tutor.nn.losses import CrossEntropy, one_hot
from autodiff_tutor.nn.network import Network, Sequential
from autodiff_tutor.nn.optimizers import SGD, Adam, Optimizer
from autodiff_tutor.nn.training import History, accuracy, train

__all__ = [
    "AUTODIFF_MODES",
    "SGD",
    "Addition",
    "Concatenation",
    "Adam",
    "CrossEntropy",
    "Dropout",
    "FullyConnected",
    "History",
    "Layer",
    "LayerOp",
    "Layout",
    "Network",
    "Optimizer",
    "PReLULayer",
    "SReLULayer",
    "Sequential",
    "Softmax",
    "accuracy",
    "one_hot",
    "train",
]
