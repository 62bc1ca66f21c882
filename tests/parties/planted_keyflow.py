"""Planted key flows (issue 27, class 5, item 5): honest keys that reach the coalition in forms
the first key-flow plants (:mod:`planted_keys`) do not use, and an honest control.

SecureSum ``prg`` (one-stream pair masks): site m sends c_m = x̂_m + Σ_{j>m} s_mj − Σ_{j<m} s_jm,
s_ab the AES stream of the pair seed {a, b} in the call (``ctx.mask_seeds``). Each plant adds
one stray message (step ``debug``) from site 1.

``key_halves`` (M = 4, coalition {0, 3})
    Site 1 sends the first 16 bytes of its pair seed with site 2 to site 0, the last 16 to
    site 3. Neither half is the key; together they are. {0, 3} knows s_01 and s_13, rebuilds
    s_12 and reads x̂_1 = c_1 − s_12 − s_13 + s_01.
``xor_key`` (M = 3, coalition {0})
    Site 1 sends the pair seed {1, 2} XOR a fixed public pad (0xA5 in every byte).
``later_call`` (M = 3, coalition {0})
    SecureSum runs first; then, in a call of its own (``debug`` call), site 1 sends site 0
    the pair seed {1, 2}. The key unmasks a message of an earlier call.
``secagg_key_later`` (SecAgg, M = 4, t = 3, coalition {aggregator})
    SecAgg runs; afterwards site 1 sends the aggregator its private mask key. The aggregator
    expands s_1^SK and b_1, agrees s_{1,v} with every public key it relayed, and reads x̂_1
    from site 1's masked input. Holding the key fixed does not fix the masks agreed with the
    honest peers' fresh keys: the unmasking test (:mod:`parties.audit.unmasking`) decides it.

Honest control

``seed_to_partner`` (M = 3)
    Site 1 sends its pair seed {1, 2} to site 2, which has it already. No coalition of size 1
    learns anything: {2} holds its own key, {0} never sees it.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import planted_keys as pk

from parties.party import Party
from protocols.context import PartyContext
from protocols.effects import Call, Recv, Send
from protocols.secure_sum import secure_sum_field

Program = Callable[[PartyContext, np.ndarray], Generator[Any, Any, np.ndarray]]
DEBUG = "debug"
PAD = 0xA5


def _seed(ctx: PartyContext, peer: int) -> np.ndarray:
    return np.frombuffer(ctx.mask_seeds[peer], dtype=np.uint8).copy()


def key_halves(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """Site 1 splits its pair seed {1, 2} between sites 0 and 3."""
    debug = pk.next_call(ctx)
    if ctx.party == 1:
        seed = _seed(ctx, 2)
        yield Send(0, seed[:16], debug, DEBUG)
        yield Send(3, seed[16:], debug, DEBUG)
    if ctx.party in (0, 3):
        yield Recv(1, debug, DEBUG)
    return (yield from secure_sum_field(ctx, x, "prg"))


def xor_key(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """Site 1 sends site 0 its pair seed {1, 2} XOR a public pad."""
    debug = pk.next_call(ctx)
    if ctx.party == 1:
        yield Send(0, _seed(ctx, 2) ^ np.uint8(PAD), debug, DEBUG)
    if ctx.party == 0:
        yield Recv(1, debug, DEBUG)
    return (yield from secure_sum_field(ctx, x, "prg"))


def later_call(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """SecureSum, then site 1 sends site 0 its pair seed {1, 2} in a call of its own."""
    total = yield from secure_sum_field(ctx, x, "prg")
    debug = ctx.new_call(DEBUG)
    if ctx.party == 1:
        yield Send(0, _seed(ctx, 2), debug, DEBUG)
    if ctx.party == 0:
        yield Recv(1, debug, DEBUG)
    return total


def seed_to_partner(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """Honest: site 1 sends its pair seed {1, 2} to site 2, its other holder."""
    debug = pk.next_call(ctx)
    if ctx.party == 1:
        yield Send(2, _seed(ctx, 2), debug, DEBUG)
    if ctx.party == 2:
        yield Recv(1, debug, DEBUG)
    return (yield from secure_sum_field(ctx, x, "prg"))


def secagg_key_later(inputs: list[np.ndarray], threshold: int = 3) -> list[Party]:
    """SecAgg parties (sites 0..M−1, aggregator M); after the protocol, site 1 sends the
    aggregator its private mask key in a call of its own."""
    from protocols.secagg import Config, secagg_aggregator, secagg_field

    config = Config(threshold=threshold)
    m = len(inputs)

    def site(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        total = yield from secagg_field(ctx, x, config)
        if ctx.party == 1:
            call = Call(DEBUG, 0)
            yield Send(m, np.frombuffer(pk.private_key(ctx), dtype=np.uint8).copy(), call,
                       DEBUG)
        return total

    def aggregator(ctx: PartyContext, length: int) -> Generator[Any, Any, Any]:
        total = yield from secagg_aggregator(ctx, length, config)
        yield Recv(1, Call(DEBUG, 0), DEBUG)
        return total

    return [Party(u, site, {"x": x}) for u, x in enumerate(inputs)] + [
        Party(m, aggregator, {"length": len(inputs[0])}, role="aggregator")]


LEAKS: dict[str, tuple[Program, int, list[int]]] = {
    "key_halves": (key_halves, 4, [0, 3]),
    "xor_key": (xor_key, 3, [0]),
    "later_call": (later_call, 3, [0]),
}
"""Program, number of sites, coalition: each coalition recovers x̂_1."""
