"""Calls of values known while compiling, nested as helpers to inline.

When a compiled function is called, every value that is not an array's is known: the
objects it reads and their classes, the functions it is given or that attributes
hold. A call of one of them is resolved to the function it runs, and that function's
body is defined inside the differentiated function, so that
:class:`~.front.desugar.nested.InlineNested` inlines it where it is called:

- ``self.feedforward(a)``: a method of an object parameter's class (``self`` passed);
- ``net.feedforward(x)``, ``layer(h)``: a method, or ``__call__``, of an object the
  function reads (a global, a closure variable, an attribute);
- ``self.fn(z)``, ``nonlinearity(x)``: a lambda, a method, a callable object or a
  ``functools.partial`` held in an attribute or a parameter;
- ``sig(x)`` with ``sig = lambda z: ...`` at module level, ``partial(g, a)(x)``;
- ``self.scale``, a number or array of the object's class, read as a name bound to it;
  ``data.X`` of a property: its getter inlined;
- ``self.cost.fn(a, y)``: a static method (or class method) of a class an attribute holds;
- ``for layer in self.layers: h = layer(h)``, ``sum(p.loss(w) for p in problems)``: a
  loop or generator over a list of objects known while compiling, unrolled here so that
  each entry's call is resolved (``self.layers[0](h)``, ...);
- ``layer1 = Dense(W1, b1); layer1(h)``: an object built in the code, its ``__init__``
  inlined as a helper returning the attributes it sets, the object seen as their
  structure;
- ``make_loss("l2")(r)``, ``h = compose(np.sin, sigmoid); h(x)``: the function a factory
  returns, made while compiling where its arguments are known and it only decides and
  returns.

A plain function of the user's reached by a name is left to the compiler's own
resolution (compiled in turn). What the specialization assumed is recorded on the
parsed function (``checks``: the method an attribute finds on a class is still that
one, an object reached from a global still holds what it held; ``inlined``: the
functions whose free names the compiled code now depends on), so that a changed
class, object or function gets its own compilation.

>>> import numpy as np
>>> from autodiff_tutor.compiler.front.source import parse_function
>>> sig = lambda z: 1 / (1 + np.exp(-z))
>>> def f(x):
...     return np.sum(sig(x))
>>> nested = with_known_callees_nested(parse_function(f))
>>> print(ast.unparse(nested.tree.body[0]))
def sig_1(z):
    return 1 / (1 + np.exp(-z))
>>> print(ast.unparse(nested.tree.body[1]))
return np.sum(sig_1(x))
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import functools
import inspect
from collections import Counter
from collections.abc import Callable
from typing import Any

from autodiff_tutor.compiler.code import Names, bindings, is_name, mentions, root_name
from autodiff_tutor.compiler.front.desugar import derivative_calls
from autodiff_tutor.compiler.front.desugar.base import name_node, only_called
from autodiff_tutor.compiler.front.desugar.callees import assigned_names, function_defaults
from autodiff_tutor.compiler.front.lambdas import def_of_lambda
from autodiff_tutor.compiler.front.source import ParsedFunction, closure_values, parse_function
from autodiff_tutor.errors import AutodiffError, UnsupportedSyntaxError
from autodiff_tutor.locations import is_user_file
from autodiff_tutor.pytree import is_user_class, is_user_object
from autodiff_tutor.syntax import copy_tree

_MISSING = object()
#: values a class attribute may hold that are read as constants of the compiled code
_CONSTANTS = (int, float, bool, str, type(None))


@dataclasses.dataclass
class _Known:
    """What an expression denotes while compiling: a value, or an object parameter's
    structure; for a method, the expression of the object it is called on."""

    value: Any = _MISSING
    structure: ast.expr | None = None  # an object's dict display, a list's or tuple's
    receiver: ast.expr | None = None
    #: how to find the value again (a global or closure name, then attributes), for
    #: the check that it is still the same
    path: tuple[Callable[[], Any], tuple[str, ...]] | None = None
    owner: _Known | None = None  # for a method: what its object is

    @property
    def is_object(self) -> bool:
        return getattr(self.structure, "is_object", False)

    def key(self) -> Any:
        """The object itself, or its structure (one nested helper per object)."""
        return id(self.structure) if self.structure is not None else id(self.value)


@dataclasses.dataclass
class _Scope:
    """What names mean in one function whose calls are resolved."""

    namespace: dict[str, Any]
    local: set[str]
    known: dict[str, _Known]  # parameters known while compiling (an object, a helper's self)
    reader: Callable[[str], Any]  # a free name's value now (for checks)
    function: ast.FunctionDef | None = None  # the function these names are of
    #: a def of the differentiated function whose body this is (a nested helper of the
    #: user's): its own defs and lambdas are lifted for the derivatives taken of them
    own_def: ast.FunctionDef | None = None
    #: the Python function whose body this is (its class, for super())
    source: Any = None


def with_known_callees_nested(parsed: ParsedFunction) -> ParsedFunction:
    """``parsed`` with the functions its calls of known values run defined inside it
    (see the module docstring); unchanged where there is none."""
    return _Specializer(parsed).run()


class _Specializer:
    def __init__(self, parsed: ParsedFunction):
        self.parsed = parsed
        self.tree = copy_tree(parsed.tree)
        self.namespace = parsed.namespace()
        self.names = Names(self.tree)
        self.names.taken |= set(self.namespace)
        self.values = dict(parsed.values)
        self.introduced: set[str] = set()  # names bound here, read as the caller's
        self.checks: list[Callable[[], bool]] = list(parsed.checks)
        self.inlined: list[Any] = list(parsed.inlined)
        self.guarded: set[tuple] = set()  # the free names of inlined functions guarded
        self.definitions: list[ast.FunctionDef] = []
        self.nested: dict[tuple, str] = {}  # (function, receiver) -> the nested name
        self.initialized: dict[tuple, list[str]] = {}  # an __init__'s: the attributes it sets
        self.caller_local = assigned_names(self.tree) | _defined(self.tree)
        self.changed = False

    def run(self) -> ParsedFunction:
        structures = getattr(self.parsed, "structures", {}) or {}
        known = {
            name: _Known(structure=literal)
            for name, literal in structures.items()
            if isinstance(literal, (ast.Dict, ast.List, ast.Tuple))
        }
        scope = _Scope(
            self.namespace,
            self.caller_local,
            known,
            _reader(self.parsed.fn, self.values),
            self.tree,
            source=self.parsed.fn,
        )
        self.tree.body = self._body(self.tree.body, scope, self._aliases(self.tree, scope))
        if not self.changed:
            return self.parsed
        self.tree.body = self.definitions + self.tree.body
        return dataclasses.replace(
            self.parsed,
            tree=self.tree,
            values=self.values,
            checks=tuple(self.checks),
            inlined=tuple(self.inlined),
        )

    # -- rewriting ---------------------------------------------------------------------

    def _body(self, body: list[ast.stmt], scope: _Scope, aliases: dict) -> list[ast.stmt]:
        specializer = self

        class Rewrite(ast.NodeTransformer):
            def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
                return node  # a nested helper of the user's: rewritten where inlined

            def visit_Call(self, call: ast.Call) -> ast.expr:
                derivative = specializer._derivative(call, scope, aliases)
                if derivative is not None:  # grad(f)(x): its arguments resolved
                    return self.generic_visit(derivative)
                self.generic_visit(call)
                return specializer._call(call, scope, aliases)

            def visit_Attribute(self, attribute: ast.Attribute) -> ast.expr:
                self.generic_visit(attribute)
                return specializer._class_value(attribute, scope)

            def visit_ListComp(self, comprehension: ast.ListComp | ast.GeneratorExp) -> ast.expr:
                items = specializer._unrolled_items(comprehension, scope)
                if items is None:
                    self.generic_visit(comprehension)
                    return comprehension
                return self.visit(items)

            visit_GeneratorExp = visit_ListComp

            def visit_For(self, loop: ast.For) -> ast.stmt | list[ast.stmt]:
                copies = specializer._unrolled(loop, scope)
                if copies is None:
                    self.generic_visit(loop)
                    return loop
                return [self.visit(statement) for statement in copies]

        out = []
        for statement in body:
            if isinstance(statement, ast.FunctionDef):  # a helper defined in the function
                # its own aliases (dg = grad(f) in a module helper nested here) and defs
                inner = scope
                if scope.function in (None, self.tree):  # not inside an inlined method
                    inner = dataclasses.replace(scope, own_def=statement)
                statement.body = self._body(statement.body, inner, self._aliases(statement, inner))
                statement.body = _unused_defs_dropped(statement.body)
                out.append(statement)
            elif getattr(statement, "made", False):
                continue  # h = compose(f, g): its calls call what compose made
            elif (built := self._constructed(statement, scope, Rewrite())) is not None:
                out += built
            elif hoisted := self._built_in_place(statement, scope):
                # Gaussian(mu, s).logpdf(x): the object built first, as a statement
                for made in hoisted:
                    out += self._constructed(made, scope, Rewrite()) or [Rewrite().visit(made)]
                rewritten = Rewrite().visit(statement)
                out += rewritten if isinstance(rewritten, list) else [rewritten]
            else:
                rewritten = Rewrite().visit(statement)  # an unrolled loop: its copies
                out += rewritten if isinstance(rewritten, list) else [rewritten]
        return out

    def _aliases(self, tree: ast.FunctionDef, scope: _Scope) -> dict[str, _Known]:
        """Names the function assigns once, at its top level, a known function or object
        (``f = sigmoid``, ``act = self.act``), a derivative (``dg = grad(f)``: each call
        of it takes the derivative) or what a factory of the user's returns (``h =
        compose(f, g)``, the factory run while compiling), and the pullback of ``value,
        pullback = vjp(f, x, wrt=0)``: calls of them are calls of that value."""
        counts = bindings(tree)
        parameters = {a.arg for a in ast.walk(tree.args) if isinstance(a, ast.arg)}
        aliases = {}
        for statement in tree.body:
            if not (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
                and counts.get(statement.targets[0].id) == 1
                and statement.targets[0].id not in parameters  # read before, as given
            ):
                continue
            name, value = statement.targets[0].id, statement.value
            if isinstance(value, (ast.Name, ast.Attribute, ast.Subscript)):
                known = self._known(value, scope)
                if known is not None and known.structure is None and _callable(known.value):
                    aliases[name] = known
                    if isinstance(value, ast.Subscript) and only_called(tree, name):
                        statement.made = True  # act = ACTIVATIONS[name]: looked up here
            elif isinstance(value, ast.Call) and only_called(tree, name):
                kind = derivative_calls.derivative_kind(self._value_of(value.func, scope))
                if kind in derivative_calls.CALLED_WITH_FUNCTION:  # grad, value_and_grad, hvp
                    known = _Known(value=_Derivative(value))
                else:
                    known = self._product(value, scope)
                if known is not None:  # only called, never read otherwise
                    aliases[name] = known
                    statement.made = True  # dropped: made while compiling
        for k, statement in enumerate(tree.body):  # value, pullback = vjp(f, x, wrt=0)
            pullback = self._pullback(statement, tree.body[:k], counts, tree, scope)
            if pullback is not None:
                aliases[pullback] = _Known(value=_Pullback(statement.made_by))
        return aliases

    def _pullback(
        self,
        statement: ast.stmt,
        before: list[ast.stmt],
        counts: Counter[str],
        tree: ast.FunctionDef,
        scope: _Scope,
    ) -> str | None:
        """``value, pullback = vjp(f, x, y, wrt=...)`` at the function's top level, the
        pullback only called and the arguments names that nothing rebinds after it
        (parameters, or names bound once before): made ``value = f(x, y)`` (its
        ``made_by`` kept), and the name of the pullback returned; ``None`` otherwise."""
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Tuple)
            and len(statement.targets[0].elts) == 2
            and all(isinstance(e, ast.Name) for e in statement.targets[0].elts)
            and isinstance(statement.value, ast.Call)
            and len(statement.value.args) >= 2
        ):
            return None
        value, pullback = (e.id for e in statement.targets[0].elts)
        kind = derivative_calls.derivative_kind(self._value_of(statement.value.func, scope))
        bound_before = {
            t.id
            for s in before
            if isinstance(s, ast.Assign)
            for t in s.targets
            if isinstance(t, ast.Name)
        }
        stable = all(
            isinstance(a, ast.Name)
            and (counts.get(a.id, 0) == 0 or (counts[a.id] == 1 and a.id in bound_before))
            for a in statement.value.args[1:]
        )
        if not (
            kind == "vjp"
            and stable
            and counts.get(value) == 1
            and counts.get(pullback) == 1
            and only_called(tree, pullback)
        ):
            return None
        self._value_of(statement.value.func, scope, guard=True)
        self.changed = True
        made = statement.value
        statement.made_by = made
        statement.targets = [ast.copy_location(ast.Name(value, ast.Store()), statement.targets[0])]
        statement.value = ast.copy_location(ast.Call(made.args[0], made.args[1:], []), made)
        return pullback

    def _derivative(self, call: ast.Call, scope: _Scope, aliases: dict) -> ast.expr | None:
        """``grad(f)(x)``, ``jvp(f, (x,), (v,))``, ``dg(x)`` with ``dg = grad(f)``: a call
        of the generated derivative, nested as a helper (see :mod:`.derivative_calls`);
        ``None`` for any other call."""
        func = call.func
        pullback = None
        if isinstance(func, ast.Name) and func.id in aliases and func.id in scope.local:
            alias = aliases[func.id].value
            if isinstance(alias, _Pullback):
                pullback = alias.made
            elif not isinstance(alias, _Derivative):
                return None
            else:
                call = ast.copy_location(
                    ast.Call(copy_tree(alias.maker), call.args, call.keywords), call
                )
        function = scope.own_def or scope.function or self.tree
        context = derivative_calls.Context(
            parsed=dataclasses.replace(self.parsed, values=dict(self.values)),
            value_of=lambda expr, guard=False: self._value_of(expr, scope, guard),
            local=scope.local,
            function=function,
            nest=lambda made, at: self._nested(made, None, at),
            fresh=self.names.fresh,
            lifting=function is self.tree or function is scope.own_def,
            outer=(scope.function or self.tree) if scope.own_def is not None else None,
            bind=self._bind,
        )
        if pullback is not None:  # pullback(v) of value, pullback = vjp(f, x, wrt=...)
            rewritten = derivative_calls.pullback(copy_tree(pullback), call, context)
        else:
            rewritten = derivative_calls.rewritten(call, context)
        if rewritten is None and pullback is not None and hasattr(call, "derivative_refusal"):
            raise call.derivative_refusal  # the vjp that made the pullback is rewritten
        if rewritten is None and hasattr(call, "derivative_refusal"):
            self.changed = True  # its call marked: refused if a gradient flows through it
            return call  # as written (dg(x) of a dropped dg = grad(f): grad(f)(x))
        if rewritten is not None:
            self.changed = True
        return rewritten

    def _value_of(self, expr: ast.expr, scope: _Scope, guard: bool = False) -> Any:
        """The value ``expr`` denotes while compiling, else ``NOT_KNOWN``; ``guard``:
        the compiled code assumes it (a changed global gets its own compilation)."""
        known = self._known(expr, scope)
        if known is None or known.structure is not None or known.value is _MISSING:
            return derivative_calls.NOT_KNOWN
        if guard:
            self._check_path(known)
        return known.value

    def _product(self, call: ast.Call, scope: _Scope) -> _Known | None:
        """``make_loss("l2")``, ``compose(np.sin, sigmoid)``: the function a factory of
        the user's returns, made while compiling, where every argument is known (a
        number or string written out, a function, a module) and the factory only
        decides and returns (no call, loop or write outside the functions it makes, so
        running it here changes nothing). Guarded by the factory and the arguments
        staying what they were."""
        factory = self._known(call.func, scope)
        if (
            factory is None
            or not inspect.isfunction(factory.value)
            or not is_user_file(factory.value.__code__.co_filename)
        ):
            return None
        try:
            tree = parse_function(factory.value).tree
        except AutodiffError:
            return None
        if not _only_decides(tree):
            return None
        given = [*call.args, *(k.value for k in call.keywords)]
        if any(k.arg is None for k in call.keywords) or any(
            isinstance(a, ast.Starred) for a in call.args
        ):
            return None
        known = [self._argument(a, scope) for a in given]
        if any(k is None for k in known):
            return None
        values = [k.value for k in known]
        positional, named = values[: len(call.args)], values[len(call.args) :]
        try:
            product = factory.value(
                *positional, **dict(zip((k.arg for k in call.keywords), named, strict=True))
            )
        except Exception:  # noqa: BLE001 - left to run as written
            return None
        if not inspect.isfunction(product):
            return None
        for k in (factory, *known):
            self._check_path(k)
        self.inlined.append(product)  # held: the helper's key is its identity
        return _Known(value=product)

    def _argument(self, expr: ast.expr, scope: _Scope) -> _Known | None:
        """A factory's argument known while compiling (a constant, a function, a
        module), else ``None``."""
        if isinstance(expr, ast.Constant):
            return _Known(value=expr.value)
        known = self._known(expr, scope)
        if known is None or known.structure is not None:
            return None
        value = known.value
        if isinstance(value, _CONSTANTS) or inspect.ismodule(value) or _callable(value):
            return known
        return None

    def _call(self, call: ast.Call, scope: _Scope, aliases: dict) -> ast.expr:
        func = call.func
        if isinstance(func, ast.Call) and self._is_partial(func.func, scope) and func.args:
            # partial(g, a)(x): g(a, x), the call's keywords over the partial's
            keywords = {k.arg: k for k in func.keywords if k.arg is not None}
            keywords.update({k.arg: k for k in call.keywords if k.arg is not None})
            starred = [k for k in (*func.keywords, *call.keywords) if k.arg is None]
            arguments = [*func.args[1:], *call.args]
            inner = ast.Call(func.args[0], arguments, [*keywords.values(), *starred])
            self.changed = True
            return self._call(ast.copy_location(inner, call), scope, aliases)
        through_class = self._through_class(call, scope)
        if through_class is not None:  # super().forward(x), Dense.forward(self, x)
            return through_class
        if isinstance(func, ast.Name) and func.id in aliases and func.id in scope.local:
            known = aliases[func.id]
        elif isinstance(func, ast.Call):  # make_loss("l2")(r): what the factory returns
            known = self._product(func, scope)
        else:
            known = self._known(func, scope)
        if known is None:
            return call
        return self._known_call(call, known, scope)

    def _through_class(self, call: ast.Call, scope: _Scope) -> ast.expr | None:
        """``super().forward(x)`` in a method, ``Dense.forward(self, x)``: the method a
        class of the user's defines, called on an object seen as its attributes (the
        method's own object, for ``super()``), inlined as a method call on it; ``None``
        for any other call."""
        func = call.func
        if not isinstance(func, ast.Attribute):
            return None
        if (
            isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name)
            and func.value.func.id == "super"
            and not func.value.args
            and not func.value.keywords
            and self._builtin(func.value.func, scope) is super
        ):
            receiver = _first_parameter(scope.source)
            owner = scope.known.get(receiver) if receiver is not None else None
            defining = _defining_class(scope.source)
            if owner is None or not owner.is_object or defining is None:
                return None
            mro = owner.structure.cls.__mro__
            if defining not in mro:
                return None
            after = mro[mro.index(defining) + 1 :]
            holder = next((c for c in after if func.attr in c.__dict__), None)
            function = _class_function(holder, func.attr, self.checks)
            if function is None:
                return None
            self_read = ast.copy_location(name_node(receiver), func.value)
            known = _Known(value=function, receiver=self_read, owner=owner)
            return self._known_call(call, known, scope)
        base = self._known(func.value, scope)
        if base is None or base.structure is not None or not is_user_class(base.value):
            return None
        first = self._known(call.args[0], scope) if call.args else None
        if first is None or not first.is_object or isinstance(call.args[0], ast.Starred):
            return None
        function = _class_function(base.value, func.attr, self.checks)
        if function is None:
            return None
        self._check_path(base)
        method_call = ast.copy_location(ast.Call(func, call.args[1:], call.keywords), call)
        known = _Known(value=function, receiver=call.args[0], owner=first)
        return self._known_call(method_call, known, scope)

    def _known_call(self, call: ast.Call, known: _Known, scope: _Scope) -> ast.expr:
        """``call`` of the value ``known`` denotes, as a call of a nested helper (or of
        a name bound to the value); unchanged where the compiler resolves it itself."""
        value, receiver, owner = known.value, known.receiver, known.owner
        if isinstance(value, _Local):  # a lambda passed: the caller's def made of it
            called = ast.Call(_bound_name(value.name), call.args, call.keywords)
            return ast.copy_location(called, call)
        prefix: list[ast.expr] = []
        keywords: list[ast.keyword] = []
        if known.structure is not None:  # an object parameter called: its __call__
            if not known.is_object:
                return call
            value = _class_function(known.structure.cls, "__call__", self.checks)
            receiver, owner = call.func, known
            if value is None:
                return call
        if isinstance(value, functools.partial):  # its arguments bound as they are now
            parts = (value.func, value.args, dict(value.keywords))
            self.checks.append(functools.partial(_same_partial, value, parts))
            prefix = [self._bind(a, "partial_argument") for a in value.args]
            keywords = [ast.keyword(k, self._bind(v, k)) for k, v in value.keywords.items()]
            value = value.func
        if inspect.ismethod(value):
            receiver = self._bind(value.__self__, "receiver")
            owner = _Known(value=value.__self__)
            value = _plain_def(value.__func__)
        elif (
            receiver is None
            and is_user_object(value)
            and _class_function(type(value), "__call__", None) is not None
        ):  # a callable object of the user's: its __call__ with the object as self
            plain = not prefix and isinstance(call.func, (ast.Name, ast.Attribute))
            receiver = call.func if plain else self._bind(value, "callable")
            owner = _Known(value=value, path=known.path if plain else None)
            value = _class_function(type(value), "__call__", self.checks)
        # fn(a) of a parameter given the function, act(z) of a local bound to it
        passed = isinstance(call.func, ast.Name) and (
            call.func.id in scope.known or call.func.id in scope.local
        )
        if not inspect.isfunction(value):
            through = passed or self._through_object(call.func, scope)
            through = through or isinstance(call.func, ast.Subscript)  # ACTIVATIONS[0](x)
            if callable(value) and (prefix or keywords or through):
                # self.act(z) with act = np.tanh on an object read at run time, a partial
                # of a ufunc: called by a name bound to it, which the compiler resolves
                self._check_path(known)
                name = self._bind(value, getattr(value, "__name__", "function"))
                bound = ast.Call(name, prefix + call.args, [*keywords, *call.keywords])
                return ast.copy_location(bound, call)
            return call
        if not is_user_file(value.__code__.co_filename):
            return call  # a library's function or method (norm.cdf): resolved as before
        self._check_path(known)
        lambda_ = value.__name__ == "<lambda>"
        given = self._spread(call.args, scope)  # self.objective(x, *args): args' entries
        arguments = ([receiver] if receiver is not None else []) + prefix + given
        first = len(arguments) - len(given)
        fixed = self._passed_functions(value, arguments, first, call.keywords, scope)
        # body(x, w, *args) with args' count known: inlined, its *args bound per count
        spread = any(isinstance(a, ast.Starred) for a in call.args) and not any(
            isinstance(a, ast.Starred) for a in given
        )
        plain = not (receiver is not None or lambda_ or prefix or keywords or fixed or spread)
        if plain:
            if isinstance(call.func, ast.Name) and call.func.id not in scope.local:
                if call.func.id not in scope.known:
                    return call  # a function by its name: compiled in turn, as before
            name = self._bind(value, value.__name__)  # f = sigmoid; f(x): sigmoid's name
            return ast.copy_location(ast.Call(name, call.args, call.keywords), call)
        count = None if any(isinstance(a, ast.Starred) for a in given) else len(arguments)
        owned = owner if receiver is not None else None
        nested = self._nested(value, owned, call, given=count, fixed=fixed)
        positional = _positional(value)
        arguments = [
            a for i, a in enumerate(arguments) if i >= len(positional) or positional[i] not in fixed
        ]
        passed = [k for k in call.keywords if k.arg not in fixed]
        rewritten = ast.Call(name_node(nested), arguments, [*keywords, *passed])
        self.changed = True
        return ast.copy_location(rewritten, call)

    def _passed_functions(
        self,
        function: Any,
        arguments: list[ast.expr],
        first: int,
        keywords: list[ast.keyword],
        scope: _Scope,
    ) -> dict[str, _Known]:
        """``apply(np.cos, w)``, ``apply(lambda v: v * v, w)``: the parameters of
        ``function`` that this call gives a function known while compiling (from
        ``arguments[first:]`` and the keywords), by name; the helper is made for them
        (its calls of them resolved) and they are not passed. A parameter the function
        assigns is left as it is."""
        positional, code = _positional(function), function.__code__  # a plain function
        named = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        given = [
            (positional[i], a)
            for i, a in enumerate(arguments)
            if first <= i < len(positional) and not isinstance(a, ast.Starred)
        ]
        given += [(k.arg, k.value) for k in keywords if k.arg in named]
        fixed = {}
        for name, expr in given:
            known = self._function_value(expr, scope)
            if known is not None:
                fixed[name] = known
        spread = any(isinstance(a, ast.Starred) for a in arguments[first:])
        if not spread and all(k.arg is not None for k in keywords):
            # def h(x, act=np.tanh) called as h(x): as if the call passed it (function is
            # inlined, so the compiled code's assumptions hold its defaults)
            defaults = inspect.signature(function).parameters
            for name in function_defaults(function, {name for name, _ in given}):
                fixed[name] = _Known(value=defaults[name].default)
        if fixed:
            reassigned = _reassigned(function)
            if reassigned is None:
                return {}
            fixed = {n: k for n, k in fixed.items() if n not in reassigned}
        return fixed

    def _function_value(self, expr: ast.expr, scope: _Scope) -> _Known | None:
        """What a function passed as an argument is, known while compiling: a function,
        a ufunc, a partial, a callable object, or a lambda written in the differentiated
        function itself (made its nested def: its free names are the caller's)."""
        if isinstance(expr, ast.Lambda):
            if scope.function is not self.tree:
                return None  # its free names are an inlined function's: refused as before
            name = self.names.fresh("passed_lambda")
            self.definitions.append(ast.fix_missing_locations(def_of_lambda(name, expr)))
            self.changed = True
            return _Known(value=_Local(name))
        if isinstance(expr, ast.Call) and self._is_partial(expr.func, scope) and expr.args:
            given = [*expr.args, *(k.value for k in expr.keywords)]
            parts = [self._argument(a, scope) for a in given]
            if any(p is None for p in parts) or any(k.arg is None for k in expr.keywords):
                return None
            values = [p.value for p in parts]
            count = len(expr.args)
            named = dict(zip([k.arg for k in expr.keywords], values[count:], strict=True))
            try:
                made = functools.partial(*values[:count], **named)
            except TypeError:
                return None
            for part in parts:
                self._check_path(part)
            return _Known(value=made)
        known = self._known(expr, scope)
        if known is None or known.structure is not None or not _callable(known.value):
            return None
        if inspect.ismodule(known.value):
            return None
        return known

    def _spread(self, arguments: list[ast.expr], scope: _Scope) -> list[ast.expr]:
        """``f(x, *args)`` where ``args`` is a tuple or list known while compiling (the
        ``*args`` of the function, a structure passed): its entries one by one
        (``args[0], args[1]``), so that the callee's parameters are bound while
        compiling; other arguments as they are."""
        spread: list[ast.expr] = []
        for argument in arguments:
            if not isinstance(argument, ast.Starred):
                spread.append(argument)
                continue
            value = argument.value
            if isinstance(value, (ast.Tuple, ast.List)):
                spread += value.elts
                continue
            known = self._known(value, scope)
            if known is not None and isinstance(known.value, tuple) and known.path is not None:
                # f(x, *extras) of a tuple the code reads (a global, a closure): its
                # entries, guarded by its length
                count = len(known.value)
                self.checks.append(functools.partial(_same_length, known.path, count))
            elif known is not None and isinstance(known.structure, (ast.Tuple, ast.List)):
                count = len(known.structure.elts)
            else:
                spread.append(argument)  # a count known only at run time: refused there
                continue
            spread += _entry_reads(value, range(count), argument)
        return spread

    def _through_object(self, func: ast.expr, scope: _Scope) -> bool:
        """Whether ``func`` is an attribute of an object (not of a module: ``np.tanh``
        is resolved by the compiler as written)."""
        if not isinstance(func, ast.Attribute):
            return False
        base = self._known(func.value, scope)
        if base is not None and base.is_object:  # self.squash = staticmethod(np.cos)
            return True
        return base is not None and base.structure is None and not inspect.ismodule(base.value)

    def _class_value(self, attribute: ast.Attribute, scope: _Scope) -> ast.expr:
        """``self.scale`` where the object parameter's class holds it (a number, an
        array): a name bound to that value (read-only: no gradient flows to a class)."""
        if not isinstance(attribute.ctx, ast.Load):
            return attribute
        base = self._known(attribute.value, scope)
        if base is None or not base.is_object:
            return attribute
        keys = [k.value for k in base.structure.keys]
        cls = getattr(base.structure, "cls", None)
        if attribute.attr in keys or cls is None:
            return attribute
        raw = inspect.getattr_static(cls, attribute.attr, _MISSING)
        if (
            isinstance(raw, property)
            and inspect.isfunction(raw.fget)
            and is_user_file(raw.fget.__code__.co_filename)
        ):  # data.X of a property: its getter inlined, with the object as self
            self.checks.append(_same_class_attribute(cls, attribute.attr, raw))
            read = ast.copy_location(ast.Call(attribute, [], []), attribute)
            getter = self._nested(raw.fget, base, read)
            inlined = ast.Call(name_node(getter), [attribute.value], [])
            self.changed = True
            return ast.copy_location(inlined, attribute)
        if raw is _MISSING or callable(raw) or hasattr(raw, "__get__"):
            return attribute  # a method (called), a descriptor: not a value
        self.checks.append(_same_class_attribute(cls, attribute.attr, raw))
        self.changed = True
        if isinstance(raw, _CONSTANTS):
            return ast.copy_location(ast.Constant(raw), attribute)
        return ast.copy_location(self._bind(raw, attribute.attr), attribute)

    def _constructed(
        self, statement: ast.stmt, scope: _Scope, rewrite: ast.NodeTransformer
    ) -> list[ast.stmt] | None:
        """``layer1 = Dense(W1, b1)``, an object of a class of the user's built once in
        the function: its ``__init__`` inlined as a helper that returns the attributes
        it sets, and the object seen as the structure of those attributes (its methods
        inlined where they are called, as for an object passed). ``None`` for any
        other statement."""
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and isinstance(statement.value, ast.Call)
        ):
            return None
        name, call = statement.targets[0].id, statement.value
        known = self._known(call.func, scope)
        function = scope.function or self.tree
        if known is None or not is_user_class(known.value):
            return None
        if not _calls_through(function.body, name):
            return None  # an object only read: left as written
        cls = known.value
        where = self.parsed.location(call)
        if (
            bindings(function)[name] != (0 if getattr(statement, "hoisted", False) else 1)
            or type(cls) is not type
            or cls.__new__ is not object.__new__
        ):
            raise UnsupportedSyntaxError(
                f"this builds an object of {cls.__name__} that the compiler cannot follow "
                "(its name is assigned more than once, or its class makes objects its own way)",
                where,
                hint=f"build the {cls.__name__} once, outside the differentiated function, "
                "and pass it as an argument",
            )
        self._check_path(known)
        init = _class_function(cls, "__init__", self.checks)
        call = rewrite.visit(call)  # calls among its arguments resolved
        attributes: list[str] = []
        statements: list[ast.stmt] = []
        if init is not None:
            helper = self._nested(init, None, call, _Initializer(cls, where, attributes))
            targets = [name_node(f"{name}_{a}", store=True) for a in attributes]
            result = ast.Tuple(targets, ast.Store())
            inlined = ast.Call(name_node(helper), call.args, call.keywords)
            statements.append(ast.copy_location(ast.Assign([result], inlined), statement))
        display = ast.Dict(
            [ast.Constant(a) for a in attributes], [name_node(f"{name}_{a}") for a in attributes]
        )
        display.is_object, display.cls = True, cls  # self.W reads entries["W"]
        built = ast.Assign([name_node(name, True)], display)
        statements.append(ast.copy_location(built, statement))
        scope.known[name] = _Known(structure=display)
        self.changed = True
        return statements

    def _built_in_place(self, statement: ast.stmt, scope: _Scope) -> list[ast.stmt]:
        """``Gaussian(mu, 1.5).logpdf(x)``, ``Dense(W)(h)``: an object of a class of the
        user's built and called at once, in a statement of the function's top level
        (not on a side Python may skip: an arm of ``if``/``else``, after ``and``/``or``,
        in a comprehension or a lambda). Each such object is taken out into a name of its
        own, assigned just before the statement (``gaussian_1 = Gaussian(mu, 1.5)``,
        then built as :meth:`_constructed` builds it); the assignments, or none."""
        if not isinstance(statement, (ast.Assign, ast.AugAssign, ast.Return, ast.Expr)):
            return []
        specializer, made = self, []

        class Hoist(ast.NodeTransformer):
            def visit_Call(self, call: ast.Call) -> ast.expr:
                self.generic_visit(call)
                func = call.func
                built = func.value if isinstance(func, ast.Attribute) else func
                if not (isinstance(built, ast.Call) and call is not built):
                    return call
                known = specializer._known(built.func, scope)
                if known is None or not is_user_class(known.value):
                    return call
                name = specializer.names.fresh(known.value.__name__.lower())
                assign = ast.copy_location(ast.Assign([name_node(name, True)], built), built)
                assign.hoisted = True  # bound once, here: not in the function's tree
                made.append(ast.fix_missing_locations(assign))
                if isinstance(func, ast.Attribute):
                    func.value = ast.copy_location(name_node(name), built)
                else:
                    call.func = ast.copy_location(name_node(name), built)
                return call

            def skipped(self, node: ast.AST) -> ast.AST:
                return node  # evaluated only on one side, or later: left as written

            visit_IfExp = visit_BoolOp = visit_Lambda = skipped
            visit_ListComp = visit_GeneratorExp = visit_DictComp = visit_SetComp = skipped

        Hoist().visit(statement)
        return made

    def _unrolled(self, loop: ast.For, scope: _Scope) -> list[ast.stmt] | None:
        """``for layer in self.layers: h = layer(h)`` over a list of objects or
        functions known while compiling, whose body calls the loop variable (or its
        methods), or an entry of such a list at it (``for i in range(len(acts)):
        h = acts[i](h)``); a list written out, ``zip`` and ``enumerate`` of such
        lists and ``range`` of a count known while compiling: one copy of the body per
        entry, each variable read as its entry (``self.layers[0]``, ``0``), so that
        each call is resolved to what that entry runs. ``None`` for any other loop
        (left to the structures pass)."""
        if loop.orelse:
            return None
        items = self._items(loop.iter, scope)
        if items is None:
            return None
        names = [n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)]
        reads = [_reads_of(loop.target, item) for item in items]
        if any(r is None for r in reads) or not names:
            return None
        inside = ast.Module(loop.body, [])
        if not any(self._calls_known_through(loop.body, n, scope) for n in names):
            return None
        assigned = bindings(inside)
        if any(assigned[n] for n in names) or any(
            isinstance(n, (ast.Break, ast.Continue, ast.Return)) for n in ast.walk(inside)
        ):
            return None
        function = scope.function or self.tree
        for name in names:
            everywhere = sum(is_name(n, name) for n in ast.walk(function))
            if everywhere != 1 + sum(is_name(n, name) for n in ast.walk(inside)):
                return None  # the variable is read after the loop too: left as a loop
        copies: list[ast.stmt] = []
        for entry in reads:
            copies += [_substituted(statement, entry) for statement in copy_tree(loop.body)]
        self.changed = True
        return copies

    def _items(self, iterable: ast.expr, scope: _Scope) -> list[Any] | None:
        """How each item of a loop's iterable known while compiling is read: an
        expression, or (for ``zip`` and ``enumerate``) a list of them; ``None`` where
        the iterable's length is not known while compiling."""
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name):
            builtin = self._builtin(iterable.func, scope)
            arguments = iterable.args
            if builtin is zip and arguments and _only_strict(iterable.keywords):
                parts = [self._items(a, scope) for a in arguments]
                if any(p is None for p in parts):
                    return None
                strict = any(k.value.value for k in iterable.keywords)
                if strict and len({len(p) for p in parts}) > 1:
                    return None  # Python raises: left to run as a loop
                return [list(items) for items in zip(*parts, strict=False)]
            if builtin is enumerate and len(arguments) == 1 and not iterable.keywords:
                part = self._items(arguments[0], scope)
                if part is None:
                    return None
                return [[ast.Constant(i), item] for i, item in enumerate(part)]
            if builtin is range and 1 <= len(arguments) <= 3 and not iterable.keywords:
                bounds = [self._count(a, scope) for a in arguments]
                if any(b is None for b in bounds):
                    return None
                return [ast.Constant(i) for i in range(*bounds)]
        if isinstance(iterable, (ast.Tuple, ast.List)):  # (np.tanh, np.sin), written out
            if any(isinstance(e, ast.Starred) for e in iterable.elts):
                return None
            return list(iterable.elts)
        if (  # self.blocks.values(), .items(), .keys() of a dict held by an object
            isinstance(iterable, ast.Call)
            and isinstance(iterable.func, ast.Attribute)
            and iterable.func.attr in ("values", "items", "keys")
            and not iterable.args
            and not iterable.keywords
        ):
            keys = self._dict_keys(iterable.func.value, scope)
            if keys is None:
                return None
            reads = _key_reads(iterable.func.value, keys, iterable)
            if iterable.func.attr == "values":
                return reads
            if iterable.func.attr == "items":
                return [[ast.Constant(k), read] for k, read in zip(keys, reads, strict=True)]
            return [ast.Constant(k) for k in keys]
        keys = self._dict_keys(iterable, scope)  # for name in self.blocks: its keys
        if keys is not None:
            return [ast.Constant(k) for k in keys]
        return self._entries(iterable, scope)

    def _dict_keys(self, expr: ast.expr, scope: _Scope) -> list[Any] | None:
        """The keys of a dict that an argument's structure holds (``self.blocks``, a
        dict of layers), known while compiling; ``None`` for anything else."""
        known = self._known(expr, scope)
        if known is None or not isinstance(known.structure, ast.Dict) or known.is_object:
            return None
        keys = _written_keys(known.structure)
        return None if any(k is _MISSING for k in keys) else keys

    def _builtin(self, name: ast.Name, scope: _Scope) -> Any:
        """The builtin ``name`` reads (``zip``, ``range``), unless the code rebinds it."""
        if name.id in scope.local or name.id in scope.known:
            return None
        value = scope.namespace.get(name.id, getattr(builtins, name.id, None))
        return value if value is getattr(builtins, name.id, None) else None

    def _count(self, expr: ast.expr, scope: _Scope) -> int | None:
        """An int known while compiling: written out, or ``len`` of a list known while
        compiling (its length guarded)."""
        written = _constant_int(expr)
        if written is not None:
            return written
        if (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Name)
            and self._builtin(expr.func, scope) is len
            and len(expr.args) == 1
        ):
            entries = self._entries(expr.args[0], scope)
            return len(entries) if entries is not None else None
        return None

    def _calls_known_through(self, body: list[ast.stmt], name: str, scope: _Scope) -> bool:
        """Whether ``body`` calls the loop variable ``name`` (or a method of it), or an
        entry at it of a list of functions known while compiling (``acts[i](h)``), or
        of a dict of objects (``self.blocks[k](h)``)."""
        if _calls_through(body, name):
            return True
        return any(
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Subscript)
            and is_name(node.func.slice, name)
            and (
                self._entries(node.func.value, scope) is not None
                or self._dict_keys(node.func.value, scope) is not None
            )
            for node in ast.walk(ast.Module(body, []))
        )

    def _unrolled_items(self, comprehension: ast.expr, scope: _Scope) -> ast.List | None:
        """``[p.loss(w) for p in problems]`` (or a generator, consumed by its caller)
        over a list of objects known while compiling, whose element calls the variable:
        the list of the elements, one per entry (``problems[0].loss(w)``, ...)."""
        if len(comprehension.generators) != 1:
            return None
        generator = comprehension.generators[0]
        target = generator.target
        if generator.ifs or generator.is_async:
            return None
        names = [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
        entries = self._items(generator.iter, scope)
        element = ast.Expr(comprehension.elt)
        if entries is None or not any(_calls_through([element], n) for n in names):
            return None
        reads = [_reads_of(target, entry) for entry in entries]
        if any(r is None for r in reads):
            return None
        items = [_substituted(copy_tree(element), entry).value for entry in reads]
        self.changed = True
        return ast.copy_location(ast.List(items, ast.Load()), comprehension)

    def _entries(self, iterable: ast.expr, scope: _Scope) -> list[ast.expr] | None:
        """How each entry of a list or tuple known while compiling is read
        (``self.layers[0]``, ...), for ``self.layers`` or a slice of it written out."""
        base, picked = iterable, None
        if isinstance(iterable, ast.Subscript) and isinstance(iterable.slice, ast.Slice):
            bounds = [iterable.slice.lower, iterable.slice.upper, iterable.slice.step]
            ints = [None if b is None else _constant_int(b) for b in bounds]
            if any(b is not None and i is None for b, i in zip(bounds, ints, strict=True)):
                return None
            base, picked = iterable.value, slice(*ints)
        known = self._known(base, scope)
        if known is not None and known.structure is None and known.path is not None:
            items = known.value  # a list the code reads (a global, ...), its length guarded
            if not isinstance(items, (list, tuple)):
                return None
            guard = functools.partial(_same_length, known.path, len(items), (list, tuple))
            self.checks.append(guard)
            positions = range(len(items))
            positions = positions[picked] if picked is not None else positions
            return _entry_reads(base, positions, base)
        if known is None or not isinstance(known.structure, (ast.List, ast.Tuple)):
            return None
        positions = range(len(known.structure.elts))
        positions = positions[picked] if picked is not None else positions
        return _entry_reads(base, positions, base)

    # -- what an expression denotes ----------------------------------------------------

    def _known(self, expr: ast.expr, scope: _Scope) -> _Known | None:
        if isinstance(expr, ast.Name) and isinstance(expr.ctx, ast.Load):
            if expr.id in scope.known:
                return scope.known[expr.id]
            if expr.id in scope.local or expr.id not in scope.namespace:
                return None
            value = scope.namespace[expr.id]
            read = functools.partial(scope.reader, expr.id)
            return _Known(value=value, path=(read, ()))
        if isinstance(expr, ast.Subscript) and isinstance(expr.ctx, ast.Load):
            return self._item(expr, scope)
        if not (isinstance(expr, ast.Attribute) and isinstance(expr.ctx, ast.Load)):
            return None
        base = self._known(expr.value, scope)
        if base is None:
            return None
        if base.structure is not None:
            if not base.is_object:
                return None
            return self._in_structure(base.structure, expr)
        value, method = _attribute(base.value, expr.attr)
        if value is _MISSING:
            return None
        if isinstance(base.value, type):  # the class keeps what it held
            raw = inspect.getattr_static(base.value, expr.attr)
            self.checks.append(_same_class_attribute(base.value, expr.attr, raw))
        path = (base.path[0], (*base.path[1], expr.attr)) if base.path else None
        if method == "class":  # net.shift(a), a classmethod of the object's class
            cls = type(base.value)
            raw = inspect.getattr_static(cls, expr.attr, None)
            self.checks.append(_same_class_attribute(cls, expr.attr, raw))
            receiver = self._bind(cls, cls.__name__)
            return _Known(value=value, receiver=receiver, path=path, owner=_Known(value=cls))
        if method:
            return _Known(value=value, receiver=expr.value, path=path, owner=base)
        return _Known(value=value, path=path)

    def _item(self, expr: ast.Subscript, scope: _Scope) -> _Known | None:
        """``self.layers[-1]``, ``layers[0]``: an entry of a list or tuple known while
        compiling, at an index written out."""
        base = self._known(expr.value, scope)
        if base is not None and base.structure is None and isinstance(base.value, dict):
            return self._entry_of_dict(base, expr.slice, scope)
        if (  # self.blocks["enc"]: an entry of a dict an argument's structure holds
            base is not None
            and isinstance(base.structure, ast.Dict)
            and not base.is_object
            and isinstance(expr.slice, ast.Constant)
        ):
            entries = base.structure
            keys = _written_keys(entries)
            found = expr.slice.value
            return self._entry(entries.values[keys.index(found)]) if found in keys else None
        index = _constant_int(expr.slice)
        if base is not None and base.structure is None and isinstance(base.value, (list, tuple)):
            return self._entry_of_sequence(base, index)
        if base is None or index is None or not isinstance(base.structure, (ast.List, ast.Tuple)):
            return None
        items = base.structure.elts
        return self._entry(items[index]) if -len(items) <= index < len(items) else None

    def _entry_of_dict(self, base: _Known, key: ast.expr, scope: _Scope) -> _Known | None:
        """``ACTIVATIONS[activation]``: the function a dict the code reads holds at a key
        known while compiling (written out, or a string argument the call is
        specialized on); guarded by the dict still holding it there."""
        if isinstance(key, ast.Constant):
            found = key.value
        else:
            known = self._known(key, scope)
            found = known.value if known is not None and known.structure is None else _MISSING
        if type(found) not in (str, int) or found not in base.value:
            return None
        entry = base.value[found]
        if not _callable(entry) or base.path is None:
            return None

        def still() -> bool:
            value = _now(base.path)
            return isinstance(value, dict) and value.get(found, _MISSING) is entry

        self.checks.append(still)
        return _Known(value=entry)

    def _entry_of_sequence(self, base: _Known, index: int | None) -> _Known | None:
        """``ACTIVATIONS[0]``: the function a list or tuple the code reads holds at an
        index written out; guarded by the list still holding it there."""
        items = base.value
        if index is None or base.path is None or not -len(items) <= index < len(items):
            return None
        entry = items[index]
        if not _callable(entry) or inspect.ismodule(entry):
            return None

        def still() -> bool:
            value = _now(base.path)
            if not isinstance(value, (list, tuple)) or not -len(value) <= index < len(value):
                return False
            return value[index] is entry

        self.checks.append(still)
        return _Known(value=entry)

    def _entry(self, item: ast.expr) -> _Known | None:
        """What an entry of a structure's literal denotes: an object seen as its
        attributes, a list or dict of them, or a static part (a function, a class, a
        module)."""
        if isinstance(item, (ast.Dict, ast.List, ast.Tuple)):
            return _Known(structure=item)
        if isinstance(item, ast.Name) and item.id in self.values:  # a static part
            return _Known(value=self.values[item.id])
        return None

    def _in_structure(self, structure: ast.Dict, expr: ast.Attribute) -> _Known | None:
        keys = [k.value for k in structure.keys]
        if expr.attr in keys:  # the object's own attribute
            return self._entry(structure.values[keys.index(expr.attr)])
        cls = getattr(structure, "cls", None)
        raw = inspect.getattr_static(cls, expr.attr, _MISSING) if cls is not None else _MISSING
        if isinstance(raw, staticmethod):
            self.checks.append(_same_class_attribute(cls, expr.attr, raw))
            return _Known(value=raw.__func__)
        if isinstance(raw, classmethod):  # self.shift(a): the class is its first argument
            self.checks.append(_same_class_attribute(cls, expr.attr, raw))
            receiver = self._bind(cls, cls.__name__)
            return _Known(value=raw.__func__, receiver=receiver, owner=_Known(value=cls))
        function = _class_function(cls, expr.attr, self.checks) if cls is not None else None
        if function is None:
            return None
        return _Known(value=function, receiver=expr.value, owner=_Known(structure=structure))

    def _is_partial(self, func: ast.expr, scope: _Scope) -> bool:
        known = self._known(func, scope)
        return known is not None and known.value is functools.partial

    # -- nesting -----------------------------------------------------------------------

    def _nested(
        self,
        function: Any,
        owner: _Known | None,
        call: ast.Call,
        initializer: _Initializer | None = None,
        given: int | None = None,
        fixed: dict[str, _Known] | None = None,
    ) -> str:
        """The name of the helper defined inside the function that runs ``function``
        (its body's own calls resolved, its free names bound to what they mean where it
        was written); defined once per function and object (``owner``: a method's).
        ``initializer``: an ``__init__`` rewritten to return the attributes it sets;
        ``given``: how many positional arguments the call passes, where it is known
        (a ``*args`` of the function is then a tuple of that many: one helper per
        count); ``fixed``: parameters given functions known while compiling, made known
        in the helper and taken out of its parameters (one helper per function given)."""
        fixed = fixed or {}
        owned = owner.key() if owner is not None else None
        functions = tuple(sorted((n, _identity(k)) for n, k in fixed.items()))
        key = (id(function), owned, initializer is None, given, functions)
        if key in self.nested:
            if initializer is not None:  # the same __init__ again: the same attributes
                initializer.attributes[:] = self.initialized[key]
            return self.nested[key]
        tree, namespace = _source_tree(function, call, self.parsed, given)
        if initializer is not None:
            initializer.rewrite(tree)
            self.initialized[key] = list(initializer.attributes)
        self.names.taken |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        stem = function.__name__ if function.__name__ != "<lambda>" else _said(call.func)
        stem = f"{initializer.cls.__name__}_init" if initializer is not None else stem
        name = self.names.fresh(stem) if stem in self.names.taken else self.names.exact(stem)
        self.nested[key] = name  # before its body: a call of itself is found as recursion
        tree.name = name
        tree.said_as = stem  # what messages call it (the user's name, not the fresh one)
        arguments = tree.args.posonlyargs + tree.args.args
        local = assigned_names(tree) | _defined(tree)
        known: dict[str, _Known] = {}
        if owner is not None and arguments:
            known[arguments[0].arg] = owner  # self: the object the method is called on
            if bindings(tree)[arguments[0].arg]:
                known.clear()  # self rebound in the method: not known after all
        extras = getattr(tree, "extras", None)  # *args, as the tuple of its entries
        if extras is not None and bindings(tree)[extras[0]] == 1:
            known[extras[0]] = _Known(structure=extras[1])
        if fixed:
            _without_parameters(tree, set(fixed))
            known.update(fixed)
        scope = _Scope(
            namespace, local - set(known), known, _reader(function, {}), tree, source=function
        )
        tree.body = self._body(tree.body, scope, self._aliases(tree, scope))
        self._read_fixed(tree, fixed)
        self._bind_free_names(tree, namespace, local, function)
        for child in ast.walk(tree):  # errors point at the user's call
            if hasattr(child, "lineno"):
                ast.copy_location(child, call)
        self.definitions.append(tree)
        self.inlined.append(function)
        return name

    def _read_fixed(self, tree: ast.FunctionDef, fixed: dict[str, _Known]) -> None:
        """A function parameter taken out of a helper, read otherwise than called
        (passed on to a library's function): a name bound to the function."""
        specializer = self

        class Read(ast.NodeTransformer):
            def visit_Name(self, node: ast.Name) -> ast.expr:
                if node.id not in fixed or getattr(node, "bound_here", False):
                    return node
                value = fixed[node.id].value
                if isinstance(value, _Local):
                    read = _bound_name(value.name)
                else:
                    read = specializer._bind(value, getattr(value, "__name__", node.id))
                return ast.copy_location(read, node)

        if fixed:
            Read().visit(tree)

    def _bind_free_names(
        self, tree: ast.FunctionDef, namespace: dict, local: set[str], function: Any
    ) -> None:
        """A free name of a nested function that means something else in the caller (or
        that the caller assigns) is read through a name bound to what it means there.

        The generated code reads a name bound here as the value it had while compiling,
        so each free name of ``function`` not read anew where ``function`` reads it (a
        global of another module, a closure variable) is guarded: rebound (another
        module's ``SCALE = -1.0``, a loop count ``DEPTH = 3``), it compiles again."""
        renames: dict[str, str] = {}
        held: dict[str, Any] = {}  # what the compiled code read for a free name
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
                continue
            name = node.id
            if name in local or name in renames or getattr(node, "bound_here", False):
                continue
            mine = namespace.get(name, _MISSING)
            if mine is _MISSING:
                continue
            if name in self.introduced:  # a name bound here: to this value, or another
                if self.values.get(name) is mine:
                    held[name] = mine
                    continue
            elif name not in self.caller_local and self.namespace.get(name, _MISSING) is mine:
                if not self._read_alike(function, name):
                    held[name] = mine  # the caller's name, found in another place
                continue
            held[name] = mine
            if _runtime_helper(mine, name) and name not in self.caller_local:
                if self.namespace.get(name, _MISSING) in (_MISSING, mine):
                    self.values[name] = mine  # ones_like of an inlined gradient: its own name
                    self.introduced.add(name)
                    continue
            renames[name] = self._bind(mine, name).id
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Name)
                and node.id in renames
                and node.id not in local
                and not getattr(node, "bound_here", False)
            ):
                node.id = renames[node.id]
        guard = (id(function), tuple((name, id(value)) for name, value in held.items()))
        if held and guard not in self.guarded:  # (one per function: ten layers, one check)
            self.guarded.add(guard)
            self.checks.append(functools.partial(_still_reads, _reader(function, {}), held))

    def _read_alike(self, function: Any, name: str) -> bool:
        """Whether the generated code reads the free name ``name`` of ``function`` where
        ``function`` reads it: a global of the caller's own module, which neither binds
        otherwise (read anew at each call, as the caller's globals are)."""
        caller = self.parsed.fn
        caller_code = getattr(caller, "__code__", None)
        return (
            getattr(function, "__globals__", None) is getattr(caller, "__globals__", _MISSING)
            and name not in function.__code__.co_freevars
            and (caller_code is None or name not in caller_code.co_freevars)
            and name not in self.values
        )

    def _bind(self, value: Any, stem: str) -> ast.Name:
        """A name of the caller's bound to ``value`` (read like a global)."""
        for name, bound in self.values.items():
            if bound is value and name in self.introduced:
                return _bound_name(name)
        stem = stem if stem.isidentifier() else "value"
        name = self.names.exact(stem) if stem not in self.names.taken else self.names.fresh(stem)
        self.values[name] = value
        self.introduced.add(name)
        self.changed = True
        return _bound_name(name)

    def _check_path(self, known: _Known) -> None:
        """The check that ``known``'s path still finds its value (none without a path)."""
        path, expected = known.path, known.value
        if path is not None:
            self.checks.append(lambda: _now(path) is expected)


# -- values ------------------------------------------------------------------------------


def _attribute(obj: Any, name: str) -> tuple[Any, bool | str]:
    """What ``obj.name`` finds without running code of the object's (a property is not
    followed), and whether it is a method to call with ``obj`` as ``self`` (``"class"``:
    a classmethod, called with the object's class)."""
    if inspect.ismodule(obj):
        return getattr(obj, name, _MISSING), False
    if isinstance(obj, type):  # a class held by an object: Cost.fn, Cost.make(...)
        raw = inspect.getattr_static(obj, name, _MISSING)
        if isinstance(raw, staticmethod) or inspect.isfunction(raw):
            return getattr(raw, "__func__", raw), False
        if isinstance(raw, classmethod):
            return raw.__func__, True  # the class is its first argument
        return (_MISSING, False) if raw is _MISSING or hasattr(raw, "__get__") else (raw, False)
    own = getattr(obj, "__dict__", None)
    if isinstance(own, dict) and not isinstance(obj, type) and name in own:
        return own[name], False
    raw = _plain_def(inspect.getattr_static(type(obj), name, _MISSING))
    if isinstance(raw, staticmethod):
        return raw.__func__, False
    if isinstance(raw, classmethod):
        return raw.__func__, "class"  # called with the object's class first
    if inspect.isfunction(raw):
        return raw, True
    if raw is _MISSING or hasattr(raw, "__get__"):
        return _MISSING, False
    return raw, False


@dataclasses.dataclass(frozen=True)
class _Derivative:
    """``dg = grad(f)`` in the function: each call of ``dg`` is a call of ``maker``'s."""

    maker: ast.Call


@dataclasses.dataclass(frozen=True)
class _Pullback:
    """``value, pullback = vjp(f, x, wrt=...)`` in the function: each call of
    ``pullback`` is the gradient of ``sum(f(x) * seed)`` (see :mod:`.derivative_calls`)."""

    made: ast.Call


@dataclasses.dataclass(frozen=True)
class _Local:
    """A function the differentiated function defines (a lambda it passes, made a
    nested def): called by its name."""

    name: str


def _identity(known: _Known) -> Any:
    value = known.value
    return value.name if isinstance(value, _Local) else id(value)


def _positional(function: Any) -> list[str]:
    code = getattr(function, "__code__", None)
    return list(code.co_varnames[: code.co_argcount]) if code is not None else []


def _reassigned(function: Any) -> set[str] | None:
    """The names ``function``'s body assigns (``None``: its source is not read)."""
    if function.__name__ == "<lambda>":
        return set()
    try:
        tree = parse_function(function).tree
    except AutodiffError:
        return None
    return set(bindings(ast.Module(tree.body, [])))


def _without_parameters(tree: ast.FunctionDef, names: set[str]) -> None:
    """``tree`` without the parameters ``names`` (their defaults too)."""
    arguments = tree.args
    positional = [a.arg for a in arguments.posonlyargs + arguments.args]
    defaulted = positional[len(positional) - len(arguments.defaults) :]
    defaults = dict(zip(defaulted, arguments.defaults, strict=True))
    arguments.posonlyargs = [a for a in arguments.posonlyargs if a.arg not in names]
    arguments.args = [a for a in arguments.args if a.arg not in names]
    kept = arguments.posonlyargs + arguments.args
    arguments.defaults = [defaults[a.arg] for a in kept if a.arg in defaults]
    pairs = zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
    pairs = [(a, d) for a, d in pairs if a.arg not in names]
    arguments.kwonlyargs = [a for a, _ in pairs]
    arguments.kw_defaults = [d for _, d in pairs]


def _now(path: tuple[Callable[[], Any], tuple[str, ...]]) -> Any:
    """What a :attr:`_Known.path` (a free name's reader, then attributes) finds now."""
    read, attributes = path
    value = read()
    for attribute in attributes:
        value = _attribute(value, attribute)[0]
    return value


def _still_reads(read: Callable[[str], Any], held: dict[str, Any]) -> bool:
    """Whether each free name in ``held`` still reads the value it held (``read``: a
    function's reader, see :func:`_reader`)."""
    for name, value in held.items():
        if read(name) is not value:
            return False
    return True


def _same_partial(made: functools.partial, parts: tuple[Any, ...]) -> bool:
    """Whether the partial ``made`` still holds the ``parts`` it held: its function,
    its arguments and each keyword's value (its ``keywords`` dict may be changed in
    place, and ``__setstate__`` replaces them all)."""
    func, args, keywords = parts
    now = made.keywords
    if made.func is not func or made.args is not args or len(now) != len(keywords):
        return False
    for name, value in keywords.items():
        if now.get(name, _MISSING) is not value:
            return False
    return True


def _same_length(
    path: tuple[Callable[[], Any], tuple[str, ...]], count: int, kinds: tuple[type, ...] = (tuple,)
) -> bool:
    """Whether what ``path`` finds now is still one of ``kinds`` of ``count`` entries."""
    value = _now(path)
    return isinstance(value, kinds) and len(value) == count


def _entry_reads(value: ast.expr, positions: range, at: ast.AST) -> list[ast.expr]:
    """``value[0]``, ``value[1]``, ...: a read of each entry at ``positions``."""
    return [
        ast.copy_location(ast.Subscript(copy_tree(value), ast.Constant(i), ast.Load()), at)
        for i in positions
    ]


def _plain_def(value: Any) -> Any:
    """The def of a method decorated with ``@differentiable`` (a compiled function of
    it: calling it runs the def, so the def is what a call inlines); ``value`` itself
    otherwise."""
    fn = getattr(value, "fn", None)
    compiled = callable(getattr(value, "op_forward", None)) and inspect.isfunction(fn)
    return fn if compiled and getattr(value, "__wrapped__", None) is fn else value


def _first_parameter(function: Any) -> str | None:
    """The name of a function's first parameter (a method's ``self``), else ``None``."""
    code = getattr(function, "__code__", None)
    return code.co_varnames[0] if code is not None and code.co_argcount else None


def _defining_class(function: Any) -> type | None:
    """The class whose body defines ``function``, where it uses ``super()`` (Python
    keeps that class in the function's ``__class__`` cell), else ``None``."""
    code = getattr(function, "__code__", None)
    if code is None or "__class__" not in code.co_freevars:
        return None
    found = closure_values(function).get("__class__")
    return found if isinstance(found, type) else None


def _key_reads(value: ast.expr, keys: list[Any], at: ast.AST) -> list[ast.expr]:
    """``value["enc"]``, ``value["dec"]``: a read of each entry at ``keys``."""
    return [
        ast.copy_location(ast.Subscript(copy_tree(value), ast.Constant(k), ast.Load()), at)
        for k in keys
    ]


def _bound_name(name: str) -> ast.Name:
    """A read of a name bound while specializing (never a free name of the user's to
    rebind when the function it is in gets nested)."""
    node = name_node(name)
    node.bound_here = True
    return node


def _class_function(cls: type | None, name: str, checks: list | None) -> Any:
    """The plain function ``cls`` has for ``name`` (a method), recording the check that
    it keeps it; ``None`` otherwise."""
    raw = inspect.getattr_static(cls, name, None) if cls is not None else None
    raw = _plain_def(raw)
    if not inspect.isfunction(raw):
        return None
    if checks is not None:
        checks.append(_same_class_attribute(cls, name, raw))
    return raw


def _same_class_attribute(cls: type, name: str, raw: Any) -> Callable[[], bool]:
    def still() -> bool:
        return inspect.getattr_static(cls, name, None) is raw

    return still


def _runtime_helper(value: Any, name: str) -> bool:
    """Whether ``value`` is the toolkit's runtime helper called ``name`` (generated code
    calls it by that name: an inlined generated function keeps it)."""
    module = getattr(value, "__module__", "") or ""
    return module.startswith("autodiff_tutor.runtime") and getattr(value, "__name__", "") == name


def _callable(value: Any) -> bool:
    return callable(value) and not isinstance(value, type) and not hasattr(value, "shape")


def _reader(fn: Any, values: dict[str, Any]) -> Callable[[str], Any]:
    """How to read a free name of ``fn`` now: bound while specializing, a closure
    variable, a global, a builtin."""

    def read(name: str) -> Any:
        if name in values:
            return values[name]
        if name in fn.__code__.co_freevars:  # a cell not assigned yet: missing
            return closure_values(fn).get(name, _MISSING)
        found = fn.__globals__.get(name, _MISSING)
        return getattr(builtins, name, _MISSING) if found is _MISSING else found

    return read


def _defined(tree: ast.AST) -> set[str]:
    """The names of functions defined inside ``tree``."""
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n is not tree}


def _said(expr: ast.expr) -> str:
    """A name for a helper made from how the call names it: ``sig``, ``act``."""
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return expr.id if isinstance(expr, ast.Name) else "helper"


@dataclasses.dataclass
class _Initializer:
    """How an ``__init__`` becomes a helper that returns the attributes it sets: each
    ``self.W`` is a local ``self_W``, and ``attributes`` (filled here) says which, in
    the order the helper returns them."""

    cls: type
    where: Any
    attributes: list[str]

    def rewrite(self, tree: ast.FunctionDef) -> None:
        arguments = tree.args.posonlyargs + tree.args.args
        if not arguments:
            self._refuse("its __init__ takes no self")
        this = arguments[0].arg
        if tree.args.posonlyargs:
            tree.args.posonlyargs = tree.args.posonlyargs[1:]
        else:
            tree.args.args = tree.args.args[1:]
        top = {
            id(target)
            for statement in tree.body
            if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign))
            for target in getattr(statement, "targets", [getattr(statement, "target", None)])
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Return):
                self._refuse("its __init__ returns early")
            if not (isinstance(node, ast.Attribute) and is_name(node.value, this)):
                continue
            if isinstance(node.ctx, ast.Store) and id(node) not in top:
                self._refuse(f"its __init__ sets self.{node.attr} inside a loop or a branch")
            if isinstance(node.ctx, ast.Store) and node.attr not in self.attributes:
                self.attributes.append(node.attr)

        class Local(ast.NodeTransformer):
            def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
                if is_name(node.value, this):
                    return ast.copy_location(ast.Name(f"{this}_{node.attr}", node.ctx), node)
                return self.generic_visit(node)

        Local().visit(tree)
        if mentions(tree, this):
            self._refuse("its __init__ uses self otherwise than setting its attributes")
        held = [ast.Name(f"{this}_{a}", ast.Load()) for a in self.attributes]
        tree.body.append(ast.Return(ast.Tuple(held, ast.Load())))

    def _refuse(self, why: str) -> None:
        raise UnsupportedSyntaxError(
            f"this builds an object of {self.cls.__name__} inside the differentiated code, "
            f"which the compiler inlines, and {why}",
            self.where,
            hint=f"build the {self.cls.__name__} outside the differentiated function and "
            "pass it as an argument (its arrays are then differentiable as its attributes)",
        )


def _only_decides(tree: ast.FunctionDef) -> bool:
    """Whether a factory's body, outside the functions it defines, only tests and
    returns: no call, loop, write into a value, or global statement."""
    if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in ast.walk(tree)):
        return False
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Lambda, ast.FunctionDef)):
            pending += node.args.defaults + [d for d in node.args.kw_defaults if d]
            pending += node.decorator_list if isinstance(node, ast.FunctionDef) else []
            continue
        if isinstance(
            node,
            (ast.Call, ast.For, ast.While, ast.Global, ast.Nonlocal, ast.Delete, ast.Try),
        ) or (
            isinstance(node, (ast.Attribute, ast.Subscript)) and not isinstance(node.ctx, ast.Load)
        ):
            return False
        pending += list(ast.iter_child_nodes(node))
    return True


def _constant_int(expr: ast.expr) -> int | None:
    """An int written out (``2``, ``-1``), else ``None``."""
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        inner = _constant_int(expr.operand)
        return -inner if inner is not None else None
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        return expr.value
    return None


def _only_strict(keywords: list[ast.keyword]) -> bool:
    """Whether a ``zip`` call's keywords are at most ``strict=`` a constant."""
    return all(k.arg == "strict" and isinstance(k.value, ast.Constant) for k in keywords)


def _reads_of(target: ast.expr, item: Any) -> dict[str, ast.expr] | None:
    """What each name of a loop's ``target`` reads for one ``item`` of
    :meth:`_Specializer._items` (``(i, act)`` and ``[0, acts[0]]``: ``i`` is ``0``);
    ``None`` where they do not match."""
    if isinstance(target, ast.Name):
        if isinstance(item, list):
            return {target.id: ast.Tuple([copy_tree(e) for e in item], ast.Load())}
        return {target.id: item}
    if not isinstance(target, (ast.Tuple, ast.List)) or not isinstance(item, list):
        return None
    if len(target.elts) != len(item):
        return None
    reads: dict[str, ast.expr] = {}
    for part, entry in zip(target.elts, item, strict=True):
        found = _reads_of(part, entry)
        if found is None:
            return None
        reads.update(found)
    return reads


def _calls_through(body: list[ast.stmt], name: str) -> bool:
    """Whether ``body`` calls ``name`` or a method of it (``layer(h)``,
    ``layer.forward(h)``)."""
    return any(
        isinstance(node, ast.Call) and root_name(node.func) == name
        for node in ast.walk(ast.Module(body, []))
    )


def _written_keys(structure: ast.Dict) -> list[Any]:
    """The keys of a dict display, each written out (``_MISSING`` for any other)."""
    return [k.value if isinstance(k, ast.Constant) else _MISSING for k in structure.keys]


def _substituted(statement: ast.stmt, reads: dict[str, ast.expr]) -> ast.stmt:
    """``statement`` with each read of a name of ``reads`` replaced by what it reads."""

    class Substitute(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            if node.id in reads and isinstance(node.ctx, ast.Load):
                return ast.copy_location(copy_tree(reads[node.id]), node)
            return node

    return Substitute().visit(statement)


def _source_tree(function: Any, call: ast.Call, parsed: ParsedFunction, given: int | None = None):
    """``function``'s definition (a lambda's written as a def) and the names it sees;
    a located refusal where its source cannot be read. ``given``: the count of
    positional arguments, where known: a ``*args`` becomes that many parameters, and
    ``args`` the tuple of them (see :func:`_with_extras`)."""
    where = parsed.location(call)
    try:
        source = parse_function(function)
    except AutodiffError as error:
        if function.__name__ == "<lambda>":
            raise UnsupportedSyntaxError(
                f"{_said(call.func)!r} is a lambda whose source the compiler cannot single "
                "out (several lambdas on its line, or none it can read), so it cannot inline it",
                where,
                hint="define it with def, or on a line of its own: sig = lambda z: ...",
            ) from None
        raise UnsupportedSyntaxError(
            f"{_said(call.func)!r} calls {function.__qualname__}, whose source the "
            f"compiler cannot read to inline it ({error.message})",
            where,
            hint="define it in a file or notebook cell, or give it a derivative rule as "
            "a DifferentiableFunction",
        ) from None
    tree, namespace = copy_tree(source.tree), source.namespace()
    arguments = tree.args
    if arguments.vararg and given is not None and not arguments.kwarg:
        _with_extras(tree, given)
    if arguments.kwarg or tree.decorator_list:
        raise UnsupportedSyntaxError(
            f"{_said(call.func)!r} calls {function.__qualname__}, which takes **kwargs or "
            "is decorated: the compiler inlines a function called inside the code, and "
            "binds its parameters by name",
            where,
            hint=f"give {function.__name__} named parameters, or pass the values one by one",
        )
    if arguments.vararg:
        raise UnsupportedSyntaxError(
            f"{_said(call.func)!r} calls {function.__qualname__}, which takes *args, and "
            "this call passes it a number of arguments not known while compiling (the "
            "compiler inlines the function, binding its parameters then)",
            where,
            hint="pass the extra arguments one by one, or pass on a tuple known at the call "
            "(the differentiated function's own *args: self.objective(x, *args))",
        )
    return tree, namespace


def _with_extras(tree: ast.FunctionDef, given: int) -> None:
    """``def objective(self, x, *args)`` called with ``given`` positional arguments: the
    extra ones become parameters of their own (``args_0``, ...) and ``args`` their tuple,
    assigned first (the structures pass reads ``len(args)``, ``args[1]``, ``for a in
    args`` from it); ``tree.extras`` is ``(name, tuple)``."""
    arguments = tree.args
    fixed = len(arguments.posonlyargs) + len(arguments.args)
    vararg = arguments.vararg.arg
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    taken |= {a.arg for a in ast.walk(arguments) if isinstance(a, ast.arg)}
    names = []
    for i in range(max(0, given - fixed)):
        name = f"{vararg}_{i}"
        while name in taken:
            name += "_"
        taken.add(name)
        names.append(name)
    if names:  # every named parameter is given: their defaults are not read
        arguments.defaults = []
    arguments.args = arguments.args + [ast.arg(n) for n in names]
    arguments.vararg = None
    entries = ast.Tuple([name_node(n) for n in names], ast.Load())
    tree.body.insert(0, ast.copy_location(ast.Assign([name_node(vararg, True)], entries), tree))
    tree.extras = (vararg, entries)


def _unused_defs_dropped(body: list[ast.stmt]) -> list[ast.stmt]:
    """``body`` without the defs nothing in it reads any more (a closure only
    differentiated, ``grad(bump)(w)``, whose derivative was lifted into a call of its
    own): a nested helper keeps no function inside, so that it is inlined.

    >>> body = ast.parse("def g(s):\\n    return s\\ny = 1").body
    >>> [type(s).__name__ for s in _unused_defs_dropped(body)]
    ['Assign']
    """
    module = ast.Module(body, [])
    read = {
        n.id for n in ast.walk(module) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    return [s for s in body if not (isinstance(s, ast.FunctionDef) and s.name not in read)]
