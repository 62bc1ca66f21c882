"""Fixed point checked at the audit's door: no verdict on values the encoding destroyed.

A real-valued program encodes its inputs with :class:`~protocols.field.FixedPoint`
(``round(x·2^f)``). At too few fractional bits a value can vanish — a weight of 0.5 at
``frac_bits = 0`` encodes to 0 — and the run then computes on garbage (a weighted average of
0/0 = NaN) while its messages stay perfectly private: an audit would say ``private`` about a
computation that did not happen. So before auditing a program on real inputs,
:func:`sim.privacy.audit` checks

* :func:`check_representable`: every nonzero real input survives the encoding (it does not
  round to 0 at ``frac_bits``); and
* :func:`check_defined_outputs`: one run on the audit's inputs returns finite outputs at every
  party (no NaN, no infinity), and no party refuses its input (an
  :class:`~protocols.errors.InputError` inside the program: a list where field elements
  belong).

Either failure is an :class:`~protocols.errors.InputError` naming the input (or the party),
the value and ``frac_bits`` — never a verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from parties.audit import input_name
from parties.party import Program, site_parties
from protocols.errors import InputError, PartyInputError, ProtocolAbort
from sim.network import Network
from sim.simulation import Simulation


def check_representable(inputs: Sequence[Any], frac_bits: int) -> None:
    """Refuse a nonzero real input that encodes to 0 with ``frac_bits`` fractional bits.

    Raises
    ------
    InputError
        Naming ``inputs[m]`` (or ``inputs[m][key]``), the value and ``frac_bits``.
    """
    scale = float(2 ** frac_bits)
    for m, value in enumerate(inputs):
        items = (value.items() if isinstance(value, Mapping) else [(None, value)])
        for key, item in items:
            try:
                arr = np.asarray(item)
            except (TypeError, ValueError):
                continue
            if arr.dtype.kind != "f" or not arr.size:
                continue
            flat = arr.ravel()
            lost = (flat != 0) & (np.rint(flat * scale) == 0)
            if lost.any():
                name = f"inputs[{m}]" + ("" if key is None else f"[{key!r}]")
                bad = float(flat[lost][0])
                raise InputError(
                    f"{name} holds {bad!r}, which fixed point with frac_bits = {frac_bits} "
                    f"encodes to 0 (resolution 2^-{frac_bits}); the program would compute on "
                    "garbage — raise frac_bits (the default is 24) or rescale the input")


def check_defined_outputs(runner: Any, program: Program, inputs: Sequence[Any]) -> None:
    """Run ``program`` once on ``inputs`` and refuse an output that is NaN or infinite.

    ``runner`` is the audit's :class:`sim.privacy.SimPyRunner` (its field, ``frac_bits``,
    seed and network). A run that aborts is left to the audit, which reports aborts.

    Raises
    ------
    InputError
        Naming the party and the value.
    """
    name = "" if all(isinstance(v, Mapping) for v in inputs) else input_name(program)
    parties = site_parties(program, [dict(v) if not name else {name: v} for v in inputs])
    network = runner.network or Network.build(len(parties))
    simulation = Simulation(network, prime=runner.field.p, frac_bits=runner.frac_bits,
                            seed=runner.seed, sealing=False)
    try:
        outputs = simulation.run(parties).outputs
    except PartyInputError as refused:  # the program refuses its input: the caller's mistake
        raise InputError(f"inputs[{refused.party}] is refused by the program: "
                         f"{refused.reason}") from refused
    except ProtocolAbort:  # any other abort is an observation the audit reports
        return
    for party in sorted(outputs):
        bad = _first_undefined(outputs[party])
        if bad is not None:
            raise InputError(
                f"party {party}'s output on the audit's inputs holds {bad!r} (frac_bits = "
                f"{runner.frac_bits}); an audit of an undefined result is no verdict — check "
                "the inputs (a weight that rounded to 0?) or raise frac_bits")


def _first_undefined(value: Any, depth: int = 0) -> float | None:
    """The first NaN or infinity in an output (arrays, numbers, tuples, lists, dicts)."""
    if depth > 3:
        return None
    if isinstance(value, Mapping):
        value = list(value.values())
    if isinstance(value, tuple | list) and not all(
            isinstance(v, int | float | np.number) for v in value):
        for item in value:
            found = _first_undefined(item, depth + 1)
            if found is not None:
                return found
        return None
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        return None
    if arr.dtype.kind in "fc" and arr.size and not np.isfinite(arr).all():
        return complex(arr[~np.isfinite(arr)].ravel()[0]).real
    return None
