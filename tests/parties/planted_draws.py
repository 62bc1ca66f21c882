"""Planted programs for key flow of honest *draws* (issue 27, class 5, item 5).

A draw is what a party takes from ``ctx.randomness`` — field elements. A protocol sends some
draws on purpose (a share to its addressee, a broadcast nonce); a buggy one hands a draw to a
party that should not hold it, or uses a short drawn seed as a key and then publishes it.
Each program is a SecureSum (explicit shares) on which the coalition {0} of three sites must
learn only the sum.

Leaks:

* :func:`cc_shares` — every party also sends party 0 a copy of the shares it addresses to the
  other peers (the draw used linearly, reaching the wrong party);
* :func:`published_key` — every party expands its shares with AES from a 2-element drawn key
  and broadcasts that key as a "session id" (the draw used as a seed);
* :func:`key_in_pieces` — the same drawn key reaches party 0 one element at a time, each
  inside a message with a header (a "hello" and a "bye" after the sum);
* :func:`seeded_bits` — shares expanded from a drawn key that stays home, reduced to bits
  (the expansion is honest, the small range is the leak, in every field).

Honest controls: :func:`seeded_shares` (shares from a drawn key that stays home) and
:func:`nonce_first` (each party broadcasts a 2-element nonce before an explicit sum).
"""

from __future__ import annotations

import hashlib
from collections.abc import Generator
from typing import Any

import numpy as np

from protocols.context import PartyContext
from protocols.crypto.keystream import field_stream
from protocols.effects import Input, Output, RecvEach, SendEach
from protocols.field import PrimeField
from protocols.secure_sum import PROTOCOL
from protocols.sharing import additive_reconstruct, column_sum, own_share


def expand(field_: PrimeField, key: np.ndarray, stream: int, n: int) -> np.ndarray:
    """A drawn key of field elements expanded by AES-CTR (AES key = SHA-256 of its bytes)."""
    aes_key = hashlib.sha256(np.asarray(key, dtype="<u8").tobytes()).digest()
    return field_stream(aes_key, stream, n, field_)


def _sum(ctx: PartyContext, x: np.ndarray, *, key_shares: bool = False, publish: bool = False,
         cc: bool = False, nonce: bool = False, pieces: bool = False, small: bool = False
         ) -> Generator[Any, Any, Any]:
    fld, peers, d = ctx.field, ctx.peers, len(x)
    call = ctx.new_call(PROTOCOL)
    yield Input("x", x, call)
    if nonce:
        yield SendEach(dict.fromkeys(peers, ctx.randomness.private(call, 2, sub=7)), call,
                       "nonce")
        yield RecvEach(peers, call, "nonce")
    if key_shares:
        key = ctx.randomness.private(call, 2, sub=3)
        masks = expand(fld, key, call.index, len(peers) * d)
        if small:  # BUG: the expanded shares are reduced to bits
            masks = fld.elements(np.asarray(masks) % 2)
    else:
        masks = ctx.randomness.private(call, len(peers) * d)
    shares = {p: masks[i * d : (i + 1) * d] for i, p in enumerate(peers)}
    kept = own_share(fld, np.asarray(x), list(shares.values()))
    yield SendEach(shares, call, "share")
    if pieces:  # BUG: the key's first element rides in a greeting to party 0
        if ctx.party != 0:
            yield SendEach({0: fld.elements([7, int(key[0])])}, call, "hello")
        else:
            yield RecvEach(peers, call, "hello")
    if publish:  # BUG: the key the shares come from is broadcast as a session id
        yield SendEach(dict.fromkeys(peers, key), call, "session_id")
        yield RecvEach(peers, call, "session_id")
    if cc:  # BUG: party 0 gets a copy of every share addressed to another peer
        if ctx.party != 0:
            others = [shares[p] for p in peers if p != 0]
            yield SendEach({0: np.concatenate(others)}, call, "cc")
        else:
            yield RecvEach(peers, call, "cc")
    got = yield RecvEach(peers, call, "share")
    colsum = column_sum(fld, kept, [got[p] for p in peers])
    yield SendEach(dict.fromkeys(peers, colsum), call, "column_sum")
    sums = yield RecvEach(peers, call, "column_sum")
    total = additive_reconstruct(fld, [colsum, *(sums[p] for p in peers)])
    yield Output("sum", total, call)
    if pieces:  # BUG: ... and its second in a farewell
        if ctx.party != 0:
            yield SendEach({0: fld.elements([int(key[1]), 9])}, call, "bye")
        else:
            yield RecvEach(peers, call, "bye")
    return total


def cc_shares(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """Leak: party 0 is copied on every share (drawn elements, used linearly)."""
    return (yield from _sum(ctx, x, cc=True))


def published_key(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """Leak: the drawn key of every party's shares is broadcast."""
    return (yield from _sum(ctx, x, key_shares=True, publish=True))


def key_in_pieces(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """Leak: the drawn key of every party's shares reaches party 0 in two pieces."""
    return (yield from _sum(ctx, x, key_shares=True, pieces=True))


def seeded_bits(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """Leak: shares expanded from a drawn key that stays home, then reduced to bits."""
    return (yield from _sum(ctx, x, key_shares=True, small=True))


def seeded_shares(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """Honest: shares expanded from a drawn key that never leaves the party."""
    return (yield from _sum(ctx, x, key_shares=True))


def nonce_first(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """Honest: a broadcast 2-element nonce, then explicit SecureSum."""
    return (yield from _sum(ctx, x, nonce=True))
