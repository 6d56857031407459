"""Custom operations with a hand-written backward, and the built-in SReLU and PReLU.

>>> import numpy as np
>>> from autodiff_tutor.ops import PReLUFunction, is_differentiable_op
>>> is_differentiable_op(PReLUFunction("BC"))
True
"""

from autodiff_tutor.ops.formats import (
    LABELS,
    FormattedArray,
    batch_axis,
    channel_axis,
    channel_shape,
    check_channel_parameter,
    check_channel_parameters,
    check_format,
    dims,
    find_dims,
    formatted,
    is_formatted,
    reduce_to_channels,
    strip_dims,
)
from autodiff_tutor.ops.function import (
    DifferentiableFunction,
    GradientProblem,
    InputSpec,
    Saved,
    gradient_problems,
    op_vjp,
)
from autodiff_tutor.ops.prelu import PReLUFunction, prelu, prelu_reference
from autodiff_tutor.ops.srelu import SRELU_PARAMETERS, SReLUFunction, srelu, srelu_reference
from autodiff_tutor.protocol import is_differentiable_op

__all__ = [
    "LABELS",
    "SRELU_PARAMETERS",
    "DifferentiableFunction",
    "FormattedArray",
    "GradientProblem",
    "InputSpec",
    "PReLUFunction",
    "SReLUFunction",
    "Saved",
    "batch_axis",
    "channel_axis",
    "channel_shape",
    "check_channel_parameter",
    "check_channel_parameters",
    "check_format",
    "dims",
    "find_dims",
    "formatted",
    "gradient_problems",
    "is_differentiable_op",
    "is_formatted",
    "op_vjp",
    "prelu",
    "prelu_reference",
    "reduce_to_channels",
    "srelu",
    "srelu_reference",
    "strip_dims",
]
