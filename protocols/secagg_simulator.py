"""The simulator of SecAgg (Bonawitz et al., CCS 2017, Thm 6.3; SecAgg+, Bell et al., CCS 2020).

:class:`SecAggSimulator` draws the view of a coalition of sites (with or without the
aggregator) in one call of :func:`protocols.secagg.secagg` from the coalition's own inputs and
randomness, the survivors' sum and the dropout schedule, following the proof's hybrids; the
whole-run audits (:mod:`parties.audit.simulation`) compare it with the real views, and may
program the PRG oracle (:class:`parties.audit.randomness.AffineOracle`) as that proof's
simulator does. The variant string it takes is :func:`protocols.secagg.variant_of`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from protocols import seeds, sharing
from protocols.context import (
    Seed,
    affine_expansion,
    affine_generator,
    expand_stream,
)
from protocols.crypto.key_agreement import keypair
from protocols.effects import Call
from protocols.field import PrimeField
from protocols.secagg import (
    PROTOCOL,
    Config,
    _keys_payload,
    config_of,
    neighbourhoods,
    pair_masks,
    secret_key,
    secret_length,
)
from protocols.simulator import CallView, MessageKey, SimulatorMismatch, uniform_with_sum


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
        drawn = self.simulate(view, seeds.rng(0, "secagg.sizes"), 1)
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
