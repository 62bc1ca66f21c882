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
audit injects all of it: :class:`SecAggSimulator` is the simulator of Bonawitz et al.'s
Thm 6.3 for whole-run audits (:mod:`parties.audit.simulation`), and the audit may program the
oracle (:class:`parties.audit.randomness.AffineOracle`) as that proof's simulator does.

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
    Seed,
    affine_expansion,
    affine_generator,
    expand_many,
    expand_stream,
    seed_key,
)
from protocols.crypto.key_agreement import agree, keypair
from protocols.effects import Call, Input, Output, Recv, RecvWithin, Send, SendEach
from protocols.errors import InputError, MpcsimError
from protocols.field import PrimeField
from protocols.functionality import CallInstance, Ideal, field_sum
from protocols.simulator import CallView, MessageKey, SimulatorMismatch, uniform_with_sum

PROTOCOL = "secagg"
AGGREGATOR = "aggregator"
GRAPHS: tuple[str, ...] = ("complete", "harary")
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


# -- the simulator (protocols.simulator) ----------------------------------------------------------


def variant_of(config: Config, oracle: str = "aes") -> str:
    """The variant string an audit passes to :class:`SecAggSimulator` for ``config``:
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


@dataclass(frozen=True)
class _Schedule:
    """Who is where in one call: sites, aggregator, coalition, the survivor sets."""

    sites: tuple[int, ...]
    aggregator: int
    members: frozenset[int]
    nbrs: tuple[tuple[int, ...], ...]
    threshold: int
    u1: frozenset[int]
    u2: frozenset[int]
    u3: frozenset[int]
    u4: frozenset[int]

    @property
    def honest(self) -> tuple[int, ...]:
        return tuple(u for u in self.sites if u not in self.members)

    @property
    def with_aggregator(self) -> bool:
        return self.aggregator in self.members


class SecAggSimulator:
    """The view of a coalition of sites (with or without the aggregator) in one SecAgg call,
    drawn from its own inputs and randomness, the survivors' sum and the dropout schedule.

    This is the simulator of Bonawitz et al. (CCS 2017), Thm 6.3 (semi-honest, the server
    among the corrupted), for a coalition C with fewer than t sites in every honest site's
    neighbourhood (SecAgg+: Bell et al., CCS 2020, §3, for the Harary graph). The schedule
    U1 ⊇ U2 ⊇ U3 ⊇ U4 (who advertised, shared, sent a masked input, unmasked) is the network's,
    given to the simulator (:attr:`~protocols.simulator.CallView.senders`), as the dropout set
    is to Bonawitz's. Per draw, following the proof's hybrids:

    * Hybrids 1–3 (honest keys, shares): every honest site u ∈ U1 gets a fresh mask key pair
      and a fresh seed b_u (the honest parties' keys are independent of their inputs), and a
      fresh polynomial of degree t − 1 sharing (s_u^SK, b_u). The coalition receives at most
      t − 1 of its shares before unmasking (the members among u's holders), which are uniform
      and independent whatever the secrets are — the sharing's privacy, Hybrid 3.
    * Hybrids 4–8 (masked inputs, with the aggregator in C): the aggregator learns b_u for
      u ∈ U3 and s_v^SK for v ∈ U2 ∖ U3, never both for one site, so the pair masks between two
      honest survivors stay unknown to C and, the honest survivors being connected by them,
      the honest values y_u − PRG(b_u) are uniform subject to one constraint: with the dropped
      sites' pair masks and the members' own terms they add up to the output z. The
      simulator draws them so (:func:`protocols.simulator.uniform_with_sum`) and adds PRG(b_u)
      of the simulated b_u, so that unmasking with the simulated shares gives exactly z. The
      PRG is the random oracle of the proof, here the AES expansion every party computes
      (:meth:`protocols.context.Randomness.expand`): the honest b_u and s_{u,v} are fresh in
      every real trial, and so are the streams.
    * Unmasking shares are the simulated polynomials' values at each holder, so that every
      secret the aggregator reconstructs is the simulated one.

    Messages between members are recomputed as the protocol computes them, with the simulated
    honest keys (a member's masked input carries its pair masks with the honest sites).

    What it assumes: the semi-honest model; honest keys and seeds derived from fresh private
    draws; the PRG (AES-CTR keyed by SHA-256 of the seed, or HKDF of the X25519 agreement)
    indistinguishable from a random oracle; the schedule independent of the honest inputs (the
    audit's pattern check tests it). A coalition with t or more sites among an honest site's
    holders, or an aggregator coalition whose members separate the honest survivors' mask graph
    (possible with a sparse Harary graph: each component's sum is revealed), is beyond the
    theorem: :meth:`reveals` says so and the audit answers ``leak`` at the call.

    Parameters
    ----------
    variant : str, optional
        The configuration (:func:`variant_of`). None (or only ``"oracle=affine"``): the
        complete graph, with t read from a member site's sharing coefficients (an aggregator
        alone must name it).
    """

    name = PROTOCOL
    uniform_on_hull = True

    def __init__(self, variant: str | None = None) -> None:
        self.variant = variant
        text = "" if variant is None else variant.replace(" ", "")
        only_oracle = text in ("oracle=affine", "oracle=aes")  # t read from the sharing
        self.config = None if variant is None or only_oracle else config_of(variant)
        self.affine = "oracle=affine" in text

    # -- the schedule ---------------------------------------------------------------------------

    def _schedule(self, view: CallView) -> _Schedule:
        sites = tuple(view.parties)
        m = len(sites)
        lsec = secret_length(view.field)
        if self.config is not None:
            config = self.config
        else:
            coefficient_draws = [np.size(view.draws[k]) for k in view.draws
                                 if k[0] == "private" and k[1] in sites and k[-1] == 2]
            if not coefficient_draws:
                raise SimulatorMismatch(
                    f"{view.call.tag('').rstrip('.')}: no member site drew Shamir coefficients "
                    "to read the threshold from; name the configuration (variant = 't=3')")
            config = Config(coefficient_draws[0] // (2 * lsec) + 1)
        if config.graph == "harary" and not 1 <= config.degree <= m - 1:
            raise SimulatorMismatch(f"degree {config.degree} does not fit {m} sites")
        others = [p for p in view.members if p not in sites]
        aggregator = others[0] if others else m
        senders = view.senders
        return _Schedule(
            sites=sites, aggregator=aggregator, members=frozenset(view.members),
            nbrs=neighbourhoods(m, config.graph, config.degree), threshold=config.threshold,
            u1=frozenset(senders.get("public_key", ())) & frozenset(sites),
            u2=frozenset(senders.get("shared", ())) & frozenset(sites),
            u3=frozenset(senders.get("masked_input", ())) & frozenset(sites),
            u4=frozenset(senders.get("unmask", ())) & frozenset(sites),
        )

    def reveals(self, view: CallView) -> str | None:
        """Why this coalition's view cannot be simulated from z, or None (class docstring)."""
        sch = self._schedule(view)
        t = sch.threshold
        for u in sch.honest:
            holders = [w for w in sch.nbrs[u] if w in sch.members and w in sch.u2]
            if u in sch.u2 and len(holders) >= t:
                return (f"sites {holders} hold {len(holders)} ≥ t = {t} shares of site {u}'s "
                        "secrets: the coalition is at or above the threshold")
        if sch.with_aggregator:
            alive = [u for u in sch.honest if u in sch.u3]
            parts = _components(alive, sch.nbrs)
            if len(parts) > 1:
                return (f"the honest survivors' pair masks fall into {len(parts)} groups "
                        f"{parts} once the coalition's are removed: each group's sum is revealed")
        return None

    def determined(self, view: CallView) -> bool:
        """Never needed: one honest survivor's masked input is drawn as the sum leaves it."""
        return False

    def sizes(self, view: CallView) -> dict[MessageKey, int]:
        """The element count of every honest message the coalition receives."""
        drawn = self.simulate(view, np.random.default_rng(0), 1)
        members = set(view.members)
        return {k: int(v.shape[1]) for k, v in drawn.items() if k[1] not in members}

    # -- drawing --------------------------------------------------------------------------------

    def simulate(
        self, view: CallView, rng: np.random.Generator, n: int
    ) -> dict[MessageKey, np.ndarray]:
        """``n`` simulated views of the call (class docstring)."""
        sch = self._schedule(view)
        field = view.field
        lsec = secret_length(field)
        t = sch.threshold
        member_secrets = {}
        for w in sch.sites:
            if w in sch.members and w in sch.u1:
                sk = view.private_stream(w, 0)
                if w in sch.u2 or any(k[:2] == ("private", w) and k[-1] == 1 for k in view.draws):
                    b = view.private_stream(w, 1)
                    coefficients = view.private_stream(w, 2).reshape(t - 1, 2 * lsec)
                else:
                    b = coefficients = None
                member_secrets[w] = (sk, b, coefficients)
        d = self._length(view, sch)
        total = self._output(view, sch)
        rows: dict[MessageKey, list[np.ndarray]] = {}
        prg = _Oracle(field, self.affine)
        for _ in range(n):
            for key, value in self._draw(view, sch, rng, prg, member_secrets, d, total).items():
                rows.setdefault(key, []).append(value)
        return {k: np.stack(v).astype(field.dtype, copy=False) for k, v in rows.items()}

    def _length(self, view: CallView, sch: _Schedule) -> int:
        for m in sorted(sch.members):
            for label, value in view.outputs.get(m, ()):
                if label == "sum":
                    return int(np.size(value))
            if view.inputs.get(m):
                return int(np.size(view.input(m)))
        raise SimulatorMismatch(f"{view.call.tag('').rstrip('.')}: no member holds an input or "
                                "the sum, which every SecAgg party does")

    def _output(self, view: CallView, sch: _Schedule) -> np.ndarray | None:
        found = [np.asarray(v) for m in sorted(sch.members) for label, v in view.outputs.get(m, ())
                 if label == "sum"]
        if any(not np.array_equal(f, found[0]) for f in found[1:]):
            raise SimulatorMismatch(f"the members declared different sums in "
                                    f"{view.call.tag('').rstrip('.')}")
        return found[0] if found else None

    def _draw(
        self, view: CallView, sch: _Schedule, rng: np.random.Generator, prg: _Oracle,
        member_secrets: Mapping[int, tuple[np.ndarray, Any, Any]], d: int,
        total: np.ndarray | None,
    ) -> dict[MessageKey, np.ndarray]:
        field, call = view.field, view.call
        lsec, t, agg = secret_length(field), sch.threshold, sch.aggregator
        secrets: dict[int, tuple[np.ndarray, np.ndarray | None, np.ndarray | None]] = {}
        for u in sorted(sch.u1):
            if u in member_secrets:
                secrets[u] = member_secrets[u]
            else:  # Hybrids 1-3: fresh key pair, seed and polynomial for an honest site
                secrets[u] = (field.random(rng, lsec), field.random(rng, lsec),
                              field.random(rng, (t - 1, 2 * lsec)))
        public = {u: keypair(secret_key(secrets[u][0])).public for u in secrets}
        shares: dict[int, dict[int, np.ndarray]] = {}
        for v, (sk, b, coefficients) in secrets.items():
            if b is None:
                continue
            holders = sorted({*(w for w in sch.nbrs[v] if w in sch.u1), v})
            values = sharing.shamir_share(field, np.concatenate([sk, b]), [w + 1 for w in holders],
                                  coefficients)
            shares[v] = dict(zip(holders, values, strict=True))
        out: dict[MessageKey, np.ndarray] = {}
        members = sch.members
        for w in sorted(members & sch.u1):  # the aggregator's replies and the honest shares
            near = sch.nbrs[w]
            out[(w, agg, "neighbour_keys")] = _keys_payload(
                {v: public[v] for v in near if v in sch.u1}).ravel()
            if w in sch.u2:
                out[(w, agg, "survivors_2")] = field.elements([v for v in near if v in sch.u2])
                for v in near:
                    if v in sch.u2 and v not in members:
                        out[(w, v, "shares")] = shares[v][w]
            if w in sch.u3:
                out[(w, agg, "survivors_3")] = field.elements([v for v in near if v in sch.u3])
            if w in sch.u4:
                if total is None:
                    raise SimulatorMismatch(f"site {w} unmasked in {call.tag('').rstrip('.')} "
                                            "but declared no sum")
                out[(w, agg, "sum")] = np.asarray(total)
                out[(w, agg, "survivors")] = field.elements(sorted(sch.u3))
        if not sch.with_aggregator:
            return {k: v for k, v in out.items() if k[0] in members}
        for u in sorted(sch.u1 - members):
            out[(agg, u, "public_key")] = np.frombuffer(public[u], dtype=np.uint8)
        for u in sorted(sch.u2 - members):
            out[(agg, u, "shared")] = field.elements([1])

        def pairs(v: int, alive: frozenset[int]) -> np.ndarray:
            sk = secrets[v][0]
            return pair_masks(prg, field, sk, v, {u: public[u] for u in sch.nbrs[v]
                                                  if u in alive}, call, d)

        masked = {w: field.sum_arrays([view.input(w), prg.expand(secrets[w][1], call, d),
                                       pairs(w, sch.u2)])
                  for w in sorted(sch.u3 & members)}
        honest = [u for u in sorted(sch.u3) if u not in members]
        if honest:  # Hybrids 4-8: the honest y_u − PRG(b_u), uniform subject to the sum
            if total is None:
                raise SimulatorMismatch(f"the aggregator declared no sum in "
                                        f"{call.tag('').rstrip('.')}")
            known = [pairs(v, sch.u3) for v in sorted(sch.u2 - sch.u3)]
            known += [field.sub(masked[w], prg.expand(secrets[w][1], call, d))
                      for w in masked]
            rest = field.sub(np.asarray(total), field.sum_arrays(known)) if known else total
            free = uniform_with_sum(field, rng, 1, field.zeros((len(honest), d)), rest)[0]
            for u, value in zip(honest, free, strict=True):
                masked[u] = field.add(value, prg.expand(secrets[u][1], call, d))
        for u, y in masked.items():
            out[(agg, u, "masked_input")] = y
        for u in sorted(sch.u4):  # unmasking: b_v's share for survivors, s_v^SK's otherwise
            order = sorted({*(v for v in sch.nbrs[u] if v in sch.u2), u})
            parts = [shares[v][u][lsec:] if v in sch.u3 or v == u else shares[v][u][:lsec]
                     for v in order]
            out[(agg, u, "unmask")] = np.concatenate(parts)
        return out


class _Oracle:
    """The simulator's PRG: the random oracle the audited runs used — the default AES
    expansion (:func:`protocols.context.expand_stream`), or, with ``oracle=affine`` in the
    variant, the audit's programmed one (:func:`protocols.context.affine_expansion` for
    seeds of field elements)."""

    def __init__(self, field: PrimeField, affine: bool = False) -> None:
        self.field = field
        self.affine = affine
        self._generators: dict[tuple[int, int, int], np.ndarray] = {}

    def expand(self, seed: Seed, call: Call, n: int) -> np.ndarray:
        if self.affine and not isinstance(seed, bytes):
            key = (call.index, n, len(seed))  # G is public: drawn once per simulation
            if key not in self._generators:
                self._generators[key] = affine_generator(call, n, len(seed), self.field)
            return affine_expansion(seed, call, n, self.field, self._generators[key])
        return expand_stream(seed, call, n, self.field)


def _components(nodes: list[int], nbrs: tuple[tuple[int, ...], ...]) -> list[list[int]]:
    """The connected components of the graph's restriction to ``nodes``."""
    left, parts = set(nodes), []
    while left:
        todo = [min(left)]
        part = set(todo)
        while todo:
            u = todo.pop()
            for v in nbrs[u]:
                if v in left and v not in part:
                    part.add(v)
                    todo.append(v)
        left -= part
        parts.append(sorted(part))
    return parts

