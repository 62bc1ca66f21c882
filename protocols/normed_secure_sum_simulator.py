"""NormedSecureSum's ideal-world simulator (spec ``normed_secure_sum.md`` §2.4, executable).

:class:`NormedSecureSumSimulator` draws the honest data holders' openings of one call of
:func:`protocols.normed_secure_sum.normed_secure_sum` from the coalition's inputs and the
declared outputs, re-running the coalition's own programs on the simulated openings (the
engine's part is :mod:`protocols.mpc.simulator`); the whole-run audits compare it with the
real views.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from protocols.errors import InputError
from protocols.field.mersenne127 import mpc_field
from protocols.mpc.public import constants, small
from protocols.mpc.session import BEAVER, MASKED, OUTPUT
from protocols.mpc.simulator import (
    OpeningStandIn,
    bitdec_opening,
    masked_offset,
    opened_values,
)
from protocols.normed_secure_sum import (
    PRESETS,
    PROTOCOL,
    REVEALED_DITHER,
    REVEALED_NORM,
    REVEALED_SUM,
    VARIANTS,
    Layout,
    NssParams,
    check_layout,
)
from protocols.simulator import CallView, MessageKey, SimulatorMismatch


@dataclass(frozen=True)
class NormedSecureSumSimulator:
    """NormedSecureSum's ideal-world simulator: the honest data holders' openings, simulated.

    Spec §2.4's argument, made executable (:mod:`protocols.mpc.simulator`): every value the
    ``normed`` variant opens is a Beaver difference (uniform), a masked value whose law is
    within 2^−(κ+1) of a law that depends on no secret — BitDec's C = 2^(ℓ+κ) + Q − U with
    U uniform on [0, 2^(ℓ+κ)) (drawn with Q = 0, distance Q/2^(ℓ+κ) < 2^−κ), TruncPr's
    c = v + 2^(K−1) + r with r uniform on [0, 2^(K+κ)) (drawn with v = 0, distance
    |v|/2^(K+κ) ≤ 2^−(κ+1)) at the K of each truncation (ℓ + 1 for x, 2F + 2 and 2F + 4 in
    the seed, 2F + 4 and 2F + 5 in each Newton step, ℓ/2 + F + 3 for the output; the seed's
    and the Newton steps' products open nothing, being local by masked evaluation, O2, and a
    product by one value per row opens that value's δ once, O1: both still uniform) — or the
    output Y = round(y·2^f_out), read from the declared direction. The honest shares complete
    each drawn value given the members' shares, which the coalition's own programs compute
    from the earlier simulated openings. Over the N masked openings of a call the simulated and
    real views are within N·2^−(κ+1) in statistical distance (N = 4 + 3t + ℓ-independent
    terms, per instance: spec §2.4), which the audit cannot resolve at κ ≥ 20.

    What it assumes: a semi-honest coalition of at most M − 1 data holders, the dealer honest
    (the dealer with any data holder unmasks every opening: :meth:`reveals` says so), and the
    public parameters — ``params``, or inferred as the first preset of :data:`PRESETS` that
    fits the field, M, d and the output grid (presets that differ only in ``input_bits`` give
    the same law up to the masked values' ranges, which no compared element shows).

    The ``reveal_norm`` and ``secure_sum`` variants open more than the direction by
    construction, and declare it as outputs of the call: ``secure_sum`` the encoded sum S
    (:data:`REVEALED_SUM`), ``reveal_norm`` Q = ‖S‖² (:data:`REVEALED_NORM`) and its dithered
    opening w + r_lo (:data:`REVEALED_DITHER`, O4: the low g bits of the dither are opened with
    it). They are simulated against the functionality extended by that declared leakage
    (:func:`functionality` checks the declared values against the inputs): the opening of S, of
    Q and of the dithered direction are drawn as those declared values, every Beaver difference
    as uniform — so an honest variant is ``private`` relative to what it declares
    (:meth:`leakage` names it; the audit reports it as ``details["reveals"]``), and a variant
    that opens anything more (S in ``reveal_norm``, a party's own norm) is a ``leak`` at that
    opening, held to a one-time pad. A variant whose call does not declare its leakage is
    reported by :meth:`reveals` as revealing it ("leak" without sampling).
    """

    variant: str | None = None
    params: NssParams | None = None
    name: str = PROTOCOL
    uniform_on_hull: bool = True

    def determined(self, view: CallView) -> bool:
        """Never: the direction does not determine an honest input."""
        return False

    def simulate(self, view: CallView, rng: np.random.Generator, n: int
                 ) -> dict[MessageKey, np.ndarray]:
        """Not drawn call by call: the audit re-runs the members' programs (``stand_in``)."""
        raise SimulatorMismatch("NormedSecureSum is simulated by re-running the coalition's "
                                "programs (NormedSecureSumSimulator.stand_in)")

    def derived(self, view: CallView, received: Mapping[tuple[int, int, str, int], np.ndarray]
                ) -> dict[tuple[int, int, str, int], np.ndarray]:
        """Every opened value, as the coalition reconstructs it (compared like a message)."""
        return opened_values(view, received)

    def variant_of(self, view: CallView) -> str:
        """The variant named, else the one the call's declared leakage, or else its members'
        opening steps, show."""
        if self.variant in VARIANTS:
            return str(self.variant)
        labels = {lab for recs in view.outputs.values() for lab, _ in recs}
        if REVEALED_NORM in labels:
            return "reveal_norm"
        if REVEALED_SUM in labels:
            return "secure_sum"
        steps = {k[2] for k in view.sent}
        if any(s.endswith(f".{OUTPUT}.sum") for s in steps):
            return "secure_sum"
        if any(s.endswith(f".{OUTPUT}.norm_sq") for s in steps):
            return "reveal_norm"
        return "normed"

    def reveals(self, view: CallView) -> str | None:
        """Why the coalition's view of this call cannot be simulated from the direction."""
        members, sites = set(view.members), set(view.parties)
        if members - sites and members & sites:
            return ("the dealer knows every triple, mask and bit it dealt: with a data "
                    "holder's shares it unmasks every opening, and so the honest inputs")
        variant = self.variant_of(view)
        if variant == "secure_sum" and not self._declares(view, REVEALED_SUM):
            return ("variant secure_sum opens the encoded sum S = Σ_m x_m itself (then "
                    "normalises locally) and does not declare it: it reveals the sum, not only "
                    "its direction")
        if variant == "reveal_norm" and not self._declares(view, REVEALED_NORM,
                                                           REVEALED_DITHER):
            return ("variant reveal_norm opens Q = ‖S‖², the squared norm of the sum, and does "
                    "not declare it: with the direction it reveals the sum S itself")
        return None

    @staticmethod
    def _declares(view: CallView, *labels: str) -> bool:
        return all(all(any(lab == want for lab, _ in view.outputs.get(m, ()))
                       for want in labels) for m in view.members if m in set(view.parties))

    def leakage(self, view: CallView) -> str | None:
        """What the call's variant declares it reveals beyond the direction (None: nothing)."""
        variant = self.variant_of(view)
        if variant == "secure_sum":
            return "S (variant secure_sum: the encoded sum Σ_m round(x_m·2^f))"
        if variant == "reveal_norm":
            return ("‖S‖² (variant reveal_norm: Q of the encoded sum, and the direction's "
                    "dithered opening S_i·round(2^(f_out+g)/√Q) + r_lo, r_lo < 2^g)")
        return None

    def layout_of(self, view: CallView) -> tuple[Layout, np.ndarray]:
        """The call's public layout and its declared output (batch, d)."""
        site = next((m for m in view.members if m in set(view.parties)), None)
        if site is None:
            raise SimulatorMismatch("no data holder in the coalition: nothing is opened to it")
        shape = np.shape(view.input(site))
        dim = shape[-1]
        variant = self.variant_of(view)
        out = np.asarray(view.output("direction"), dtype=np.float64).reshape(-1, dim)
        candidates = [self.params] if self.params is not None else list(PRESETS.values())
        for params in candidates:
            assert params is not None
            scaled = out * float(1 << params.out_bits)
            if self.params is None and variant != "secure_sum" and not np.array_equal(
                    np.rint(scaled), scaled):
                continue
            try:
                layout = check_layout(params, view.field.p, len(view.parties), dim, variant)
            except InputError:
                continue
            if variant == "reveal_norm" and self.params is None:
                g = layout.dither_bits  # the output is the dithered opening's top bits
                top = [int(v) >> g for v in np.ravel(view.output(REVEALED_DITHER))]
                if top != [int(v) for v in np.rint(scaled).ravel()]:
                    continue
            return layout, out
        raise SimulatorMismatch(
            f"no NormedSecureSum parameter set fits p = {view.field.p}, M = "
            f"{len(view.parties)}, d = {dim} and the declared output grid; name the "
            "parameters (NormedSecureSumSimulator(params=...))")

    def stand_in(self, view: CallView, rng: np.random.Generator) -> OpeningStandIn:
        """The honest data holders' side of the call for one simulated run."""
        layout, out = self.layout_of(view)
        field = mpc_field(view.field.p)
        p = layout.params
        ell, F, kappa = layout.ell, p.work_bits, p.kappa
        trunc = {"x": ell + 1, "seed.x2": 2 * F + 2, "seed.u0": 2 * F + 4,
                 "output": layout.output_trunc[0]}
        if layout.variant == "secure_sum":
            direction = small(field, np.asarray(view.output(REVEALED_SUM), dtype=np.int64))
            declared = {"sum": direction.reshape(-1)}
        elif layout.variant == "reveal_norm":
            K = p.out_bits + layout.dither_bits + 2
            declared = {
                "norm_sq": constants(field, np.ravel(view.output(REVEALED_NORM))),
                "direction": constants(field, [int(v) + (1 << (K - 1)) for v in
                                               np.ravel(view.output(REVEALED_DITHER))]),
            }
        else:
            direction = small(field, np.rint(out * float(1 << p.out_bits)).astype(np.int64))
            declared = {"direction": direction.reshape(-1)}

        def law(kind: str, label: str, size: int, g: np.random.Generator
                ) -> np.ndarray | None:
            if kind == BEAVER:
                return field.random(g, size)
            if kind == MASKED and label == "bitdec":
                return bitdec_opening(field, g, size, ell, kappa)
            if kind == MASKED:
                newton = re.fullmatch(r"newton\d+\.(uu_xu|u)", label)
                K = trunc.get(label) if newton is None else (
                    2 * F + 4 if newton.group(1) == "uu_xu" else 2 * F + 5)
                if K is not None:
                    return masked_offset(field, g, size, K, kappa)
            if kind == OUTPUT and label in declared and declared[label].size == size:
                return declared[label]
            return None  # NormedSecureSum opens no such value: held to a one-time pad

        return OpeningStandIn(field, view.honest, law, rng)
