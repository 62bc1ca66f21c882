"""SecureSum: every party learns Σ_m x^(m) and nothing else (thesis seed 001, §2.2, Table 2.1).

M semi-honest peers p_0..p_{M−1}; party m inputs a vector x^(m) ∈ R^d (any shape; it is
flattened) and every party outputs the sum. Inputs are encoded into GF(p) with fixed point
(:class:`~protocols.field.FixedPoint`, headroom checked for M summands), so the output is the
exact sum of the encoded inputs, i.e. within M·2^−(f+1) of the real sum.

Table 2.1 notation: party i splits x̂_i into shares r_i^(j), one per party j, with
Σ_j r_i^(j) = x̂_i. Party j forms the column sum r^(j) = Σ_i r_i^(j) and every party adds up
the column sums: Σ_j r^(j) = Σ_i x̂_i.

Two variants:

``explicit``
    Party i draws r_i^(j) uniformly for every j ≠ i from its private stream, sets
    r_i^(i) = x̂_i − Σ_{j≠i} r_i^(j), sends r_i^(j) to party j (round 1), then sends its column
    sum r^(j) to the M − 1 others (round 2).
``prg``
    "Party i, j simply have to coordinate a random seed for their corresponding PRNGs": the
    pair {i, j} derives one AES-CTR stream of 2d elements per invocation from the mask seed
    agreed in key agreement; its first d elements are r_lo^(hi) and the last d are r_hi^(lo)
    (lo < hi the two ids). Both know both shares, so no share is sent; each party sends only
    its column sum (one round). The column sum of party j is then
    r^(j) = x̂_j + Σ_{i≠j} (r_i^(j) − r_j^(i)), the familiar pairwise-mask form.

Declared cost per party per invocation of a length-d vector (:func:`declared_cost`): explicit
— 2 rounds, 2(M−1) messages, 2(M−1)d elements sent (and as many received); prg — 1 round,
M−1 messages, (M−1)d elements sent. The thesis's "2(M − 1)d longs" for the PRG variant counts
sent plus received. A contract test holds the ledger to these formulas.

Security: the coalition's view — its inputs, its randomness, and the column sums (and, for
``explicit``, the shares) it receives — is uniform subject to the sum, as long as at least
one party outside the coalition shares a fresh mask with every other honest party. Masks are
numbered by the call counter, so no mask is ever reused across invocations.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from protocols.context import PartyContext
from protocols.effects import Call, Input, Output, RecvEach, SendEach
from protocols.errors import InputError
from protocols.field import PrimeField

Variant = Literal["explicit", "prg"]
VARIANTS: tuple[str, ...] = ("prg", "explicit")
PROTOCOL = "secure_sum"


@dataclass(frozen=True)
class Cost:
    """Declared communication of one invocation, per party."""

    rounds: int
    messages_sent: int
    elements_sent: int


COST_FORMULAS: dict[str, dict[str, str]] = {
    "explicit": {"rounds": "2", "messages_sent": "2(M-1)", "elements_sent": "2(M-1)d"},
    "prg": {"rounds": "1", "messages_sent": "M-1", "elements_sent": "(M-1)d"},
}


def declared_cost(variant: str, n_parties: int, length: int) -> Cost:
    """Rounds, messages and elements each party sends in one invocation on a d-vector."""
    check_variant(variant)
    m1 = n_parties - 1
    if variant == "explicit":
        return Cost(rounds=2, messages_sent=2 * m1, elements_sent=2 * m1 * length)
    return Cost(rounds=1, messages_sent=m1, elements_sent=m1 * length)


def check_variant(variant: str) -> str:
    if variant not in VARIANTS:
        raise InputError(f"SecureSum variant {variant!r} is unknown; use one of {VARIANTS}")
    return variant


# -- share arithmetic (pure, no I/O) -----------------------------------------------------------


def own_share(field: PrimeField, x_hat: np.ndarray, shares_out: list[np.ndarray]) -> np.ndarray:
    """r_i^(i) = x̂_i − Σ_{j≠i} r_i^(j): the share a party keeps (Table 2.1, row i)."""
    if not shares_out:
        return x_hat
    return field.sub(x_hat, field.sum_arrays(shares_out))


def column_sum(field: PrimeField, kept: np.ndarray, shares_in: list[np.ndarray]) -> np.ndarray:
    """r^(j) = r_j^(j) + Σ_{i≠j} r_i^(j): the sum of the shares party j holds (column j)."""
    if not shares_in:
        return kept
    return field.add(kept, field.sum_arrays(shares_in))


def split(field: PrimeField, x_hat: np.ndarray, masks: list[np.ndarray]) -> list[np.ndarray]:
    """All M shares of x̂ given the M − 1 random ones: ``masks + [own share]``."""
    return [*masks, own_share(field, x_hat, masks)]


def reconstruct(field: PrimeField, column_sums: list[np.ndarray]) -> np.ndarray:
    """Σ_j r^(j) = Σ_i x̂_i (sum of column sums equals sum of row sums)."""
    return field.sum_arrays(column_sums)


def pair_shares(
    stream: np.ndarray, me: int, peer: int, length: int
) -> tuple[np.ndarray, np.ndarray]:
    """Split a pair's 2d-element stream into (my share for peer, peer's share for me)."""
    first, second = stream[:length], stream[length:]
    return (first, second) if me < peer else (second, first)


# -- the party program -------------------------------------------------------------------------


def secure_sum(
    ctx: PartyContext, x: Any, variant: Variant = "prg", label: str = "x"
) -> Generator[Any, Any, np.ndarray]:
    """Party program: encode ``x`` (real array, any shape), sum it securely, decode.

    Returns the real sum, of ``x``'s shape, at every party. Raises
    :class:`~protocols.errors.FieldOverflowError` before any message is sent if a value's
    M-fold sum could exceed the field's signed range.
    """
    values = np.asarray(x, dtype=np.float64)
    x_hat = ctx.fixed.encode(values.ravel(), n_summands=ctx.n_parties, what=f"SecureSum {label}")
    total = yield from secure_sum_field(ctx, x_hat, variant, label=label)
    result = ctx.fixed.decode(total).reshape(values.shape)
    return result


def secure_sum_field(
    ctx: PartyContext, x_hat: np.ndarray, variant: Variant = "prg", label: str = "x"
) -> Generator[Any, Any, np.ndarray]:
    """Party program on field elements: returns Σ_m x̂^(m) (flat array) at every party."""
    check_variant(variant)
    field = ctx.field
    x_hat = np.asarray(x_hat)
    if x_hat.ndim != 1:
        raise InputError(f"SecureSum input must be a flat vector, got shape {x_hat.shape}")
    call = ctx.new_call(PROTOCOL)
    yield Input(label, x_hat, call)
    if variant == "explicit":
        colsum = yield from _explicit_column_sum(ctx, call, x_hat, label)
    else:
        colsum = _prg_column_sum(ctx, call, x_hat)
    peers = ctx.peers
    yield SendEach(dict.fromkeys(peers, colsum), call, "column_sum")
    received = yield RecvEach(peers, call, "column_sum")
    _check_lengths(received, len(x_hat), label)
    total = reconstruct(field, [colsum, *(received[p] for p in peers)])
    yield Output("sum", total, call)
    return total


def _explicit_column_sum(
    ctx: PartyContext, call: Call, x_hat: np.ndarray, label: str = "x"
) -> Generator[Any, Any, np.ndarray]:
    field, peers, d = ctx.field, ctx.peers, len(x_hat)
    masks = ctx.randomness.private(call, len(peers) * d)
    shares_out = {p: masks[i * d : (i + 1) * d] for i, p in enumerate(peers)}
    kept = own_share(field, x_hat, list(shares_out.values()))
    yield SendEach(shares_out, call, "share")
    shares_in = yield RecvEach(peers, call, "share")
    _check_lengths(shares_in, d, label)
    return column_sum(field, kept, [shares_in[p] for p in peers])


def _check_lengths(received: dict[int, np.ndarray], length: int, label: str) -> None:
    """Refuse peers' vectors whose length differs from this party's input (public sizes)."""
    for peer, values in sorted(received.items()):
        if len(values) != length:
            raise InputError(
                f"SecureSum {label}: party {peer} sent {len(values)} elements but this party's "
                f"input has {length}; every party must input a vector of the same length"
            )


def _prg_column_sum(ctx: PartyContext, call: Call, x_hat: np.ndarray) -> np.ndarray:
    """r^(i) = x̂_i − Σ_j r_i^(j) + Σ_j r_j^(i) (Table 2.1's column sum, shares from the PRG).

    The randomness returns the net mask Σ_j (r_j^(i) − r_i^(j)) directly, so that the shares
    need not be materialised (:func:`protocols.prg.pair_mask_sum`).
    """
    mask = ctx.randomness.pairwise_mask(ctx.peers, call, len(x_hat))
    return ctx.field.add(x_hat, mask)
