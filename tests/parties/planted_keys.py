"""Planted key leaks: SecureSum programs whose key material reaches the wrong party.

Every program has the interface of the honest one (``program(ctx, x)`` on a flat vector of
field elements, returning Σ_m x̂^(m) at every party) and outputs the right sum; one extra
message, sent by site 1 to site 0 in SecureSum's call before the column sums (step ``debug``),
carries the key
material. Site 0 alone receives it, so with M = 3 only the coalition {0} holds it, and the
honest parties are {1, 2}.

Notation (``prg``, the one-stream form of :mod:`protocols.secure_sum`): s_ab is the d-element
AES stream of the pair {a, b} in the call (key: the pair seed, ``ctx.mask_seeds``; stream
number: :func:`protocols.context.stream_number` of the call). Site 1 sends
c_1 = x̂_1 + s_12 − s_01, site 2 sends c_2 = x̂_2 − s_02 − s_12; site 0 knows s_01 and s_02.

``pair_seed``
    Site 1 sends the pair seed it shares with site 2 (32 bytes, as uint8). Site 0 expands it,
    s_12 = AES-CTR(seed, stream), and reads x̂_1 = c_1 − s_12 + s_01. Leaks to {0}.
``pair_seed_elements``
    The same seed, one field element per byte (a "checksum" vector). Leaks to {0}.
``keystream_block``
    The first AES block (16 bytes: two little-endian 64-bit words) of the stream of {1, 2}
    in the call, as bytes. With d ≤ 2 and no rejected word, the words masked to the field's bits are
    s_12 itself (:meth:`protocols.field.PrimeField.from_words`). Leaks to {0}.
``mask_plus_constant``
    Site 1's net mask s_12 − s_01 plus a public constant (7 in every coordinate): site 0 reads
    x̂_1 = c_1 − (received − 7). Leaks to {0}.
``mask_xor_constant``
    The net mask XOR a public constant (0x5A5A in every coordinate), as uint64. Leaks to {0}.
``private_keys`` (explicit variant)
    Sites 1 and 2 both send their private mask keys to site 0, which expands them to every
    share r_1^(j), r_2^(j); then x̂_1 = c_1 + r_1^(0) + r_1^(2) − r_0^(1) − r_2^(1). Leaks to
    {0}.
``one_private_key`` (explicit variant)
    Only site 1 sends its private key. Site 0 learns r_1^(2) but not r_2^(1), which still
    masks both honest column sums: c_1 − (known) = x̂_1 + r_2^(1), c_2 − (known) =
    x̂_2 − r_2^(1). The coalition holds an honest key yet learns nothing beyond the sum: the
    exact method (every key enumerated) names the key and answers ``private``; the
    value-testing methods name it and do not claim ``private``.
``secagg_key_to_aggregator``
    SecAgg (M = 4, t = 3) where site 1 sends its private mask key to the aggregator, which
    reads x̂_1 from site 1's masked input (see the function).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import numpy as np

from protocols.context import AesRandomness, PartyContext, stream_number
from protocols.crypto.aes_ctr import keystream_words
from protocols.effects import Call, Recv, Send
from protocols.secure_sum import secure_sum_field

Program = Callable[[PartyContext, np.ndarray], Generator[Any, Any, np.ndarray]]
SENDER, RECEIVER, THIRD = 1, 0, 2
DEBUG = "debug"
PLUS = 7
XOR = 0x5A5A


def private_key(ctx: PartyContext) -> bytes:
    """The party's private mask key (a bug reaching into its randomness)."""
    source = getattr(ctx.randomness, "inner", ctx.randomness)
    source = getattr(source, "fresh", source)
    assert isinstance(source, AesRandomness)
    return source._private_key


def next_call(ctx: PartyContext) -> Call:
    """The call SecureSum is about to start (its counter advances identically everywhere)."""
    return Call("secure_sum", ctx._calls)


def _with_debug(material: Callable[[PartyContext, np.ndarray], np.ndarray],
                senders: tuple[int, ...] = (SENDER,), variant: str = "prg") -> Program:
    def program(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
        debug = next_call(ctx)  # inside SecureSum's call, as a stray step of it
        if ctx.party in senders:
            yield Send(RECEIVER, material(ctx, x), debug, DEBUG)
        if ctx.party == RECEIVER:
            for s in senders:
                yield Recv(s, debug, DEBUG)
        return (yield from secure_sum_field(ctx, x, variant))  # type: ignore[arg-type]

    return program


def _seed(ctx: PartyContext, x: np.ndarray) -> np.ndarray:
    return np.frombuffer(ctx.mask_seeds[THIRD], dtype=np.uint8).copy()


def _seed_elements(ctx: PartyContext, x: np.ndarray) -> np.ndarray:
    return ctx.field.elements(np.array(list(ctx.mask_seeds[THIRD]), dtype=np.int64))


def _block(ctx: PartyContext, x: np.ndarray) -> np.ndarray:
    words = keystream_words(ctx.mask_seeds[THIRD], stream_number(next_call(ctx), 0), 2)
    return np.frombuffer(words.tobytes(), dtype=np.uint8).copy()


def net_mask(ctx: PartyContext, d: int) -> np.ndarray:
    """s_12 − s_01: site 1's one-stream mask, recomputed from its seeds (the bug's copy)."""
    from protocols.crypto.keystream import field_stream

    stream = stream_number(next_call(ctx), 0)
    s12 = field_stream(ctx.mask_seeds[THIRD], stream, d, ctx.field)
    s01 = field_stream(ctx.mask_seeds[RECEIVER], stream, d, ctx.field)
    return ctx.field.sub(s12, s01)


def _mask_plus(ctx: PartyContext, x: np.ndarray) -> np.ndarray:
    return ctx.field.add(net_mask(ctx, len(x)), ctx.field.elements(np.full(len(x), PLUS)))


def _mask_xor(ctx: PartyContext, x: np.ndarray) -> np.ndarray:
    return np.asarray(net_mask(ctx, len(x)), dtype=np.uint64) ^ np.uint64(XOR)


def _private_key(ctx: PartyContext, x: np.ndarray) -> np.ndarray:
    return np.frombuffer(private_key(ctx), dtype=np.uint8).copy()


LEAKS: dict[str, Program] = {
    "pair_seed": _with_debug(_seed),
    "pair_seed_elements": _with_debug(_seed_elements),
    "keystream_block": _with_debug(_block),
    "mask_plus_constant": _with_debug(_mask_plus),
    "mask_xor_constant": _with_debug(_mask_xor),
    "private_keys": _with_debug(_private_key, (1, 2), "explicit"),
}
"""Programs from whose views the coalition {0} recovers x̂_1 (M = 3)."""

HARMLESS: dict[str, Program] = {
    "one_private_key": _with_debug(_private_key, (1,), "explicit"),
}
"""Programs that hand the coalition an honest key that masks nothing it sees."""


# -- SecAgg: a site hands its private mask key to the aggregator ---------------------------------


def secagg_key_to_aggregator(inputs: list[np.ndarray], threshold: int = 3) -> list[Any]:
    """SecAgg parties (sites 0..M−1, aggregator M) where site 1 first sends the aggregator its
    private mask key (step ``debug`` of the SecAgg call).

    From it the aggregator expands site 1's secret s_1^SK and self-mask seed b_1 (its private
    streams 0 and 1 of the call), agrees s_{1,v} with every public key it relayed, and reads
    x̂_1 = y_1 − PRG(b_1) − Σ_v ±PRG(s_{1,v}) from site 1's masked input — although b_1 and
    s_1^SK are never reconstructed for a survivor.
    """
    from parties.party import Party
    from protocols.secagg import Config, secagg_aggregator, secagg_field

    config = Config(threshold=threshold)
    m = len(inputs)

    def site(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        if ctx.party == SENDER:
            call = Call("secagg", ctx._calls)
            yield Send(m, np.frombuffer(private_key(ctx), dtype=np.uint8).copy(), call, DEBUG)
        return (yield from secagg_field(ctx, x, config))

    def aggregator(ctx: PartyContext, length: int) -> Generator[Any, Any, Any]:
        yield Recv(SENDER, Call("secagg", ctx._calls), DEBUG)
        return (yield from secagg_aggregator(ctx, length, config))

    return [Party(u, site, {"x": x}) for u, x in enumerate(inputs)] + [
        Party(m, aggregator, {"length": len(inputs[0])}, role="aggregator")]
