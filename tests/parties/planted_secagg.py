"""Planted SecAgg leaks: sites whose program departs from Bonawitz et al.'s in one place.

Sites 0..M−1 and the aggregator M run one or two SecAgg calls (:mod:`protocols.secagg`,
complete graph, threshold t) on field vectors; every program outputs the correct sum. The
honest site program is :func:`protocols.secagg.secagg_field`; :func:`site_round` is the same
program with one departure, selected by ``leak``:

``both_secrets``
    Every site's unmasking message carries, besides what the protocol reveals, its share of
    s_0^SK (site 0's mask key) although site 0 survived: the aggregator reconstructs both
    b_0 and s_0^SK and reads x̂_0 = y_0 − PRG(b_0) − Σ_v ±PRG(s_{0,v})
    (:func:`recover_from_both_secrets`). The message is L elements longer than declared.
``share_to_aggregator``
    Site 0 also sends the aggregator its share for holder ``WRONG_HOLDER`` (step ``shares``):
    with t − 1 colluding sites holding their own shares, the aggregator has t shares of
    (s_0^SK, b_0) before any unmasking (:func:`recover_from_wrong_share`).
``reused_seed``
    Site 0 draws its self-mask seed b_0, and the coefficients sharing it, once, in its first
    call, and shares the same b_0 the same way in the second: the b-halves of its shares
    repeat across calls, a relation between the calls that fresh seeds never show.
``reused_key``
    Site 0 keeps its mask key pair (s_0^SK, s_0^PK) for its second call. If it drops in the
    second call after sharing, the aggregator reconstructs s_0^SK there, and with b_0
    reconstructed in the first call it unmasks the first call's y_0
    (:func:`recover_from_reused_key`).
``omitted_pair``
    Site 0's masked input leaves out its pair mask with site 1 (site 1 adds its own): the
    aggregator's output is Σ x̂ + PRG(s_{0,1}), not the sum — an output beyond the
    functionality, which every coalition that receives it holds.
``omitted_pairs_both_sides``
    Site 0 and each of its peers leave out their pair mask, on both sides, so the sum is
    right: y_0 = x̂_0 + PRG(b_0), and the aggregator reads x̂_0 once it reconstructs b_0
    (:func:`recover_from_omitted_pairs`). The relation passes through the PRG: value tests
    see it only when the audit programs the oracle (``SimPyRunner(..., oracle="affine")``).
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

import numpy as np

from parties.party import Party
from protocols import sharing
from protocols.context import AesRandomness, PartyContext
from protocols.crypto.key_agreement import keypair
from protocols.effects import Input, Output, Recv, RecvWithin, Send, SendEach
from protocols.field import PrimeField
from protocols.secagg import (
    AGGREGATOR,
    PROTOCOL,
    Config,
    _ids,
    _keys_from_payload,
    pair_masks,
    secagg_aggregator,
    secagg_field,
    secret_key,
    secret_length,
    self_mask,
)

LEAKS = ("both_secrets", "share_to_aggregator", "reused_seed", "reused_key", "omitted_pair",
         "omitted_pairs_both_sides")
LEAKER = 0
OMITTED_PEER = 1
WRONG_HOLDER = 3


def site_round(ctx: PartyContext, x_hat: np.ndarray, config: Config, leak: str | None,
               memory: dict[str, Any]) -> Generator[Any, Any, np.ndarray]:
    """One SecAgg call of a site, as :func:`protocols.secagg.secagg_field` with ``leak``."""
    field, me, m = ctx.field, ctx.party, ctx.n_parties
    agg, lsec, d, t = m, secret_length(field), len(x_hat), config.threshold
    call = ctx.new_call(PROTOCOL)
    leaking = me == LEAKER and leak is not None
    yield Input("x", x_hat, call)
    if leaking and leak == "reused_key" and "sk" in memory:
        sk = memory["sk"]
    else:
        sk = memory["sk"] = ctx.randomness.private(call, lsec, sub=0)
    yield Send(agg, np.frombuffer(keypair(secret_key(sk)).public, dtype=np.uint8).copy(), call,
               "public_key")
    keys = _keys_from_payload((yield Recv(agg, call, "neighbour_keys")))
    u1 = tuple(sorted(keys))
    holders = (*u1, me)
    if leaking and leak == "reused_seed" and "b" in memory:
        b, b_coefficients = memory["b"], memory["b_coefficients"]
        coefficients = ctx.randomness.private(call, (t - 1) * 2 * lsec, sub=2).reshape(
            t - 1, 2 * lsec).copy()
        coefficients[:, lsec:] = b_coefficients
    else:
        b = ctx.randomness.private(call, lsec, sub=1)
        coefficients = ctx.randomness.private(call, (t - 1) * 2 * lsec, sub=2).reshape(
            t - 1, 2 * lsec)
        memory["b"], memory["b_coefficients"] = b, coefficients[:, lsec:].copy()
    shares = sharing.shamir_share(field, np.concatenate([sk, b]), [v + 1 for v in holders],
                          coefficients)
    yield SendEach({v: shares[i] for i, v in enumerate(u1)}, call, "shares")
    if leaking and leak == "share_to_aggregator":
        yield Send(agg, shares[u1.index(WRONG_HOLDER)], call, "shares")
    yield Send(agg, field.elements([1]), call, "shared")
    u2 = _ids((yield Recv(agg, call, "survivors_2")))
    held = {me: shares[-1]}
    for v in u2:
        held[v] = np.asarray((yield Recv(v, call, "shares")))
    peers = [v for v in u2 if not _omits(leak, me, v)]
    y = field.sum_arrays([x_hat, self_mask(ctx.randomness, b, call, d),
                          pair_masks(ctx.randomness, field, sk, me, {v: keys[v] for v in peers},
                                     call, d)])
    yield Send(agg, y, call, "masked_input")
    u3 = set(_ids((yield Recv(agg, call, "survivors_3"))))
    reveal = [held[v][lsec:] if v in u3 or v == me else held[v][:lsec] for v in sorted(held)]
    if leak == "both_secrets" and LEAKER in held:
        reveal.append(held[LEAKER][:lsec])  # s_0^SK's share too, although 0 survived
    yield Send(agg, np.concatenate(reveal), call, "unmask")
    total = np.asarray((yield Recv(agg, call, "sum")))
    yield Recv(agg, call, "survivors")
    yield Output("sum", total, call)
    return total


def _omits(leak: str | None, me: int, peer: int) -> bool:
    """Whether ``me`` leaves out its pair mask with ``peer``."""
    if leak == "omitted_pair":
        return me == LEAKER and peer == OMITTED_PEER
    if leak == "omitted_pairs_both_sides":
        return LEAKER in (me, peer)
    return False


def leaky_parties(inputs: list[np.ndarray], config: Config, leak: str | None,
                  calls: int = 1) -> list[Party]:
    """Sites running ``calls`` SecAgg calls on their input with ``leak`` (None: honest, the
    package's own program), and the aggregator (party M)."""
    m = len(inputs)

    def site(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        memory: dict[str, Any] = {}
        out = None
        for _ in range(calls):
            if leak is None:
                out, _ = yield from secagg_field(ctx, x, config)
            else:
                out = yield from site_round(ctx, x, config, leak, memory)
        return out

    def aggregator(ctx: PartyContext, length: int) -> Generator[Any, Any, Any]:
        out = None
        for _ in range(calls):
            out = yield from _reading_past_extra_shares(
                secagg_aggregator(ctx, length, config), secret_length(ctx.field),
                leak == "both_secrets")
        return out

    return [Party(u, site, {"x": x}) for u, x in enumerate(inputs)] + [
        Party(m, aggregator, {"length": len(inputs[0])}, role=AGGREGATOR)]


def _reading_past_extra_shares(program: Generator[Any, Any, Any], lsec: int, trim: bool
                               ) -> Generator[Any, Any, Any]:
    """The aggregator's program, handed each unmasking message without the extra share that
    ``both_secrets`` appends (its view, written by the driver, keeps the whole message)."""
    value = None
    while True:
        try:
            effect = program.send(value)
        except StopIteration as stop:
            return stop.value
        value = yield effect
        if trim and isinstance(effect, RecvWithin) and effect.step == "unmask":
            value = {w: np.asarray(p)[:-lsec] for w, p in value.items()}


# -- the attacks: what the coalition computes from its views alone -----------------------------


def _by_step(view: Any, call_index: int) -> dict[tuple[int, str], list[np.ndarray]]:
    got: dict[tuple[int, str], list[np.ndarray]] = {}
    for msg in view.received:
        if msg.protocol == PROTOCOL and msg.call == call_index:
            got.setdefault((msg.sender, msg.step), []).append(np.asarray(msg.payload))
    return got


def _unmask_x0(field: PrimeField, call_index: int, y0: np.ndarray, b0: np.ndarray,
               sk0: np.ndarray, public: Mapping[int, bytes]) -> np.ndarray:
    """x̂_0 = y_0 − PRG(b_0) − Σ_v ±PRG(s_{0,v}), with the default random oracle."""
    from protocols.effects import Call

    prg = AesRandomness(field, bytes(32))
    call = Call(PROTOCOL, call_index)
    peers = {v: k for v, k in public.items() if v != LEAKER}
    return field.sub(field.sub(y0, self_mask(prg, b0, call, len(y0))),
                     pair_masks(prg, field, sk0, LEAKER, peers, call, len(y0)))


def recover_from_both_secrets(field: PrimeField, agg_view: Any, m: int, t: int,
                              call_index: int) -> np.ndarray:
    """The aggregator's attack on ``both_secrets``: x̂_0 from its view of one call."""
    lsec = secret_length(field)
    got = _by_step(agg_view, call_index)
    b_shares, sk_shares = [], []
    for w in range(m):
        payload = got[(w, "unmask")][0]
        order = sorted(set(range(m)))  # complete graph, no dropout: holders of every site
        parts = payload[: m * lsec].reshape(m, lsec)
        b_shares.append((w + 1, parts[order.index(LEAKER)]))
        sk_shares.append((w + 1, payload[m * lsec:]))
    b0 = sharing.shamir_reconstruct(field, [x for x, _ in b_shares[:t]],
                                    [s for _, s in b_shares[:t]], t)
    sk0 = sharing.shamir_reconstruct(field, [x for x, _ in sk_shares[:t]],
                             [s for _, s in sk_shares[:t]], t)
    public = {u: bytes(got[(u, "public_key")][0]) for u in range(m)}
    return _unmask_x0(field, call_index, got[(LEAKER, "masked_input")][0], b0, sk0, public)


def recover_from_wrong_share(field: PrimeField, views: Mapping[int, Any], members: list[int],
                             m: int, t: int, call_index: int) -> np.ndarray:
    """The coalition {aggregator} ∪ ``members`` (t − 1 sites) on ``share_to_aggregator``:
    t shares of (s_0^SK, b_0) before unmasking, then x̂_0 from y_0."""
    lsec = secret_length(field)
    agg = _by_step(views[m], call_index)
    points = [WRONG_HOLDER + 1]
    values = [agg[(LEAKER, "shares")][0]]
    for w in members:
        points.append(w + 1)
        values.append(_by_step(views[w], call_index)[(LEAKER, "shares")][0])
    secret = sharing.shamir_reconstruct(field, points[:t], values[:t], t)
    sk0, b0 = secret[:lsec], secret[lsec:]
    public = {u: bytes(agg[(u, "public_key")][0]) for u in range(m)}
    return _unmask_x0(field, call_index, agg[(LEAKER, "masked_input")][0], b0, sk0, public)


def recover_from_reused_key(field: PrimeField, agg_view: Any, m: int, t: int,
                            first: int, second: int) -> np.ndarray:
    """The aggregator on ``reused_key`` when site 0 dropped in the second call after sharing:
    s_0^SK reconstructed there, b_0 in the first call, x̂_0 of the first call."""
    lsec = secret_length(field)
    one, two = _by_step(agg_view, first), _by_step(agg_view, second)
    alive = sorted(w for w in range(m) if (w, "unmask") in two)
    sk_shares = []
    for w in alive:  # holders in the second call reveal s_0^SK's share (0 dropped)
        order = sorted(range(m))
        parts = two[(w, "unmask")][0].reshape(len(order), lsec)
        sk_shares.append((w + 1, parts[order.index(LEAKER)]))
    sk0 = sharing.shamir_reconstruct(field, [x for x, _ in sk_shares[:t]],
                             [s for _, s in sk_shares[:t]], t)
    b_shares = []
    for w in range(m):
        parts = one[(w, "unmask")][0].reshape(m, lsec)
        b_shares.append((w + 1, parts[LEAKER]))
    b0 = sharing.shamir_reconstruct(field, [x for x, _ in b_shares[:t]],
                                    [s for _, s in b_shares[:t]], t)
    public = {u: bytes(one[(u, "public_key")][0]) for u in range(m)}
    return _unmask_x0(field, first, one[(LEAKER, "masked_input")][0], b0, sk0, public)


def recover_from_omitted_pairs(field: PrimeField, agg_view: Any, m: int, t: int,
                               call_index: int) -> np.ndarray:
    """The aggregator alone on ``omitted_pairs_both_sides``: b_0 from the unmasking shares,
    x̂_0 = y_0 − PRG(b_0)."""
    from protocols.effects import Call

    lsec = secret_length(field)
    got = _by_step(agg_view, call_index)
    b_shares = [(w + 1, got[(w, "unmask")][0].reshape(m, lsec)[LEAKER]) for w in range(m)]
    b0 = sharing.shamir_reconstruct(field, [x for x, _ in b_shares[:t]],
                                    [s for _, s in b_shares[:t]], t)
    prg = AesRandomness(field, bytes(32))
    y0 = got[(LEAKER, "masked_input")][0]
    return field.sub(y0, self_mask(prg, b0, Call(PROTOCOL, call_index), len(y0)))
