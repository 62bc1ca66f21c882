"""NormedSecureSum's ideal functionality, for the audits: the direction S/‖S‖ and each
variant's declared values.

The spec (``spec/`` NormedSecureSum, §1.5) fixes what every party learns: y* = S/√Q at f_out
fractional bits, S = Σ_m round(x_m·2^f). :func:`functionality` gives that output within the
loosest :func:`~protocols.normed_secure_sum.output_tolerance` of the presets, extended by what
a variant declares it reveals (``secure_sum``: S; ``reveal_norm``: Q and the dithered
opening). The protocol itself is :mod:`protocols.normed_secure_sum`.
"""

from __future__ import annotations

import numpy as np

from protocols.errors import InputError
from protocols.functionality import CallInstance, FunctionalityMismatch, Ideal, beyond
from protocols.normed_secure_sum import (
    PRESETS,
    REVEALED_DITHER,
    REVEALED_NORM,
    REVEALED_SUM,
    NssParams,
    encode_inputs,
    output_tolerance,
)

__all__ = ["functionality"]


def functionality(inst: CallInstance) -> dict[str, Ideal]:
    """NormedSecureSum's ideal output: ``direction`` = s/‖s‖ per row, s = Σ_m x_m.

    The parameters are not in the views, so the tolerance is the loosest
    :func:`output_tolerance` over the :data:`PRESETS` whose output grid (f_out fractional
    bits) holds every declared direction — over all presets when none does (the
    ``secure_sum`` variant's exact S/‖S‖, or an output moved off its grid). The zero sum
    gives zeros.
    """
    who = inst.contributors
    values = [np.asarray(inst.input_of(p), dtype=np.float64) for p in who]
    if not values or len({v.shape for v in values}) != 1:
        raise FunctionalityMismatch(f"the inputs to {inst.where} differ in shape or are absent")
    rows = np.sum(values, axis=0).reshape(-1, values[0].shape[-1])
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    direction = np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)
    dim = rows.shape[1]
    declared = [np.asarray(v, dtype=np.float64) for recs in inst.outputs.values()
                for lab, v in recs if lab == "direction"]
    on_grid = [p for p in PRESETS.values() if declared and all(
        np.array_equal(np.rint(y * 2.0 ** p.out_bits), y * 2.0 ** p.out_bits)
        for y in declared)]
    tol = max(output_tolerance(p, len(values), dim, float(np.min(norms)))
              for p in (on_grid or PRESETS.values()))
    ideal = {"direction": Ideal(direction.reshape(values[0].shape), tol)}
    ideal.update(_declared_leakage(inst, values, direction, on_grid))
    return ideal


def _declared_leakage(inst: CallInstance, values: list[np.ndarray], direction: np.ndarray,
                      on_grid: list[NssParams]) -> dict[str, Ideal]:
    """The functionality extended by what a variant declares it reveals (when declared).

    ``secure_sum``: S = Σ_m round(x_m·2^f), exactly. ``reveal_norm``: Q = ‖S‖², exactly, and
    the dithered opening w + r_lo ≈ (s_i/‖s‖)·2^(f_out+g) within the output tolerance plus the
    dither 2^g. The parameters are not in the views: each is judged under the preset whose
    ideal value the declared one matches, else under the first preset (spec §1.5).
    """
    declared: dict[str, np.ndarray] = {}
    for recs in inst.outputs.values():
        for lab, v in recs:
            if lab in (REVEALED_SUM, REVEALED_NORM, REVEALED_DITHER):
                declared.setdefault(lab, np.asarray(v))
    out: dict[str, Ideal] = {}
    presets = list(PRESETS.values())
    for label, got in declared.items():
        options: list[Ideal] = []
        for p in (on_grid or presets) if label == REVEALED_DITHER else presets:
            try:
                rows = [encode_inputs(v, p).astype(object).reshape(-1, v.shape[-1])
                        for v in values]
            except InputError:
                continue
            total = np.sum(rows, axis=0)
            if label == REVEALED_SUM:
                options.append(Ideal(total.astype(np.int64).reshape(values[0].shape), 0.0))
            elif label == REVEALED_NORM:
                options.append(Ideal(np.array([sum(int(v) * int(v) for v in row)
                                               for row in total], dtype=object), 0.0))
            else:
                lam = inst.field.p.bit_length() - 1
                bits = p.out_bits + min(40, lam - p.out_bits - 3)
                norm = float(np.min(np.linalg.norm(np.sum(values, axis=0).reshape(
                    -1, values[0].shape[-1]), axis=1)))
                tol = (output_tolerance(p, len(values), direction.shape[-1], norm)
                       + 2.0 ** -p.out_bits) * 2.0 ** bits
                options.append(Ideal(direction.reshape(values[0].shape) * 2.0 ** bits, tol))
        if options:
            out[label] = next((o for o in options if beyond({label: o}, [(label, got)]) is None),
                              options[0])
    return out
