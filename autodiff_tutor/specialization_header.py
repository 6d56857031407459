"""The header of the code shown for a compiled function: what it was specialized on.

A bound method, a callable object or a partial is compiled for what is not an array's
values: its object (and the object's class), the functions it holds or is given, the
count of ``*args``, the ints that resolve indexes and ranges, the methods it inlines.
``show()`` names them in a few comment lines above the generated code, in plain words.

>>> import numpy as np
>>> from autodiff_tutor import differentiable
>>> class Model:
...     def __init__(self):
...         self.W = np.eye(2)
...         self.act = np.tanh
...     def predict(self, x):
...         return self.act(x @ self.W)
...     def loss(self, x):
...         return np.sum(self.predict(x) ** 2)
>>> print(differentiable(Model().loss).forward_source().split("def ")[0].rstrip())
# loss, specialized on:
#   self = a Model: attributes W read at each call (as self_W)
#   self.act = numpy.tanh
#   methods inlined: Model.predict
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

from autodiff_tutor.pytree import ObjectView, is_static


def describe_static(value: Any) -> str:
    """A function, class or module the code is specialized on, as a reader names it.

    >>> import numpy as np
    >>> describe_static(np.tanh), describe_static(lambda z: z)
    ('numpy.tanh', 'a lambda (line 1 of <doctest ...>)')
    """
    if isinstance(value, functools.partial):
        return f"functools.partial({describe_static(value.func)}, ...)"
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if name == "<lambda>":
        code = value.__code__
        return f"a lambda (line {code.co_firstlineno} of {code.co_filename})"
    if inspect.ismodule(value):
        return value.__name__
    if name is None:
        return f"a {type(value).__name__}"  # a callable object
    module = getattr(value, "__module__", None) or (
        "numpy" if type(value).__name__ == "ufunc" else ""
    )
    if module in ("__main__", "builtins", "") or "<locals>" in name:
        return name.replace(".<locals>.", ".").split(".")[-1] if "<locals>" in name else name
    return f"{module}.{name}"


def header(name: str, given: dict[str, Any], flat: Any) -> str:
    """Comment lines naming what ``flat`` (the compiled function of the flattened
    call) was specialized on; ``given`` maps the parameters of the user's def to the
    values stored for them (the object, a partial's arguments)."""
    lines = [f"# {name}, specialized on:"]
    parsed = flat.parsed
    holders = flat.__dict__.get("holders", {})
    for param, value in given.items():
        if isinstance(value, ObjectView):
            lines += _object_lines(param, value, flat.params, holders.get(param))
        elif is_static(value):
            lines.append(f"#   {param} = {describe_static(value)}")
        elif type(value) in (int, bool, str):
            lines.append(f"#   {param} = {value!r}")
        else:
            lines.append(f"#   {param}: a stored argument, passed at each call")
    structures = getattr(parsed, "structures", {}) or {}
    for param in structures:
        if param not in given and _varargs(flat, param):
            count = len(getattr(structures[param], "elts", ()))
            lines.append(f"#   {param} = {count} extra argument{'s' * (count != 1)}")
    for param, value in (getattr(parsed, "statics", {}) or {}).items():
        lines.append(f"#   {param} = {value} (resolves indexes and ranges)")
    inlined = [
        getattr(f, "__qualname__", getattr(f, "__name__", "?")).replace(".<locals>.", ".")
        for f in flat.front_end().parsed.inlined
    ]
    if inlined:
        short = [q.split(".")[-2] + "." + q.split(".")[-1] if "." in q else q for q in inlined]
        lines.append(f"#   methods inlined: {', '.join(dict.fromkeys(short))}")
    return "\n".join(lines) if len(lines) > 1 else ""


def _object_lines(
    param: str, view: ObjectView, flat_params: list[str], holder: str | None
) -> list[str]:
    cls = type(view.obj).__name__
    read = [a for a in view.attributes if f"{param}_{a}" in flat_params]
    leaves = ", ".join(f"{param}_{a}" for a in read)
    found = (
        f"attributes {', '.join(read)} read at each call (as {leaves})"
        if read
        else "no array attributes"
    )
    lines = [f"#   {param} = a {cls}: {found}"]
    for attribute, value in view.attributes.items():
        if is_static(value):
            lines.append(f"#   {param}.{attribute} = {describe_static(value)}")
    if holder is not None:
        lines.append(f"#   {holder} = the {cls} itself, passed for its writes into its attributes")
    return lines


def _varargs(flat: Any, param: str) -> bool:
    fn = getattr(flat.parsed, "fn", None)
    if fn is None:
        return False
    parameter = inspect.signature(fn).parameters.get(param)
    return parameter is not None and parameter.kind is inspect.Parameter.VAR_POSITIONAL
