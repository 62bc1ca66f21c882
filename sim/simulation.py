"""Simulation: set up parties, run their programs on the SimPy driver, return a Result.

>>> from parties.party import site_parties
>>> from protocols.secure_sum import secure_sum
>>> sim = Simulation(Network.build(3), seed=7)
>>> result = sim.run(site_parties(secure_sum, [{"x": [1.0]}, {"x": [2.0]}, {"x": [3.0]}]))
>>> float(result.outputs[0][0])
6.0

Randomness is spawned from the scenario seed with ``numpy.random.SeedSequence``, per party
and per purpose (spawn key ``(party, purpose)``): purpose 0 is the party's numpy generator for
local random choices, 1 its X25519 key seed, 2 its private mask key. With no seed, fresh
entropy is drawn once and recorded in the result. Views record the seeds and the mask seeds
agreed with peers, so every run replays exactly.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from Crypto.Cipher import AES

from parties.party import Party, check_parties
from parties.view import Coalition, View
from protocols.context import (
    AesRandomness,
    PartyContext,
    Randomness,
    pairwise_mask_from_streams,
)
from protocols.effects import Call
from protocols.errors import InputError, PartyInputError, ProtocolAbort
from protocols.field import FixedPoint, PrimeField, prime_field
from protocols.key_agreement import key_agreement
from sim.ledger import Ledger
from sim.network import Network
from sim.simpy_driver import Interceptor, SimPyDriver

PURPOSE_RNG, PURPOSE_KEYS, PURPOSE_MASKS, PURPOSE_PRESHARED = 0, 1, 2, 3
KEY_SETUPS = ("x25519", "preshared", "none")

RandomnessFactory = Callable[[int, PrimeField], Randomness]


@dataclass
class Result:
    """What a run produced: outputs, ledger, views, times and the seed that replays it."""

    outputs: dict[int, Any]
    ledger: Ledger
    views: dict[int, View]
    roles: dict[int, str]
    simulated_s: float
    wall_s: float
    seed: int

    @property
    def sites(self) -> tuple[int, ...]:
        return tuple(p for p, r in sorted(self.roles.items()) if r == "site")

    def coalition(self, members: Sequence[int]) -> Coalition:
        """The union of the views of ``members`` (see :meth:`parties.view.Coalition.of`)."""
        return Coalition.of(members, self.views)


def seed_bytes(seed: int, party: int, purpose: int) -> bytes:
    """32 bytes of seed material for ``purpose`` of ``party``."""
    state = np.random.SeedSequence(seed, spawn_key=(party, purpose)).generate_state(8, np.uint32)
    return state.astype("<u4").tobytes()


def _preshared_blocks(pairs: np.ndarray) -> bytes:
    """Four 16-byte counter blocks (lo, hi, j) per pair, j = 0..3, big-endian."""
    pair_ids = (pairs[:, 0].astype(np.uint64) << np.uint64(32)) | pairs[:, 1].astype(np.uint64)
    blocks = np.zeros((len(pairs), 4, 2), dtype=">u8")
    blocks[:, :, 0] = pair_ids[:, None]
    blocks[:, :, 1] = np.arange(4, dtype=np.uint64)[None, :]
    return blocks.tobytes()


def preshared_keys(seed: int, parties: Sequence[int]) -> dict[tuple[int, int], tuple[bytes, bytes]]:
    """(channel key, mask seed) of every pair {lo, hi} under the pre-shared key model.

    A trusted setup derives each pair's 64 bytes as AES-256-ECB of the counter blocks
    (lo, hi, j), j = 0..3, under a master key spawned from the seed (a PRF per pair); all
    pairs are derived in one batch.
    """
    ids = sorted(parties)
    pairs = np.array([(a, b) for i, a in enumerate(ids) for b in ids[i + 1 :]], dtype=np.int64)
    if len(pairs) == 0:
        return {}
    master = seed_bytes(seed, -1 % (1 << 32), PURPOSE_PRESHARED)
    material = AES.new(master, AES.MODE_ECB).encrypt(_preshared_blocks(pairs))
    out = {}
    for i, (a, b) in enumerate(pairs.tolist()):
        chunk = material[64 * i : 64 * (i + 1)]
        out[(a, b)] = (chunk[:32], chunk[32:])
    return out


def preshared_pair_keys(seed: int, a: int, b: int) -> tuple[bytes, bytes]:
    """(channel key, mask seed) of the pair {a, b} under the pre-shared key model."""
    lo, hi = sorted((a, b))
    return preshared_keys(seed, [lo, hi])[(lo, hi)]


class _RecordingRandomness:
    """Wraps a Randomness and records every draw in the party's view."""

    def __init__(self, inner: Randomness, view: View) -> None:
        self.inner = inner
        self.view = view

    def private(self, call: Call, n: int, sub: int = 0) -> np.ndarray:
        values = self.inner.private(call, n, sub)
        self.view.draws.append((("private", self.view.party, call.protocol, call.index, sub),
                                values))
        return values

    def pairwise(self, peer: int, call: Call, n: int, sub: int = 0) -> np.ndarray:
        values = self.inner.pairwise(peer, call, n, sub)
        lo, hi = sorted((self.view.party, peer))
        self.view.draws.append((("pair", lo, hi, call.protocol, call.index, sub), values))
        return values

    def pairwise_many(
        self, peers: tuple[int, ...], call: Call, n: int, sub: int = 0
    ) -> np.ndarray:
        values = self.inner.pairwise_many(peers, call, n, sub)
        for peer, row in zip(peers, values, strict=True):
            lo, hi = sorted((self.view.party, peer))
            self.view.draws.append((("pair", lo, hi, call.protocol, call.index, sub), row))
        return values

    def pairwise_mask(
        self, peers: tuple[int, ...], call: Call, half: int, sub: int = 0
    ) -> np.ndarray:
        streams = self.pairwise_many(peers, call, 2 * half, sub)  # recorded stream by stream
        return pairwise_mask_from_streams(self.inner.field, self.view.party, peers, streams,
                                          half)

    def set_pair_seed(self, peer: int, seed: bytes) -> None:
        setter = getattr(self.inner, "set_pair_seed", None)
        if setter is not None:
            setter(peer, seed)


class Simulation:
    """A configured simulated network on which party programs run.

    Parameters
    ----------
    network : Network, optional
        Participants 0..n−1 and their links; a complete network with 10 ms / 100 Mbit/s links
        by default. Participants missing from it are added (linked to everyone).
    prime : int or str
        The field prime (``"2^61-1"`` by default: the fast path).
    frac_bits : int
        Fixed-point fractional bits.
    seed : int, optional
        The scenario seed; fresh entropy (recorded in the result) when omitted.
    sealing : bool
        Seal messages with AES-GCM under the pair's channel key.
    keys : {"x25519", "preshared", "none"}
        How pairs obtain their channel key and mask seed. ``x25519`` runs the key-agreement
        protocol before the programs (its messages are in the ledger). ``preshared`` models
        keys distributed beforehand by a trusted setup: each pair's keys are derived from the
        run seed, with no messages — for audits that re-run a protocol many times and for
        studies at scale where key exchange is not the object. ``none`` gives no pairwise
        keys (no sealing, no pairwise masks).
    record_draws : bool
        Record every mask draw in the views (audits use this).
    record_views : bool
        Keep every received message in the views (the default). Off only for studies at a
        scale where the views would not fit in memory and no audit reads them; the ledger,
        inputs, seeds and outputs are kept either way.
    randomness : callable, optional
        ``randomness(party, field)`` replaces each party's mask source (audits use this).
    interceptor : callable, optional
        Rewrites bytes in transit (tests of sealing).
    """

    def __init__(
        self,
        network: Network | None = None,
        *,
        prime: int | str = "2^61-1",
        frac_bits: int = 24,
        seed: int | None = None,
        sealing: bool = True,
        keys: str = "x25519",
        record_draws: bool = False,
        record_views: bool = True,
        randomness: RandomnessFactory | None = None,
        interceptor: Interceptor | None = None,
    ) -> None:
        self.network = network
        self.field = prime_field(prime)
        self.fixed = FixedPoint(self.field, frac_bits)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise InputError(f"seed = {seed!r} must be a non-negative integer")
        self.seed = seed
        if keys not in KEY_SETUPS:
            raise InputError(f"keys = {keys!r} is unknown; use one of {KEY_SETUPS}")
        if sealing and keys == "none":
            raise InputError("sealing needs pairwise keys; turn sealing off or use keys='x25519'")
        self.sealing = sealing
        self.keys = keys
        self.record_draws = record_draws
        self.record_views = record_views
        self.randomness = randomness
        self.interceptor = interceptor

    def run(self, parties: Sequence[Party], seed: int | None = None) -> Result:
        """Run every party's program; raise ``ProtocolAbort`` if any party fails.

        Key agreement is labelled phase ``setup`` in the ledger. A failure caused by a party's
        input (an :class:`~protocols.errors.InputError`) is raised as
        :class:`~protocols.errors.PartyInputError`, which is both.
        """
        sites, roles = check_parties(parties)
        run_seed = seed if seed is not None else self.seed
        if run_seed is None:
            run_seed = int(np.random.SeedSequence().entropy) % (1 << 63)  # fits TOML
        network = self._network_for(roles)
        views: dict[int, View] = {}
        contexts: dict[int, PartyContext] = {}
        programs = {}
        for party in parties:
            pid = party.id
            view = View(party=pid, role=party.role, inputs=dict(party.inputs))
            view.seeds = {
                "entropy": run_seed,
                "rng_spawn_key": [pid, PURPOSE_RNG],
                "x25519_spawn_key": [pid, PURPOSE_KEYS],
                "mask_spawn_key": [pid, PURPOSE_MASKS],
            }
            randomness: Randomness = (
                self.randomness(pid, self.field)
                if self.randomness is not None
                else AesRandomness(self.field, seed_bytes(run_seed, pid, PURPOSE_MASKS), pid)
            )
            if self.record_draws:
                randomness = _RecordingRandomness(randomness, view)
            rng = np.random.default_rng(np.random.SeedSequence(run_seed, spawn_key=(pid, 0)))
            contexts[pid] = PartyContext(
                party=pid,
                role=party.role,
                parties=sites,
                roles=roles,
                fixed=self.fixed,
                rng=rng,
                randomness=randomness,
                key_seed=(seed_bytes(run_seed, pid, PURPOSE_KEYS) if self.keys == "x25519"
                          else b""),
            )
            views[pid] = view
            programs[pid] = self._program(party)
        if self.keys == "preshared":
            for (a, b), (channel, mask) in preshared_keys(run_seed, sorted(contexts)).items():
                contexts[a].install_pair_keys(b, channel, mask)
                contexts[b].install_pair_keys(a, channel, mask)
        driver = SimPyDriver(network, sealing=self.sealing, interceptor=self.interceptor,
                             record_messages=self.record_views)
        start = time.perf_counter()
        try:
            outcome = driver.run(contexts, programs, views)
        except ProtocolAbort as abort:
            cause = abort.__cause__
            if isinstance(cause, InputError) and not isinstance(abort, InputError):
                raise PartyInputError(abort.party, abort.round, str(cause)) from cause
            raise
        wall = time.perf_counter() - start
        for pid, ctx in contexts.items():
            if ctx.mask_seeds:
                views[pid].seeds["pair_mask_seeds"] = {
                    p: s.hex() for p, s in sorted(ctx.mask_seeds.items())
                }
        return Result(
            outputs=outcome.outputs,
            ledger=Ledger(outcome.rows),
            views=views,
            roles=roles,
            simulated_s=outcome.simulated_s,
            wall_s=wall,
            seed=run_seed,
        )

    def _network_for(self, roles: dict[int, str]) -> Network:
        network = self.network
        if network is None:
            network = self.network = Network.build(len(roles))
        missing = [pid for pid in sorted(roles) if pid not in network.graph]
        if missing:  # extra roles join a copy, so the configured network stays as given
            network = Network(network.graph.copy(), network.topology)
            for pid in missing:
                network.add_participant(pid)
        return network

    def _program(self, party: Party) -> Callable[[PartyContext], Any]:
        def run(ctx: PartyContext) -> Any:
            if self.keys == "x25519":
                with ctx.in_phase("setup"):
                    yield from key_agreement(ctx)
            return (yield from party.program(ctx, **party.inputs))

        return run
