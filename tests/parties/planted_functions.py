"""Planted leaks, class 2: a side message with a *function* of an honest input ("one input pair").

Each program is the honest PRG SecureSum plus, inside the same call, one extra message from
party 1 to party 0 (step ``hint``) carrying f(x̂_1) element by element (or for one element):

``parity``        x̂_1 mod 2
``high_bit``      [x̂_1 ≥ (p + 1)/2] — in fixed point, the sign of the value
``mod_3``         x̂_1 mod 3
``last_parity``   x̂_1[d − 1] mod 2 — only the last coordinate (a leak short inputs miss)
``is_zero``       [x̂_1 = 0]

An A/B audit with a single pair misses any such f for which f(A) = f(B): a parity or a high
bit for about half of the pairs, a residue mod 3 for a third, and ``is_zero`` for every pair of
nonzero inputs. The leak reaches exactly the coalitions that contain party 0 but not party 1
and leave at least two honest parties: for M = 3 {0}; for M = 4 {0}, {0, 2}, {0, 3}. (With
party 1 the only honest party, f(x̂_1) is a function of the sum: nothing new.)
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import planted_leaks as pl

from protocols.context import PartyContext
from protocols.effects import Recv, SendEach
from protocols.field import PrimeField
from protocols.sharing import pair_shares

Function = Callable[[PrimeField, np.ndarray], np.ndarray]

FUNCTIONS: dict[str, Function] = {
    "parity": lambda f, x: np.asarray([int(v) % 2 for v in x]),
    "high_bit": lambda f, x: np.asarray([int(int(v) >= (f.p + 1) // 2) for v in x]),
    "mod_3": lambda f, x: np.asarray([int(v) % 3 for v in x]),
    "last_parity": lambda f, x: np.asarray([int(x[-1]) % 2]),
    "is_zero": lambda f, x: np.asarray([int(int(v) == 0) for v in x]),
}


def side_message_program(function: Function) -> pl.Program:
    def program(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
        call = yield from pl._start(ctx, x)
        if ctx.party == 1:  # BUG: a "hint" left in from debugging
            yield SendEach({0: ctx.field.elements(function(ctx.field, x))}, call, "hint")
        if ctx.party == 0:
            yield Recv(1, call, "hint")
        me, d = ctx.party, len(x)
        streams = ctx.randomness.pairwise_many(ctx.peers, call, 2 * d)
        pairs = [pair_shares(s, me, p, d) for p, s in zip(ctx.peers, streams, strict=True)]
        return (yield from pl._exchange_column_sums(ctx, call,
                                                     pl._prg_colsum(ctx.field, x, pairs)))

    return program


LEAKS: dict[str, pl.Program] = {name: side_message_program(f) for name, f in FUNCTIONS.items()}


def leaking(n_parties: int, coalitions: list[tuple[int, ...]]) -> set[tuple[int, ...]]:
    """Coalitions with party 0, without party 1, and with at least two honest parties."""
    return {c for c in coalitions if 0 in c and 1 not in c and n_parties - len(c) >= 2}


def receiving(coalitions: list[tuple[int, ...]]) -> set[tuple[int, ...]]:
    """Coalitions that receive the hint from an honest party 1 (the simulation audit's set)."""
    return {c for c in coalitions if 0 in c and 1 not in c}
