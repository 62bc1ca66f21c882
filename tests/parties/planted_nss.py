"""Planted leaks in NormedSecureSum and its MPC engine, for the simulation audit.

Each plant is the honest ``normed`` pipeline of :mod:`protocols.normed_secure_sum` (same
primitives, same dealer plan, same outputs) with one primitive replaced:

``unmasked_trunc``
    TruncPr opens c = v + 2^(K−1) + r_lo without the high mask 2^m·r_hi: c lies in a window of
    2^m above v, so its high bits *are* v (an opening without its statistical mask). The
    truncated result is still right (c mod 2^m is unchanged), so the outputs do not show it.
    The first TruncPr is x = TruncPr(Q′, ℓ + 1, ℓ − F): the coalition learns ⌊Q′/2^(ℓ−F)⌋,
    the normalised squared norm. (x is then public; the pipeline goes on with it as a public
    value, taking — and not using — the dealer's products of x's high mask, so the dealer
    plan and every later opening are the honest ones.)
``open_carry``
    After each TruncPr, the parties also open v − 2^m·⌊v/2^m⌋_u — the remainder and
    stochastic-rounding carry of the truncation (a truncation that opens its carry), labelled
    ``<label>.carry``: the low m bits of the secret.
``repeated_triples``
    The dealer deals one triple and one square pair per request and repeats it for every item
    (a dealer whose triples repeat): two Beaver differences of one opening share the mask, so
    ε_i − ε_j = x_i − x_j. In the first opening (squares of S) that is S_i − S_j — with one
    honest party, the difference of two coordinates of its input.
``repeated_output_masks``
    The dealer repeats the first truncation pair of the output's TruncPr for every coordinate
    (a dealer that reuses one mask across a request): c_i − c_0 = W_i − W_0 exactly, with
    W = S′·u, so (c_i − c_0)/(c_j − c_0) = (S_i − S_0)/(S_j − S_0) — exact ratios of the
    encoded sum's coordinates, which the rounded direction only approximates. (The last
    request of the plan: no product of high masks refers to it, so the outputs stay right.)
``reused_input_mask``
    A data holder sends the same input-sharing mask to every peer: two colluders receive
    equal shares, which the protocol's fresh masks never are (harmless to one member alone).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

import numpy as np

from protocols.context import PartyContext
from protocols.effects import Call, Input, Output, RecvEach, SendEach
from protocols.field.mersenne127 import mpc_field
from protocols.mpc import dealer as dealer_mod
from protocols.mpc import inv_sqrt as inv_sqrt_mod
from protocols.mpc.coins import call_rng
from protocols.mpc.dealer import Pool, receive_material
from protocols.mpc.inv_sqrt import inv_sqrt
from protocols.mpc.masked import Masked, product, trunc_masked
from protocols.mpc.multiply import multiply_rows, square
from protocols.mpc.normalize import pair_normalizer
from protocols.mpc.public import constants, low_bits, signed, small
from protocols.mpc.session import INPUT, MASKED, Session, concat, share_input
from protocols.mpc.truncate import inverse_power_of_two, trunc_pr
from protocols.normed_secure_sum import (
    PROTOCOL,
    check_layout,
    dealer_plan,
    encode_inputs,
    preset,
)

PARAMS = preset("p61-demo")


def _unmasked_trunc(sess: Session, v: np.ndarray, K: int, m: int, label: str
                    ) -> Generator[Any, Any, np.ndarray]:
    """x as a public value: c opened without r_hi, so ⌊c/2^m⌋ − 2^(K−1−m) *is* x."""
    field = sess.field
    flat = np.asarray(v).reshape(-1)
    r_lo, _r = sess.pool.take("trunc", flat.size, bits=K + sess.kappa, m=m)
    c_share = sess.add_public(field.add(flat, r_lo), sess.const(1 << (K - 1)))  # BUG: no r_hi
    c = yield from sess.open(c_share, MASKED, label, bound=(1 << (K + sess.kappa)) + (1 << K))
    low = low_bits(field, c, m)
    return field.sub(field.mul(field.sub(c, low), sess.const(inverse_power_of_two(m, field.p))),
                     sess.const(1 << (K - 1 - m)))


def _public_x_inv_sqrt(sess: Session, x: np.ndarray, F: int, steps: int
                       ) -> Generator[Any, Any, np.ndarray]:
    """protocols.mpc.inv_sqrt with x public (the unmasked plant's x): the same openings."""
    field = sess.field
    n = x.size
    c0, c1, c2 = inv_sqrt_mod.seed_coefficients(F)
    sess.pool.take("hiprod", n)  # x·x is public here
    x_sq = sess.add_public(field.zeros(n), field.mul(x, x))
    x2 = yield from trunc_masked(sess, x_sq, 2 * F + 2, F, "seed.x2")
    poly = sess.add_public(sess.scale(x2.shares(sess), c2),
                           field.add(field.mul(x, sess.const(c1)), sess.const(c0 << F)))
    u = yield from trunc_masked(sess, poly, 2 * F + 4, F, "seed.u0")
    for step in range(steps):
        (rho_uu,) = sess.pool.take("hiprod", n)
        sess.pool.take("hiprod", n)  # x·u is local: x is public
        both = concat(field, [constants(field, product(sess, u, u, rho_uu)),
                              field.mul(u.shares(sess), x)])
        ab = yield from trunc_masked(sess, both, 2 * F + 4, F, f"newton{step}.uu_xu")
        (rho_ab,) = sess.pool.take("hiprod", n)
        c = constants(field, product(sess, ab.part(0, n), ab.part(n, 2 * n), rho_ab))
        u = yield from trunc_masked(sess, field.sub(sess.scale(u.shares(sess), 3 << F), c),
                                    2 * F + 5, F + 1, f"newton{step}.u")
    return u.shares(sess)


def _carry_trunc(sess: Session, v: np.ndarray, K: int, m: int, label: str
                 ) -> Generator[Any, Any, Masked]:
    field = sess.field
    result = yield from trunc_masked(sess, v, K, m, label)
    rest = field.sub(np.asarray(v).reshape(-1), field.mul(result.shares(sess), sess.const(1 << m)))
    yield from sess.open(rest, MASKED, f"{label}.carry")  # BUG: opens the carry and low bits
    return result


def _reused_share(ctx: PartyContext, field: Any, call: Any, values: np.ndarray
                  ) -> Generator[Any, Any, np.ndarray]:
    peers = ctx.peers
    one = field.random(call_rng(ctx, call), values.shape)
    masks = np.stack([one] * len(peers))  # BUG: one mask for every peer
    own = field.sub(values, field.sum(masks, axis=0))
    step = f"00.{INPUT}.share"
    yield SendEach({p: masks[i] for i, p in enumerate(peers)}, call, step)
    received = yield RecvEach(peers, call, step)
    return field.sum(np.stack([own, *(received[p] for p in peers)]), axis=0)


def planted_nss(leak: str | None, params: Any = PARAMS):
    """The ``normed`` NormedSecureSum party program with the plant ``leak`` (None: honest)."""
    trunc = {"unmasked_trunc": _unmasked_trunc, "open_carry": _carry_trunc}.get(leak,
                                                                             trunc_masked)
    share = _reused_share if leak == "reused_input_mask" else share_input

    def program(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
        rows = np.asarray(x, dtype=np.float64).reshape(1, -1)
        layout = check_layout(params, ctx.field.p, ctx.n_parties, rows.shape[1], "normed")
        field = mpc_field(ctx.field.p)
        call = ctx.new_call(PROTOCOL)
        yield Input("x", np.asarray(x, dtype=np.float64), call)
        s = yield from share(ctx, field, call, small(field, encode_inputs(rows, params)))
        plan = dealer_plan(layout, 1)
        material = yield from receive_material(ctx, 0)
        sess = Session(ctx, field, call, Pool(field, plan, material), params.kappa)
        ell, F = layout.ell, params.work_bits
        sq = yield from square(sess, s, "norm_sq")
        q = field.sum(np.moveaxis(sq, -1, 0), axis=0)
        v, v2, zeta = yield from pair_normalizer(sess, q, ell)
        s_scaled, q_v2 = yield from multiply_rows(sess, s, v, "scale", pairs=(q, v2))
        q_scaled = field.add(q_v2, sess.scale(zeta, 3 << (ell - 2)))
        xs = yield from trunc(sess, q_scaled, ell + 1, ell - F, "x")
        if leak == "unmasked_trunc":
            u = yield from _public_x_inv_sqrt(sess, xs, F, params.newton_steps)
        else:
            u = (yield from inv_sqrt(sess, xs, F, params.newton_steps)).shares(sess)
        w, _ = yield from multiply_rows(sess, s_scaled, u, "output")
        K, m = layout.output_trunc
        y_sh = yield from trunc_pr(sess, w, K, m, "output")
        y = yield from sess.open(y_sh, "output", "direction", bound=1 << (params.out_bits + 1))
        out = (signed(field, y).astype(np.float64) / float(1 << params.out_bits)).reshape(-1)
        yield Output("direction", out, call)
        return out

    return program


def _repeated_values(field: Any, rng: np.random.Generator, plan: Sequence[Any]) -> np.ndarray:
    """The dealer's material with one triple and one square pair per request, repeated."""
    values = dealer_mod.material_values(field, rng, plan)
    offset = 0
    for r in plan:
        n = r.count
        if r.kind == "triple":
            a, b = field.random(rng, 1), field.random(rng, 1)
            block = [np.repeat(a, n), np.repeat(b, n), np.repeat(field.mul(a, b), n)]
        elif r.kind == "square":
            a = field.random(rng, 1)
            block = [np.repeat(a, n), np.repeat(field.mul(a, a), n)]
        else:
            block = []
        if block:
            values[offset : offset + r.elements] = np.concatenate(block)
        offset += r.elements
    return values


def _repeated_output_masks(field: Any, rng: np.random.Generator, plan: Sequence[Any]
                           ) -> np.ndarray:
    """The dealer's material with the output TruncPr's pair (the last request) repeated."""
    values = dealer_mod.material_values(field, rng, plan)
    last = plan[-1]
    n, start = last.count, len(values) - last.elements
    for component in range(2):  # r_lo, then r_lo + 2^m·r_hi
        block = start + component * n
        values[block : block + n] = np.repeat(values[block : block + 1], n)
    return values


def planted_dealer(leak: str | None, params: Any = PARAMS):
    """The dealer's program; with ``repeated_triples`` its triples and square pairs repeat."""

    def program(ctx: PartyContext, calls: Sequence[tuple[int, int]]
                ) -> Generator[Any, Any, None]:
        field = mpc_field(ctx.field.p)
        with ctx.in_phase(dealer_mod.OFFLINE):
            for j, (batch, dim) in enumerate(calls):
                plan = dealer_plan(check_layout(params, ctx.field.p, ctx.n_parties, dim,
                                                "normed"), batch)
                call = Call(dealer_mod.PROTOCOL, j)
                rng = call_rng(ctx, call)
                if leak == "repeated_triples":
                    values = _repeated_values(field, rng, plan)
                elif leak == "repeated_output_masks":
                    values = _repeated_output_masks(field, rng, plan)
                else:
                    values = dealer_mod.material_values(field, rng, plan)
                masks = field.random(rng, (ctx.n_parties - 1, len(values)))
                shares = [*masks, field.sub(values, field.sum(masks, axis=0))]
                yield SendEach(dict(zip(ctx.parties, shares, strict=True)), call,
                               dealer_mod.STEP)

    return program


LEAKS = ("unmasked_trunc", "open_carry", "repeated_triples", "repeated_output_masks",
         "reused_input_mask")


def nss_parties(leak: str | None, inputs: Sequence[np.ndarray], params: Any = PARAMS):
    """The data holders and the dealer of one planted (or honest) NormedSecureSum call."""
    from parties.party import Party, site_parties
    from protocols.mpc.dealer import ROLE

    sites = site_parties(planted_nss(leak, params), [{"x": x} for x in inputs])
    dim = int(np.size(inputs[0]))
    return [*sites, Party(len(sites), planted_dealer(leak, params), {"calls": [(1, dim)]},
                          role=ROLE)]

