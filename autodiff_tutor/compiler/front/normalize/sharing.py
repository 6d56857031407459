"""Which names see which memory: views, aliases and lists of arrays (numpy's rules).

A view (``y.T``, ``y[1:]``, ``y.reshape(-1)``, ``np.expand_dims(y, 0)``) and its array
see each other's writes; a list sees the arrays it holds, and an item read from it is
one of them. :mod:`front.normalize.writes` checks in-place writes with these edges and
:mod:`front.normalize.aliases` spreads a write to the names that see it.

>>> y = ast.Name("y", ast.Load())
>>> view = Step("v", ast.Attribute(y, "T", ast.Load()), "primitive", "transpose", {"x": y})
>>> memory_edges(view, set())
[('v', 'y'), ('y', 'v')]
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from autodiff_tutor.compiler.front.normalize.conversions import shares_input
from autodiff_tutor.compiler.ir import Step
from autodiff_tutor.rules.registry import views

# primitives whose result may be a view of their first input (numpy returns views for
# these whenever it can; a write through either is then seen by the other): the rules
# say which (``Rule.view``); ``real``/``imag`` have no rule (complex values carry none)
VIEW_OPS = views("view", "reshape", "read") | {"real", "imag"}
# primitives whose view numpy makes read-only (or whose result is a new array): it sees
# writes into its input, and a write through it never reaches the input
READ_ONLY = views("read")
# the method and attribute spellings of those (``x.reshape(...)``, ``x.T``), and
# ``x.view()``
VIEW_METHODS = {"reshape", "transpose", "squeeze", "ravel", "swapaxes", "view", "T"}
# primitives whose result is a list of views of their first input
SPLITS = views("split")
# builtins whose result holds the items of their argument (the rows of an array: views)
CONTAINERS = {"list", "tuple", "sorted", "reversed", "iter"}


def _no_module(name: str) -> bool:
    return False


def view_base(step: Step, is_module: Callable[[str], bool] = _no_module) -> str | None:
    """The name whose array ``step``'s result may share (an alias or a view), if any.

    ``is_module`` tells a module (``np``) from an array: a step without gradient keeps
    the user's call, ``np.reshape(c, ...)`` (a view of ``c``) or ``c.reshape(...)``.

    >>> t = ast.Name("t", ast.Load())
    >>> view_base(Step("v", ast.Attribute(t, "T", ast.Load()), "primitive", "transpose", {"x": t}))
    't'
    >>> view_base(Step("v", ast.BinOp(t, ast.Add(), t), "primitive", "add", {"x": t, "y": t}))
    >>> call = ast.parse("np.expand_dims(c, 0)").body[0].value
    >>> view_base(Step("v", call, "static"), is_module=lambda name: name == "np")
    'c'
    """
    value = step.value
    if isinstance(value, ast.Name):
        return value.id
    if step.op == "getitem" and _is_copying_index(step.options.get("index")):
        return None
    converts = isinstance(value, ast.Call) and shares_input(value)  # np.asarray(t)
    if step.inputs and (step.op in VIEW_OPS or converts):  # np.transpose(t), t.T, t[i]...
        first = next(iter(step.inputs.values()))
        return first.id if isinstance(first, ast.Name) else None
    if step.op is not None:
        return None  # another primitive: numpy gives a new array
    taken = _viewed(value, is_module)  # a step without gradient: the user's expression
    while taken is not None and not isinstance(taken, ast.Name):
        taken = _viewed(taken, is_module)  # a view of a view: c.T[0], c.reshape(-1)[:3]
    return taken.id if taken is not None else None


def _viewed(node: ast.expr, is_module: Callable[[str], bool]) -> ast.expr | None:
    """What the view expression ``node`` is taken from (``c`` of ``c[1:]``, ``c.T``,
    ``c.reshape(-1)``, ``np.expand_dims(c, 0)``, and of the containers of views
    ``list(c)``, ``np.split(c, 3)``), or ``None`` if it is not a view."""
    if isinstance(node, ast.Subscript) or (
        isinstance(node, ast.Attribute) and node.attr in VIEW_METHODS
    ):
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.args[0] if node.func.id in CONTAINERS and node.args else None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    if shares_input(node) and node.args:  # np.asarray(c): c itself
        return node.args[0]
    receiver = node.func.value
    if isinstance(receiver, ast.Name) and is_module(receiver.id):  # np.reshape(c, ...)
        view = node.func.attr in VIEW_OPS | VIEW_METHODS | SPLITS and node.args
        return node.args[0] if view else None
    return receiver if node.func.attr in VIEW_METHODS else None


def _is_copying_index(index: ast.expr | None) -> bool:
    """An index that always makes a copy: a list of positions or a boolean mask
    (``y[[1, 0]]``, ``y[y > 0]``), never a view."""
    return isinstance(index, (ast.List, ast.Compare))


def memory_edges(
    step: Step,
    lists: set[str],
    is_module: Callable[[str], bool] = _no_module,
    held: dict[str, set[str]] | None = None,
    values: set[str] | frozenset[str] = frozenset(),
    is_helper: Callable[[str], bool] = _no_module,
) -> list[tuple[str, str]]:
    """(seer, seen) pairs: after ``step``, ``seer`` sees the memory of ``seen``.

    A view and its base see each other; a list sees the arrays it holds (``held``: list
    -> those arrays); an item read from a list is one of them, so it sees them and they
    see it (``r = rows[0]; r += 1.0`` writes into ``rows[0]``), but it does not see the
    list. The compiler's join of two paths (``u = s`` on one, ``u = x`` on the other)
    is one of them: each sees it and it sees each. A step without gradient keeps the
    user's expression, which may hold several (``a[0] if c else b``, ``[a[0], b][i]``);
    a call the compiler cannot see into may return its operands (``values``: the names
    that hold values), or views of them.
    """
    targets = step.defined()
    if step.synthetic and isinstance(step.value, ast.Name):
        source = step.value.id
        if source == "unbound" and source not in values:
            return []  # the marker of a name not yet bound (loop copy-in, join): no array
        return [(target, source) for target in targets] + [(source, t) for t in targets]
    items = list_items(step, is_module, is_helper, lists)
    if items is not None:
        return [(target, item) for target in targets for item in items]
    if step.kind in ("opaque", "op_call", "escape"):
        operands = step.operand_names() & set(values)
        return [pair for t in targets for o in operands for pair in ((t, o), (o, t))]
    if step.kind == "static" and step.op is None:
        bases = _roots(step.value, is_module, is_helper)
    else:
        base = view_base(step, is_module)
        bases = set() if base is None else {base}
    one_way = read_only(step)
    edges = []
    for target in targets:
        for base in sorted(bases):
            edges.append((target, base))
            # an array view (not a read-only one), or another name of the list (q = ys:
            # one list): writes through either are seen by the other
            if (base not in lists or isinstance(step.value, ast.Name)) and not one_way:
                edges.append((base, target))
            for item in (held or {}).get(base, ()):  # an item read from a list
                edges += [(target, item), (item, target)]
    return edges


def read_only(step: Step) -> bool:
    """Whether ``step`` makes a view that sees writes into its input but passes none
    back (``np.diag(t)``: numpy's view of a matrix is read-only, of a vector a new
    array), as a primitive or as the user's call without gradient.

    >>> read_only(Step("d", ast.parse("np.diag(c)").body[0].value, "static"))
    True
    """
    call = step.value
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and step.op is None:
        return call.func.attr in READ_ONLY
    return step.op in READ_ONLY


def _roots(
    node: ast.expr, is_module: Callable[[str], bool], is_helper: Callable[[str], bool] = _no_module
) -> set[str]:
    """The names whose memory the value of the expression ``node`` may share; a call of
    a function of the user's (``is_helper``) may return any of its arguments or a view.

    >>> sorted(_roots(ast.parse("a[0] if c else [b.T, d + 1][i]").body[0].value, str.isupper))
    ['a', 'b']
    >>> sorted(_roots(ast.parse("first(m, 2)").body[0].value, str.isupper, "first".__eq__))
    ['m']
    """
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.IfExp):
        return _roots(node.body, is_module, is_helper) | _roots(node.orelse, is_module, is_helper)
    if isinstance(node, (ast.List, ast.Tuple)):
        return set().union(*(_roots(e, is_module, is_helper) for e in node.elts))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and is_helper(node.func.id):
        arguments = [*node.args, *(k.value for k in node.keywords)]
        return set().union(*(_roots(a, is_module, is_helper) for a in arguments))
    inner = _viewed(node, is_module)
    return set() if inner is None else _roots(inner, is_module, is_helper)


def list_items(
    step: Step,
    is_module: Callable[[str], bool],
    is_helper: Callable[[str], bool] = _no_module,
    lists: set[str] | frozenset[str] = frozenset(),
) -> list[str] | None:
    """The names of the arrays the list ``step`` makes holds (for ``[acc[0], acc[1]]``
    without gradient, the array ``acc`` they view; for ``list(c)``, the rows of ``c``),
    or ``None`` if it makes no list. A list among them holds its own items too
    (``list(ys)``, ``ys.copy()`` of a list ``ys``: the same arrays).

    >>> list_items(Step("rows", ast.parse("[acc[0], b]").body[0].value, "static"), str.isupper)
    ['acc', 'b']
    >>> list_items(Step("rows", ast.parse("list(c)").body[0].value, "opaque"), str.isupper)
    ['c']
    """
    copied = list_source(step.value, lists)
    if copied is not None and step.kind in ("static", "opaque"):
        return [copied]
    if step.op in ("list_append", "list_setitem", "make_list"):
        atoms = []
        for atom in step.inputs.values():
            atoms += atom.elts if isinstance(atom, (ast.List, ast.Tuple)) else [atom]
        return [atom.id for atom in atoms if isinstance(atom, ast.Name)]
    if step.op in SPLITS:  # views of the array split
        first = next(iter(step.inputs.values()), None)
        return [first.id] if isinstance(first, ast.Name) else []
    if step.kind != "static" or not isinstance(step.value, (ast.List, ast.Tuple)):
        return None
    return sorted(_roots(step.value, is_module, is_helper))


def known_items(version: str, steps: list[Step]) -> list[ast.expr] | None:
    """The items of the list ``version``, in order, where the steps that made it say
    what they are: a list written out (``[a, 1.0]``), appends to such a list and writes
    at an index written out, outside loops; ``None`` where they do not.

    >>> a, ys = ast.Name("a", ast.Load()), ast.Name("ys", ast.Load())
    >>> made = Step("ys", ast.List([], ast.Load()), "static")
    >>> put = Step("ys_2", ast.List([]), "primitive", "list_append", {"xs": ys, "x": a})
    >>> [ast.unparse(item) for item in known_items("ys_2", [made, put])]
    ['a']
    """
    made = [step for step in steps if version in step.defined()]
    if len(made) != 1 or made[0].loops:
        return None
    step = made[0]
    xs = step.inputs.get("xs")
    if step.kind == "static" and isinstance(step.value, (ast.List, ast.Tuple)):
        items = step.value.elts
    elif step.op == "make_list" and isinstance(xs, (ast.List, ast.Tuple)):
        items = xs.elts
    elif step.op in ("list_append", "list_setitem") and isinstance(xs, ast.Name):
        before = known_items(xs.id, steps)
        if before is None:
            return None
        if step.op == "list_append":
            items = [*before, step.inputs["x"]]
        else:
            position = item_position(step.options.get("index"), len(before))
            if position is None:
                return None
            items = list(before)
            items[position] = step.inputs["x"]
    else:
        return None
    return list(items) if all(isinstance(i, (ast.Name, ast.Constant)) for i in items) else None


def item_position(index: ast.expr | None, length: int) -> int | None:
    """The position ``index`` names in a list of ``length`` items, where it is an int
    written out (``1``, ``-1``) inside the list; else ``None``.

    >>> item_position(ast.parse("-1", mode="eval").body, 3), item_position(ast.Name("i"), 3)
    (2, None)
    """
    try:
        value = ast.literal_eval(index) if index is not None else None
    except (ValueError, TypeError, SyntaxError):
        return None
    if type(value) is not int or not -length <= value < length:
        return None
    return value % length


def list_source(value: ast.expr, lists: set[str] | frozenset[str] = frozenset()) -> str | None:
    """``a`` of ``list(a)``, ``tuple(a)`` (a list of ``a``'s items: the rows of an array)
    and of ``a.copy()`` of a list ``a`` (a shallow copy), else ``None``.

    >>> copies = [ast.parse(text).body[0].value for text in ("tuple(c)", "c.copy()")]
    >>> list_source(copies[0], set()), list_source(copies[1], set()), list_source(copies[1], {"c"})
    ('c', None, 'c')
    """
    if not isinstance(value, ast.Call) or value.keywords:
        return None
    func, args = value.func, value.args
    if isinstance(func, ast.Name) and func.id in ("list", "tuple") and len(args) == 1:
        return args[0].id if isinstance(args[0], ast.Name) else None
    if isinstance(func, ast.Attribute) and func.attr == "copy" and not args:
        receiver = func.value
        return receiver.id if isinstance(receiver, ast.Name) and receiver.id in lists else None
    return None


def list_read(step: Step, lists: set[str]) -> bool:
    """Whether ``step`` reads a list built here into a new value: a copy (``list(ys)``,
    ``ys.copy()``, ``ys[1:]``) or an item (``old = ys[0]``), not an alias (``q = ys``).
    A write into a slot of the list (``ys[0] = v``, ``ys.append(v)``) changes the list
    object only: what was read from it before keeps its values, as in Python.

    >>> ys = ast.Name("ys", ast.Load())
    >>> list_read(Step("c", ast.Call(ys, [], []), "primitive", "make_list", {"xs": ys}), {"ys"})
    True
    >>> list_read(Step("q", ys, "static"), {"ys"})
    False
    """
    if step.op == "make_list":
        return isinstance(step.inputs.get("xs"), ast.Name)
    if isinstance(step.value, ast.Name):
        return False
    base = view_base(step)
    return base is not None and base in lists


def list_holders(steps: list[Step], lists: set[str]) -> set[str]:
    """The lists (of ``lists``, the names holding lists) that hold lists: made with
    one (``[a, cols]``), given one (``rows.append(cols)``, ``rows[0] = cols``), or
    versions and copies of such a list.

    >>> cols, rows = ast.Name("cols", ast.Load()), ast.Name("rows", ast.Load())
    >>> put = Step("rows_2", ast.List([]), "primitive", "list_append", {"xs": rows, "x": cols})
    >>> sorted(list_holders([put], {"cols", "rows", "rows_2"}))
    ['rows_2']
    """
    holders: set[str] = set()
    changed = True
    while changed:
        size = len(holders)
        for step in steps:
            xs = step.inputs.get("xs")
            if step.op in ("list_append", "list_setitem"):  # ys + [item]: a list item?
                holds = _named(step.inputs.get("x"), lists) or _named(xs, holders)
            elif step.op == "make_list":  # [a, cols], or list(ys) of a holder
                elements = xs.elts if isinstance(xs, (ast.List, ast.Tuple)) else []
                holds = any(_named(e, lists) for e in elements) or _named(xs, holders)
            else:  # a copy of a holder
                holds = step.kind in ("copy", "static") and _named(step.value, holders)
            if holds:
                holders.update(step.defined())
        changed = len(holders) != size
    return holders


def only_lists(name: str, steps: list[Step], lists: set[str]) -> bool:
    """Whether the list ``name`` holds lists and nothing else: every item that its
    versions were made with or given (``[a, b]``, ``ys.append(v)``, ``ys[0] = v``) is
    one of ``lists``, and so is an item of a list it copies.

    >>> cols, rows = ast.Name("cols", ast.Load()), ast.Name("rows", ast.Load())
    >>> put = Step("rows_2", ast.List([]), "primitive", "list_append", {"xs": rows, "x": cols})
    >>> only_lists("rows_2", [put], {"cols", "rows", "rows_2"})
    True
    """
    by_target = {t: step for step in steps for t in step.defined()}
    seen, todo, items = set(), [name], []
    while todo:
        step = by_target.get(todo.pop())
        if step is None or id(step) in seen:
            continue
        seen.add(id(step))
        xs = step.inputs.get("xs")
        if step.op in ("list_append", "list_setitem"):
            items.append(step.inputs.get("x"))
            todo.append(xs.id if isinstance(xs, ast.Name) else "")
        elif step.op == "make_list" and isinstance(xs, (ast.List, ast.Tuple)):
            items += xs.elts
        elif isinstance(step.value, ast.Name) or (step.op == "make_list" and _named(xs, lists)):
            todo.append(step.value.id if isinstance(step.value, ast.Name) else xs.id)
        elif not (
            step.kind == "static" and isinstance(step.value, ast.List) and not step.value.elts
        ):
            return False  # made some other way: its items are not known here
    return bool(items) and all(_named(item, lists) for item in items)


def _named(node: ast.AST | None, names: set[str]) -> bool:
    return isinstance(node, ast.Name) and node.id in names
