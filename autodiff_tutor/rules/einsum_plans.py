"""Plans for the ``np.einsum`` calls the two-operand einsum rule does not bind
directly: three or more operands as two-operand einsums in turn
(:func:`einsum_in_pairs`), one operand as the sum, transpose, trace, diagonal or
axis move it is (:func:`einsum_of_one`). Both take ``...`` (numpy's broadcast axes).
The compiler (:mod:`.front.normalize.einsum`) and tracing
(:mod:`autodiff_tutor.tracing.dispatch`) make the same steps from these plans.

>>> einsum_in_pairs("...i,...i,...i->...")
['...i,...i->...i', '...i,...i->...']
>>> einsum_of_one("...ii->...i")
[('diagonal', {'axis1': -2, 'axis2': -1})]
"""

from __future__ import annotations

ELLIPSIS = "@"  # '...' while planning: one token, not a letter


def _tokens(spec: str) -> str:
    """``spec`` without spaces, ``...`` written as one character."""
    return str(spec).replace(" ", "").replace("...", ELLIPSIS)


def _implicit_output(inputs: str) -> str:
    """numpy's output when none is written: the ``...`` axes, then the letters seen
    once, in alphabetical order."""
    once = sorted(c for c in set(inputs) - {",", ELLIPSIS} if inputs.count(c) == 1)
    return (ELLIPSIS if ELLIPSIS in inputs else "") + "".join(once)


def _well_formed(operands: list[str], output: str) -> bool:
    """Letters and at most one ``...`` per operand; ``...`` in the output exactly when
    an operand has it (numpy broadcasts it; dropping it is refused unless it is
    empty, which the plan cannot know)."""
    for part in [*operands, output]:
        if part.count(ELLIPSIS) > 1 or not all(c.isalpha() for c in part.replace(ELLIPSIS, "")):
            return False
    has_ellipsis = any(ELLIPSIS in o for o in operands)
    return (ELLIPSIS in output) == has_ellipsis and len(set(output)) == len(output)


def einsum_in_pairs(subscripts: str) -> list[str] | None:
    """The two-operand einsums that compute an einsum of three or more operands in
    turn (each pair's result keeps the letters, and the ``...`` axes, still needed
    later), or ``None`` when the rule covers no such split (a letter twice in one
    operand, fewer than three operands). Summing a letter as soon as no later operand
    has it is exact.

    >>> einsum_in_pairs("ij,jk,kl->il")
    ['ij,jk->ik', 'ik,kl->il']
    >>> einsum_in_pairs("i,i,i")
    ['i,i->i', 'i,i->']
    >>> einsum_in_pairs("...ij,jk,...k")
    ['...ij,jk->...ik', '...ik,...k->...i']
    """
    spec = _tokens(subscripts)
    inputs, arrow, output = spec.partition("->")
    operands = inputs.split(",")
    if len(operands) < 3 or any(len(set(o)) != len(o) for o in operands):
        return None
    if not arrow:
        output = _implicit_output(inputs)
    if not _well_formed(operands, output):
        return None
    pairs, left = [], operands[0]
    for k, right in enumerate(operands[1:], start=1):
        later = "".join(operands[k + 1 :]) + output
        last = k == len(operands) - 1
        kept = output if last else "".join(c for c in dict.fromkeys(left + right) if c in later)
        pairs.append(f"{left},{right}->{kept}".replace(ELLIPSIS, "..."))
        left = kept
    return pairs


def einsum_of_one(subscripts: str) -> list[tuple[str, dict]] | None:
    """An einsum of one operand as the primitives it is: ``np.sum`` over the letters
    left out, then ``np.transpose`` into the output's order; ``'ii->'`` is
    ``np.trace`` and ``'ii->i'`` ``np.diagonal``. With ``...`` or other repeated
    letters, see :func:`_plan_general`. ``None`` for what numpy refuses, or a letter
    three times.

    >>> einsum_of_one("ij->ji")
    [('transpose', {'axes': (1, 0)})]
    >>> einsum_of_one("ijk->ki")
    [('sum', {'axis': (1,)}), ('transpose', {'axes': (1, 0)})]
    >>> einsum_of_one("ii")
    [('trace', {})]
    """
    spec = _tokens(subscripts)
    letters, arrow, output = spec.partition("->")
    if "," in letters or "." in spec:
        return None
    if not arrow:
        output = _implicit_output(letters)
    if not _well_formed([letters], output) or not set(output) <= set(letters):
        return None  # numpy refuses it
    if ELLIPSIS in letters or len(set(letters)) != len(letters):
        if len(letters) == 2 and ELLIPSIS not in letters and output in ("", letters[0]):
            return [("diagonal" if output else "trace", {})]
        return _plan_general(list(letters), list(output))
    steps: list[tuple[str, dict]] = []
    summed = tuple(i for i, c in enumerate(letters) if c not in output)
    if summed:
        steps.append(("sum", {"axis": summed}))
    kept = [c for c in letters if c in output]
    order = tuple(kept.index(c) for c in output)
    if order != tuple(range(len(order))) or not steps:
        steps.append(("transpose", {"axes": order}))
    return steps


def _axis(tokens: list[str], token: str, occurrence: int = 0) -> int:
    """The axis of ``token`` (its ``occurrence``-th one): counted from the start
    before ``...``, from the end after it (the ``...`` axes are of any number).

    >>> _axis(["i", ELLIPSIS, "j", "k"], "j"), _axis(["i", ELLIPSIS, "j", "k"], "i")
    (-2, 0)
    """
    where = [i for i, t in enumerate(tokens) if t == token][occurrence]
    if ELLIPSIS in tokens and where > tokens.index(ELLIPSIS):
        return where - len(tokens)
    return where


def _plan_general(tokens: list[str], output: list[str]) -> list[tuple[str, dict]] | None:
    """One operand with ``...`` or repeated letters: each letter written twice is a
    ``np.diagonal`` (kept; numpy puts the diagonal last) or a ``np.trace`` (summed),
    then ``np.sum`` over the letters left out, then ``np.moveaxis`` into the output's
    order (the ``...`` axes fill the places the letters leave).

    >>> _plan_general(list("ii" + ELLIPSIS), [ELLIPSIS])
    [('trace', {'axis1': 0, 'axis2': 1})]
    >>> _plan_general([ELLIPSIS, "i", "j"], ["j", ELLIPSIS])
    [('sum', {'axis': (-2,)}), ('moveaxis', {'source': (-1,), 'destination': (0,)})]
    >>> _plan_general([ELLIPSIS, "i", "j"], [ELLIPSIS, "j", "i"])
    [('moveaxis', {'source': (-2, -1), 'destination': (-1, -2)})]
    """
    steps: list[tuple[str, dict]] = []
    for letter in dict.fromkeys(tokens):
        count = tokens.count(letter)
        if count > 2:
            return None
        if count == 2 and letter != ELLIPSIS:
            axes = {"axis1": _axis(tokens, letter), "axis2": _axis(tokens, letter, 1)}
            tokens = [t for t in tokens if t != letter]
            if letter in output:
                steps.append(("diagonal", axes))
                tokens.append(letter)
            else:
                steps.append(("trace", axes))
    summed = tuple(_axis(tokens, t) for t in tokens if t not in output)
    if summed:
        steps.append(("sum", {"axis": summed}))
        tokens = [t for t in tokens if t in output]
    letters = [t for t in tokens if t != ELLIPSIS]  # all moved: the '...' axes fill the rest
    source = tuple(_axis(tokens, t) for t in letters)
    destination = tuple(_axis(output, t) for t in letters)
    if source != destination or not steps:
        steps.append(("moveaxis", {"source": source, "destination": destination}))
    return steps
