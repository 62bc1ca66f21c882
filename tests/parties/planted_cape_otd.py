"""Planted leaks in capeAGN (seed 003, Algorithm 2), specific to its two CAPE stages.

Each program keeps the interface of the honest one in :mod:`algorithms.cape.otd` and draws its
noise through :func:`protocols.correlated_noise.noise_rng` (the party's randomness), so that an
audit redraws an honest party's noise in every trial. Site ``LEAKY`` = 1 carries the site leak;
the aggregator is party S, the noise generator S + 1.

``raw_moment``
    In stage 2 the site also sends its raw projected third moment M_3s(W, W, W) to the
    aggregator (a debugging message left in, ``"raw"``), which reads it: the aggregator learns
    site 1's statistic without any noise (:func:`leaky_aggregator` receives it).
``no_cancel``
    In stage 2 the noise generator draws every site's share e_s independently, without the
    zero sum (the stage-1 construction is correct): the shares no longer cancel, so the
    aggregate carries Σ_s μ_s e_s and the releases are not the declared mechanism.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from algorithms.cape.moments import second_moment, third_moment
from algorithms.cape.otd import (
    WHITENING,
    TpmSettings,
    decompose,
    whiten,
)
from algorithms.cape.symmetric import (
    matrix_size,
    multilinear,
    pack_matrix,
    pack_tensor,
    projected_noise_cov,
    tensor_size,
    unpack_matrix,
    unpack_tensor,
)
from protocols.context import PartyContext
from protocols.correlated_noise import (
    AGGREGATOR,
    NOISE_GENERATOR,
    PROTOCOL,
    SITE_NOISE_COV,
    NoisePlan,
    _grid,
    _n_summands,
    cape_aggregator,
    cape_noise_generator,
    cape_site,
    combine,
    draw_noise,
    noise_rng,
    role_id,
)
from protocols.effects import Input, Output, Recv, RecvEach, Send, SendEach

LEAKY = 1


def leaky_site(ctx: PartyContext, data: Any, model: str, k: int,
               plans: tuple[NoisePlan, NoisePlan], sigma2: float = 0.0,
               noise: str = "float") -> Generator[Any, Any, None]:
    """:func:`algorithms.cape.otd.cape_agn_site`; site LEAKY also sends its raw stage-2
    statistic to the aggregator (``raw_moment``)."""
    D = data.shape[1]
    with ctx.in_phase("stage1"):
        yield from cape_site(ctx, pack_matrix(second_moment(model, data, sigma2)), plans[0],
                             noise=noise, label="M2")
    call = ctx.new_call(WHITENING)
    encoded = np.asarray((yield Recv(role_id(ctx, AGGREGATOR), call, "whitening")))
    yield Output("whitening", encoded, call)
    W = ctx.fixed.decode(encoded)
    values = pack_tensor(third_moment(model, data, W, sigma2))
    if ctx.party != LEAKY:
        with ctx.in_phase("stage2"):
            yield from cape_site(
                ctx, values, plans[1], noise=noise, noise_length=tensor_size(D),
                noise_map=lambda b: pack_tensor(multilinear(unpack_tensor(b, D), W)),
                label="M3(W,W,W)", noise_cov=projected_noise_cov(W))
        return None
    # cape_site's steps, with the raw statistic sent along
    aggregator = role_id(ctx, AGGREGATOR)
    call = ctx.new_call(PROTOCOL)
    yield Input("M3(W,W,W)", values, call)
    g = draw_noise(noise_rng(ctx, call), float(plans[1].tau_g[ctx.party]), tensor_size(D),
                   noise, ctx.fixed)
    g = pack_tensor(multilinear(unpack_tensor(g, D), W))
    yield Input("site_noise", g, call)
    yield Input(SITE_NOISE_COV, projected_noise_cov(W), call)
    n_sum = _n_summands(plans[1])
    release = ctx.fixed.encode(values + g, n_summands=n_sum)
    e = yield Recv(role_id(ctx, NOISE_GENERATOR), call, "correlated_noise")
    f = yield Recv(aggregator, call, "aggregator_noise")
    yield Send(aggregator, ctx.field.add(ctx.field.add(release, e), f), call, "release")
    yield Send(aggregator, ctx.fixed.encode(values, n_summands=n_sum), call, "raw")  # BUG
    return None


def leaky_aggregator(ctx: PartyContext, model: str, dim: int, k: int,
                     plans: tuple[NoisePlan, NoisePlan], noise: str = "float",
                     tpm: TpmSettings | None = None) -> Generator[Any, Any, Any]:
    """:func:`algorithms.cape.otd.cape_agn_aggregator`, reading site LEAKY's ``raw`` message
    in stage 2 (the aggregator's side of ``raw_moment``)."""
    packed = yield from cape_aggregator(ctx, plans[0], matrix_size(dim), noise=noise)
    M2 = unpack_matrix(packed, dim)
    W, U, s = whiten(M2, k)
    call = ctx.new_call(WHITENING)
    encoded = ctx.fixed.encode(W)
    yield SendEach(dict.fromkeys(range(plans[0].n_sites), encoded), call, "whitening")
    yield Output("whitening", encoded, call)
    plan = plans[1]
    call = ctx.new_call(PROTOCOL)
    yield Input(SITE_NOISE_COV, projected_noise_cov(ctx.fixed.decode(encoded)), call)
    sites = tuple(range(plan.n_sites))
    n_sum = _n_summands(plan)
    rng = noise_rng(ctx, call)
    length = tensor_size(k)
    f = np.stack([draw_noise(rng, float(plan.tau_f[t]), length, noise, ctx.fixed)
                  for t in sites])
    f_field = {t: ctx.fixed.encode(f[t], n_summands=n_sum) for t in sites}
    yield Input("aggregator_noise", np.stack([ctx.fixed.decode(f_field[t]) for t in sites]),
                call)
    yield SendEach(f_field, call, "aggregator_noise")
    releases = yield RecvEach(sites, call, "release")
    yield Recv(LEAKY, call, "raw")
    own = [ctx.field.sub(releases[t], f_field[t]) for t in sites]
    aggregate = combine(ctx.fixed, own, plan.weights)
    yield Output("aggregate", aggregate, call)
    result = decompose(M2, unpack_tensor(aggregate, k), U, s, k, model, ctx.rng,
                       tpm or TpmSettings())
    yield Output("weights", result.weights)
    yield Output("means", result.means)
    return result


def no_cancel_generator(ctx: PartyContext, dim: int, k: int,
                        plans: tuple[NoisePlan, NoisePlan],
                        noise: str = "float") -> Generator[Any, Any, None]:
    """:func:`algorithms.cape.otd.cape_agn_noise_generator` whose stage-2 shares are drawn
    independently (``no_cancel``)."""
    yield from cape_noise_generator(ctx, plans[0], matrix_size(dim), noise=noise)
    ctx.new_call(WHITENING)
    plan = plans[1]
    call = ctx.new_call(PROTOCOL)
    rng = noise_rng(ctx, call)
    std = plan.generator_std if plan.generator_std is not None else np.zeros(plan.n_sites)
    e = np.stack([np.rint(draw_noise(rng, float(sd), tensor_size(k), noise, ctx.fixed)
                          * ctx.fixed.scale) / ctx.fixed.scale for sd in std])  # BUG: no Σ = 0
    yield Input("correlated_noise", e, call)
    n_sum = _n_summands(plan)
    yield SendEach({t: _grid(ctx.fixed, np.rint(e[t] * ctx.fixed.scale), n_sum, "noise")
                    for t in range(plan.n_sites)}, call, "correlated_noise")
