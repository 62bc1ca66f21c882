"""Inverse square root 1/√x for x ∈ [1/4, 1) in fixed point: quadratic seed + Newton.

Spec ``normed_secure_sum.md`` §2.3 (c4), (c5), §4.2, with optimisation O2 of §2.6 (masked
evaluation, :mod:`protocols.mpc.masked`). x is a TruncPr output at scale 2^F (F fractional bits
of working precision), held as P_x − [ρ_x]. The seed is the minimax quadratic fit of 1/√x on
[1/4, 1] in relative error, (c0, c1, c2) = (2.6708353888, −3.2853566192, 1.6385678675) (max
relative error 2.41·10^−2), each encoded as round(c·2^F):

    [x₂] = TruncPr(x·x, 2F + 2, F)                       (x·x local: O2)
    [u₀] = TruncPr(ĉ0·2^F + ĉ1·[x] + ĉ2·[x₂], 2F + 4, F)            (2 rounds)

and each Newton step u ← u(3 − x·u²)/2 takes 2 rounds:

    [a'], [b'] = TruncPr(u·u, x·u; 2F + 4, F)        (products local: O2; one round)
    [c] = a'·b'                                      (local: O2; c ≈ x·u³ at 2^(2F))
    [u] = TruncPr(3·2^F·[u] − [c], 2F + 5, F + 1)    (one round)

Every product multiplies two TruncPr outputs, so it is local given the dealer's product of
their high masks (a ``hiprod`` item); the values, and so the error analysis, are those of the
baseline's Beaver products (spec: "Newton becomes 2 rounds and 3 openings per iteration; the
quadratic seed becomes 2 rounds"). The relative error after a step is
e′ = −(3/2)e² − (1/2)e³, so the iteration corrects itself and rounding noise does not build up
(the reason to prefer Newton on 1/√x over Goldschmidt). Max relative error in exact
arithmetic: 2.4e-2, 8.7e-4, 1.15e-6, 1.97e-12 after t = 0..3.

Simulation: only TruncPr values are opened, at the stated K (2F + 2, 2F + 4, 2F + 4, 2F + 5):
2 + 3t masked values per instance, each within 2^−(κ+1) (:mod:`protocols.mpc.truncate`).

Declared cost (:func:`cost`) per instance: 2 + 2t rounds; 2 + 3t opened elements; dealer:
2 + 3t truncation pairs and 1 + 3t ``hiprod`` items (:func:`plan`).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from protocols.mpc.dealer import Request
from protocols.mpc.masked import Masked, product, trunc_masked
from protocols.mpc.session import Session

SEED = (2.6708353888, -3.2853566192, 1.6385678675)
"""Minimax quadratic fit of 1/√x on [1/4, 1] in relative error (spec §2.3)."""


def cost(newton_steps: int) -> dict[str, int]:
    """Rounds, opened elements and dealer items of one inverse square root."""
    t = newton_steps
    return {"rounds": 2 + 2 * t, "opened": 2 + 3 * t, "trunc": 2 + 3 * t, "hiprod": 1 + 3 * t}


def plan(start: int, x_ref: int, batch: int, work_bits: int, kappa: int, steps: int
         ) -> list[Request]:
    """The dealer requests of one inverse square root on ``batch`` values, in order of use.

    ``start`` is the plan index the first of them will have and ``x_ref`` the index of the
    ``trunc`` request x came from (its high masks are multiplied with u's).
    """
    b, F = batch, work_bits
    out = [Request("hiprod", b, refs=(x_ref, 0, x_ref, 0)),
           Request("trunc", b, bits=2 * F + 2 + kappa, m=F),
           Request("trunc", b, bits=2 * F + 4 + kappa, m=F)]
    u_ref = start + 2
    for _ in range(steps):
        ab_ref = start + len(out) + 2
        out += [Request("hiprod", b, refs=(u_ref, 0, u_ref, 0)),
                Request("hiprod", b, refs=(x_ref, 0, u_ref, 0)),
                Request("trunc", 2 * b, bits=2 * F + 4 + kappa, m=F),
                Request("hiprod", b, refs=(ab_ref, 0, ab_ref, b)),
                Request("trunc", b, bits=2 * F + 5 + kappa, m=F + 1)]
        u_ref = start + len(out) - 1
    return out


def seed_coefficients(work_bits: int) -> tuple[int, int, int]:
    """round(c_i·2^F) for the quadratic seed."""
    return tuple(round(c * (1 << work_bits)) for c in SEED)  # type: ignore[return-value]


def inv_sqrt_seed(sess: Session, x: Masked, work_bits: int) -> Generator[Any, Any, Masked]:
    """u₀ ≈ 2^F/√(x/2^F) from x (scale 2^F, x/2^F ∈ [1/4, 1)), both as TruncPr outputs."""
    p, F = sess.field.p, work_bits
    c0, c1, c2 = seed_coefficients(F)
    (rho_xx,) = sess.pool.take("hiprod", x.size)
    x2 = yield from trunc_masked(sess, product(sess, x, x, rho_xx), 2 * F + 2, F, "seed.x2")
    const = (c0 << F) if sess.leader else 0
    poly = [(c1 * a + c2 * b + const) % p
            for a, b in zip(x.share_ints(sess), x2.share_ints(sess), strict=True)]
    return (yield from trunc_masked(sess, poly, 2 * F + 4, F, "seed.u0"))


def newton(sess: Session, x: Masked, u: Masked, work_bits: int, steps: int
           ) -> Generator[Any, Any, Masked]:
    """``steps`` Newton iterations u ← u(3 − x·u²)/2 at scale 2^F (TruncPr outputs)."""
    p, F = sess.field.p, work_bits
    n = u.size
    for step in range(steps):
        (rho_uu,) = sess.pool.take("hiprod", n)
        (rho_xu,) = sess.pool.take("hiprod", n)
        both = product(sess, u, u, rho_uu) + product(sess, x, u, rho_xu)
        ab = yield from trunc_masked(sess, both, 2 * F + 4, F, f"newton{step}.uu_xu")
        (rho_ab,) = sess.pool.take("hiprod", n)
        c = product(sess, ab.part(0, n), ab.part(n, 2 * n), rho_ab)
        update = [((3 << F) * a - b) % p for a, b in zip(u.share_ints(sess), c, strict=True)]
        u = yield from trunc_masked(sess, update, 2 * F + 5, F + 1, f"newton{step}.u")
    return u


def inv_sqrt(sess: Session, x: Masked, work_bits: int, steps: int
             ) -> Generator[Any, Any, Masked]:
    """1/√x at scale 2^F for x ∈ [1/4, 1) at scale 2^F (1-D batch; TruncPr outputs, O2)."""
    u = yield from inv_sqrt_seed(sess, x, work_bits)
    return (yield from newton(sess, x, u, work_bits, steps))
