"""A researcher's own protocol, written only from the public API: a secure weighted average.

Every data holder m has a value v_m and a weight w_m; every party learns the weighted average
Σ w_m v_m / Σ w_m. The protocol ``weighted_average`` encodes (w_m v_m, w_m) in fixed point,
adds pairwise one-stream masks (as SecureSum's ``prg`` variant does, thesis seed 001, §2.2)
and sends the masked pair to every peer; the sum of the M masked pairs is the pair of sums,
which is its declared output ``sum``. Its declaration reuses SecureSum's simulator and ideal
functionality (the call's outputs are the sum of the encoded inputs) and declares its cost.

:func:`chained_weighted_average` is the planted bug: masks only between neighbours m ± 1.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from protocols import secure_sum
from protocols.context import PartyContext, add_one_stream_mask
from protocols.effects import Input, Output, RecvEach, SendEach
from protocols.registry import declare_protocol

NAME = "weighted_average"


def cost(n_parties: int, *, length: int = 2) -> secure_sum.Cost:
    """One round; M − 1 messages of 2 elements (w v and w) per party."""
    return secure_sum.Cost(rounds=1, messages_sent=n_parties - 1,
                           elements_sent=(n_parties - 1) * length)


DECLARATION = declare_protocol(
    NAME,
    functionality=secure_sum.functionality,
    simulator=secure_sum.SecureSumSimulator,
    honest_inputs=secure_sum.honest_inputs,
    cost=cost,
)


def masked_sum(ctx: PartyContext, pair: np.ndarray,
               chain: bool = False) -> Generator[Any, Any, np.ndarray]:
    """The protocol on field elements: Σ_m pair_m over GF(p) at every party.

    Each party adds the one-stream masks it shares with its peers (``chain``: only with its
    neighbours m ± 1 — the planted bug) and sends the masked pair to every peer.
    """
    call = ctx.new_call(NAME)
    yield Input("x", pair, call)
    maskers = [p for p in ctx.peers if abs(p - ctx.party) == 1] if chain else ctx.peers
    masked = add_one_stream_mask(ctx.randomness, ctx.party, maskers, call, pair, ctx.field)
    yield SendEach(dict.fromkeys(ctx.peers, masked), call, "column_sum")
    got = yield RecvEach(ctx.peers, call, "column_sum")
    total = ctx.field.sum_arrays([masked, *(got[p] for p in ctx.peers)])
    yield Output("sum", total, call)
    return total


def chained_masked_sum(ctx: PartyContext, pair: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """The planted bug on field elements (:func:`masked_sum` with ``chain``)."""
    return (yield from masked_sum(ctx, pair, chain=True))


def _average(ctx: PartyContext, value: float, weight: float,
             chain: bool) -> Generator[Any, Any, float]:
    pair = ctx.fixed.encode(np.array([weight * value, weight]), n_summands=ctx.n_parties,
                            what="weighted_average (w v, w)")
    total = yield from masked_sum(ctx, pair, chain)
    sums = ctx.fixed.decode(total)
    return float(sums[0] / sums[1])


def weighted_average(ctx: PartyContext, value: float, weight: float) -> Generator[Any, Any, float]:
    """Party program: the weighted average of every party's value (its own weight)."""
    return (yield from _average(ctx, value, weight, chain=False))


def chained_weighted_average(ctx: PartyContext, value: float,
                             weight: float) -> Generator[Any, Any, float]:
    """The planted bug: each party masks only with its neighbours m − 1 and m + 1 (the masks
    still cancel, so the average is right), so party m knows both masks on its neighbours'
    messages and reads their (w v, w) in the clear."""
    return (yield from _average(ctx, value, weight, chain=True))
