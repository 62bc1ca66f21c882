"""The ideal-world simulator of the MPC engine's online phase: honest shares of openings.

The engine's security argument (spec ``normed_secure_sum.md`` §2.4; Catrina–Saxena for
TruncPr, Catrina–de Hoogh for BitDec, Beaver for products) is a simulation one: every value
the parties open is either

* a **Beaver difference** (``beaver``: x − a with a fresh uniform a from the dealer) —
  uniform on F_p and independent of everything else (:mod:`protocols.mpc.multiply`);
* a **masked value** (``masked``: v + 2^(K−1) + r with r uniform on [0, 2^(K+κ)), or
  BitDec's 2^(ℓ+κ) + Q − U with U uniform on [0, 2^(ℓ+κ))) — within statistical distance
  |v|/2^(K+κ) ≤ 2^−(κ+1) of the same expression with v = 0, which depends on no secret
  (:mod:`protocols.mpc.truncate`, :mod:`protocols.mpc.bits`);
* an **output** (``output``) — the functionality's declared output.

Given the opened value o, the honest parties' shares of it are uniform subject to summing to
o − Σ_{m∈C} s_m, where s_m is member m's own share: each honest share is the honest party's
share of a secret, re-randomised by the dealer's uniform shares and the parties' input
shares, none of which the coalition holds. Input shares (``00.input.share``) an honest party
sends a member are uniform and independent (P0: they are its fresh masks).

So the simulator, given the coalition's programs, draws o from its law at each opening,
*hears* the members' shares (they are sent to every peer, honest ones included), and sends
honest shares that complete o. Because the members' programs compute their next shares from
the simulated openings, composing these steps gives the joint law of the whole protocol —
which is what a call-by-call simulator fed the real members' messages cannot reproduce.

:class:`OpeningStandIn` is that honest side for one call of one simulated run; a protocol on
the engine supplies the law of each opening (:data:`OpeningLaw`, e.g.
:class:`protocols.normed_secure_sum_simulator.NormedSecureSumSimulator`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from protocols.field import PrimeField
from protocols.field.fast_field import fast_field
from protocols.mpc.dealer import uniform_below
from protocols.mpc.public import constant
from protocols.mpc.session import BEAVER, INPUT, MASKED, OUTPUT
from protocols.simulator import CallView, MessageKey, SimulatorMismatch

OpeningLaw = Callable[[str, str, int, np.random.Generator], np.ndarray | None]
"""``law(kind, label, size, rng)``: ``size`` opened values of an opening, drawn from the law the
simulator declares for it (an element array of the engine's field), or None for an opening
the protocol does not declare — simulated as a one-time pad (uniform), so that a program that
opens more than the protocol (a truncation's carry) shows a non-uniform opened value."""


def parse_step(step: str) -> tuple[str, str]:
    """(kind, label) of an opening's step ``"<n>.<kind>.<label>"``."""
    parts = step.split(".", 2)
    if len(parts) != 3 or not parts[0].isdigit():
        raise SimulatorMismatch(f"step {step!r} is not an opening of the MPC engine")
    return parts[1], parts[2]


def masked_offset(field_: PrimeField, rng: np.random.Generator, size: int, K: int,
                  kappa: int) -> np.ndarray:
    """TruncPr's opened c with the secret set to 0: 2^(K−1) + r, r uniform on [0, 2^(K+κ))."""
    r = uniform_below(field_, rng, size, K + kappa)
    return field_.add(r, constant(field_, 1 << (K - 1)))


def bitdec_opening(field_: PrimeField, rng: np.random.Generator, size: int, ell: int,
                   kappa: int) -> np.ndarray:
    """BitDec's opened C with Q = 0: 2^(ℓ+κ) − U, U uniform on [0, 2^(ℓ+κ))."""
    u = uniform_below(field_, rng, size, ell + kappa)
    return field_.sub(np.broadcast_to(constant(field_, 1 << (ell + kappa)), (size,)), u)


@dataclass
class OpeningStandIn:
    """The honest data holders' side of one engine call in one simulated run.

    Parameters
    ----------
    field : PrimeField
        The engine's field.
    honest : sequence of int
        The honest data holders (they hold shares; others — the dealer — do not open).
    law : OpeningLaw
        The law of each opening.
    rng : Generator
        The simulator's randomness.
    """

    field: PrimeField
    honest: Sequence[int]
    law: OpeningLaw
    rng: np.random.Generator
    _shares: dict[str, dict[int, np.ndarray]] = field(default_factory=dict)

    def reply(
        self, sender: int, step: str, heard: Mapping[MessageKey, np.ndarray],
        sizes: Mapping[int, int],
    ) -> dict[int, np.ndarray]:
        if sender not in self.honest or not sizes:
            return {}
        kind, label = parse_step(step)
        if kind == INPUT:  # fresh masks of the honest party's input sharing
            return {m: self.field.random(self.rng, n) for m, n in sizes.items()}
        if step not in self._shares:
            self._shares[step] = self._split(sender, step, kind, label, heard, sizes)
        share = self._shares[step].get(sender)
        if share is None:
            raise SimulatorMismatch(f"honest party {sender} sends {step!r} but holds no share")
        return dict.fromkeys(sizes, share)

    def _split(self, sender: int, step: str, kind: str, label: str,
               heard: Mapping[MessageKey, np.ndarray], sizes: Mapping[int, int]
               ) -> dict[int, np.ndarray]:
        n = next(iter(sizes.values()))
        opened = self.law(kind, label, n, self.rng)
        if opened is None:  # an opening the protocol does not declare: a one-time pad
            opened = self.field.random(self.rng, n)
        members = sorted({m for (r, m, s) in heard if r == sender and s == step})
        rest = opened
        for m in members:  # what the members' own shares leave for the honest parties
            rest = self.field.sub(rest, np.ravel(heard[(sender, m, step)]))
        honest = list(self.honest)
        out = {}
        for h in honest[:-1]:
            out[h] = self.field.random(self.rng, n)
            rest = self.field.sub(rest, out[h])
        out[honest[-1]] = rest
        return out


def opened_values(
    view: CallView, received: Mapping[tuple[int, int, str, int], np.ndarray]
) -> dict[tuple[int, int, str, int], np.ndarray]:
    """The value of every opening of the call, as the coalition reconstructs it.

    o = Σ_h (share honest h sent) + Σ_{m∈C} (member m's own share), a function of the
    coalition's view (its received messages and what its members sent), keyed as a message
    from the first member to itself in the opening's step — so an audit compares the law of
    each opened value, not only of the uniform-looking shares it is split into.
    """
    field_ = fast_field(view.field)  # exact; Python-int sums for 2^127 − 1, not galois's
    members = set(view.members)
    first = view.members[0]
    out: dict[tuple[int, int, str, int], np.ndarray] = {}
    steps = dict.fromkeys(k[2] for k in received if k[0] == first and k[1] not in members)
    for step in steps:
        kind = step.split(".", 2)[1] if step.count(".") >= 2 else ""
        if kind not in (BEAVER, MASKED, OUTPUT):
            continue
        total = None
        for (r, snd, s, occ), payload in received.items():
            if r == first and s == step and snd not in members and occ == 0:
                total = payload if total is None else field_.add(total, payload)
        for m in view.members:
            own = next((v for (r, snd, s), v in view.sent.items() if snd == m and s == step),
                       None)
            if own is None:  # a member that opens nothing here (the dealer)
                continue
            total = field_.add(total, np.ravel(own))
        if total is not None:
            out[(first, first, step, 0)] = np.asarray(total)
    return out


def uniform_law(field_: PrimeField) -> OpeningLaw:
    """The law of Beaver differences only (any other kind is not declared)."""

    def law(kind: str, label: str, size: int, rng: np.random.Generator) -> np.ndarray | None:
        return field_.random(rng, size) if kind == BEAVER else None

    return law
