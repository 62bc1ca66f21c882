"""Planted leaks: SecureSum party programs with realistic privacy bugs, for the audits' tests.

Every program here has the interface of the honest one (:func:`protocols.secure_sum.
secure_sum_field`, as :func:`sim.privacy.secure_sum_program` wraps it): ``program(ctx, x)`` on
a flat vector of field elements, returning Σ_m x̂^(m) at every party. Each is built from the
pure share functions of :mod:`protocols.secure_sum` (``own_share``, ``column_sum``, ``reconstruct``,
``pair_shares``) and draws every secret mask from ``ctx.randomness``, so every audit method
applies: the exact one replaces the randomness by an enumerated tape, the statistical one records
the draws. Every leaky program still outputs the correct sum (the tests check it), so it is the
audit — not a broken output — that must catch it.

Notation (Table 2.1 of seed 001): r_i^(j) is the share party i gives party j, r_i^(i) the
share it keeps, c_j = Σ_i r_i^(j) party j's column sum, broadcast to everyone; C is the
coalition, H the honest parties. A coalition with |H| = 1 learns the honest input from the sum
itself, so "learns something beyond the sum" needs |H| ≥ 2; every table below lists only the
coalitions with |H| ≥ 2 that leak, for M = 3 and M = 4.

A general fact used repeatedly. After the coalition subtracts everything it knows, honest
party h's column sum is c'_h = x̂_h + Σ_{h'∈H∖h} (r_{h'}^(h) − r_h^(h')): a flow on the graph
of honest pairs, each directed edge h→h' carrying the mask r_h^(h'). Call an edge *hidden* when
its mask is uniform and unknown to C. The vector (c'_h)_{h∈H} is x̂_H + (incidence matrix)·(hidden
masks) + (known); the incidence matrix of a connected graph on H spans exactly {v : Σ v = 0}.
So the view is uniform given Σ_H x̂_h — private — iff the hidden edges connect H; a
disconnected component K reveals Σ_{h∈K} x̂_h (with singletons, an input itself).

The four leaks, and which coalitions each leaks to
--------------------------------------------------

1. ``raw_input`` — a party sends its raw input x̂ to a peer.

   *explicit*: the share vector is built as ``[x̂, r_1, ..., r_{M−2}]`` (x̂ meant as the running
   remainder, then sent by an off-by-one): party i sends x̂_i **in place of** its share to its
   first peer f(i) = min(peers) — party 0 for i ≥ 1, party 1 for i = 0 — and keeps
   r_i^(i) = −Σ(its other shares), so its shares still add up to x̂_i.
   Direct: a C ∋ 0 receives every other input; a C ∋ 1 receives x̂_0. Indirect, through the
   column sums: with r_0^(0) = −Σ_{j≥2} r_0^(j) and r_i^(0) = x̂_i, c_0 = x̂_1 + x̂_2 + ... −
   Σ_{j≥2} r_0^(j), and c_1 = x̂_0 − Σ_{j≥2} r_1^(j) + Σ_{j≥2} r_j^(1).
   M = 3: {0} (gets x̂_1, x̂_2), {1} (gets x̂_0), {2}: knows r_1^(2) (received) and r_2^(1) (its
   own), so x̂_0 = c_1 + r_1^(2) − r_2^(1). All three leak.
   M = 4: C ∋ 0 or C ∋ 1 leak directly; {2, 3} knows r_0^(2), r_0^(3) (received), x̂_2, x̂_3, so
   x̂_1 = c_0 + r_0^(2) + r_0^(3) − x̂_2 − x̂_3. {2} (and symmetrically {3}) is private: after
   subtracting what it knows it sees y_0 = x̂_1 + x̂_3 − u, y_1 = x̂_0 − v, y_3 = u + v with
   u = r_0^(3), v = r_1^(3) − r_3^(1) uniform and hidden — uniform given the honest sum.
   Leaks to: M = 3 {0}, {1}, {2}; M = 4 every coalition of 1–2 parties but {2} and {3}.

   *prg*: no share is sent in this variant, so the raw input goes **in addition**: every
   party sends a copy of x̂ to its first peer (a leftover "consistency check" message that the
   peer reads). Party 0 receives every other input, party 1 receives x̂_0, nobody else gets
   anything extra, and the rest of the protocol is the honest one.
   Leaks to: C ∋ 0, or C ∋ 1 with 0 ∉ C: M = 3 {0}, {1} (not {2}); M = 4 {0}, {1}, {0, 1},
   {0, 2}, {0, 3}, {1, 2}, {1, 3} (not {2}, {3}, {2, 3}).

2. ``reused_mask`` — one mask serves several peers.

   *explicit*: party i draws one mask r_i and sends the same share r_i to every peer, keeping
   x̂_i − (M−1)·r_i. Every member receives r_h from every honest h, so C knows every r and
   reads x̂_h = c_h + (M−1)·r_h − Σ_{i≠h} r_i. Leaks to every coalition with |H| ≥ 2.
   (Each received share is uniform on its own — the leak is invisible element by element and
   must be found by the linear test.)

   *prg*: the pair seeds are set up by the lower-indexed party of each pair, which sends the
   seed to the higher one (here the seed *is* its 2d-element stream g: knowing the seed means
   knowing the stream). The bug draws one private stream g_i per party, outside the loop over
   peers, and uses it as the pair stream with **every** higher peer: so a_i (first half of
   g_i) is i's share for all higher peers and b_i (second half) all higher peers' share for i.
   Every peer can compute the shares it must know, and the sum is right. But g_i is now known
   to i and every party above it, so C knows g_0, ..., g_{max C}. Honest h's column sum is
   c_h = x̂_h + Σ_{i<h} (a_i − b_i) + (M−1−h)(b_h − a_h): masked only by g_0..g_h. So C learns
   x̂_h for every honest h < max C. If C is a prefix {0, ..., m} there is no such h, and the
   remaining masks w_i = a_i − b_i (m < i ≤ M−2, hidden) give c'_h = x̂_h + Σ_{m<i<h} w_i −
   (M−1−h) w_h, a full-rank flow on H (the coefficients M−1−h are 1..M−2−m, nonzero mod p):
   private.
   Leaks to: every coalition that is not a prefix {0..m}: M = 3 {1}, {2} (not {0});
   M = 4 {1}, {2}, {3}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3} (not {0}, {0, 1}).
   :func:`sent_seeds_prg` is the same seed set-up without the bug (a fresh stream per pair),
   which is private: the extra message is not what is flagged.

3. ``small_range`` — masks reduced to a few values (``mask mod 2`` in a field of at most 2^16
   elements, ``mask mod 2^8`` in larger ones) instead of uniform, in both variants (the
   explicit shares, or the pair streams). Every hidden honest-honest mask is now small, so
   c'_h = x̂_h + (a sum of 2(|H|−1) terms ±[0, s)) is concentrated near x̂_h: in GF(2^61 − 1)
   the coalition reads x̂_h to within ±2(|H|−1)·255; in GF(5) and GF(7), x̂_h + {−1: ¼, 0: ½,
   1: ¼} for |H| = 2, a non-uniform law that is not invariant under any nonzero shift (p is
   prime), so it changes with x̂_h. Leaks to every coalition with |H| ≥ 2. (A GF(p)-linear test
   cannot see it: the small masks still span every direction over GF(p), so the affine hulls
   of A and B agree. The element-wise test catches it.)

4. ``predictable_last`` — the mask toward the highest-indexed peer is public.

   top(i) = the highest-indexed peer of i: M−1 for i < M−1, and M−2 for i = M−1. Party i's
   mask r_i^(top(i)) is computed from public information — an AES-CTR stream under a fixed
   all-zero key, numbered by the call index (the programmer took "the last share is
   determined" too literally) — instead of from secret randomness.
   *explicit*: the last share sent is that public value. *prg*: in the pair stream of i and
   top(i), the half that is r_i^(top(i)) is replaced by the public value, at both ends (the
   end j = top(i) replaces its "their share"), so the sum is right.
   Edge h→h' is hidden unless h' = top(h). Both directions of the pair {M−2, M−1} are public
   (top(M−2) = M−1, top(M−1) = M−2); every other honest pair keeps a hidden direction. So
   the hidden edges connect H unless H = {M−2, M−1}: only the coalition {0, ..., M−3} leaks;
   it reads x̂_{M−2} = c_{M−2} − (what it knows) exactly (the two public masks cancel).
   Leaks to: M = 3 {0} (not {1}, {2}); M = 4 {0, 1} (nothing else).

What the simulation audit flags
-------------------------------
It compares each coalition's view with what SecureSum's simulator draws from the coalition's
inputs, randomness and the sum; with one honest party the sum determines the honest input, and
the simulator is given it (issue 27, item 4) and compared like any other; it holds a message the
protocol does not send, from an honest party, to the law of a one-time pad. So it flags every
leaking coalition above, and also:

* ``raw_input`` (prg): every coalition with one honest party h — it receives the extra ``check``
  from h (h's first peer is a member), a raw input where a one-time pad should be, although the
  sum already tells it that input;
* ``predictable_last`` (explicit): every coalition in which a member m receives the public
  share of an honest h (m = top(h)): a share that should be uniform is a constant — a
  departure from the declared simulator that reveals no input (M = 3: {1}, {2}, and with one
  honest party {0, 1}, {0, 2}, {1, 2}; M = 4: every coalition with 3, or with 2 but not 3);
* every coalition with one honest party, in the explicit variant of every leak: the honest
  party's shares to the members are raw, reused, small or public where the declared simulator
  draws them uniform (the call is determined, and simulated all the same — issue 27, item 4);
* nothing for ``reused_mask`` (prg), where it is *not applicable*: the members draw no pair
  streams (the seeds are their private draws, sent), so the simulator has nothing to simulate
  the column sums from.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Generator
from typing import Any

import numpy as np

from protocols.context import PartyContext
from protocols.crypto.keystream import field_stream
from protocols.effects import Call, Input, Output, RecvEach, SendEach
from protocols.field import PrimeField
from protocols.secure_sum import PROTOCOL
from protocols.sharing import additive_reconstruct, column_sum, own_share, pair_shares

Program = Callable[[PartyContext, np.ndarray], Generator[Any, Any, np.ndarray]]
PUBLIC_KEY = bytes(32)
"""The "secret" of leak 4: a fixed key everyone knows."""


# -- shared steps ------------------------------------------------------------------------------


def _start(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Call]:
    call = ctx.new_call(PROTOCOL)
    yield Input("x", x, call)
    return call


def _exchange_column_sums(
    ctx: PartyContext, call: Call, colsum: np.ndarray
) -> Generator[Any, Any, np.ndarray]:
    """Round 2 of explicit / round 1 of prg, as the honest program: broadcast and add up."""
    peers = ctx.peers
    yield SendEach(dict.fromkeys(peers, colsum), call, "column_sum")
    received = yield RecvEach(peers, call, "column_sum")
    total = additive_reconstruct(ctx.field, [colsum, *(received[p] for p in peers)])
    yield Output("sum", total, call)
    return total


def _explicit(
    ctx: PartyContext, call: Call, x: np.ndarray, shares: list[np.ndarray]
) -> Generator[Any, Any, np.ndarray]:
    """Send ``shares`` (one per peer, in ``ctx.peers`` order), keep x̂ − Σ shares, add up."""
    field, peers = ctx.field, ctx.peers
    kept = own_share(field, x, shares)
    yield SendEach(dict(zip(peers, shares, strict=True)), call, "share")
    shares_in = yield RecvEach(peers, call, "share")
    colsum = column_sum(field, kept, [shares_in[p] for p in peers])
    return (yield from _exchange_column_sums(ctx, call, colsum))


def _prg_colsum(
    field: PrimeField, x: np.ndarray, pairs: list[tuple[np.ndarray, np.ndarray]]
) -> np.ndarray:
    """Column sum from (my share for peer, peer's share for me), one pair per peer."""
    return column_sum(field, own_share(field, x, [m for m, _ in pairs]), [t for _, t in pairs])


def _chunks(values: np.ndarray, d: int) -> list[np.ndarray]:
    return [values[k * d : (k + 1) * d] for k in range(len(values) // d)]


def first_peer(party: int, n_parties: int) -> int:
    """min(peers): party 0 for everyone but party 0, whose first peer is 1."""
    return 1 if party == 0 else 0


def top_peer(party: int, n_parties: int) -> int:
    """The highest-indexed peer: M − 1, or M − 2 for party M − 1."""
    return n_parties - 2 if party == n_parties - 1 else n_parties - 1


def public_mask(field: PrimeField, call: Call, d: int) -> np.ndarray:
    """A "mask" anyone can compute: AES-CTR under the all-zero key, numbered by the call."""
    return field_stream(PUBLIC_KEY, call.index, d, field)


def small_range(field: PrimeField) -> int:
    """The few values leak 3 draws its masks from: 2 in tiny fields, 2^8 in large ones."""
    return 2 if field.p <= 1 << 16 else 1 << 8


def _small(field: PrimeField, masks: np.ndarray) -> np.ndarray:
    return field.elements(np.asarray(masks) % small_range(field))


# -- honest references built from the same steps -----------------------------------------------


def honest_explicit(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """The honest explicit variant, written with this module's steps (a control)."""
    call = yield from _start(ctx, x)
    draws = ctx.randomness.private(call, len(ctx.peers) * len(x))
    return (yield from _explicit(ctx, call, x, _chunks(draws, len(x))))


def sent_seeds_prg(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """The prg variant with pair seeds set up by the lower party — correctly, one per pair.

    The control of leak 2 (prg): the same messages as :func:`reused_mask_prg`, a fresh stream
    for every pair. Private for every coalition, like the honest prg variant.
    """
    call = yield from _start(ctx, x)
    me, d = ctx.party, len(x)
    higher = [p for p in ctx.peers if p > me]
    lower = tuple(p for p in ctx.peers if p < me)
    seeds = {p: ctx.randomness.private(call, 2 * d, sub=p) for p in higher}
    if higher:
        yield SendEach(seeds, call, "pair_seed")
    got = (yield RecvEach(lower, call, "pair_seed")) if lower else {}
    pairs = [pair_shares(seeds[p] if p > me else got[p], me, p, d) for p in ctx.peers]
    return (yield from _exchange_column_sums(ctx, call, _prg_colsum(ctx.field, x, pairs)))


# -- leak 1: a raw input is sent ----------------------------------------------------------------


def raw_input_explicit(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """Leak 1, explicit: x̂ takes the place of the share for the first peer."""
    call = yield from _start(ctx, x)
    d = len(x)
    draws = ctx.randomness.private(call, (len(ctx.peers) - 1) * d)
    shares = [x, *_chunks(draws, d)]  # BUG: x̂ is sent to min(peers) as if it were a mask
    return (yield from _explicit(ctx, call, x, shares))


def raw_input_prg(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """Leak 1, prg: a copy of x̂ goes to the first peer, which reads it, before the sums."""
    call = yield from _start(ctx, x)
    me, m = ctx.party, ctx.n_parties
    yield SendEach({first_peer(me, m): x}, call, "check")  # BUG: a leftover debug message
    senders = tuple(p for p in ctx.peers if first_peer(p, m) == me)
    if senders:
        yield RecvEach(senders, call, "check")
    streams = ctx.randomness.pairwise_many(ctx.peers, call, 2 * len(x))
    pairs = [pair_shares(s, me, p, len(x)) for p, s in zip(ctx.peers, streams, strict=True)]
    return (yield from _exchange_column_sums(ctx, call, _prg_colsum(ctx.field, x, pairs)))


# -- leak 2: one mask for several peers ---------------------------------------------------------


def reused_mask_explicit(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """Leak 2, explicit: the same share goes to every peer."""
    call = yield from _start(ctx, x)
    r = ctx.randomness.private(call, len(x))
    shares = [r] * len(ctx.peers)  # BUG: one draw, reused for every peer
    return (yield from _explicit(ctx, call, x, shares))


def reused_mask_prg(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """Leak 2, prg: the lower party's pair seed is one stream for all its higher peers."""
    call = yield from _start(ctx, x)
    me, d = ctx.party, len(x)
    higher = [p for p in ctx.peers if p > me]
    lower = tuple(p for p in ctx.peers if p < me)
    if higher:
        g = ctx.randomness.private(call, 2 * d)  # BUG: drawn once, not once per pair
        yield SendEach(dict.fromkeys(higher, g), call, "pair_seed")
    got = (yield RecvEach(lower, call, "pair_seed")) if lower else {}
    pairs = [pair_shares(g if p > me else got[p], me, p, d) for p in ctx.peers]
    return (yield from _exchange_column_sums(ctx, call, _prg_colsum(ctx.field, x, pairs)))


# -- leak 3: masks from a small range -----------------------------------------------------------


def small_range_explicit(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """Leak 3, explicit: the shares are reduced to a few values."""
    call = yield from _start(ctx, x)
    draws = _small(ctx.field, ctx.randomness.private(call, len(ctx.peers) * len(x)))  # BUG
    return (yield from _explicit(ctx, call, x, _chunks(draws, len(x))))


def small_range_prg(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """Leak 3, prg: the pair streams are reduced to a few values."""
    call = yield from _start(ctx, x)
    me, d = ctx.party, len(x)
    streams = _small(ctx.field, ctx.randomness.pairwise_many(ctx.peers, call, 2 * d))  # BUG
    pairs = [pair_shares(s, me, p, d) for p, s in zip(ctx.peers, streams, strict=True)]
    return (yield from _exchange_column_sums(ctx, call, _prg_colsum(ctx.field, x, pairs)))


# -- leak 4: the last share is predictable ------------------------------------------------------


def predictable_last_explicit(
    ctx: PartyContext, x: np.ndarray
) -> Generator[Any, Any, np.ndarray]:
    """Leak 4, explicit: the share for the highest-indexed peer is a public value."""
    call = yield from _start(ctx, x)
    d = len(x)
    draws = ctx.randomness.private(call, (len(ctx.peers) - 1) * d)
    shares = [*_chunks(draws, d), public_mask(ctx.field, call, d)]  # BUG: peers[-1] = top
    return (yield from _explicit(ctx, call, x, shares))


def predictable_last_prg(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """Leak 4, prg: r_i^(top(i)) is a public value, at both ends of the pair."""
    call = yield from _start(ctx, x)
    me, m, d = ctx.party, ctx.n_parties, len(x)
    streams = ctx.randomness.pairwise_many(ctx.peers, call, 2 * d)
    public = public_mask(ctx.field, call, d)
    pairs = []
    for p, s in zip(ctx.peers, streams, strict=True):
        mine, theirs = pair_shares(s, me, p, d)
        if p == top_peer(me, m):
            mine = public  # BUG: my share for my highest peer is public
        if me == top_peer(p, m):
            theirs = public  # ... and the peer whose highest peer I am agrees on it
        pairs.append((mine, theirs))
    return (yield from _exchange_column_sums(ctx, call, _prg_colsum(ctx.field, x, pairs)))


LEAKS: dict[str, dict[str, Program]] = {
    "raw_input": {"explicit": raw_input_explicit, "prg": raw_input_prg},
    "reused_mask": {"explicit": reused_mask_explicit, "prg": reused_mask_prg},
    "small_range": {"explicit": small_range_explicit, "prg": small_range_prg},
    "predictable_last": {"explicit": predictable_last_explicit, "prg": predictable_last_prg},
}
"""Every planted leak, by name and SecureSum variant."""

_ALL_SMALL = {3: {(0,), (1,), (2,)},
              4: {(0,), (1,), (2,), (3,), (0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)}}

LEAKING_COALITIONS: dict[tuple[str, str, int], set[tuple[int, ...]]] = {
    # Derived by hand in the module docstring; every other coalition of 1..M−1 parties is
    # private (those with |H| = 1 trivially: the sum determines the honest input).
    ("raw_input", "explicit", 3): {(0,), (1,), (2,)},
    ("raw_input", "explicit", 4): _ALL_SMALL[4] - {(2,), (3,)},
    ("raw_input", "prg", 3): {(0,), (1,)},
    ("raw_input", "prg", 4): {(0,), (1,), (0, 1), (0, 2), (0, 3), (1, 2), (1, 3)},
    ("reused_mask", "explicit", 3): _ALL_SMALL[3],
    ("reused_mask", "explicit", 4): _ALL_SMALL[4],
    ("reused_mask", "prg", 3): {(1,), (2,)},
    ("reused_mask", "prg", 4): _ALL_SMALL[4] - {(0,), (0, 1)},
    ("small_range", "explicit", 3): _ALL_SMALL[3],
    ("small_range", "explicit", 4): _ALL_SMALL[4],
    ("small_range", "prg", 3): _ALL_SMALL[3],
    ("small_range", "prg", 4): _ALL_SMALL[4],
    ("predictable_last", "explicit", 3): {(0,)},
    ("predictable_last", "explicit", 4): {(0, 1)},
    ("predictable_last", "prg", 3): {(0,)},
    ("predictable_last", "prg", 4): {(0, 1)},
}
"""(leak, variant, M) → the coalitions that learn something beyond the sum."""


def simulation_flagged(leak: str, variant: str, n_parties: int) -> set[tuple[int, ...]]:
    """The coalitions (of 1..M−1 parties) the simulation audit flags (module docstring)."""
    every = {c for k in range(1, n_parties) for c in itertools.combinations(range(n_parties), k)}
    out = set(LEAKING_COALITIONS[(leak, variant, n_parties)])
    if (leak, variant) == ("raw_input", "prg"):
        out |= {c for c in every if len(c) == n_parties - 1}
    if variant == "explicit":  # one honest party: its shares to members should be uniform
        out |= {c for c in every if len(c) == n_parties - 1}
    if (leak, variant) == ("predictable_last", "explicit"):
        for c in every:
            honest = [h for h in range(n_parties) if h not in c]
            if any(top_peer(h, n_parties) in c for h in honest):
                out.add(c)
    return out
