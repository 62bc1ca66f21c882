"""Masked evaluation (spec ``normed_secure_sum.md`` §2.6, O2): TruncPr outputs as P − [ρ].

TruncPr (P3, :mod:`protocols.mpc.truncate`) opens c = v + 2^(K−1) + r_lo + 2^m·r_hi, and its
result equals ⌊c/2^m⌋ − 2^(K−1−m) − r_hi exactly: a *public* value P minus the dealer's high
mask ρ = r_hi. :func:`trunc_masked` returns the result in that form (:class:`Masked`: P, and
this party's share of ρ, which is ([r] − [r_lo])·2^−m, local). A product of two such values
is then local (:func:`product`),

    (P_a − ρ_a)(P_b − ρ_b) = P_a·P_b − P_a·[ρ_b] − P_b·[ρ_a] + [ρ_a·ρ_b],

given [ρ_a·ρ_b] from the dealer (a ``hiprod`` item, :mod:`protocols.mpc.dealer`) — the
circuit-dependent preprocessing of masked-evaluation protocols (the dealer knows which
truncations are multiplied together; the plan is public). So a fixed-point multiplication
followed by its truncation costs one round and one opening per value instead of two rounds and
three openings (a Beaver round, then TruncPr).

Privacy: nothing new is opened. The value P − ρ is the TruncPr result itself, still secret: ρ
stays the dealer's, uniform on [0, 2^(K+κ−m)), and its only other use is as the high mask of
the one opening c it was dealt for. The local products open nothing; every later opening
carries a fresh mask of its own. The shares of [ρ_a·ρ_b] are the dealer's uniform shares of a
dealer-known value, like a triple's [ab]. The law of every opened value is therefore the one
:mod:`protocols.mpc.truncate` states (the simulator is unchanged).

Declared cost of :func:`trunc_masked`: that of TruncPr (1 round, 1 opened element and 1
truncation pair per value); :func:`product`: nothing online, 1 ``hiprod`` item per value.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import numpy as np

from protocols.mpc.public import low_bits
from protocols.mpc.session import MASKED, Session
from protocols.mpc.truncate import inverse_power_of_two


@dataclass(frozen=True)
class Masked:
    """A secret held as P − ρ: ``public`` P (elements, known to every party) and this party's
    ``rho`` shares of the dealer's ρ (flat arrays of one length)."""

    public: np.ndarray
    rho: np.ndarray

    @property
    def size(self) -> int:
        return int(np.size(self.rho))

    def shares(self, sess: Session) -> np.ndarray:
        """This party's additive share of P − ρ (the leader adds P)."""
        return sess.add_public(sess.field.neg(self.rho), self.public)

    def part(self, start: int, stop: int) -> Masked:
        """The values ``start:stop``."""
        return Masked(self.public[start:stop], self.rho[start:stop])


def trunc_masked(
    sess: Session, v: np.ndarray, K: int, m: int, label: str
) -> Generator[Any, Any, Masked]:
    """TruncPr of secrets v ∈ [−2^(K−1), 2^(K−1)) by m bits, returned as P − [ρ] (one round).

    The same dealer item, the same opening and the same value (⌊v/2^m⌋ + u, unbiased
    stochastic rounding) as :func:`protocols.mpc.truncate.trunc_pr`.
    """
    field = sess.field
    flat = np.asarray(v).reshape(-1)
    r_lo, r = sess.pool.take("trunc", flat.size, bits=K + sess.kappa, m=m)
    c_share = sess.add_public(field.add(flat, r), sess.const(1 << (K - 1)))
    c = yield from sess.open(c_share, MASKED, label, bound=(1 << (K + sess.kappa)) + (1 << K))
    inv = sess.const(inverse_power_of_two(m, field.p))
    public = field.sub(field.mul(field.sub(c, low_bits(field, c, m)), inv),
                       sess.const(1 << (K - 1 - m)))
    return Masked(public, field.mul(field.sub(r, r_lo), inv))


def product(sess: Session, a: Masked, b: Masked, rho_ab: np.ndarray) -> np.ndarray:
    """Shares of (P_a − ρ_a)(P_b − ρ_b), local, from the dealer's shares ``rho_ab`` of ρ_a·ρ_b."""
    field = sess.field
    cross = field.sub(rho_ab, field.add(field.mul(a.public, b.rho), field.mul(b.public, a.rho)))
    return sess.add_public(cross, field.mul(a.public, b.public))

