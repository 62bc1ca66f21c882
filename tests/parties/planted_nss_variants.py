"""Planted leaks in NormedSecureSum's revealing variants, for the simulation audit.

``reveal_norm`` declares ‖S‖² (and its dithered opening) and ``secure_sum`` declares S
(:mod:`protocols.normed_secure_sum`); the audit simulates them against the functionality
extended by that declared leakage. Each plant below is the honest variant, declaring the same
leakage, with one opening more (or one declaration less):

``opens_sum``
    ``reveal_norm`` that also opens S (an ``output`` opening labelled ``sum``): the sum itself,
    more than ‖S‖² — with one honest party its input.
``own_norm``
    ``reveal_norm`` in which every data holder also opens its own ‖X_m‖² (each party sends its
    encoded squared norm to every peer as an ``output`` opening ``own_norm_sq``): a per-party
    norm, which no function of ‖S‖² and the direction gives.
``own_norm_sum``
    The same per-party opening in the ``secure_sum`` variant (S declared, ‖X_m‖² not).
``undeclared``
    ``reveal_norm`` that opens ‖S‖² but drops its declarations (no ``norm_sq`` output): the
    variant then reveals what it does not declare.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

import numpy as np

from protocols.context import PartyContext
from protocols.effects import Output, RecvEach, SendEach
from protocols.field.mersenne127 import mpc_field
from protocols.mpc.public import constants, small
from protocols.mpc.session import INPUT, OUTPUT
from protocols.normed_secure_sum import (
    REVEALED_DITHER,
    REVEALED_NORM,
    encode_inputs,
    normed_secure_sum,
)

LEAKS = ("opens_sum", "own_norm", "own_norm_sum", "undeclared")
VARIANT_OF = {"opens_sum": "reveal_norm", "own_norm": "reveal_norm",
              "own_norm_sum": "secure_sum", "undeclared": "reveal_norm"}


def _planted(program: Generator[Any, Any, Any], extra: Any, drop: Sequence[str] = ()
             ) -> Generator[Any, Any, Any]:
    """Forward ``program``'s effects, leaving out its Outputs named in ``drop``; just before its
    Output ``direction`` run ``extra(call, s)``, s the party's share of S (what its input-sharing
    step sent and received: X − Σ masks sent + Σ shares received)."""
    value: Any = None
    sent: Any = None
    share: Any = None
    try:
        while True:
            effect = program.send(value)
            step = getattr(effect, "step", "")
            if isinstance(effect, Output) and effect.label in drop:
                value = None
                continue
            if isinstance(effect, Output) and effect.label == "direction" and extra is not None:
                yield from extra(effect.call, share)
                extra = None
            value = yield effect
            if isinstance(effect, SendEach) and step.endswith(f".{INPUT}.share"):
                sent = effect.payloads
            elif isinstance(effect, RecvEach) and step.endswith(f".{INPUT}.share"):
                share = (sent, value)
    except StopIteration as stop:
        return stop.value


def planted_variant(leak: str, params: Any):
    """The party program of the plant ``leak`` (see the module docstring)."""
    variant = VARIANT_OF[leak]

    def program(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
        field = mpc_field(ctx.field.p)
        encoded = encode_inputs(np.asarray(x, dtype=np.float64).reshape(1, -1), params)
        peers = ctx.peers
        honest = normed_secure_sum(ctx, x, variant=variant, params=params)

        def own_norm(call: Any, _share: Any) -> Generator[Any, Any, None]:
            q_m = constants(field, [sum(int(v) * int(v) for v in encoded[0])])
            step = f"90.{OUTPUT}.own_norm_sq"  # BUG: a per-party norm, opened
            yield SendEach(dict.fromkeys(peers, q_m), call, step)
            yield RecvEach(peers, call, step)

        def opens_sum(call: Any, share: Any) -> Generator[Any, Any, None]:
            sent, received = share
            s = small(field, encoded.reshape(-1))
            for p in peers:
                s = field.add(field.sub(s, np.ravel(sent[p])), np.ravel(received[p]))
            step = f"90.{OUTPUT}.sum"  # BUG: S opened too, beyond the declared ‖S‖²
            yield SendEach(dict.fromkeys(peers, s), call, step)
            yield RecvEach(peers, call, step)

        if leak == "undeclared":
            return (yield from _planted(honest, None, drop=(REVEALED_NORM, REVEALED_DITHER)))
        return (yield from _planted(honest, opens_sum if leak == "opens_sum" else own_norm))

    return program


def planted_parties(leak: str, inputs: Sequence[np.ndarray], params: Any):
    """The data holders and the dealer of one planted revealing-variant call."""
    from parties.party import site_parties
    from sim.experiments.svd.normed_secure_sum import with_dealer

    sites = site_parties(planted_variant(leak, params), [{"x": x} for x in inputs])
    return with_dealer(sites, [(1, int(np.size(inputs[0])))], VARIANT_OF[leak], params)
