"""scipy's special functions and the normal log-density: ``expit logit erf erfc
gammaln digamma xlogy logsumexp softmax log_softmax``, ``scipy.stats.norm``'s
``logpdf``, ``pdf`` and ``cdf``, ``scipy.stats.t``'s and ``multivariate_normal``'s
``logpdf``.

scipy is an optional extra (``pip install autodiff-tutor[scipy]``). The rules name
scipy's objects as aliases only when scipy is installed; a scipy function without a
rule is refused at the user's call (see :func:`autodiff_tutor.rules.names.op_of_callable`),
never compiled from scipy's own source. ``scipy.stats.norm.logpdf`` is the primitive
``norm_logpdf``, with ``loc`` and ``scale`` as inputs (by position:
``norm.logpdf(x, mu, sigma)``; left out, they are scipy's 0 and 1).

>>> import numpy as np
>>> expit(np.float64(1.0), np.float64(0.5), 0.0).item()  # sigma'(0) = 1/4
0.25
"""

from __future__ import annotations

from typing import Any

from autodiff_tutor.rules.record import ELEMENTWISE, OTHER, REDUCTION, Family
from autodiff_tutor.rules.symbolic_spec import NUMBERS_ONLY, ArrayRule, ScalarRule
from autodiff_tutor.runtime.helpers import cast_like, digamma, trigamma, unreduce

family = Family("scipy_special", shape=ELEMENTWISE)
defvjp, defjvp = family.defvjp, family.defjvp


def _scipy(path: str) -> tuple[Any, ...]:
    """``(scipy object,)`` for an alias when scipy is installed, else ``()``."""
    try:
        import importlib

        module, _, name = path.rpartition(".")
        return (getattr(importlib.import_module(module), name),)
    except ImportError:
        return ()


# --- elementwise ---------------------------------------------------------------------------


@defvjp(
    "expit",
    math="1 / (1 + e^-x)",
    sympy=lambda sp, x: 1 / (1 + sp.exp(-x)),
)
def expit(g, out, x):
    return g * out * (1 - out)


@defvjp(
    "logit",
    math="ln(x / (1 - x))",
    convention="poles at x = 0 and x = 1",
    sympy=lambda sp, x: sp.log(x / (1 - x)),
    symbolic=ScalarRule(positive=("x",), assume=lambda s: [s["x"] < 1]),
)
def logit(g, x):
    return g / (x * (1 - x))


@defvjp(
    "erf",
    math="2/sqrt(pi) int_0^x e^(-t^2) dt",
    sympy=lambda sp, x: sp.erf(x),
)
def erf(g, xp, x):
    return g * 2 * xp.exp(-x * x) / xp.pi**0.5


@defvjp("erfc", math="1 - erf(x)", sympy=lambda sp, x: sp.erfc(x))
def erfc(g, xp, x):
    return -g * 2 * xp.exp(-x * x) / xp.pi**0.5


@defvjp(
    "gammaln",
    math="ln |Gamma(x)|",
    latex=r"\ln \lvert \Gamma(x) \rvert",
    convention="poles at 0, -1, -2, ...",
    sympy=lambda sp, x: sp.loggamma(x),
    symbolic=ScalarRule(positive=("x",)),
)
def gammaln(g, x):
    return g * digamma(x)


@defvjp(
    "digamma",
    math="psi(x) = d/dx ln Gamma(x)",
    latex=r"\psi(x) = \frac{d}{dx} \ln \Gamma(x)",
    convention="poles at 0, -1, -2, ...",
    sympy=lambda sp, x: sp.polygamma(0, x),
    symbolic=ScalarRule(positive=("x",)),
    aliases=("psi",),
)
def digamma_(g, x):
    return g * trigamma(x)


@defvjp(
    "xlogy",
    broadcasting=True,
    math="x ln y (0 where x = 0)",
    latex=r"x \ln y\ \ (0 \text{ where } x = 0)",
    convention="d/dy is 0 where x = 0 (as the value); d/dx = ln y",
    sympy=lambda sp, x, y: x * sp.log(y),
    symbolic=ScalarRule(positive=("y",)),
)
def xlogy(g, xp, x, y):
    return g * xp.log(y), xp.where(x == 0, 0, g * x / y)


# --- over axes -----------------------------------------------------------------------------

AXIS_CASES = [(((3,),), {}), (((2, 3),), {"axis": 1}), (((2, 2),), {"axis": 0})]


def _logsumexp(xp: Any, x: Any, axis: Any = None, b: Any = None, keepdims: bool = False) -> Any:
    return xp.log(xp.sum(xp.exp(x) * (1 if b is None else b), axis=axis, keepdims=keepdims))


@defvjp(
    "logsumexp",
    math="ln sum_i b_i e^(x_i)",
    latex=r"\ln \sum_i b_i e^{x_i}",
    convention="from the output, b e^(x - out): never overflows; nan where every x is -inf",
    shape=REDUCTION,
    symbolic=ArrayRule(_logsumexp, AXIS_CASES + [(((2, 2),), {"axis": 1, "keepdims": True})]),
    aliases=_scipy("scipy.special.logsumexp"),
)
def logsumexp(g, out, xp, x, axis=None, b=None, keepdims=False):
    w = 1 if b is None else b
    share = w * xp.exp(x - unreduce(out, x, axis=axis, keepdims=keepdims))
    return cast_like(unreduce(g, x, axis=axis, keepdims=keepdims) * share, x)


@defjvp("logsumexp")
def logsumexp_tangent(out, xp, x, axis=None, b=None, keepdims=False, *, d_x):
    w = 1 if b is None else b
    share = w * xp.exp(x - unreduce(out, x, axis=axis, keepdims=keepdims))
    return xp.sum(share * d_x, axis=axis, keepdims=keepdims)


def _softmax(xp: Any, x: Any, axis: Any = None) -> Any:
    e = xp.exp(x)
    return e / xp.sum(e, axis=axis, keepdims=True)


@defvjp(
    "softmax",
    math="e^(x_i) / sum_j e^(x_j)",
    shape=REDUCTION,
    symbolic=ArrayRule(_softmax, AXIS_CASES),
    aliases=_scipy("scipy.special.softmax"),
)
def softmax(g, out, xp, x, axis=None):
    return out * (g - xp.sum(g * out, axis=axis, keepdims=True))


@defjvp("softmax")
def softmax_tangent(out, xp, x, axis=None, *, d_x):
    return out * (d_x - xp.sum(out * d_x, axis=axis, keepdims=True))


@defvjp(
    "log_softmax",
    math="x_i - ln sum_j e^(x_j)",
    shape=REDUCTION,
    symbolic=ArrayRule(lambda xp, x, axis=None: xp.log(_softmax(xp, x, axis)), AXIS_CASES),
    aliases=_scipy("scipy.special.log_softmax"),
)
def log_softmax(g, out, xp, x, axis=None):
    return g - xp.exp(out) * xp.sum(g, axis=axis, keepdims=True)


@defjvp("log_softmax")
def log_softmax_tangent(out, xp, x, axis=None, *, d_x):
    return d_x - xp.sum(xp.exp(out) * d_x, axis=axis, keepdims=True)


# --- the normal density (scipy.stats.norm) ---------------------------------------------------

_NORMAL = {"loc": 0.0, "scale": 1.0}  # scipy.stats.norm's standard normal, when left out


@defvjp(
    "norm_logpdf",
    broadcasting=True,
    defaults=_NORMAL,
    shape=OTHER,  # elementwise in three inputs
    math="-((x - loc)/scale)^2 / 2 - ln scale - ln(2 pi) / 2",
    convention="scale > 0 (numpy gives nan otherwise)",
    sympy=lambda sp, x, loc, scale: (
        -(((x - loc) / scale) ** 2) / 2 - sp.log(scale) - sp.log(2 * sp.pi) / 2
    ),
    symbolic=ScalarRule(positive=("scale",)),
    tangent="symmetric in out's dtype",
)
def norm_logpdf(g, x, loc, scale):
    z = (x - loc) / scale
    return -g * z / scale, g * z / scale, g * (z * z - 1) / scale


@defvjp(
    "norm_pdf",
    broadcasting=True,
    defaults=_NORMAL,
    shape=OTHER,
    math="e^(-((x - loc)/scale)^2 / 2) / (scale sqrt(2 pi))",
    convention="scale > 0",
    sympy=lambda sp, x, loc, scale: (
        sp.exp(-(((x - loc) / scale) ** 2) / 2) / (scale * sp.sqrt(2 * sp.pi))
    ),
    symbolic=ScalarRule(positive=("scale",)),
    tangent="symmetric",
)
def norm_pdf(g, out, x, loc, scale):
    z = (x - loc) / scale
    return -g * out * z / scale, g * out * z / scale, g * out * (z * z - 1) / scale


@defvjp(
    "norm_cdf",
    broadcasting=True,
    shape=OTHER,
    defaults=_NORMAL,
    math="(1 + erf((x - loc)/(scale sqrt 2))) / 2",
    convention="scale > 0",
    sympy=lambda sp, x, loc, scale: (1 + sp.erf((x - loc) / (scale * sp.sqrt(2)))) / 2,
    symbolic=ScalarRule(positive=("scale",)),
)
def norm_cdf(g, xp, x, loc, scale):
    z = (x - loc) / scale
    density = xp.exp(-z * z / 2) / (scale * xp.sqrt(2 * xp.pi))
    return g * density, -g * density, -g * density * z


@defjvp("norm_cdf")
def norm_cdf_tangent(out, xp, x, loc, scale, *, d_x, d_loc, d_scale):
    z = (x - loc) / scale  # each term in the output's dtype (scipy computes in float64)
    density = xp.exp(-z * z / 2) / (scale * xp.sqrt(2 * xp.pi))
    return (
        cast_like(d_x * density, out)
        - cast_like(d_loc * density, out)
        - cast_like(d_scale * density * z, out)
    )


# --- Student's t density (scipy.stats.t) -------------------------------------------------


def _t_logpdf(sp, x, df, loc, scale):
    z = (x - loc) / scale
    return (
        sp.loggamma((df + 1) / 2)
        - sp.loggamma(df / 2)
        - sp.log(df * sp.pi) / 2
        - sp.log(scale)
        - (df + 1) / 2 * sp.log(1 + z * z / df)
    )


@defvjp(
    "t_logpdf",
    broadcasting=True,
    defaults=_NORMAL,  # scipy.stats.t's standard form, when left out
    shape=OTHER,  # elementwise in four inputs
    math="ln Gamma((df+1)/2) - ln Gamma(df/2) - ln(df pi)/2 - ln scale "
    "- (df+1)/2 ln(1 + z^2/df), z = (x - loc)/scale",
    convention="df > 0 and scale > 0 (numpy gives nan otherwise)",
    sympy=_t_logpdf,
    symbolic=ScalarRule(positive=("df", "scale")),
    tangent="symmetric in out's dtype",
)
def t_logpdf(g, xp, x, df, loc, scale):
    z = (x - loc) / scale
    pull = (df + 1) * z / (scale * (df + z * z))
    return (
        -g * pull,
        g
        * (
            0.5 * digamma((df + 1) / 2)
            - 0.5 * digamma(df / 2)
            - 0.5 / df
            - 0.5 * xp.log1p(z * z / df)
            + (df + 1) * z * z / (2 * df * (df + z * z))
        ),
        g * pull,
        g * (z * pull - 1 / scale),
    )


# --- the multivariate normal density (scipy.stats.multivariate_normal) ---------------------


@defvjp(
    "multivariate_normal_logpdf",
    shape=OTHER,
    math="-(x - mean)^T cov^-1 (x - mean) / 2 - ln det(2 pi cov) / 2",
    latex=r"-\tfrac{1}{2} (x - \mu)^\top \Sigma^{-1} (x - \mu)"
    r" - \tfrac{1}{2} \ln \det(2 \pi \Sigma)",
    convention="cov symmetric positive definite; its gradient is the symmetric one "
    "(scipy reads one triangle: perturb cov symmetrically); x is (d,) or (n, d)",
    symbolic=NUMBERS_ONLY,
)
def multivariate_normal_logpdf(g, xp, x, mean, cov):
    inv = xp.linalg.inv(cov)
    sol = (x - mean) @ inv
    weighted = xp.reshape(g, x.shape[:-1])[..., None] * sol
    rows = xp.reshape(weighted, (-1, cov.shape[-1]))
    return (
        -weighted,
        xp.reshape(xp.sum(rows, axis=0), mean.shape),
        0.5 * (rows.T @ xp.reshape(sol, (-1, cov.shape[-1]))) - 0.5 * xp.sum(g) * inv,
    )


@defjvp("multivariate_normal_logpdf")
def multivariate_normal_logpdf_tangent(out, xp, x, mean, cov, *, d_x, d_mean, d_cov):
    inv = xp.linalg.inv(cov)
    sol = (x - mean) @ inv
    return (
        cast_like(xp.reshape(-xp.sum(sol * d_x, axis=-1), xp.shape(out)), out)
        + cast_like(xp.reshape(xp.sum(sol * d_mean, axis=-1), xp.shape(out)), out)
        + cast_like(xp.reshape(0.5 * xp.sum((sol @ d_cov) * sol, axis=-1), xp.shape(out)), out)
        - cast_like(0.5 * xp.sum(inv * d_cov) + 0 * out, out)
    )
