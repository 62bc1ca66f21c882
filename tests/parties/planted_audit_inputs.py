"""Planted leaks of issue 27, classes 3 and 4, that the per-call checks let through.

Class 3 — the program runs an honest SecureSum on y = f(x) and records Input(y): the declared
sum *is* Σ_m y_m, so a check of the outputs against the call's recorded inputs passes. The
audit's inputs are the x, and the functionality on them is Σ_m x_m.

``tail_of_last``   y = x ‖ (x if m = M − 1 else 0): the declared sum ends in x_{M−1} itself.
``power_sums``     y = x ‖ x∘x: with M = 3 a coalition {0} learns x_1 + x_2 and x_1² + x_2², so
                   x_1·x_2 and both honest inputs (the roots of t² − s t + q).
``sign_flip``      party 1 enters −x_1: the declared sum is Σ_{m≠1} x_m − x_1, which gives a
                   coalition {0} of M = 3 the difference x_2 − x_1 the sum does not.

Honest controls, whose outputs differ from Σ x but are functions of it:

``scaled_sum``     y = 3x at every party: the output is 3·Σ x.
``offset_sum``     party 0 enters x_0 + 1 (a public constant): the output is Σ x + 1.

Class 4 — the call's output determines the honest input (one honest party), and one of its
messages is longer than the protocol's, carrying data the call does not sum:

``header_column_sum``  prg SecureSum of x[1:]; each column sum goes out as [x[0]] ‖ c.
``shares_with_trailer``  explicit SecureSum of the first half of x; every share carries the
                          second half on its end.
``value_with_tail``    plain All-Reduce of x[:-1] whose ``value`` message is all of x.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from protocols.all_reduce import PROTOCOL as ALL_REDUCE
from protocols.context import PartyContext, add_one_stream_mask
from protocols.effects import Input, Output, RecvEach, SendEach
from protocols.secure_sum import PROTOCOL, secure_sum_field
from protocols.sharing import additive_reconstruct, column_sum, own_share

Gen = Generator[Any, Any, np.ndarray]


# -- class 3 --------------------------------------------------------------------------------------


def tail_of_last(ctx: PartyContext, x: np.ndarray) -> Gen:
    last = ctx.party == len(ctx.peers)  # parties 0..M−1: the last one
    extra = np.asarray(x) if last else ctx.field.zeros(len(x))
    y = np.concatenate([np.asarray(x), extra])  # BUG: the declared sum ends in x_{M−1}
    return (yield from secure_sum_field(ctx, y, "prg"))


def power_sums(ctx: PartyContext, x: np.ndarray) -> Gen:
    y = np.concatenate([np.asarray(x), ctx.field.mul(x, x)])  # BUG: Σ x² rides along
    return (yield from secure_sum_field(ctx, y, "prg"))


def sign_flip(ctx: PartyContext, x: np.ndarray) -> Gen:
    y = ctx.field.neg(x) if ctx.party == 1 else np.asarray(x)  # BUG: party 1 subtracts
    return (yield from secure_sum_field(ctx, y, "explicit"))


def scaled_sum(ctx: PartyContext, x: np.ndarray) -> Gen:
    y = ctx.field.mul(x, ctx.field.elements([3] * len(x)))
    return (yield from secure_sum_field(ctx, y, "prg"))


def offset_sum(ctx: PartyContext, x: np.ndarray) -> Gen:
    one = ctx.field.elements([1] * len(x))
    y = ctx.field.add(x, one) if ctx.party == 0 else np.asarray(x)
    return (yield from secure_sum_field(ctx, y, "prg"))


# -- class 4 --------------------------------------------------------------------------------------


def header_column_sum(ctx: PartyContext, x: np.ndarray) -> Gen:
    a = np.asarray(x[1:])
    call = ctx.new_call(PROTOCOL)
    yield Input("x", a, call)
    colsum = add_one_stream_mask(ctx.randomness, ctx.party, ctx.peers, call, a, ctx.field)
    message = np.concatenate([np.asarray(x[:1]), colsum])  # BUG: raw x[0] in front
    yield SendEach(dict.fromkeys(ctx.peers, message), call, "column_sum")
    got = yield RecvEach(ctx.peers, call, "column_sum")
    total = additive_reconstruct(ctx.field, [colsum, *(got[p][1:] for p in ctx.peers)])
    yield Output("sum", total, call)
    return total


def shares_with_trailer(ctx: PartyContext, x: np.ndarray) -> Gen:
    fld, peers = ctx.field, ctx.peers
    h = len(x) // 2
    a, tail = np.asarray(x[:h]), np.asarray(x[h:])
    call = ctx.new_call(PROTOCOL)
    yield Input("x", a, call)
    draws = ctx.randomness.private(call, len(peers) * h)
    shares = [draws[k * h:(k + 1) * h] for k in range(len(peers))]
    kept = own_share(fld, a, shares)
    yield SendEach({p: np.concatenate([s, tail])  # BUG: the unsummed half rides along
                    for p, s in zip(peers, shares, strict=True)}, call, "share")
    got = yield RecvEach(peers, call, "share")
    colsum = column_sum(fld, kept, [got[p][:h] for p in peers])
    yield SendEach(dict.fromkeys(peers, colsum), call, "column_sum")
    sums = yield RecvEach(peers, call, "column_sum")
    total = additive_reconstruct(fld, [colsum, *(sums[p] for p in peers)])
    yield Output("sum", total, call)
    return total


def value_with_tail(ctx: PartyContext, x: np.ndarray) -> Gen:
    a = np.asarray(x[:-1])
    call = ctx.new_call(ALL_REDUCE)
    yield Input("x", a, call)
    yield SendEach(dict.fromkeys(ctx.peers, np.asarray(x)), call, "value")  # BUG: all of x
    got = yield RecvEach(ctx.peers, call, "value")
    total = ctx.field.sum_arrays([a, *(got[p][:-1] for p in ctx.peers)])
    yield Output("sum", total, call)
    return total
