"""Ideal functionalities: what a protocol call's declared outputs must equal.

The papers' security definition has two halves. A protocol is t-private when a coalition's view
can be simulated from its inputs *and the outputs* (thesis seed 001, §2.2; Qian et al., seed
004, Def. 1) — and the outputs are those of the *ideal functionality* (SecureSum: the column
sum), not whatever the program chooses to declare. A program that declares ``sum + x_1[0]``, or
the sum with an extra coordinate, would otherwise make its own leak "allowed". So every
registered protocol (:mod:`protocols.registry`) declares a :data:`Functionality`: given every
party's inputs to one call (a :class:`CallInstance`, which only an auditor holding every view
can build), the value each declared output must have, with the tolerance the protocol's
arithmetic implies (zero for exact field arithmetic). :func:`beyond` compares a party's declared
outputs with it and names the first one that differs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from protocols.effects import Call
from protocols.errors import MpcsimError
from protocols.field import PrimeField

Records = tuple[tuple[str, Any], ...]
"""A party's (label, value) records of one call."""


class FunctionalityMismatch(MpcsimError):
    """A call lacks what its declared functionality needs (the program is not the protocol)."""


@dataclass(frozen=True)
class Ideal:
    """The value a declared output must have.

    Attributes
    ----------
    value : ndarray
        The ideal output (field elements, or reals).
    tol : float
        Largest allowed absolute difference per element (0: equal exactly).
    """

    value: np.ndarray
    tol: float = 0.0


@dataclass(frozen=True)
class CallInstance:
    """Every party's inputs to, and declared outputs of, one call (the auditor's side).

    Attributes
    ----------
    call : Call
    field : PrimeField
        The run's field.
    parties : tuple of int
        The data-holding parties of the run.
    inputs : mapping of int to records
        Every party's ``Input`` records of the call.
    outputs : mapping of int to records
        Every party's declared ``Output`` records of the call.
    senders : mapping of (receiver, step) to tuple of int
        Who sent what to whom in the call (e.g. SecAgg's survivors: the senders of
        ``masked_input`` to the aggregator).
    variant : str, optional
        The variant the audit target names.
    """

    call: Call
    field: PrimeField
    parties: tuple[int, ...]
    inputs: Mapping[int, Records] = field(default_factory=dict)
    outputs: Mapping[int, Records] = field(default_factory=dict)
    senders: Mapping[tuple[int, str], tuple[int, ...]] = field(default_factory=dict)
    variant: str | None = None

    def input_of(self, party: int, label: str | None = None) -> np.ndarray:
        """The party's one input to the call (or its input ``label``)."""
        records = [(lab, v) for lab, v in self.inputs.get(party, ())
                   if label is None or lab == label]
        if len(records) != 1:
            what = "inputs" if label is None else f"inputs {label!r}"
            raise FunctionalityMismatch(
                f"party {party} recorded {len(records)} {what} to {self.where}, not one")
        return np.asarray(records[0][1])

    @property
    def contributors(self) -> tuple[int, ...]:
        """The parties that recorded an input to the call, sorted."""
        return tuple(sorted(p for p, recs in self.inputs.items() if recs))

    @property
    def where(self) -> str:
        return self.call.tag("").rstrip(".")


Functionality = Callable[[CallInstance], Mapping[str, Ideal]]
"""``ideal(instance) -> {output label: Ideal}``: what each declared output must be."""


def field_sum(inst: CallInstance, parties: tuple[int, ...] | None = None) -> np.ndarray:
    """Σ of the parties' one input each, in the field (every contributor by default)."""
    who = inst.contributors if parties is None else parties
    if not who:
        raise FunctionalityMismatch(f"no party recorded an input to {inst.where}")
    values = [np.ravel(inst.input_of(p)) for p in who]
    if len({v.size for v in values}) != 1:
        raise FunctionalityMismatch(f"the inputs to {inst.where} have different lengths")
    return inst.field.sum_arrays([inst.field.elements(v) if v.dtype == object else v
                                  for v in values])


def no_outputs(inst: CallInstance) -> Mapping[str, Ideal]:
    """The functionality of a call that declares no output (a dealer's offline material)."""
    return {}


def _is_real(value: np.ndarray) -> bool:
    return np.issubdtype(value.dtype, np.floating)


def beyond(ideal: Mapping[str, Ideal], declared: Records) -> tuple[str, str] | None:
    """The first declared output that is not the ideal one: (label, what differs), or None."""
    for label, value in declared:
        want = ideal.get(label)
        if want is None:
            return label, (f"it is not an output of the functionality (which has "
                           f"{', '.join(repr(k) for k in ideal) or 'no outputs'})")
        got, exp = np.asarray(value), np.asarray(want.value)
        if got.size != exp.size:
            return label, f"it has {got.size} elements, the functionality's has {exp.size}"
        got, exp = np.ravel(got), np.ravel(exp)
        if _is_real(got) or _is_real(exp) or want.tol > 0:
            diff = np.abs(got.astype(np.float64) - exp.astype(np.float64))
            bad = ~(diff <= want.tol)
            if bad.any():
                i = int(np.argmax(bad))
                return label, (f"element {i} is {float(got[i])!r}, the functionality's is "
                               f"{float(exp[i])!r} (tolerance {want.tol:.3g})")
        else:
            same = np.asarray([int(a) == int(b) for a, b in zip(got, exp, strict=True)]
                              if got.dtype == object or exp.dtype == object else got == exp)
            if not same.all():
                i = int(np.argmin(same))
                return label, (f"element {i} is {int(got[i])}, the functionality's is "
                               f"{int(exp[i])}")
    return None
