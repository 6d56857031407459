"""Probes of the numpy namespace: for every public name, a tiny program that reaches it
with a value that carries gradient, or a reason why no such program exists.

The names walked are every public name of ``numpy`` and ``numpy.linalg`` (functions,
ufuncs, classes, index objects such as ``np.r_``), the ufunc methods (``np.add.reduce``),
``numpy.ndarray``'s public methods and attributes (on a value with gradient, and a
constant array's methods called with one), and the scipy functions that have derivative
rules. Each name is reached as fits it: called with ``x``, subscripted with it
(``np.r_[x, c, x]``), as ``x``'s method or attribute. A name is probed with the first
argument list (from :data:`SPECIAL`, else :data:`GENERIC`) that numpy runs on plain
floats; the program's result is a weighted sum of what the name returns, so that every
output element matters. A name added by a future numpy is probed the same way; one
that no argument list fits must be listed in :data:`OUT_OF_SCOPE` with its reason,
or the walk fails.

The programs are written to one module (the compiler reads their source), see
:func:`write_module`.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import io
import shutil
import sys
import tempfile
import types
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.special
import scipy.stats

from autodiff_tutor.rules.names import op_of_attribute, op_of_callable, op_of_method
from autodiff_tutor.rules.registry import lookup

VECTORS = (np.array([0.3, 0.55, 0.8]), np.array([1.3, 1.6, 2.1]), np.array([-0.7, 0.4, 1.3]))
MATRIX = np.array([[2.0, 0.3, 0.1], [0.4, 1.5, 0.2], [0.1, 0.5, 1.8]])
INPUTS = (*VECTORS, MATRIX)

# argument lists tried in order when a name has none of its own (x: the value with gradient)
GENERIC = ("x", "x, x", "x, 1", "[x, x]", "x, x, x", "x, (3,)", "(3,), x", "x, 2")
METHOD_GENERIC = ("", "x", "1", "(3,)", "[x, x]", "x, x", "2")  # x.name(...)

# programs of their own, each probed: an expression (its value is the result), or
# statements separated by "; " that leave the result in ``y``; x has the gradient
SPECIAL: dict[str, tuple[str, ...]] = {
    # arguments of their own: where x fits
    "apply_along_axis": ("np.apply_along_axis(np.sum, 0, x)",),
    "apply_over_axes": ("np.apply_over_axes(np.sum, x, [0])",),
    "astype": ("np.astype(x, np.float64)",),
    "choose": ("np.choose([0, 1, 0], [x, 2.0 * x])",),
    "clip": ("np.clip(x, 0.4, 0.7)",),
    "compress": ("np.compress([True, False, True], x)",),
    "copysign": ("np.copysign(x, -1.0)",),
    "delete": ("np.delete(x, 1)",),
    "dsplit": ("np.dsplit(np.reshape(x, (1, 1, 3)), 3)",),
    "einsum": ("np.einsum('ij,jk->ik', x, x)",),
    "extract": ("np.extract(x > 0.5, x)",),
    "fromfunction": ("np.fromfunction(lambda i: i * x[0], (3,))",),
    "frompyfunc": ("np.frompyfunc(lambda v: v * v, 1, 1)(x).astype(np.float64)",),
    "full": ("np.full((2, 3), x)",),
    "full_like": ("np.full_like(x, 2.0)", "np.full_like(np.zeros(3), x)"),
    "geomspace": ("np.geomspace(x[0], 2.0, 4)",),
    "insert": ("np.insert(x, 1, x[0])",),
    "isin": ("np.isin(x, [0.3])",),
    "ldexp": ("np.ldexp(x, 2)",),
    "linspace": ("np.linspace(x[0], 2.0, 4)",),
    "logspace": ("np.logspace(x[0], 2.0, 4)",),
    "moveaxis": ("np.moveaxis(x, 0, 1)",),
    "nanpercentile": ("np.nanpercentile(x, 40.0)",),
    "nanquantile": ("np.nanquantile(x, 0.4)",),
    "percentile": ("np.percentile(x, 40.0)",),
    "piecewise": ("np.piecewise(x, [x > 0.5], [lambda v: v * v, lambda v: -v])",),
    "polyfit": ("np.polyfit(np.array([0.0, 1.0, 2.0]), x, 1)",),
    "quantile": ("np.quantile(x, 0.4)",),
    "roll": ("np.roll(x, 1)",),
    "rollaxis": ("np.rollaxis(x, 1)",),
    "select": ("np.select([x > 0.5], [x])",),
    "swapaxes": ("np.swapaxes(x, 0, 1)",),
    "take_along_axis": ("np.take_along_axis(x, np.array([2, 0, 1]), axis=0)",),
    "tensordot": ("np.tensordot(x, x, axes=1)",),
    "vsplit": ("np.vsplit(x, 3)",),
    "where": ("np.where(x > 0.5, x, 2.0 * x)",),
    # joined from a list, as written, and from the rows of one array
    **{
        name: (f"np.{name}([x, 2.0 * x])", f"np.{name}(x)")
        for name in ("concatenate", "concat", "stack", "hstack", "vstack", "dstack")
    },
    "column_stack": ("np.column_stack([x, 2.0 * x])", "np.column_stack(x)"),
    "row_stack": ("np.row_stack([x, 2.0 * x])",),
    # writes into an array made here
    "copyto": ("y = np.zeros(3); np.copyto(y, x)",),
    "fill_diagonal": ("y = x * 1.0; np.fill_diagonal(y, 2.0 * x[0, 1])",),
    "place": ("y = x * 1.0; np.place(y, [True, False, True], 2.0 * x[1])",),
    "put": ("y = x * 1.0; np.put(y, [0], 2.0 * x[1])",),
    "put_along_axis": ("y = x * 1.0; np.put_along_axis(y, np.array([0]), 2.0 * x[1], axis=0)",),
    "putmask": ("y = x * 1.0; np.putmask(y, [True, False, True], 2.0 * x[1])",),
    # the symmetric matrices these read one triangle of (the rules' documented convention)
    "linalg.cholesky": ("np.linalg.cholesky(x + x.T)",),
    "linalg.eigh": ("np.linalg.eigh(x + x.T)",),
    "linalg.eigvalsh": ("np.linalg.eigvalsh(x + x.T)",),
    "linalg.matrix_power": ("np.linalg.matrix_power(x, 2)",),
    "linalg.multi_dot": ("np.linalg.multi_dot([x, x, x])",),
    "linalg.svd": ("np.linalg.svd(x, full_matrices=False)", "np.linalg.svd(x)"),
    "linalg.tensorinv": ("np.linalg.tensorinv(x, ind=1)",),
    "linalg.tensorsolve": ("np.linalg.tensorsolve(x, x[0])",),
    # classes that take a value
    "poly1d": ("np.poly1d(x)(0.5)",),
    "vectorize": ("np.vectorize(lambda v: v * v)(x)",),
    # index objects: subscripted
    "r_": ("np.r_[x, C, x]", "np.r_[x, 1.0]"),
    "c_": ("np.c_[x, C]",),
    "s_": ("np.s_[x]",),
    "index_exp": ("np.index_exp[x]",),
    "mgrid": ("np.mgrid[x[0] : 2.0 : 3j]",),
    "ogrid": ("np.ogrid[x[0] : 2.0 : 3j]",),
    # ndarray methods and attributes that need arguments or give an iterator
    "ndarray.astype": ("x.astype(np.float64)",),
    "ndarray.choose": ("np.array([0, 1, 0]).choose([x, 2.0 * x])",),
    "ndarray.clip": ("x.clip(0.4, 0.7)",),
    "ndarray.flat": ("x.flat[1]",),
    "ndarray.getfield": ("x.getfield(np.float64)",),
    "ndarray.swapaxes": ("x.swapaxes(0, 1)",),
    "ndarray.fill": ("y = x * 1.0; y.fill(2.0)",),
    "ndarray.itemset": ("y = x * 1.0; y.itemset(0, 2.0)",),
    "ndarray.partition": ("y = x * 1.0; y.partition(1)",),
    "ndarray.put": ("y = x * 1.0; y.put([0], 2.0 * x[1])",),
    "ndarray.resize": ("y = x * 1.0; y.resize((2,), refcheck=False)",),
    "ndarray.setfield": ("y = x * 1.0; y.setfield(2.0 * x, np.float64)",),
    "ndarray.sort": ("y = x * 1.0; y.sort()",),
    "constant.clip": ("c.clip(x, 2.0)",),
    # scipy's, with the arguments their rules take
    "scipy.stats.t.logpdf": ("scipy.stats.t.logpdf(x, 3.0, 0.5, 2.0)",),
    "scipy.stats.multivariate_normal.logpdf": (
        "scipy.stats.multivariate_normal.logpdf(x, np.zeros(3), np.eye(3))",
    ),
}

UFUNC_METHODS = ("reduce", "accumulate", "outer", "reduceat")
AS_VALUE = " as a value"  # a call made for its effect, its value kept: r = np.put(y, ...)

# names no program can reach with a float array, and why
OUT_OF_SCOPE: dict[str, str] = {}


def _out_of_scope(reason: str, *names: str) -> None:
    OUT_OF_SCOPE.update(dict.fromkeys(names, reason))


_out_of_scope(
    "a constant, a module or a mapping, not a function of arrays",
    *("False_", "True_", "ScalarType", "e", "euler_gamma", "inf", "nan", "pi", "newaxis"),
    *("little_endian", "sctypeDict", "typecodes", "char", "core", "ctypeslib", "dtypes"),
    *("emath", "exceptions", "f2py", "fft", "lib", "linalg", "ma", "polynomial", "random"),
    *("rec", "strings", "testing", "typing"),
)
_out_of_scope(
    "integers or booleans only: numpy refuses float arrays",
    *("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"),
    *("left_shift", "right_shift", "gcd", "lcm", "bincount", "packbits", "unpackbits"),
    *("ravel_multi_index", "unravel_index", "isnat", "busday_count", "busday_offset"),
    *("datetime_as_string", "datetime_data", "binary_repr", "base_repr", "is_busday"),
)
_out_of_scope(
    "takes sizes, shapes, dtypes or types, not values",
    *("arange", "empty", "eye", "identity", "ones", "zeros", "tri", "indices", "diag_indices"),
    *("tril_indices", "triu_indices", "mask_indices", "bartlett", "blackman", "hamming"),
    *("hanning", "kaiser", "broadcast_shapes", "can_cast", "promote_types", "issubdtype"),
    *("isdtype", "typename", "format_float_positional", "format_float_scientific"),
    *("finfo", "iinfo", "dtype", "ndarray", "memmap", "recarray", "record", "void", "generic"),
    *("number", "integer", "signedinteger", "unsignedinteger", "inexact", "floating"),
    *("complexfloating", "flexible", "character", "datetime64", "timedelta64", "str_"),
    *("bytes_", "object_", "busdaycalendar", "flatiter", "nditer", "ndindex", "ndenumerate"),
    *("broadcast", "nested_iters", "ufunc", "errstate"),
)
_out_of_scope(
    "files, buffers, settings and help: no array value goes in",
    *("fromfile", "fromiter", "fromregex", "fromstring", "genfromtxt", "load", "loadtxt"),
    *("save", "savetxt", "savez", "savez_compressed", "get_include", "get_printoptions"),
    *("set_printoptions", "getbufsize", "setbufsize", "geterr", "seterr", "geterrcall"),
    *("seterrcall", "show_config", "show_runtime", "test", "linalg.test", "linalg.LinAlgError"),
    *("ndarray.dump", "ndarray.tofile", "ndarray.to_device"),
)
_out_of_scope("complex inputs only (sorts by real, then imaginary part)", "sort_complex")


def out_of_scope(label: str) -> str | None:
    """Why no program reaches ``label``, if none does (a ufunc's methods share its reason).

    >>> out_of_scope("gcd.reduce")
    'integers or booleans only: numpy refuses float arrays'
    """
    if label in OUT_OF_SCOPE:
        return OUT_OF_SCOPE[label]
    return OUT_OF_SCOPE.get(label.partition(".")[0]) if ufunc_method(label) else None


def ufunc_method(label: str) -> bool:
    """Whether ``label`` names a method of a numpy ufunc (``add.reduce``, not the
    function ``linalg.outer``).

    >>> ufunc_method("add.outer"), ufunc_method("linalg.outer")
    (True, False)
    """
    ufunc, _, method = label.partition(".")
    return isinstance(getattr(np, ufunc, None), np.ufunc) and method in UFUNC_METHODS


def optional(label: str) -> bool:
    """Whether ``label`` is a second way to reach a name (a ufunc's method, a constant
    array's method called with ``x``), probed where numpy runs it on floats: the name
    itself is what must be classified.

    >>> optional("add.reduce"), optional("constant.dot"), optional("add")
    (True, True, False)
    """
    return label.startswith("constant.") or label.endswith(AS_VALUE) or ufunc_method(label)


@dataclass
class Probe:
    """One name reached by one program: ``function`` is the program's name in the
    generated module, ``x`` its argument; ``complex_result``: the program's value is
    complex (only a refusal is right then)."""

    name: str
    op: str | None  # the primitive the compiler reads the name as, if any
    body: str
    function: str
    x: np.ndarray
    complex_result: bool = False
    scipy_function: bool = False  # scipy's Python code (not a ufunc): tracing cannot enter


def _public(module: object) -> list[str]:
    return sorted(n for n in dir(module) if not n.startswith("_"))


def walked_names() -> dict[str, tuple[str, object]]:
    """Every name walked: label -> (how it is reached, the object)."""
    names: dict[str, tuple[str, object]] = {}
    for name in _public(np):
        obj = getattr(np, name)
        names[name] = ("np." + name, obj)
        if isinstance(obj, np.ufunc) and obj.nin == 2 and obj.nout == 1:
            for method in UFUNC_METHODS:
                names[f"{name}.{method}"] = (f"np.{name}.{method}", getattr(obj, method))
    for name in _public(np.linalg):
        names["linalg." + name] = ("np.linalg." + name, getattr(np.linalg, name))
    for name in _public(np.ndarray):
        names["ndarray." + name] = ("x." + name, getattr(np.ndarray, name))
        if callable(getattr(np.ndarray, name)):
            names["constant." + name] = ("c." + name, getattr(np.ndarray, name))
    for name, (path, obj) in scipy_names().items():
        names[name] = (path, obj)
    return names


def scipy_names() -> dict[str, tuple[str, object]]:
    """The scipy functions and distribution methods that have derivative rules."""
    found: dict[str, tuple[str, object]] = {}
    for name in _public(scipy.special):
        obj = getattr(scipy.special, name)
        if callable(obj) and lookup(op_of_callable(obj) or "") is not None:
            found["scipy.special." + name] = ("scipy.special." + name, obj)
    with warnings.catch_warnings():  # some of scipy.stats' names warn when read
        warnings.simplefilter("ignore")
        for name in _public(scipy.stats):
            for method in ("logpdf", "pdf", "cdf", "logcdf", "sf", "ppf"):
                fn = getattr(getattr(scipy.stats, name), method, None)
                if callable(fn) and lookup(op_of_callable(fn) or "") is not None:
                    found[f"scipy.stats.{name}.{method}"] = (f"scipy.stats.{name}.{method}", fn)
    return found


def _op(label: str, obj: object) -> str | None:
    """The primitive the compiler reads the name as, if any."""
    if label.startswith("ndarray."):
        attr = label.removeprefix("ndarray.")
        return op_of_method(attr) if callable(obj) else op_of_attribute(attr)
    if label.startswith("constant."):  # c.dot(x): the method's primitive, x its argument
        return op_of_method(label.removeprefix("constant."))
    return op_of_callable(obj)


def probe_programs(label: str, reached: str, obj: object) -> list[tuple[str, list[str]]]:
    """The probes of one name: (probe label, the bodies tried, best first; each body
    leaves the result in ``y``). A name's own programs are each a probe; a statement
    (``np.put(y, [0], v)``) is probed once more with its value kept (``r = ...``)."""
    special = SPECIAL.get(label)
    if special is not None:
        probes = []
        for k, program in enumerate(special):
            name = label if k == 0 else f"{label} #{k + 1}"
            lines = program.split("; ") if program.startswith("y = ") else [f"y = {program}"]
            probes.append((name, ["\n    ".join(lines)]))
            if len(lines) > 1:  # the call made for its effect, its value kept
                probes.append((name + AS_VALUE, ["\n    ".join([*lines[:-1], "r = " + lines[-1]])]))
        return probes
    if label.startswith("ndarray.") and not callable(obj):
        return [(label, [f"y = {reached}"])]
    if label.startswith("ndarray."):
        return [(label, [f"y = {reached}({a})" for a in METHOD_GENERIC])]
    if ufunc_method(label):
        arguments = {"outer": "x, x", "reduceat": "x, [0, 2]"}.get(label.partition(".")[2], "x")
        return [(label, [f"y = {reached}({arguments})"])]
    return [(label, [f"y = {reached}({a})" for a in GENERIC])]


def _weights(shape: tuple[int, ...]) -> np.ndarray:
    """Distinct weights, so that every output element counts in the program's value."""
    return np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape)


def _weight_name(shape: tuple[int, ...]) -> str:
    return "W_" + "x".join(str(n) for n in shape) if shape else "W_scalar"


def _numeric(value: object) -> np.ndarray | None:
    if isinstance(value, (np.ndarray, np.generic, bool, int, float, complex)):
        array = np.asarray(value)
        return array if array.dtype.kind in "biufc" else None
    return None


def output_lines(y: object) -> tuple[str, set[tuple[int, ...]]] | None:
    """A weighted sum of every numeric output of ``y`` (one array, or a tuple or list of
    them), with the weight shapes it reads; ``None`` when ``y`` holds no numbers."""
    single = _numeric(y)
    if single is not None and not isinstance(y, (tuple, list)):
        return f"np.sum(y * {_weight_name(single.shape)})", {single.shape}
    if isinstance(y, (tuple, list)):
        terms, shapes = [], set()
        for k, item in enumerate(y):
            array = _numeric(item)
            if array is not None:
                terms.append(f"np.sum(y[{k}] * {_weight_name(array.shape)})")
                shapes.add(array.shape)
        if terms:
            return " + ".join(terms), shapes
    return None


PRELUDE = f'''"""Generated probes of the numpy namespace (see tests/numpy_namespace_probes.py)."""

import numpy as np
import scipy.special
import scipy.stats

C = np.array([1.0, 2.0, 0.5])
C_MATRIX = np.array({(MATRIX + 1.0).tolist()!r})
'''


def _prelude() -> dict:
    """The names the programs see: the modules and constants of :data:`PRELUDE`."""
    namespace: dict = {}
    exec(PRELUDE, namespace)
    return namespace


def _run_plain(source: str, name: str, x: np.ndarray, namespace: dict) -> object:
    scope = dict(namespace)
    exec(source, scope)
    quiet = contextlib.redirect_stdout(io.StringIO())  # np.info(x) prints
    with quiet, warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return scope[name](x.copy())


def find_probe(label: str, obj: object, bodies: list[str], index: int) -> tuple[Probe, set] | None:
    """The first body that numpy runs on plain floats, with a finite value, or ``None``."""
    function = f"probe_{index}"
    for body in bodies:
        if label.startswith("constant."):  # a fresh constant: in-place methods change it
            body = "c = C_MATRIX * 1.0\n    " + body
        for x in INPUTS:
            try:
                source = f"def {function}(x):\n    {body}\n    return y\n"
                y = _run_plain(source, function, x, _prelude())
            except Exception:
                continue
            expression, shapes = output_lines(y) or ("np.sum(x * x)", set())  # no numbers
            source = f"def {function}(x):\n    {body}\n    return {expression}\n"
            weights = {_weight_name(s): _weights(s) for s in shapes}
            try:
                total = complex(_run_plain(source, function, x, _prelude() | weights))
            except Exception:
                continue
            if not np.isfinite(total):
                continue
            module = getattr(obj, "__module__", None) or ""
            scipy_function = module.startswith("scipy") and not isinstance(obj, np.ufunc)
            probe = Probe(
                label, _op(label, obj), source, function, x, total.imag != 0, scipy_function
            )
            return probe, shapes
    return None


def write_module(probes: list[Probe], shapes: set) -> types.ModuleType:
    """Write the probes' programs to one module (removed at exit) and import it."""
    directory = Path(tempfile.mkdtemp(prefix="numpy_namespace_"))
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    lines = [PRELUDE]
    for shape in sorted(shapes):
        size = int(np.prod(shape))
        lines.append(f"{_weight_name(shape)} = np.linspace(0.5, 1.5, {size}).reshape({shape!r})\n")
    lines += [p.body for p in probes]
    path = directory / "numpy_namespace_programs.py"
    path.write_text("\n\n".join(lines))
    spec = importlib.util.spec_from_file_location("numpy_namespace_programs", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["numpy_namespace_programs"] = module
    spec.loader.exec_module(module)
    return module


def build() -> tuple[list[Probe], list[str], types.ModuleType]:
    """Every probe, the probes that found no program (names not out of scope), and the
    module of programs."""
    probes, missing, shapes = [], [], set()
    for label, (reached, obj) in walked_names().items():
        if out_of_scope(label):
            continue
        for name, bodies in probe_programs(label, reached, obj):
            found = find_probe(name, obj, bodies, len(probes))
            if found is None:
                if not optional(label) or label in SPECIAL:  # its own programs must run
                    missing.append(name)
                continue
            probes.append(found[0])
            shapes |= found[1]
    return probes, missing, write_module(probes, shapes)
