"""What an audit's caller hands it: the program's input parameter and the inputs themselves.

An audit runs ``program(ctx, <input>=value)`` for every data holder. The program names its
input as it likes (``x``, ``value``, ``gradient``): :func:`input_name` reads the name from the
program's signature, and a program with several inputs is given a mapping per party
(``[{"value": 1.0, "weight": 0.5}, ...]``), passed by keyword. :func:`check_audit_inputs`
refuses, before anything runs, inputs that would otherwise fail inside a party's program and
end as an abort: NaN or infinity, and — for the methods that re-run the program on field
vectors (statistical, exact, linear) — a vector that is not of elements of the audit's field
(a list, reals, values outside 0..p − 1). Each refusal is an
:class:`~protocols.errors.InputError` naming the argument. Keyword inputs (a mapping per
party) are a program those methods do not apply to: they answer "not applicable" and say so.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from parties.party import Program
from protocols.errors import InputError
from protocols.field import PrimeField

DEFAULT_INPUT = "x"
"""The input name of a program whose signature does not say (``program(ctx, **inputs)``)."""


def input_name(program: Program) -> str:
    """The keyword through which ``program(ctx, ...)`` takes its one input.

    The first parameter after the context, when it can be passed by keyword; ``"x"`` when the
    signature cannot be read or takes ``**inputs``.

    Raises
    ------
    InputError
        If the program needs two or more inputs (they are then given as one mapping per party)
        or takes none.
    """
    try:
        params = list(inspect.signature(program).parameters.values())[1:]
    except (TypeError, ValueError):  # a builtin or a C callable: the documented default
        return DEFAULT_INPUT
    named = [p for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    required = [p.name for p in named if p.default is p.empty]
    if len(required) > 1:
        raise InputError(f"program takes the inputs {', '.join(required)}; give each party's "
                         f"inputs as one mapping, e.g. inputs = [{{{required[0]!r}: ..., "
                         f"{required[1]!r}: ...}}, ...]")
    if required:
        return required[0]
    if named:
        return named[0].name
    if any(p.kind == p.VAR_KEYWORD for p in params):
        return DEFAULT_INPUT
    raise InputError("program takes no input after its context; an audit runs "
                     "program(ctx, x) with each party's input")


def check_audit_inputs(inputs: Any, field: PrimeField, *, field_only: bool) -> None:
    """Refuse inputs no run could take (module docstring).

    Parameters
    ----------
    inputs : sequence
        One input per data holder (a value, or a mapping of keyword inputs).
    field : PrimeField
        The audit's field.
    field_only : bool
        Whether the method re-runs the program on field vectors (statistical, exact, linear).

    Raises
    ------
    InputError
        Naming ``inputs[m]`` (or ``inputs[m][key]``) and what is wrong with it.
    """
    if isinstance(inputs, str | bytes | Mapping) or not isinstance(inputs, Sequence):
        raise InputError(f"inputs = {inputs!r:.60} must be a list with one input per party")
    for m, value in enumerate(inputs):
        if isinstance(value, Mapping):  # keyword inputs: a method on field vectors answers
            for key, item in value.items():  # "not applicable" itself, naming why
                _check_finite(f"inputs[{m}][{key!r}]", item)
            continue
        name = f"inputs[{m}]"
        _check_finite(name, value)
        if field_only:
            _check_field_vector(name, value, field)


def _check_finite(name: str, value: Any) -> None:
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):  # ragged: the program decides what it takes
        return
    if arr.dtype.kind in "fc" and arr.size and not np.isfinite(arr).all():
        bad = arr[~np.isfinite(arr)].ravel()[0]
        raise InputError(f"{name} holds {bad!r}; an audit's inputs must be finite")


def _check_field_vector(name: str, value: Any, field: PrimeField) -> None:
    hint = (f"the statistical, exact and linear methods take flat vectors of elements of "
            f"{field.name}: give prime_field(p).elements([...]), or audit real values with "
            "method = 'simulation'")
    if not isinstance(value, np.ndarray):
        raise InputError(f"{name} is a {type(value).__name__}, not an array of field elements; "
                         f"{hint}")
    if value.ndim != 1 or value.size == 0:
        raise InputError(f"{name} has shape {value.shape}, not a non-empty flat vector; {hint}")
    if value.dtype.kind == "O":
        ok = all(isinstance(v, int | np.integer) and 0 <= int(v) < field.p for v in value)
    elif value.dtype.kind in "ui":
        ok = bool((value >= 0).all() and (value.astype(object) < field.p).all())
    else:
        raise InputError(f"{name} has dtype {value.dtype}, not field elements; {hint}")
    if not ok:
        raise InputError(f"{name} holds a value outside 0..p − 1 = {field.p - 1}; {hint}")
