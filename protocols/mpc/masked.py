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

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from protocols.field import PrimeField
from protocols.mpc.public import constants, to_ints
from protocols.mpc.session import MASKED, Session
from protocols.mpc.truncate import inverse_power_of_two

Residues = list[int]
"""Values mod p as Python integers: the form of a masked value's parts and of local products.
A masked value is one scalar per instance (a batch of k instances: k of them), so Python's
integers cost less here than a call of the vectorised field per operation."""


def residues(field: PrimeField, a: np.ndarray) -> Residues:
    """The canonical values of the element array ``a`` (flat) as Python integers."""
    return [int(v) for v in to_ints(field, np.asarray(a)).ravel().tolist()]


@dataclass(frozen=True)
class Masked:
    """A secret held as P − ρ: ``public`` P (known to every party) and this party's ``rho``
    shares of the dealer's ρ, both as residues mod p of one length."""

    public: tuple[int, ...]
    rho: tuple[int, ...]

    @property
    def size(self) -> int:
        return len(self.rho)

    def share_ints(self, sess: Session) -> Residues:
        """This party's additive share of P − ρ as residues (the leader adds P)."""
        p = sess.field.p
        if sess.leader:
            return [(a - r) % p for a, r in zip(self.public, self.rho, strict=True)]
        return [(-r) % p for r in self.rho]

    def shares(self, sess: Session) -> np.ndarray:
        """This party's additive share of P − ρ as field elements."""
        return constants(sess.field, self.share_ints(sess))

    def part(self, start: int, stop: int) -> Masked:
        """The values ``start:stop``."""
        return Masked(self.public[start:stop], self.rho[start:stop])


def trunc_masked(
    sess: Session, v: np.ndarray | Sequence[int], K: int, m: int, label: str
) -> Generator[Any, Any, Masked]:
    """TruncPr of secrets v ∈ [−2^(K−1), 2^(K−1)) by m bits, returned as P − [ρ] (one round).

    ``v``: this party's shares, as field elements or as residues. The same dealer item, the
    same opening and the same value (⌊v/2^m⌋ + u, unbiased stochastic rounding) as
    :func:`protocols.mpc.truncate.trunc_pr`.
    """
    field = sess.field
    p = field.p
    n = len(v) if isinstance(v, list | tuple) else int(np.size(v))
    r_lo, r = sess.pool.take("trunc", n, bits=K + sess.kappa, m=m)
    if isinstance(v, list | tuple):
        shift = (1 << (K - 1)) if sess.leader else 0
        c_share = constants(field, [(a + b + shift) % p
                                    for a, b in zip(v, residues(field, r), strict=True)])
    else:
        c_share = sess.add_public(field.add(np.asarray(v).reshape(-1), r),
                                  sess.const(1 << (K - 1)))
    c = yield from sess.open(c_share, MASKED, label, bound=(1 << (K + sess.kappa)) + (1 << K))
    inv, offset = inverse_power_of_two(m, p), 1 << (K - 1 - m)
    public = tuple(((a >> m) - offset) % p for a in residues(field, c))
    rho = tuple(((b - a) * inv) % p
                for a, b in zip(residues(field, r_lo), residues(field, r), strict=True))
    return Masked(public, rho)


def product(sess: Session, a: Masked, b: Masked, rho_ab: np.ndarray) -> Residues:
    """Shares of (P_a − ρ_a)(P_b − ρ_b) as residues, local, from the dealer's shares
    ``rho_ab`` of ρ_a·ρ_b."""
    p = sess.field.p
    out = [(ab - pa * rb - pb * ra) % p for pa, ra, pb, rb, ab in zip(
        a.public, a.rho, b.public, b.rho, residues(sess.field, rho_ab), strict=True)]
    if sess.leader:
        out = [(o + pa * pb) % p for o, pa, pb in zip(out, a.public, b.public, strict=True)]
    return out
