"""Planted leaks, class 1: masks from a structured subset of GF(p) ("non-uniformity the
statistics cannot see").

Each program is SecureSum (:mod:`planted_leaks` builds both variants from the same steps) whose
masks — the explicit shares, or the pair streams of the PRG variant — pass through a
transform before use:

``low_byte_pattern``
    m ↦ (m with its low byte replaced by 0xA5). After the coalition subtracts what it knows,
    an honest column sum is x̂_h + (a difference of masks ≡ 0 mod 256 as integers): its
    residue mod 2^b takes two values (the wrap around p adds ±1), yet value / p stays uniform.
``multiple_of_3``
    m ↦ 3·⌊m/3⌋. The residual is ≡ x̂_h + k mod 3 for a wrap count k ∈ {−1, 0, 1} whose law
    is far from uniform (p ≡ 1 mod 3): visible to the mod-3 test only.
``sixteenth_range``
    m ↦ ⌊m/16⌋: masks in [0, p/16), a range well short of p. The residual lies within ±p/16
    of x̂_h: value / p is concentrated (a sup-CDF distance above 0.8 from uniform).

In tiny fields the transforms make the masks non-uniform as well (GF(5): 0xA5 ≡ 0, multiples
of 3 are {0, 3}, ⌊m/16⌋ = 0). Every coalition with at least two honest parties leaks — every
honest-to-honest mask is structured — and the one-honest-party coalitions learn nothing the
sum does not tell them. The coalition's own masks are uniform draws made non-uniform the same
way, which is why an audit that does not hold them fixed sees uniform marginals.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import planted_leaks as pl

from protocols.context import PartyContext
from protocols.field import PrimeField
from protocols.sharing import pair_shares

Transform = Callable[[int], int]

TRANSFORMS: dict[str, Transform] = {
    "low_byte_pattern": lambda m: (m & ~0xFF) | 0xA5,
    "multiple_of_3": lambda m: 3 * (m // 3),
    "sixteenth_range": lambda m: m >> 4,
}


def structured(field: PrimeField, values: np.ndarray, transform: Transform) -> np.ndarray:
    """The transform applied to every element (reduced mod p)."""
    flat = [transform(int(v)) for v in np.ravel(values)]
    return field.elements(np.array(flat, dtype=object)).reshape(np.shape(values))


def explicit_program(transform: Transform) -> pl.Program:
    def program(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
        call = yield from pl._start(ctx, x)
        draws = ctx.randomness.private(call, len(ctx.peers) * len(x))
        shares = pl._chunks(structured(ctx.field, draws, transform), len(x))  # BUG
        return (yield from pl._explicit(ctx, call, x, shares))

    return program


def prg_program(transform: Transform, spare: int | None = None) -> pl.Program:
    """PRG SecureSum whose pair streams are structured (all, or all but those of ``spare``)."""

    def program(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
        call = yield from pl._start(ctx, x)
        me, d = ctx.party, len(x)
        streams = ctx.randomness.pairwise_many(ctx.peers, call, 2 * d)
        bad = structured(ctx.field, streams, transform)  # BUG: both ends agree on it
        streams = np.stack([s if spare in (me, p) else b
                            for p, s, b in zip(ctx.peers, streams, bad, strict=True)])
        pairs = [pair_shares(s, me, p, d) for p, s in zip(ctx.peers, streams, strict=True)]
        return (yield from pl._exchange_column_sums(ctx, call,
                                                     pl._prg_colsum(ctx.field, x, pairs)))

    return program


LEAKS: dict[str, dict[str, pl.Program]] = {
    name: {"explicit": explicit_program(t), "prg": prg_program(t)}
    for name, t in TRANSFORMS.items()
}
"""Every structured-mask leak, by name and variant."""

HIDDEN: pl.Program = prg_program(TRANSFORMS["low_byte_pattern"], spare=0)
"""The low-byte pattern on every pair stream but party 0's: party 0's own masks are uniform,
so its raw view looks uniform mod 2^b while its residual does not. Leaks to {0} only at M = 3
({1} and {2} keep a uniform hidden mask with party 0)."""


def leaking(n_parties: int, coalitions: list[tuple[int, ...]]) -> set[tuple[int, ...]]:
    """The coalitions a structured-mask leak reaches: those with two or more honest parties."""
    return {c for c in coalitions if n_parties - len(c) >= 2}
