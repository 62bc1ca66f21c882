"""SecAgg: secure aggregation that survives dropouts (Bonawitz et al., CCS 2017; SecAgg+,
Bell et al., CCS 2020).

M data parties (sites 0..M−1) and one untrusted aggregator (the party with role
``"aggregator"``, id M). The aggregator outputs Σ_{u∈U3} x_u, the sum of the inputs of the
sites that were still there when masked inputs were collected, and sends it to them; it is
correct for any set of up to M − t dropouts, at any round, and a coalition of fewer than t
sites learns nothing beyond its inputs and that sum, with or without the aggregator.

This is Bonawitz et al.'s semi-honest protocol (Figure 4 without round 3, ConsistencyCheck,
which only serves against an active server), with SecAgg+'s sparse graph as an option:

Round 1 — AdvertiseKeys
    Site u derives a fresh X25519 mask key pair (s_u^SK, s_u^PK) for this call from its private
    randomness and sends s_u^PK to the aggregator. The aggregator waits ``timeout_s``
    (simulated) and calls the senders U1; it sends each u ∈ U1 the keys of its neighbours in U1.
Round 2 — ShareKeys
    u draws a self-mask seed b_u, Shamir-shares (s_u^SK, b_u) with threshold t among its
    neighbours and itself (:mod:`protocols.sharing`, evaluation point v + 1 for holder v),
    sends each neighbour its share, then tells the aggregator it has done so. The senders of
    that note within the timeout are U2; each u ∈ U2 learns which of its neighbours are in U2.
Round 3 — MaskedInputCollection
    u computes, for each neighbour v ∈ U2, the pair seed s_{u,v} = KA(s_u^SK, s_v^PK) (X25519 +
    HKDF, :func:`protocols.crypto.key_agreement.agree`) and sends
    y_u = x̂_u + PRG(b_u) + Σ_{v∈N(u)∩U2} ±PRG(s_{u,v}) (+ if u < v); senders within the
    timeout are U3.
Round 4 — Unmasking
    Each u ∈ U3 learns which of its neighbours are in U3 and sends, for every holder position
    v ∈ (N(u)∩U2) ∪ {u}, its share of b_v if v ∈ U3 and of s_v^SK otherwise — never both for
    one v. The aggregator reconstructs b_v for v ∈ U3 and s_v^SK for v ∈ U2 \\ U3 from any t
    shares, recomputes the dropped parties' pair masks with the survivors, and outputs
    z = Σ_{u∈U3} (y_u − PRG(b_u)) − Σ_{u∈U3} Σ_{v∈N(u)∩(U2\\U3)} ±PRG(s_{u,v}).
Round 5 — result
    The aggregator sends z and U3 to every site of U3.

Departures, and why:

* Shares go directly from site to site over the simulator's sealed channels rather than as
  ciphertexts relayed by the server; the aggregator sees neither (as with the paper's
  authenticated encryption), and learns U2 from a one-element note each site sends after its
  shares. Sites pay the same elements; the aggregator saves the relay.
* Secrets are vectors of L field elements (L = ⌈256 / (bits(p) − 1)⌉, at least 256 bits of
  entropy) shared coordinate-wise; the AES key of a secret is SHA-256 of its elements, and the
  X25519 private key is derived from that key. The paper shares the key bytes.
* ``graph = "harary"``: the graph is networkx's Harary graph H_{k,M} on the site ids in order
  (k-connected, degree k, one vertex of degree k + 1 when k·M is odd). SecAgg+ relabels the
  nodes with a random permutation chosen after the corruption; with the fixed labelling, the
  threshold guarantee holds for coalitions of fewer than t sites in any one neighbourhood.
* The sum is sent to the survivors (round 5) so that every remaining site can use it, as the
  thesis's SecureSum gives it to every party.

Randomness and audit: every draw — s_u^SK, b_u, the sharing coefficients — comes from the
party's private streams, and every PRG expansion — PRG(b_u), PRG(s_{u,v}) — goes through
:meth:`protocols.context.Randomness.expand` (AES-256-CTR keyed by the seed by default), so an
audit injects all of it: :class:`protocols.secagg_simulator.SecAggSimulator` is the simulator
of Bonawitz et al.'s Thm 6.3 for whole-run audits (:mod:`parties.audit.simulation`), and the
audit may program the oracle (:class:`parties.audit.randomness.AffineOracle`) as that proof's
simulator does.

Declared cost (no dropouts; :data:`COST_FORMULAS`, :func:`declared_cost`): a site u with
k_u neighbours sends 1 + k_u + 1 + 1 + 1 messages and d + (3k_u + 1)L + 1 elements (L field
elements per secret); the aggregator sends 5M messages and M(d + M) + 2Σ_u k_u elements. With
the complete graph k_u = M − 1, so a site's cost grows as O(M + d); with Harary's k ≈ log M,
as O(log M + d).
"""

from __future__ import annotations

import math
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import networkx as nx
import numpy as np

from protocols import sharing
from protocols.context import (
    PartyContext,
    Randomness,
    expand_many,
    seed_key,
)
from protocols.crypto.key_agreement import agree, keypair
from protocols.effects import Call, Input, Output, Recv, RecvWithin, Send, SendEach
from protocols.errors import InputError, MpcsimError
from protocols.field import PrimeField
from protocols.functionality import CallInstance, Ideal, field_sum
from protocols.vocabulary import SECAGG_GRAPHS

PROTOCOL = "secagg"
AGGREGATOR = "aggregator"
GRAPHS: tuple[str, ...] = SECAGG_GRAPHS
Graph = Literal["complete", "harary"]
DEFAULT_TIMEOUT_S = 1.0
_ID_BYTES = 8

class TooFewSurvivors(MpcsimError):
    """Fewer than t parties remain (or hold shares of a party): the sum cannot be recovered."""


# -- parameters ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """Public parameters of one SecAgg invocation, identical at every party.

    Attributes
    ----------
    threshold : int
        t: shares needed to reconstruct a seed; up to (neighbourhood size − t) holders may drop.
    graph : {"complete", "harary"}
    degree : int
        k, the Harary graph's degree (ignored for ``complete``).
    timeout_s : float
        How long the aggregator waits for each round's messages (simulated seconds).
    """

    threshold: int
    graph: Graph = "complete"
    degree: int = 0
    timeout_s: float = DEFAULT_TIMEOUT_S


def check_config(config: Config, n_parties: int, p: int) -> Config:
    """Validate a configuration for M = ``n_parties`` sites in GF(p); returns it."""
    if config.graph not in GRAPHS:
        raise InputError(f"graph = {config.graph!r} is unknown; use one of {GRAPHS}")
    if n_parties < 2:
        raise InputError(f"secure aggregation needs at least 2 sites, got {n_parties}")
    if config.graph == "harary":
        k = config.degree
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= n_parties - 1:
            raise InputError(
                f"degree = {k!r} must be an integer in [1, {n_parties - 1}] for graph = 'harary' "
                f"with {n_parties} sites"
            )
    if not (isinstance(config.timeout_s, int | float) and 0 < config.timeout_s < math.inf):
        raise InputError(f"timeout_s = {config.timeout_s!r} must be a positive number")
    smallest = min(len(v) for v in neighbourhoods(n_parties, config.graph, config.degree)) + 1
    sharing.check_threshold(config.threshold, smallest, p)
    if n_parties >= p:
        raise InputError(f"{n_parties} sites need a field with p > {n_parties}, got p = {p}")
    return config


@lru_cache(maxsize=64)
def neighbourhoods(n_parties: int, graph: str, degree: int = 0) -> tuple[tuple[int, ...], ...]:
    """N(u) for every site u: all others (complete) or its neighbours in H_{k,M} (harary)."""
    if graph == "complete" or degree >= n_parties - 1:
        return tuple(tuple(v for v in range(n_parties) if v != u) for u in range(n_parties))
    g = nx.hkn_harary_graph(degree, n_parties)
    return tuple(tuple(sorted(g.neighbors(u))) for u in range(n_parties))


def secret_length(field: PrimeField) -> int:
    """L: field elements per secret, so that a secret carries at least 256 random bits."""
    return math.ceil(256 / max(1, field.bits - 1))


# -- declared cost ------------------------------------------------------------------------------


@dataclass(frozen=True)
class StepCost:
    """Messages and elements one party sends in one step of one invocation (no dropouts).

    ``round`` is the step's ledger round counted from the call's first message (1).
    """

    round: int
    step: str
    messages: int
    elements: int


COST_FORMULAS: dict[str, dict[str, str]] = {
    "site": {
        "public_key": "ledger round 1: 1 message, 0 elements (an opaque 32-byte key)",
        "shares": "round 3: k_u messages, 2L elements each",
        "shared": "round 3: 1 message, 1 element",
        "masked_input": "round 5: 1 message, d elements",
        "unmask": "round 7: 1 message, (k_u + 1)L elements",
    },
    "aggregator": {
        "neighbour_keys": "round 2: M messages, 0 elements (k_u opaque 40-byte records each)",
        "survivors_2": "round 4: M messages, k_u elements each",
        "survivors_3": "round 6: M messages, k_u elements each",
        "sum": "round 8: M messages, d elements each",
        "survivors": "round 8: M messages, M elements each",
    },
}
"""Per step: the ledger round within the call (1 = the call's first message), messages and
elements sent, with k_u = |N(u)| and L = :func:`secret_length`. Bonawitz's rounds 1, 2, 4 and
the result span ledger rounds 1–2, 3–4, 5–6, 7–8 (each server reply is a round of its own)."""


def declared_cost(
    n_parties: int, length: int, field: PrimeField, graph: str = "complete", degree: int = 0
) -> dict[int, list[StepCost]]:
    """What each party sends in one invocation without dropouts, step by step.

    Returns ``{party: [StepCost, ...]}`` for the sites 0..M−1 and the aggregator (id M), as
    :data:`COST_FORMULAS` states them.
    """
    lsec = secret_length(field)
    nbrs = neighbourhoods(n_parties, graph, degree)
    out: dict[int, list[StepCost]] = {}
    for u in range(n_parties):
        k = len(nbrs[u])
        out[u] = [
            StepCost(1, "public_key", 1, 0),
            StepCost(3, "shares", k, 2 * lsec * k),
            StepCost(3, "shared", 1, 1),
            StepCost(5, "masked_input", 1, length),
            StepCost(7, "unmask", 1, (k + 1) * lsec),
        ]
    ks = [len(v) for v in nbrs]
    out[n_parties] = [
        StepCost(2, "neighbour_keys", n_parties, 0),
        StepCost(4, "survivors_2", n_parties, sum(ks)),
        StepCost(6, "survivors_3", n_parties, sum(ks)),
        StepCost(8, "sum", n_parties, n_parties * length),
        StepCost(8, "survivors", n_parties, n_parties * n_parties),
    ]
    return out


# -- arithmetic (pure) --------------------------------------------------------------------------


def secret_key(elements: np.ndarray) -> bytes:
    """The 32-byte key a secret of field elements stands for: SHA-256 of their values
    (:func:`protocols.context.seed_key`)."""
    return seed_key(elements)


def self_mask(randomness: Randomness, b: np.ndarray, call: Call, length: int) -> np.ndarray:
    """PRG(b_u): ``length`` elements of the self-mask stream of seed b_u.

    Drawn through the party's randomness (:meth:`protocols.context.Randomness.expand`, the
    random oracle of Bonawitz et al.'s proof) keyed by SHA-256 of b_u's elements: the site that
    drew b_u and the aggregator that reconstructs it get the same stream.
    """
    return randomness.expand(np.asarray(b), call, length)


def pair_seeds(sk: np.ndarray, me: int, peer_keys: Mapping[int, bytes]) -> dict[int, bytes]:
    """s_{me,v} for the peers v of ``peer_keys``: X25519 of me's mask key (derived from the
    secret ``sk``) with v's public key, through HKDF
    (:func:`protocols.crypto.key_agreement.agree`)."""
    private, _ = keypair(secret_key(sk))
    return {v: agree(private, peer_keys[v], me, v).mask_seed for v in sorted(peer_keys)}


def pair_masks(
    randomness: Randomness, field: PrimeField, sk: np.ndarray, me: int,
    peer_keys: Mapping[int, bytes], call: Call, length: int,
) -> np.ndarray:
    """Σ_v ±PRG(s_{me,v}) over the peers v of ``peer_keys`` (+ if me < v), as ``me`` adds it.

    ``sk`` is me's secret (field elements) from which its X25519 mask key is derived;
    ``peer_keys`` maps each peer to its public mask key. Every stream is an expansion through
    ``randomness`` (:func:`protocols.context.expand_many`, one batch by default).
    """
    if not peer_keys:
        return field.zeros(length)
    seeds = pair_seeds(sk, me, peer_keys)
    peers = sorted(seeds)
    streams = expand_many(randomness, [seeds[v] for v in peers], call, length, field)
    plus = [row for v, row in zip(peers, streams, strict=True) if me < v]
    minus = [row for v, row in zip(peers, streams, strict=True) if me > v]
    if not plus:
        return field.neg(field.sum_arrays(minus))
    return field.combine(plus, minus)


def _keys_payload(keys: Mapping[int, bytes]) -> np.ndarray:
    rows = [v.to_bytes(_ID_BYTES, "big") + keys[v] for v in sorted(keys)]
    return np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(len(rows), -1).copy()


def _keys_from_payload(payload: np.ndarray) -> dict[int, bytes]:
    out = {}
    for row in np.asarray(payload, dtype=np.uint8).reshape(len(payload), -1):
        raw = row.tobytes()
        out[int.from_bytes(raw[:_ID_BYTES], "big")] = raw[_ID_BYTES:]
    return out


def _ids(values: Any) -> tuple[int, ...]:
    return tuple(int(v) for v in np.asarray(values).tolist())


def _aggregator(ctx: PartyContext) -> int:
    found = [p for p, r in ctx.roles.items() if r == AGGREGATOR]
    if len(found) != 1:
        raise InputError(f"secure aggregation needs exactly one aggregator, found {len(found)}")
    return found[0]


# -- the site's program -------------------------------------------------------------------------


def secagg(ctx: PartyContext, x: Any, config: Config, label: str = "x"
           ) -> Generator[Any, Any, tuple[np.ndarray, tuple[int, ...]]]:
    """Party program of a site or of the aggregator: encode, aggregate, decode.

    Sites pass their real array ``x`` (any shape, the same at every site); the aggregator
    passes an array of the same shape (its values are not used). Returns ``(sum, survivors)``:
    the real sum of the inputs of the sites in ``survivors`` (U3), of ``x``'s shape.
    """
    values = np.asarray(x, dtype=np.float64)
    if ctx.role == AGGREGATOR:
        total, survivors = yield from secagg_aggregator(ctx, values.size, config)
    else:
        x_hat = ctx.fixed.encode(values.ravel(), n_summands=ctx.n_parties,
                                 what=f"SecAgg {label}")
        total, survivors = yield from secagg_field(ctx, x_hat, config, label)
    return ctx.fixed.decode(total).reshape(values.shape), survivors


def secagg_field(ctx: PartyContext, x_hat: np.ndarray, config: Config, label: str = "x"
                 ) -> Generator[Any, Any, tuple[np.ndarray, tuple[int, ...]]]:
    """A site's program on field elements; returns (Σ_{U3} x̂, U3)."""
    field, me, m = ctx.field, ctx.party, ctx.n_parties
    check_config(config, m, field.p)
    x_hat = np.asarray(x_hat)
    if x_hat.ndim != 1:
        raise InputError(f"SecAgg input must be a flat vector, got shape {x_hat.shape}")
    agg = _aggregator(ctx)
    lsec, d = secret_length(field), len(x_hat)
    call = ctx.new_call(PROTOCOL)
    yield Input(label, x_hat, call)
    # round 1: advertise a fresh mask key
    sk = ctx.randomness.private(call, lsec, sub=0)
    _, public = keypair(secret_key(sk))
    yield Send(agg, np.frombuffer(public, dtype=np.uint8).copy(), call, "public_key")
    keys = _keys_from_payload((yield Recv(agg, call, "neighbour_keys")))
    u1 = tuple(sorted(keys))
    # round 2: share (s^SK, b) among the neighbours in U1 and oneself
    b = ctx.randomness.private(call, lsec, sub=1)
    holders = (*u1, me)
    coefficients = ctx.randomness.private(call, (config.threshold - 1) * 2 * lsec, sub=2)
    shares = sharing.shamir_share(field, np.concatenate([sk, b]), [v + 1 for v in holders],
                          coefficients.reshape(config.threshold - 1, 2 * lsec))
    own_share = shares[-1]
    yield SendEach({v: shares[i] for i, v in enumerate(u1)}, call, "shares")
    yield Send(agg, field.elements([1]), call, "shared")
    u2 = _ids((yield Recv(agg, call, "survivors_2")))
    held = {me: own_share}
    for v in u2:
        held[v] = np.asarray((yield Recv(v, call, "shares")))
    # round 3: masked input
    masks = [x_hat, self_mask(ctx.randomness, b, call, d),
             pair_masks(ctx.randomness, field, sk, me, {v: keys[v] for v in u2}, call, d)]
    yield Send(agg, field.sum_arrays(masks), call, "masked_input")
    # round 4: unmasking — for each v, the share of b_v or of s_v^SK, never both
    u3 = set(_ids((yield Recv(agg, call, "survivors_3"))))
    if len(u3) + 1 < config.threshold:
        raise TooFewSurvivors(
            f"party {me}: only {len(u3)} neighbours remain, fewer than threshold − 1 = "
            f"{config.threshold - 1}; refusing to reveal shares"
        )
    reveal = [held[v][lsec:] if v in u3 or v == me else held[v][:lsec] for v in sorted(held)]
    yield Send(agg, np.concatenate(reveal), call, "unmask")
    # round 5: the survivors' sum
    total = np.asarray((yield Recv(agg, call, "sum")))
    survivors = _ids((yield Recv(agg, call, "survivors")))
    yield Output("sum", total, call)
    return total, survivors


# -- the aggregator's program -------------------------------------------------------------------


def secagg_aggregator(ctx: PartyContext, length: int, config: Config
                      ) -> Generator[Any, Any, tuple[np.ndarray, tuple[int, ...]]]:
    """The aggregator's program for a sum of ``length`` elements; returns (Σ_{U3} x̂, U3)."""
    field, m = ctx.field, ctx.n_parties
    check_config(config, m, field.p)
    nbrs = neighbourhoods(m, config.graph, config.degree)
    lsec, t = secret_length(field), config.threshold
    call = ctx.new_call(PROTOCOL)
    sites = tuple(ctx.parties)

    def require(alive: Mapping[int, Any] | set[int], what: str) -> None:
        if len(alive) < t:
            raise TooFewSurvivors(
                f"only {len(alive)} of {m} sites {what}, fewer than the threshold t = {t}"
            )

    got = yield RecvWithin(sites, call, "public_key", config.timeout_s)
    require(got, "advertised keys")
    public = {u: bytes(np.asarray(v, dtype=np.uint8)) for u, v in got.items()}
    yield SendEach({u: _keys_payload({v: public[v] for v in nbrs[u] if v in public})
                    for u in public}, call, "neighbour_keys")
    u2 = set((yield RecvWithin(tuple(sorted(public)), call, "shared", config.timeout_s)))
    require(u2, "shared their seeds")
    yield SendEach({u: field.elements([v for v in nbrs[u] if v in u2])
                    for u in sorted(u2)}, call, "survivors_2")
    masked = yield RecvWithin(tuple(sorted(u2)), call, "masked_input", config.timeout_s)
    u3 = set(masked)
    require(u3, "sent masked inputs")
    yield SendEach({u: field.elements([v for v in nbrs[u] if v in u3])
                    for u in sorted(u3)}, call, "survivors_3")
    unmask = yield RecvWithin(tuple(sorted(u3)), call, "unmask", config.timeout_s)
    # shares of each v ∈ U2, by holder: holder w reveals its shares in order of sorted(held)
    shares: dict[int, list[tuple[int, np.ndarray]]] = {v: [] for v in u2}
    for w, payload in sorted(unmask.items()):
        order = sorted([*(v for v in nbrs[w] if v in u2), w])
        parts = np.asarray(payload).reshape(len(order), lsec)
        for v, part in zip(order, parts, strict=True):
            shares[v].append((w + 1, part))
    secrets = {}
    for v in sorted(u2):
        if len(shares[v]) < t:
            raise TooFewSurvivors(
                f"only {len(shares[v])} holders of party {v}'s shares answered, fewer than "
                f"the threshold t = {t}"
            )
        points = [x for x, _ in shares[v]]
        secrets[v] = sharing.shamir_reconstruct(field, points, [s for _, s in shares[v]], t)
    terms = [np.asarray(masked[u]) for u in sorted(u3)]
    minus = [self_mask(ctx.randomness, secrets[u], call, length) for u in sorted(u3)]
    for v in sorted(u2 - u3):  # v dropped after sharing: cancel u's term ±PRG(s_{u,v}) by
        # adding v's own term, recomputed from v's reconstructed s_v^SK and u's public key
        terms.append(pair_masks(ctx.randomness, field, secrets[v], v,
                                {u: public[u] for u in nbrs[v] if u in u3}, call, length))
    total = field.combine(terms, minus)
    survivors = tuple(sorted(u3))
    yield SendEach(dict.fromkeys(survivors, total), call, "sum")
    yield SendEach(dict.fromkeys(survivors, field.elements(list(survivors))), call,
                   "survivors")
    yield Output("sum", total, call)
    return total, survivors


# -- the ideal functionality (protocols.functionality) -------------------------------------------


def functionality(inst: CallInstance) -> dict[str, Ideal]:
    """SecAgg's ideal output: ``sum`` = Σ_{u∈U3} x̂_u over the surviving clients U3.

    U3 — the sites whose masked input reached the aggregator (Bonawitz et al., Fig. 4, round
    3) — is chosen by the network, not by the inputs; the auditor reads it from who sent
    ``masked_input`` in the call.
    """
    survivors = tuple(sorted({s for (_, step), who in inst.senders.items()
                              if step == "masked_input" for s in who}))
    return {"sum": Ideal(field_sum(inst, survivors))}


# -- variant strings (of the simulator, protocols.secagg_simulator) ------------------------------


def variant_of(config: Config, oracle: str = "aes") -> str:
    """The variant string an audit passes to the simulator for ``config``:
    ``"t=3"`` (complete graph) or ``"t=3,harary,k=4"``; ``oracle="affine"`` adds
    ``",oracle=affine"`` (the audited runs' PRG programmed by the audit:
    :class:`parties.audit.randomness.AffineOracle`)."""
    text = f"t={config.threshold}"
    if config.graph == "harary":
        text += f",harary,k={config.degree}"
    return text + (f",oracle={oracle}" if oracle != "aes" else "")


def config_of(variant: str) -> Config:
    """The :class:`Config` a variant string names (:func:`variant_of`); the timeout is moot.

    Raises
    ------
    InputError
        When the string is not of that form.
    """
    fields = dict(item.partition("=")[::2] for item in variant.replace(" ", "").split(","))
    graph = "harary" if "harary" in fields else "complete"
    try:
        threshold = int(fields.get("t", ""))
        degree = int(fields.get("k", "0") or 0)
    except ValueError:
        raise InputError(f"SecAgg variant {variant!r} must read 't=<threshold>' or "
                         "'t=<threshold>,harary,k=<degree>'") from None
    if set(fields) - {"t", "harary", "complete", "k", "oracle"} or fields.get(
            "oracle", "aes") not in ("aes", "affine"):
        raise InputError(f"SecAgg variant {variant!r} has unknown fields; use "
                         "'t=<threshold>' or 't=<threshold>,harary,k=<degree>' (and "
                         "',oracle=affine')")
    return Config(threshold, graph, degree)  # type: ignore[arg-type]
