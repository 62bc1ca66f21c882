"""Simulation: set up parties, run their programs on the SimPy driver, return a Result.

>>> from parties.party import site_parties
>>> from protocols.secure_sum import secure_sum
>>> sim = Simulation(Network.build(3), seed=7)
>>> result = sim.run(site_parties(secure_sum, [{"x": [1.0]}, {"x": [2.0]}, {"x": [3.0]}]))
>>> float(result.outputs[0][0])
6.0

Randomness. Each party's seeds are derived *one way* from the run seed by the one seed scheme
(:mod:`protocols.seeds`; DESIGN.md spawns them with ``numpy.random.SeedSequence``; this departs
from it on purpose): HKDF-SHA256 of the run seed with the salt :data:`SEED_SALT` and, as info,
the party id and the registered label, typed and length-prefixed (:func:`party_seed`).
Purposes: ``rng`` (the numpy generator for local random choices, seeded with the derived value,
so ``ctx.rng.bit_generator.seed_seq.entropy`` is the party's own 256-bit value), ``x25519``
(its key seed) and ``masks`` (its private mask key). A ``SeedSequence(run_seed,
spawn_key=...)`` would hand every party the run seed itself as its generator's entropy, and
with it every other party's keys; a one-way derivation hands each party only its own. With no
seed, fresh entropy is drawn once (:func:`protocols.seeds.fresh_seed`) and returned in
``Result.seed`` (the caller's, never a party's). Views record each party's own derived seeds
and pair mask seeds, never the run seed, so every run replays exactly from its seed.

Key material. ``key_source="seed"`` (the default) derives every key from the run seed, so a run
replays byte for byte. ``key_source="os"`` draws the X25519 key seeds, the private mask keys
and the pre-shared pair keys from the operating system (:func:`protocols.seeds.fresh_bytes`) at
the start of each run — what a run on a real network needs, since two seeded runs with one seed
reuse (key, nonce) pairs. Outputs, the ledger and the parties' local random choices are
unchanged; masks and ciphertexts differ from run to run.

Isolation (see :mod:`protocols.context` for the trust boundary). Contexts share nothing
mutable: each has its own field object, a read-only mapping of roles and its own keys. Party
inputs are recorded as immutable copies (:func:`parties.view.frozen`), and the program is
handed that record when it is immutable, or its own copy otherwise — never the caller's
object, which therefore can change neither the record nor another party's input. The program
wrapper closes over the party's own program and inputs only.
"""

from __future__ import annotations

import copy
import functools
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from parties.party import SITE, Party, Program, check_parties
from parties.view import Coalition, View, another_sparse, frozen, is_immutable
from protocols import seeds
from protocols.context import (
    AesRandomness,
    PartyContext,
    Randomness,
)
from protocols.crypto.key_agreement import key_agreement
from protocols.crypto.keystream import encrypt_blocks
from protocols.effects import Call
from protocols.errors import InputError, PartyInputError, ProtocolAbort
from protocols.field import FixedPoint, PrimeField, default_frac_bits, prime_field
from protocols.sharing import pairwise_mask_from_streams
from sim.drivers.driver import DriverOutcome, Interceptor, driver_class
from sim.faults import FaultPlan
from sim.ledger import Ledger
from sim.network import Network

KEY_SETUPS = ("x25519", "preshared", "none")
KEY_SOURCES = ("seed", "os")
VIEW_PLACES = ("gathered", "rank")
"""Where the views are at the end of an MPI run (:class:`Simulation`'s ``views``)."""
SEED_SALT = seeds.SALT
"""HKDF salt of :func:`party_seed` and :func:`run_key` (:data:`protocols.seeds.SALT`)."""

SEED_BYTES = seeds.SEED_BYTES

RandomnessFactory = Callable[[int, PrimeField], Randomness]


@dataclass
class Result:
    """What a run produced: outputs, ledger, views, times and the seed that replays it.

    ``seed`` is the run seed: the caller's to keep. No party ever held it.
    """

    outputs: dict[int, Any]
    ledger: Ledger
    views: dict[int, View]
    roles: dict[int, str]
    simulated_s: float
    wall_s: float
    seed: int
    faults: dict[str, Any] | None = None
    """With injected faults (:mod:`sim.faults`): what was injected, the events, and what each
    party saw (``completed`` or ``crashed at t s``); None when the run had no faults."""

    @property
    def sites(self) -> tuple[int, ...]:
        return tuple(p for p, r in sorted(self.roles.items()) if r == "site")

    def coalition(self, members: Sequence[int]) -> Coalition:
        """The union of the views of ``members`` (see :meth:`parties.view.Coalition.of`)."""
        return Coalition.of(members, self.views)


# -- one-way seed derivation (protocols.seeds) ------------------------------------------------


def seed_key(run_seed: int) -> bytes:
    """HKDF-Extract of the run seed (:func:`protocols.seeds.root_key`): the pseudo-random key
    every party's seed is expanded from, extracted once per run."""
    return seeds.root_key(run_seed)


def party_seed(run_seed: int | bytes, party: int, purpose: str) -> bytes:
    """32 bytes of seed material for ``purpose`` of ``party``, derived one way from the seed.

    HKDF-SHA256 (RFC 5869) of the run seed with the registered per-party label ``purpose``
    (:func:`protocols.seeds.derive`): ``"rng"``, ``"x25519"`` or ``"masks"``. Knowing one
    party's output tells nothing about the run seed or another party's output.

    Parameters
    ----------
    run_seed : int or bytes
        The scenario seed (a non-negative integer), or its :func:`seed_key`.
    party : int
        The party id, in [0, 2^64).
    purpose : str
        A per-party label of :data:`protocols.seeds.LABELS`.
    """
    if isinstance(run_seed, bytes):
        return seeds.expand(run_seed, purpose, party=party)
    return seeds.derive(run_seed, purpose, party=party)


def run_key(run_seed: int | bytes, purpose: str) -> bytes:
    """32 bytes for a run-wide purpose (the pre-shared key setup), derived one way."""
    if isinstance(run_seed, bytes):
        return seeds.expand(run_seed, purpose)
    return seeds.derive(run_seed, purpose)


_PAIR_ID_LIMIT = 1 << 62


def _preshared_blocks(pairs: np.ndarray) -> bytes:
    """Four 16-byte blocks per pair: (j·2^62 + lo, hi), j = 0..3, two big-endian 64-bit words.

    Each id keeps a whole fixed-width word (below 2^62), so distinct (pair, j) give distinct
    blocks for every id a run can have — a packing of both ids into one 64-bit word collided
    from 2^32 on.
    """
    blocks = np.empty((len(pairs), 4, 2), dtype=">u8")
    blocks[:, :, 0] = pairs[:, :1] | (np.arange(4, dtype=np.uint64) << np.uint64(62))
    blocks[:, :, 1] = pairs[:, 1:]
    return blocks.tobytes()


def preshared_keys(
    seed: int | bytes, parties: Sequence[int], *, master: bytes | None = None
) -> dict[tuple[int, int], tuple[bytes, bytes]]:
    """(channel key, mask seed) of every pair {lo, hi} under the pre-shared key model.

    A trusted setup derives each pair's 64 bytes as AES-256-ECB of its four blocks
    (:func:`_preshared_blocks`) under a master key — :func:`run_key` of the seed (purpose
    ``"preshared"``), or ``master``, e.g. drawn from the operating system — AES serving as a
    PRF per pair. All pairs are derived in one batch.
    """
    ids = sorted(parties)
    if ids and not 0 <= ids[0] <= ids[-1] < _PAIR_ID_LIMIT:
        raise InputError(f"party ids must lie in [0, 2^62), got {ids[0]}..{ids[-1]}")
    if len(ids) < 2:
        return {}
    lo, hi = np.triu_indices(len(ids), 1)  # every pair {lo < hi}, in lexicographic order
    id_array = np.array(ids, dtype=np.uint64)
    pairs = np.stack([id_array[lo], id_array[hi]], axis=1)
    key = master if master is not None else run_key(seed, "preshared")
    material = encrypt_blocks(key, _preshared_blocks(pairs))
    return {(a, b): (material[at : at + 32], material[at + 32 : at + 64])
            for a, b, at in zip(pairs[:, 0].tolist(), pairs[:, 1].tolist(),
                                range(0, len(material), 64), strict=True)}


def preshared_pair_keys(seed: int, a: int, b: int) -> tuple[bytes, bytes]:
    """(channel key, mask seed) of the pair {a, b} under the pre-shared key model."""
    lo, hi = sorted((a, b))
    return preshared_keys(seed, [lo, hi])[(lo, hi)]


class _RecordingRandomness:
    """Wraps a Randomness and records an immutable copy of every draw.

    It holds its own list of records (the simulation moves them into the party's view after
    the run), never the view: a program reaches its randomness through its context, and the
    view must not be reachable from there.
    """

    def __init__(self, inner: Randomness, party: int) -> None:
        self.inner = inner
        self.party = party
        self.records: list[tuple[tuple[Any, ...], np.ndarray]] = []

    def private(self, call: Call, n: int, sub: int = 0) -> np.ndarray:
        values = self.inner.private(call, n, sub)
        self.records.append((("private", self.party, call.protocol, call.index, sub),
                             frozen(values)))
        return values

    def pairwise(self, peer: int, call: Call, n: int, sub: int = 0) -> np.ndarray:
        values = self.inner.pairwise(peer, call, n, sub)
        lo, hi = sorted((self.party, peer))
        self.records.append((("pair", lo, hi, call.protocol, call.index, sub), frozen(values)))
        return values

    def pairwise_many(
        self, peers: tuple[int, ...], call: Call, n: int, sub: int = 0
    ) -> np.ndarray:
        values = self.inner.pairwise_many(peers, call, n, sub)
        for peer, row in zip(peers, values, strict=True):
            lo, hi = sorted((self.party, peer))
            self.records.append((("pair", lo, hi, call.protocol, call.index, sub),
                                 frozen(row)))
        return values

    def pairwise_mask(
        self, peers: tuple[int, ...], call: Call, half: int, sub: int = 0
    ) -> np.ndarray:
        streams = self.pairwise_many(peers, call, 2 * half, sub)  # recorded stream by stream
        return pairwise_mask_from_streams(self.inner.field, self.party, peers, streams, half)

    def expand(self, seed: Any, call: Call, n: int) -> np.ndarray:
        # not a draw: a function of the seed, which the view holds as a draw or a message
        return self.inner.expand(seed, call, n)

    def set_pair_seed(self, peer: int, seed: bytes) -> None:
        setter = getattr(self.inner, "set_pair_seed", None)
        if setter is not None:
            setter(peer, seed)


def _party_program(
    program: Program, inputs: Mapping[str, Any], agree_keys: bool
) -> Callable[[PartyContext], Generator[Any, Any, Any]]:
    """The generator the driver runs for one party: key agreement (if any), then its program.

    A module-level function, so that the closure holds the party's own program and inputs
    and nothing else — not the simulation, which knows the run seed.
    """

    def run(ctx: PartyContext) -> Generator[Any, Any, Any]:
        if agree_keys:
            with ctx.in_phase("setup"):
                yield from key_agreement(ctx)
            ctx.end_setup()
        return (yield from program(ctx, **inputs))

    return run


def _program_inputs(record: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """The record's values where they are immutable; a sparse matrix of the record as another
    matrix object over its immutable arrays (:func:`parties.view.another_sparse`); an
    independent frozen copy otherwise."""
    inputs = {}
    for k, v in record.items():
        if is_immutable(v):
            inputs[k] = v
        else:
            again = another_sparse(v)
            inputs[k] = again if again is not None else frozen(given[k])
    return inputs



def _record_party_state(
    views: Mapping[int, View], contexts: Mapping[int, PartyContext],
    recorders: Mapping[int, _RecordingRandomness],
) -> None:
    """Add to each hosted party's view its pair mask seeds and its recorded draws."""
    for pid, ctx in contexts.items():
        if ctx.mask_seeds:
            views[pid].seeds["pair_mask_seeds"] = {
                p: s.hex() for p, s in sorted(ctx.mask_seeds.items())
            }
    for pid, recorder in recorders.items():
        views[pid].draws = list(recorder.records)

class Simulation:
    """A configured simulated network on which party programs run.

    Parameters
    ----------
    network : Network, optional
        Participants 0..n−1 and their links; a complete network with 10 ms / 100 Mbit/s links
        by default. Participants missing from it are added (linked to everyone).
    prime : int or str
        The field prime (``"2^61-1"`` by default: the fast path).
    frac_bits : int, optional
        Fixed-point fractional bits; default :data:`protocols.field.FRAC_BITS` (24), capped at
        bits(p) − 2 for a small field (:func:`~protocols.field.default_frac_bits`).
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
    faults : FaultPlan, optional
        Faults the driver injects (:mod:`sim.faults`; a scenario's ``[[fault]]`` tables).
    key_source : {"seed", "os"}
        Where key material comes from. ``"seed"``: derived from the run seed, so the run
        replays byte for byte (simulations). ``"os"``: drawn from the operating system for every
        run — X25519 key seeds, private mask keys and pre-shared pair keys — as a run on a
        real network needs (one seed must never give two runs the same keys and nonces).
    driver : {"simpy", "mpi"}
        What runs the programs: ``"simpy"`` (one process, simulated network and clock) or
        ``"mpi"`` (:mod:`sim.drivers.mpi`: the parties spread over the MPI ranks this process
        belongs to; every rank calls ``run`` with the same arguments and gets the same
        result; needs the ``mpi`` extra).
    views : {"gathered", "rank"}
        Under MPI, where the views are at the end: ``"gathered"`` (the default) — every view
        at every rank; ``"rank"`` — each rank keeps its own parties' views only
        (:class:`sim.drivers.rank_views.RankViews`), so its memory grows with its parties, not
        with M; outputs and the ledger are at every rank either way. SimPy holds every view
        in its one process and takes the default only.
    view_sink : callable, optional
        ``view_sink(views) -> views``: called after every completed run with the views the
        driver returned; the Result holds what it returns (:class:`sim.view_store.ViewSink`
        writes this process's views to disk and returns the lazy on-disk store).
    ledger_sink : callable, optional
        Under MPI, ``ledger_sink(rows) -> ledger``: each rank hands it its own parties' rows
        instead of gathering every row at every rank (:class:`sim.ledger_store.LedgerSink`
        writes them, rank 0 merges, every rank reads the merged file lazily).
    """

    def __init__(
        self,
        network: Network | None = None,
        *,
        prime: int | str = "2^61-1",
        frac_bits: int | None = None,
        seed: int | None = None,
        sealing: bool = True,
        keys: str = "x25519",
        record_draws: bool = False,
        record_views: bool = True,
        randomness: RandomnessFactory | None = None,
        interceptor: Interceptor | None = None,
        key_source: str = "seed",
        driver: str = "simpy",
        faults: FaultPlan | None = None,
        views: str = "gathered",
        view_sink: Callable[[Mapping[int, View]], Mapping[int, View]] | None = None,
        ledger_sink: Callable[[list[Any]], Ledger] | None = None,
    ) -> None:
        # a driver that spreads the parties over processes says where it can leave the views
        places = getattr(driver_class(driver), "view_places", VIEW_PLACES[:1])
        if views not in places:
            raise InputError(f"views = {views!r} is not offered by driver {driver!r}; use one "
                             f"of {places}")
        self.views = views
        self.view_sink = view_sink
        self.ledger_sink = ledger_sink
        self.network = network
        self.field = prime_field(prime)
        self.fixed = FixedPoint(self.field, default_frac_bits(self.field) if frac_bits is None
                                else frac_bits)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise InputError(f"seed = {seed!r} must be a non-negative integer")
        self.seed = seed
        if keys not in KEY_SETUPS:
            raise InputError(f"keys = {keys!r} is unknown; use one of {KEY_SETUPS}")
        if sealing and keys == "none":
            raise InputError("sealing needs pairwise keys; turn sealing off or use keys='x25519'")
        if key_source not in KEY_SOURCES:
            raise InputError(f"key_source = {key_source!r} is unknown; use one of {KEY_SOURCES}")
        self.key_source = key_source
        self.driver = driver
        self.faults = faults or FaultPlan()
        driver_class(driver).check(self.faults)  # an unknown name, a missing extra, faults
        self.sealing = sealing
        self.keys = keys
        self.record_draws = record_draws
        self.record_views = record_views
        self.randomness = randomness
        self.interceptor = interceptor

    def run(self, parties: Sequence[Party], seed: int | None = None) -> Result:
        """Run every party's program; raise ``ProtocolAbort`` if any party fails.

        The abort raised here is the caller's: it carries the failing party's full reason
        and, as ``__cause__``, its exception. Peers were told only which party aborted in
        which call (:meth:`protocols.errors.ProtocolAbort.notice`), and its ``views`` attribute
        holds every party's view up to the abort (the notices included). A failure caused by a
        party's input (an :class:`~protocols.errors.InputError`) is raised as
        :class:`~protocols.errors.PartyInputError`, which is both. Key agreement is labelled
        phase ``setup`` in the ledger.
        """
        sites, roles = check_parties(parties)
        run_seed = seed if seed is not None else self.seed
        if run_seed is None:
            run_seed = seeds.fresh_seed()  # returned in Result.seed: the run replays
        prk = seed_key(run_seed)  # validates a per-run seed as the constructor does
        network = self._network_for(roles)
        self.faults.check_participants(sorted(roles), self.sealing)
        driver = driver_class(self.driver)(
            network, sealing=self.sealing, interceptor=self.interceptor,
            record_messages=self.record_views, field=self.field, faults=self.faults,
            **({"views": self.views} if self.views != "gathered" else {}),
            **({"ledger_sink": self.ledger_sink} if self.ledger_sink is not None else {}))
        driver.place(sorted(roles))
        views: dict[int, View] = {}
        contexts: dict[int, PartyContext] = {}
        programs = {}
        recorders: dict[int, _RecordingRandomness] = {}
        from_os = self.key_source == "os"
        for party in parties:
            pid = party.id
            if not driver.hosts(pid):  # another rank's party: its state never reaches this one
                continue
            record = {str(k): frozen(v) for k, v in party.inputs.items()}
            view = View(party=pid, role=party.role, inputs=record)
            field = copy.copy(self.field)  # one per party: nothing shared can be written
            rng_seed = party_seed(prk, pid, "rng")
            view.seeds = {"key_source": self.key_source, "rng": rng_seed.hex()}
            randomness: Randomness
            injected: Randomness | None = None
            if self.randomness is not None:
                randomness = injected = self.randomness(pid, field)
            else:
                mask_key = (seeds.fresh_bytes(SEED_BYTES) if from_os
                            else party_seed(prk, pid, "masks"))
                view.seeds["masks"] = mask_key.hex()
                randomness = AesRandomness(field, mask_key, pid)
            if self.record_draws:
                randomness = recorders[pid] = _RecordingRandomness(randomness, pid)
            key_seed = b""
            if self.keys == "x25519":
                key_seed = (seeds.fresh_bytes(SEED_BYTES) if from_os
                            else party_seed(prk, pid, "x25519"))
                view.seeds["x25519"] = key_seed.hex()
            contexts[pid] = PartyContext(
                party=pid,
                role=party.role,
                parties=sites,
                roles=roles,  # the context keeps its own read-only copy
                fixed=FixedPoint(field, self.fixed.frac_bits),
                rng_seed=rng_seed,
                randomness=randomness,
                key_seed=key_seed,
            )
            injected_seeds = getattr(injected, "pair_seeds", None)
            if self.keys == "none" and isinstance(injected_seeds, Mapping):
                # an audit's injected keys are the party's mask seeds, as key agreement's are
                contexts[pid].mask_seeds.update(injected_seeds)
            views[pid] = view
            programs[pid] = _party_program(party.program, _program_inputs(record, party.inputs),
                                           self.keys == "x25519")
        if self.keys == "preshared":
            master = seeds.fresh_bytes(SEED_BYTES) if from_os else None
            if from_os:  # one trusted setup: every process shares its master
                master = driver.shared(master)
            channels: dict[int, dict[int, bytes]] = {pid: {} for pid in contexts}
            masks: dict[int, dict[int, bytes]] = {pid: {} for pid in contexts}
            for (a, b), (channel, mask) in preshared_keys(prk, sorted(roles),
                                                          master=master).items():
                if a in channels:
                    channels[a][b], masks[a][b] = channel, mask
                if b in channels:
                    channels[b][a], masks[b][a] = channel, mask
            for pid, ctx in contexts.items():
                ctx.install_all_pair_keys(channels[pid], masks[pid])
        start = time.perf_counter()
        try:
            prepare = getattr(self.view_sink, "prepare", None)
            if prepare is not None:  # views on disk: payloads spilled as they are recorded
                prepare(views)
            settle = functools.partial(_record_party_state, views, contexts, recorders)
            outcome, views = driver.interpret(contexts, programs, views, settle)
        except ProtocolAbort as abort:
            cause = abort.__cause__
            if isinstance(cause, InputError) and not isinstance(abort, InputError):
                refused = PartyInputError(abort.party, abort.round, str(cause), abort.call)
                refused.views = views  # type: ignore[attr-defined]
                raise refused from cause
            abort.views = views  # type: ignore[attr-defined]  # what each party saw until then
            partial = getattr(abort, "outcome", None)
            if partial is not None and partial.faults is not None:
                # a run that a fault aborted still reports what was injected and completed
                _record_party_state(views, contexts, recorders)
                abort.result = self._result(partial, views, roles, run_seed,
                                            time.perf_counter() - start, abort)
            raise
        wall = max(time.perf_counter() - start, outcome.wall_s or 0.0)
        if self.view_sink is not None:
            views = self.view_sink(views)  # type: ignore[assignment]
        return self._result(outcome, views, roles, run_seed, wall)

    @staticmethod
    def _result(
        outcome: DriverOutcome, views: dict[int, View], roles: dict[int, str], run_seed: int,
        wall: float, abort: ProtocolAbort | None = None,
    ) -> Result:
        """The run's Result (with the fault summary when faults were injected)."""
        fault_summary = None
        if outcome.faults is not None:
            crashed = outcome.faults.crashed
            seen = {pid: "completed" if pid in outcome.outputs else
                    f"crashed at {crashed[pid]:g} s" if pid in crashed else
                    f"aborted: {abort}" if abort is not None and pid == abort.party else
                    f"stopped by the notice 'party {abort.party} aborted'" if abort is not None
                    else "unfinished"
                    for pid in sorted(roles)}
            fault_summary = outcome.faults.summary(seen)
        events = fault_summary["events"] if fault_summary else ()
        rows = outcome.rows  # a driver may hand back a ledger already (on disk under MPI)
        return Result(
            outputs=outcome.outputs,
            ledger=rows.with_faults(events) if isinstance(rows, Ledger) else Ledger(
                rows, faults=events),
            views=views,
            roles=dict(roles),
            simulated_s=outcome.simulated_s,
            wall_s=wall,
            seed=run_seed,
            faults=fault_summary,
        )

    def driver_info(self) -> dict[str, Any]:
        """Which driver runs the programs, on how many ranks and hosts (the report's
        ``driver``). Under MPI every rank must call it (it gathers the host names)."""
        return driver_class(self.driver).describe()

    def _network_for(self, roles: dict[int, str]) -> Network:
        network = self.network
        if network is None:
            network = self.network = Network.build(len(roles))
        missing = [pid for pid in sorted(roles) if pid not in network]  # no graph built
        sites = [pid for pid in missing if roles[pid] == SITE]
        if sites:  # only other roles (an aggregator, a dealer) join a given network
            held = sorted(p for p in network.graph if isinstance(p, int))
            raise InputError(
                f"the network has parties {held[0] if held else ''}..{held[-1] if held else ''} "
                f"but the run has {len([r for r in roles.values() if r == SITE])} data-holding "
                f"parties (party {sites[0]} is not in it); build the network for as many "
                "parties as there are inputs, e.g. Network.build(len(inputs))")
        if missing:  # extra roles join a copy, so the configured network stays as given
            network = Network(network.graph.copy(), network.topology)
            for pid in missing:
                network.add_participant(pid)
        return network
