"""Planted leaks: CAPE party programs with realistic privacy bugs, for the simulation audit.

Every program has the interface of the honest one (:func:`protocols.correlated_noise.cape_site`
or :func:`~protocols.correlated_noise.cape_noise_generator`) and draws its noise through
:func:`protocols.correlated_noise.noise_rng` (the party's randomness), so the audit redraws an
honest party's noise in every trial. Notation of seed 003 §3: site s releases
â_s = f(x_s) + e_s + f_s + g_s, e_s the noise generator's zero-sum share, f_s the aggregator's,
g_s its own (τ_g² = τ²/S); the aggregator (id S) removes f_s and averages.

The leak classes (each in the site ``LEAKY`` = 1 unless said otherwise):

``no_cancel``
    The site adds its share e_s twice. The shares no longer cancel: the aggregate carries
    +μ_s e_s, and the release carries 2e_s, whose variance and correlation with the others'
    is not the plan's. (Nothing is revealed that the declared law would hide, but the releases
    are not the declared mechanism.)
``drop_share``
    The site forgets e_s ("the aggregator noise is enough"): its release has only f_s + g_s
    — the aggregator, which knows f_s, sees f(x_s) + g_s with variance τ²/S instead of τ².
``share_to_aggregator``
    The site also sends its own noise g_s to the aggregator (a debugging message left in):
    with it, the aggregator strips the site's own noise.
``raw``
    The site sends its raw statistic as its release (encoded, no noise at all).
``wrong_variance``
    The site draws g_s with a quarter of the plan's std (a plan computed for a larger ε, or
    a variance passed where a std was expected).
``reused_noise``
    The site draws g_s from a fixed stream, the same in every call: its releases of one
    statistic are correlated across calls (the per-call law is right).

and for the noise generator:

``independent_generator``
    The NG draws every e_s independently, without the zero sum: the aggregate is off by
    Σ_s μ_s e_s, and the releases no longer add up to the aggregate as the plan says.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from protocols.cape_noise_plans import NoisePlan
from protocols.context import PartyContext
from protocols.correlated_noise import (
    AGGREGATOR,
    NOISE_GENERATOR,
    PROTOCOL,
    _grid,
    _n_summands,
    draw_noise,
    noise_rng,
    role_id,
)
from protocols.effects import Input, Recv, Send, SendEach

LEAKY = 1
SITE_LEAKS = ("no_cancel", "drop_share", "share_to_aggregator", "raw", "wrong_variance",
              "reused_noise")


def leaky_site(ctx: PartyContext, statistic: Any, plan: NoisePlan, leak: str,
               carry: dict[str, np.ndarray] | None = None) -> Generator[Any, Any, None]:
    """:func:`~protocols.correlated_noise.cape_site` with ``leak`` planted in site LEAKY.

    ``carry`` is the program's state across calls (``reused_noise`` keeps its g_s there).
    """
    values = np.asarray(statistic, dtype=np.float64).ravel()
    site = ctx.party
    bad = site == LEAKY
    aggregator = role_id(ctx, AGGREGATOR)
    call = ctx.new_call(PROTOCOL)
    yield Input("statistic", values, call)
    std = float(plan.tau_g[site]) * (0.25 if bad and leak == "wrong_variance" else 1.0)
    g = draw_noise(noise_rng(ctx, call), std, len(values), "float", ctx.fixed)
    if bad and leak == "reused_noise" and carry is not None:
        g = carry.setdefault("g", g)  # the first call's noise, again in every later call
    yield Input("site_noise", g, call)
    n_sum = _n_summands(plan)
    noisy = values if bad and leak == "raw" else values + g
    release = ctx.fixed.encode(noisy, n_summands=n_sum, what="release")
    e = yield Recv(role_id(ctx, NOISE_GENERATOR), call, "correlated_noise")
    if not (bad and leak in ("drop_share", "raw")):
        release = ctx.field.add(release, e)
    if bad and leak == "no_cancel":
        release = ctx.field.add(release, e)
    f = yield Recv(aggregator, call, "aggregator_noise")
    if not (bad and leak == "raw"):
        release = ctx.field.add(release, f)
    yield Send(aggregator, release, call, "release")
    if bad and leak == "share_to_aggregator":
        yield Send(aggregator, ctx.fixed.encode(g, n_summands=n_sum), call, "noise_share")


def leaky_generator(ctx: PartyContext, plan: NoisePlan,
                    length: int) -> Generator[Any, Any, None]:
    """The NG with independent shares (``independent_generator``)."""
    call = ctx.new_call(PROTOCOL)
    rng = noise_rng(ctx, call)
    e = np.stack([draw_noise(rng, float(plan.tau_e[s]), length, "float", ctx.fixed)
                  for s in range(plan.n_sites)])
    e = np.rint(e * ctx.fixed.scale) / ctx.fixed.scale
    yield Input("correlated_noise", e, call)
    yield SendEach({s: _grid(ctx.fixed, np.rint(e[s] * ctx.fixed.scale), _n_summands(plan),
                             "noise") for s in range(plan.n_sites)}, call, "correlated_noise")
