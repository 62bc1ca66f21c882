"""Planted leaks, class 4: leaks inside an algorithm's run ("the algorithm is never audited").

Two families.

Programs with two SecureSum calls (``program(ctx, x)`` on field vectors): the first sums x̂,
the second 2x̂.

``two_sums``              the honest control (two calls of ``secure_sum_field``, prg).
``two_sums_reused_masks`` the second call applies the first call's pair masks again (it draws
                          its own streams, as the randomness layer requires, and then uses a
                          stale variable). An honest column sum of the second call minus the
                          first is 2x̂_h − x̂_h = x̂_h: every element of either call is uniform,
                          the leak is a relation between the two calls.

Replacements of the ``secure_sum`` that PD-NMF calls (:class:`LeakySum`, installed in
``algorithms.nmf.pd_nmf`` by the tests): the same function on real vectors — encode, sum over the
field, decode — with one bug planted in the calls of one sweep. With a public start T0 the
call numbers are sweep·k + t (t the topic).

``raw``       in the sweep, the column sum broadcast is the raw encoded statistic: the layout of
              the PRG variant, no mask.
``restart``   from the sweep on, the masks applied are those of the same topic in the first
              sweep, as if the PRG counter restarted (the randomness layer refuses a second draw
              of one stream number — :class:`~protocols.context.MaskReuseError` — so a program
              can only reuse masks by keeping them; this one keeps them in a table by topic).
``side``      in the sweep's first call, party 1 also sends its raw statistic to party 0
              (step ``debug``).
``last``      in the sweep, the mask of the last coordinate (the ‖W_:t‖² element) is 0.

Each reaches every coalition with two or more honest parties that receives the affected
messages; the audit must name the first call of the sweep (for ``side``, the ``debug`` message)
and, for ``last``, the last element.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
import planted_leaks as pl

from protocols.context import PartyContext
from protocols.effects import Call, Recv, SendEach
from protocols.secure_sum import secure_sum_field
from protocols.sharing import pair_shares


def two_sums(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """Control: two honest SecureSum calls, on x̂ and on 2x̂."""
    yield from secure_sum_field(ctx, x, "prg")
    return (yield from secure_sum_field(ctx, ctx.field.add(x, x), "prg"))


def two_sums_reused_masks(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """The second call applies the first call's masks."""
    me, d = ctx.party, len(x)
    kept: list[tuple[np.ndarray, np.ndarray]] = []
    total = x
    for value in (x, ctx.field.add(x, x)):
        call = yield from pl._start(ctx, value)
        streams = ctx.randomness.pairwise_many(ctx.peers, call, 2 * d)
        pairs = [pair_shares(s, me, p, d) for p, s in zip(ctx.peers, streams, strict=True)]
        if not kept:
            kept = pairs
        pairs = kept  # BUG: the first call's masks, again
        total = yield from pl._exchange_column_sums(ctx, call,
                                                    pl._prg_colsum(ctx.field, value, pairs))
    return total


FIRST_CALL = 1
"""The program's first call number: key agreement is call 0 of a run and of an audit's runs."""


class LeakySum:
    """A ``secure_sum(ctx, x, variant, label)`` for PD-NMF with a bug in one sweep (prg).

    Parameters
    ----------
    kind : {"raw", "restart", "side", "last"}
        The bug (module docstring).
    k : int
        Calls per sweep (the number of topics).
    sweep : int
        The sweep whose calls carry the bug (from it on, for ``restart``).
    """

    def __init__(self, kind: str, k: int, sweep: int = 1) -> None:
        self.kind, self.k, self.sweep = kind, k, sweep
        self._tables: dict[int, tuple[PartyContext, dict[int, np.ndarray]]] = {}

    def first_call(self) -> int:
        """The call number of the sweep's first call, in a run's (and an audit's) numbering."""
        return self.sweep * self.k + FIRST_CALL

    def secure_sum(self, ctx: PartyContext, x: Any, variant: str = "prg",
                   label: str = "x") -> Generator[Any, Any, np.ndarray]:
        values = np.asarray(x, dtype=np.float64)
        x_hat = ctx.fixed.encode(values.ravel(), n_summands=ctx.n_parties, what=label)
        total = yield from self._field_sum(ctx, x_hat, label)
        return ctx.fixed.decode(total).reshape(values.shape)

    def _field_sum(self, ctx: PartyContext, x_hat: np.ndarray,
                   label: str) -> Generator[Any, Any, np.ndarray]:
        field, d = ctx.field, len(x_hat)
        call: Call = yield from pl._start(ctx, x_hat)
        sweep, t = divmod(call.index - FIRST_CALL, self.k)
        bugged = sweep == self.sweep or (self.kind == "restart" and sweep > self.sweep)
        mask = ctx.randomness.pairwise_mask(ctx.peers, call, d)
        if self.kind == "restart":
            _, table = self._tables.setdefault(id(ctx), (ctx, {}))
            if sweep == 0:
                table[t] = mask
            elif bugged:
                mask = table[t]  # BUG: the first sweep's masks
        if self.kind == "raw" and bugged:
            mask = field.zeros(d)  # BUG: the statistic goes out in the clear
        if self.kind == "last" and bugged:
            mask = mask.copy()
            mask[-1] = 0  # BUG: the last coordinate is not masked
        if self.kind == "side" and bugged and t == 0:
            if ctx.party == 1:
                yield SendEach({0: x_hat}, call, "debug")  # BUG: a leftover debug message
            if ctx.party == 0:
                yield Recv(1, call, "debug")
        return (yield from pl._exchange_column_sums(ctx, call, field.add(x_hat, mask)))


KINDS = ("raw", "restart", "side", "last")
