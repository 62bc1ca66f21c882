"""Planted leaks of issue 27, classes 3 and 4, and the honest broadcast of its false alarm.

Class 3 — outputs beyond the functionality. Each program runs SecureSum honestly on a longer
vector than the input it records, and declares what comes back as the call's output: the
simulator, handed that declared output, reproduces every message, so only the functionality
check (:mod:`parties.audit.functionality`) can see that the output is not Σ_m x̂_m.

``extra_coordinate``  the declared ``sum`` has one more element, party 1's x̂_1[0] (every
                      other party contributes 0 to it): any coalition without party 1 reads
                      x̂_1[0] from its output.
``extra_output``      the sum is right, and a second declared output ``check`` of the same call
                      holds party 1's whole input (the second half of a 2d-element sum).
``shifted_sum``       the declared ``sum`` is Σ x̂ + x̂_1 (party 1 enters 2x̂_1 and records
                      x̂_1): a different function, which with M = 2 gives party 0 nothing new
                      and with M = 3 gives {0, 2} the value x̂_1 twice over.
``renamed_sum``       the honest SecureSum, but its call is named ``all_reduce``: with the audit
                      target ``secure_sum`` the program may not pick that judge (``not
                      applicable``); named ``all_reduce`` by the target, it is judged by it.

Class 4 — calls whose outputs determine the honest input (one honest party), with messages
that carry more than the call's input (explicit variant: its shares should be uniform).

``share_is_secret``   M = 2, inputs {x, y}: party 1's share to 0 is y, an input of no call
                      (its kept share x̂ − y keeps the sum right). Party 0 reads y.
``share_is_tail``     a flat x of 2h elements whose first half alone is summed; the honest
                      party's share carries the second half, which enters no call.
``share_is_copy``     M = 3, party 1's share to party 0 is a second copy of x̂_1.

The false alarm: ``honest_broadcast`` runs SecureSum and then, in the same call, every party
broadcasts one fresh uniform value (a step the protocol does not declare) to all its peers —
one value, several receivers. ``broadcast_input`` is the leak of the same shape: party 3
broadcasts its input; ``broadcast_offset`` sends r to one peer and r + x̂ to the others.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from protocols.context import PartyContext
from protocols.effects import Input, Output, RecvEach, SendEach
from protocols.secure_sum import PROTOCOL
from protocols.sharing import additive_reconstruct, column_sum, own_share

Gen = Generator[Any, Any, np.ndarray]


def _summed(ctx: PartyContext, recorded: np.ndarray, summed: np.ndarray,
            name: str = PROTOCOL) -> Generator[Any, Any, tuple[Any, np.ndarray]]:
    """An honest explicit SecureSum of ``summed`` that records ``recorded`` as its input."""
    field, peers, n = ctx.field, ctx.peers, len(summed)
    call = ctx.new_call(name)
    yield Input("x", recorded, call)
    draws = ctx.randomness.private(call, len(peers) * n)
    shares = [draws[k * n:(k + 1) * n] for k in range(len(peers))]
    kept = own_share(field, summed, shares)
    yield SendEach(dict(zip(peers, shares, strict=True)), call, "share")
    got = yield RecvEach(peers, call, "share")
    colsum = column_sum(field, kept, [got[p] for p in peers])
    yield SendEach(dict.fromkeys(peers, colsum), call, "column_sum")
    sums = yield RecvEach(peers, call, "column_sum")
    return call, additive_reconstruct(field, [colsum, *(sums[p] for p in peers)])


# -- class 3 ------------------------------------------------------------------------------------


def extra_coordinate(ctx: PartyContext, x: np.ndarray) -> Gen:
    """The declared sum carries x̂_1[0] as one more coordinate."""
    extra = x[:1] if ctx.party == 1 else ctx.field.zeros(1)
    call, total = yield from _summed(ctx, x, np.concatenate([x, extra]))
    yield Output("sum", total, call)
    return total


def extra_output(ctx: PartyContext, x: np.ndarray) -> Gen:
    """A second declared output of the call holds x̂_1."""
    extra = x if ctx.party == 1 else ctx.field.zeros(len(x))
    call, total = yield from _summed(ctx, x, np.concatenate([x, extra]))
    yield Output("sum", total[:len(x)], call)
    yield Output("check", total[len(x):], call)
    return total[:len(x)]


def shifted_sum(ctx: PartyContext, x: np.ndarray) -> Gen:
    """Party 1 enters 2x̂_1 but records x̂_1: the declared sum is Σ x̂ + x̂_1."""
    summed = ctx.field.add(x, x) if ctx.party == 1 else x
    call, total = yield from _summed(ctx, x, summed)
    yield Output("sum", total, call)
    return total


def renamed_sum(ctx: PartyContext, x: np.ndarray) -> Gen:
    """The honest SecureSum whose call the program names ``all_reduce``."""
    call, total = yield from _summed(ctx, x, x, name="all_reduce")
    yield Output("sum", total, call)
    return total


# -- class 4 ------------------------------------------------------------------------------------


def _explicit_with_share(ctx: PartyContext, x: np.ndarray, to: int, share: np.ndarray,
                         recorded: np.ndarray | None = None) -> Gen:
    """Explicit SecureSum of x whose share to ``to`` is ``share`` (the others uniform)."""
    field, peers, n = ctx.field, ctx.peers, len(x)
    call = ctx.new_call(PROTOCOL)
    yield Input("x", x if recorded is None else recorded, call)
    draws = ctx.randomness.private(call, len(peers) * n)
    shares = [share if p == to else draws[k * n:(k + 1) * n] for k, p in enumerate(peers)]
    kept = own_share(field, x, shares)
    yield SendEach(dict(zip(peers, shares, strict=True)), call, "share")
    got = yield RecvEach(peers, call, "share")
    colsum = column_sum(field, kept, [got[p] for p in peers])
    yield SendEach(dict.fromkeys(peers, colsum), call, "column_sum")
    sums = yield RecvEach(peers, call, "column_sum")
    total = additive_reconstruct(field, [colsum, *(sums[p] for p in peers)])
    yield Output("sum", total, call)
    return total


def share_is_secret(ctx: PartyContext, x: np.ndarray, y: np.ndarray) -> Gen:
    """Party 1's share to party 0 is y, an input that enters no call."""
    if ctx.party == 1:
        return (yield from _explicit_with_share(ctx, x, 0, y))
    return (yield from _explicit_with_share(ctx, x, -1, x))


def share_is_tail(ctx: PartyContext, x: np.ndarray) -> Gen:
    """Only the first half of x is summed; party 1's share to 0 is the second half."""
    h = len(x) // 2
    head, tail = x[:h], x[h:2 * h]
    return (yield from _explicit_with_share(ctx, head, 0 if ctx.party == 1 else -1, tail))


def share_is_copy(ctx: PartyContext, x: np.ndarray) -> Gen:
    """Party 1's share to party 0 is x̂_1 itself."""
    return (yield from _explicit_with_share(ctx, x, 0 if ctx.party == 1 else -1, x))


# -- the broadcast false alarm -------------------------------------------------------------------


def honest_broadcast(ctx: PartyContext, x: np.ndarray) -> Gen:
    """SecureSum, then one fresh uniform value to every peer (one broadcast, undeclared)."""
    return (yield from _beacon(ctx, x, lambda call, r, peer: r))


def broadcast_input(ctx: PartyContext, x: np.ndarray) -> Gen:
    """As :func:`honest_broadcast`, but party 3 broadcasts x̂_3[0] instead of a pad."""
    return (yield from _beacon(ctx, x, lambda call, r, peer: x[:1] if ctx.party == 3 else r))


def broadcast_offset(ctx: PartyContext, x: np.ndarray) -> Gen:
    """Party 3 sends r to its first peer and r + x̂_3[0] to the others."""
    def payload(call: Any, r: np.ndarray, peer: int) -> np.ndarray:
        if ctx.party == 3 and peer != ctx.peers[0]:
            return ctx.field.add(r, x[:1])
        return r
    return (yield from _beacon(ctx, x, payload))


def _beacon(ctx: PartyContext, x: np.ndarray, payload: Any) -> Gen:
    field, peers, n = ctx.field, ctx.peers, len(x)
    call = ctx.new_call(PROTOCOL)
    yield Input("x", x, call)
    draws = ctx.randomness.private(call, len(peers) * n)
    shares = [draws[k * n:(k + 1) * n] for k in range(len(peers))]
    kept = own_share(field, x, shares)
    yield SendEach(dict(zip(peers, shares, strict=True)), call, "share")
    got = yield RecvEach(peers, call, "share")
    colsum = column_sum(field, kept, [got[p] for p in peers])
    yield SendEach(dict.fromkeys(peers, colsum), call, "column_sum")
    sums = yield RecvEach(peers, call, "column_sum")
    total = additive_reconstruct(field, [colsum, *(sums[p] for p in peers)])
    r = ctx.randomness.private(call, 1, sub=1)
    yield SendEach({p: payload(call, r, p) for p in peers}, call, "beacon")
    yield RecvEach(peers, call, "beacon")
    yield Output("sum", total, call)
    return total


# -- inside an algorithm's run (installed in algorithms.nmf.pd_nmf by the scenario tests) ------


def pd_nmf_extra_coordinate(ctx: PartyContext, x: Any, variant: str = "prg",
                            label: str = "x") -> Gen:
    """PD-NMF's ``secure_sum`` whose declared sum carries party 1's first statistic.

    The algorithm gets the right sum back; the call's declared output has one more element,
    x̂_1[0] (every other party contributes 0), which every member of a coalition reads.
    """
    values = np.asarray(x, dtype=np.float64)
    x_hat = ctx.fixed.encode(values.ravel(), n_summands=ctx.n_parties, what=label)
    extra = x_hat[:1] if ctx.party == 1 else ctx.field.zeros(1)
    call, total = yield from _summed(ctx, x_hat, np.concatenate([x_hat, extra]))
    yield Output("sum", total, call)
    return ctx.fixed.decode(total[:-1]).reshape(values.shape)
