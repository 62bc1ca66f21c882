"""The randomness an audit injects into the runs it records.

A coalition can explain whatever in its view follows from its own inputs and randomness; only
the rest — its *residual* view — can carry information about honest inputs. The statistical
and simulation audits therefore hold the coalition's randomness fixed across their trials and
draw the honest parties' afresh (:class:`ConditionedRandomness`): every element of the view
is then a constant the coalition knows plus its residual, so tests on the recorded views are
tests on the residual (shifted by a known constant), and a mask pattern that the coalition's
own masks would otherwise blur stays visible. A stream belongs to the coalition when a member
knows it: its private streams, and every pair stream with a member at one end.

Every key is named by a :data:`KeyId` — ``("private", party)`` for a party's private mask key,
``("pair", lo, hi)`` for the seed a pair shares — and the audit knows every key's bytes
(:meth:`ConditionedRandomness.key`). When the coalition's view carries an honest key, or a
stream or a prefix of one (:mod:`.keyflow`), :meth:`ConditionedRandomness.knowing` holds that
key or those stream elements fixed as well: what the coalition has learnt is treated as its own
randomness, and its residual view is tested again.

The exact audit runs the program's own AES streams with keys chosen so that the draws take
every value once (:mod:`.exact`); the tape (:class:`TapeRandomness`) serves the linear audit's
probes.

Audits never import a driver (the package ladder): they are handed a :class:`Runner`, which
runs parties with the randomness given here and returns their views
(:class:`sim.privacy.SimPyRunner` runs them on the SimPy driver).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from parties.party import Party
from parties.view import View
from protocols import seeds
from protocols.context import (
    AesRandomness,
    Randomness,
    Seed,
    affine_expansion,
    expand_stream,
    stream_number,
)
from protocols.crypto.hkdf import derive_key
from protocols.effects import Call
from protocols.errors import InputError
from protocols.field import PrimeField
from protocols.sharing import pairwise_mask_from_streams
from protocols.simulator import StreamKey, stream_key

RandomnessFactory = Callable[[int, PrimeField], Randomness]
"""``factory(party, field)``: the mask source of one party in one run."""

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``."""


class Runner(Protocol):
    """Runs party programs with injected randomness; handed to audits by the driver's package.

    ``runner(parties, randomness) -> views``: one run of ``parties`` whose mask sources come
    from ``randomness(party, field)``, with mask draws recorded in the views. Each party's
    local coins (``ctx.rng``) are the runner's own and the same in every run. ``field`` is the
    field the runs compute in.
    """

    @property
    def field(self) -> PrimeField: ...

    def __call__(
        self, parties: Sequence[Party], randomness: RandomnessFactory
    ) -> Mapping[int, View]: ...


def _seed_material(seed: int, *path: int) -> bytes:
    return seeds.derive(seed, "audit.randomness", index=path)


KeyId = tuple[Any, ...]
"""A key of the randomness: ``("private", party)`` or ``("pair", lo, hi)``."""

KnownStreams = Mapping[tuple[KeyId, int], int]
"""(key, stream number) → how many leading elements of that stream the coalition knows."""

KnownElements = Mapping[tuple[KeyId, int], frozenset[int]]
"""(key, stream number) → positions of single elements of that stream the coalition knows
(an honest party's draw, or part of one, that reached it: :func:`.key_search.find_draws`)."""


def private_key_id(party: int) -> KeyId:
    """The name of ``party``'s private mask key."""
    return ("private", int(party))


def pair_key_id(a: int, b: int) -> KeyId:
    """The name of the seed the pair {a, b} shares."""
    lo, hi = sorted((int(a), int(b)))
    return ("pair", lo, hi)


def key_of_stream(key: StreamKey) -> KeyId:
    """The key a recorded draw (:func:`protocols.simulator.stream_key`) was expanded from."""
    return private_key_id(key[1]) if key[0] == "private" else pair_key_id(key[1], key[2])


def stream_of(key: StreamKey) -> int:
    """The AES stream number of a recorded draw (:func:`protocols.context.stream_number`)."""
    return stream_number(Call(str(key[-3]), int(key[-2])), int(key[-1]))


def key_owners(key: KeyId) -> frozenset[int]:
    """The parties that hold a key."""
    return frozenset(key[1:])


def all_keys(parties: Sequence[int]) -> list[KeyId]:
    """Every key of a run among ``parties``: one private key each, one seed per pair."""
    ids = sorted(int(p) for p in parties)
    return [*(private_key_id(p) for p in ids),
            *(pair_key_id(a, b) for i, a in enumerate(ids) for b in ids[i + 1 :])]


def keyed_source(keys: Mapping[KeyId, bytes], parties: Sequence[int], party: int,
                 field_: PrimeField) -> AesRandomness:
    """``party``'s AES randomness under ``keys``: its private key and one seed per peer."""
    source = AesRandomness(field_, keys[private_key_id(party)], party)
    source.set_pair_seeds({peer: keys[pair_key_id(party, peer)]
                           for peer in parties if peer != party})
    return source


class ConditionedRandomness:
    """Mask sources for one audit trial: the coalition's streams fixed, the honest ones fresh.

    Every party gets an :class:`~protocols.context.AesRandomness` holding only its own keys —
    its private key and one seed per peer. A key the coalition knows is derived from
    ``audit_seed`` alone (the same in every trial); any other from ``audit_seed`` and
    ``trial``. The coalition knows its members' keys, and what ``known_keys`` and
    ``known_streams`` add (:meth:`knowing`).

    Parameters
    ----------
    parties : sequence of int
        Every participant of the run.
    coalition : sequence of int
        The parties whose randomness stays fixed.
    audit_seed : int
        Seed of the audit.
    trial : int
        Number of the trial (≥ 0).
    known_keys : collection of KeyId
        Honest keys the coalition has learnt: fixed like its own.
    known_streams : KnownStreams, optional
        Leading elements of honest streams the coalition has learnt: fixed, the rest fresh.
    known_elements : KnownElements, optional
        Elements of honest streams, by position, the coalition has learnt: fixed likewise.
    """

    def __init__(
        self, parties: Sequence[int], coalition: Sequence[int], audit_seed: int, trial: int,
        known_keys: Collection[KeyId] = (), known_streams: KnownStreams | None = None,
        known_elements: KnownElements | None = None,
    ) -> None:
        self.parties = tuple(sorted(parties))
        self.coalition = frozenset(coalition)
        self.audit_seed = audit_seed
        self.trial = trial
        self.known_keys = frozenset(known_keys)
        self.known_streams: dict[tuple[KeyId, int], int] = dict(known_streams or {})
        self.known_elements: dict[tuple[KeyId, int], frozenset[int]] = dict(
            known_elements or {})
        self._fixed = _seed_material(audit_seed, 0)
        self._fresh = _seed_material(audit_seed, 1, trial)

    def knowing(self, keys: Collection[KeyId], streams: KnownStreams,
                elements: KnownElements | None = None) -> ConditionedRandomness:
        """The same trial, with ``keys``, ``streams`` and ``elements`` known to the coalition
        as well."""
        merged = dict(self.known_streams)
        for k, n in streams.items():
            merged[k] = max(n, merged.get(k, 0))
        positions = dict(self.known_elements)
        for k, at in (elements or {}).items():
            positions[k] = positions.get(k, frozenset()) | frozenset(at)
        return ConditionedRandomness(self.parties, self.coalition, self.audit_seed, self.trial,
                                     self.known_keys | frozenset(keys), merged, positions)

    def _label(self, key: KeyId) -> str:
        if key[0] == "private":
            return f"audit/private/{key[1]}"
        return f"audit/pair/{key[1]}/{key[2]}"

    def fixed_key(self, key: KeyId) -> bytes:
        """The bytes ``key`` has in every trial when the coalition knows it."""
        return derive_key(self._fixed, self._label(key))

    def key(self, key: KeyId) -> bytes:
        """The bytes of ``key`` in this trial."""
        if key_owners(key) & self.coalition or key in self.known_keys:
            return self.fixed_key(key)
        return derive_key(self._fresh, self._label(key))

    def keys(self) -> dict[KeyId, bytes]:
        """Every key of the run, with its bytes in this trial."""
        return {k: self.key(k) for k in all_keys(self.parties)}

    def __call__(self, party: int, field: PrimeField) -> Randomness:
        mine = [private_key_id(party), *(pair_key_id(party, p) for p in self.parties
                                         if p != party)]
        source = keyed_source({k: self.key(k) for k in mine}, self.parties, party, field)
        partial = {k: frozenset(range(n)) for k, n in self.known_streams.items()
                   if k[0] in set(mine)}
        for k, at in self.known_elements.items():
            if k[0] in set(mine):
                partial[k] = partial.get(k, frozenset()) | at
        if not partial:
            return source
        fixed = keyed_source({k: self.fixed_key(k) for k in mine}, self.parties, party, field)
        return PartlyKnownRandomness(source, fixed, partial)


class PairsFromStreams:
    """``pairwise_many`` and ``pairwise_mask`` of a randomness source, built row by row from
    its own ``pairwise`` streams (for the audit's sources, which serve streams one by one)."""

    party: int
    field: PrimeField

    def pairwise(self, peer: int, call: Call, n: int, sub: int = 0) -> np.ndarray:
        raise NotImplementedError

    def expand(self, seed: Seed, call: Call, n: int) -> np.ndarray:
        """The random oracle PRG(seed) as every party computes it (AES-256-CTR keyed by the
        seed, :func:`protocols.context.expand_stream`): the same seed gives every party the
        same stream, and a seed drawn afresh in a trial gives a fresh one."""
        return expand_stream(seed, call, n, self.field)

    def pairwise_many(
        self, peers: tuple[int, ...], call: Call, n: int, sub: int = 0
    ) -> np.ndarray:
        rows = [self.pairwise(peer, call, n, sub) for peer in peers]
        return np.stack(rows) if rows else self.field.zeros((0, n))

    def pairwise_mask(
        self, peers: tuple[int, ...], call: Call, half: int, sub: int = 0
    ) -> np.ndarray:
        streams = self.pairwise_many(peers, call, 2 * half, sub)
        return pairwise_mask_from_streams(self.field, self.party, peers, streams, half)


class PartlyKnownRandomness(PairsFromStreams):
    """A party's randomness whose streams have known leading elements.

    Elements the coalition has learnt (``known``: (key, stream number) → their positions) come
    from ``fixed`` — the same in every trial — and the rest from ``fresh``. Draws go through the
    stream-by-stream methods, so a recording wrapper sees exactly the values used.
    """

    def __init__(self, fresh: AesRandomness, fixed: AesRandomness,
                 known: Mapping[tuple[KeyId, int], frozenset[int]]) -> None:
        self.fresh = fresh
        self.fixed = fixed
        self.known = dict(known)
        self.party = fresh.party
        self.field = fresh.field

    @property
    def pair_seeds(self) -> Mapping[int, bytes]:
        return self.fresh.pair_seeds

    def _mix(self, key: KeyId, stream: int, fresh: np.ndarray,
             fixed: Callable[[], np.ndarray]) -> np.ndarray:
        at = sorted(i for i in self.known.get((key, stream), ()) if i < len(fresh))
        if not at:
            return fresh
        out = np.array(fresh, copy=True)
        out[at] = fixed()[at]
        return out

    def private(self, call: Call, n: int, sub: int = 0) -> np.ndarray:
        return self._mix(private_key_id(self.party), stream_number(call, sub),
                         self.fresh.private(call, n, sub),
                         lambda: self.fixed.private(call, n, sub))

    def pairwise(self, peer: int, call: Call, n: int, sub: int = 0) -> np.ndarray:
        return self._mix(pair_key_id(self.party, peer), stream_number(call, sub),
                         self.fresh.pairwise(peer, call, n, sub),
                         lambda: self.fixed.pairwise(peer, call, n, sub))


class TapeRandomness(PairsFromStreams):
    """Randomness read from a tape ``{stream key: elements}`` shared by all parties.

    In discovery mode (``tape is None``) it returns zeros and records every stream's length.
    """

    def __init__(
        self,
        party: int,
        field_: PrimeField,
        tape: dict[StreamKey, np.ndarray] | None,
        discovered: dict[StreamKey, int] | None = None,
    ) -> None:
        self.party = party
        self.field = field_
        self.tape = tape
        self.discovered = discovered

    def _lookup(self, key: StreamKey, n: int) -> np.ndarray:
        if self.tape is None:
            if self.discovered is not None:
                self.discovered[key] = n
            return self.field.zeros(n)
        values = self.tape.get(key)
        if values is None or len(values) != n:
            raise InputError(f"the protocol drew stream {key} of {n} elements, not on the tape")
        return values

    def private(self, call: Call, n: int, sub: int = 0) -> np.ndarray:
        return self._lookup(stream_key("private", self.party, None, call, sub), n)

    def pairwise(self, peer: int, call: Call, n: int, sub: int = 0) -> np.ndarray:
        return self._lookup(stream_key("pair", self.party, peer, call, sub), n)


def tape_factory(
    tape: dict[StreamKey, np.ndarray] | None, discovered: dict[StreamKey, Any] | None = None
) -> RandomnessFactory:
    """A factory of :class:`TapeRandomness` reading ``tape`` (or discovering streams)."""
    return lambda party, field_: TapeRandomness(party, field_, tape, discovered)


class AffineOracle:
    """A party's randomness whose PRG is programmed by the audit: affine in a seed of field
    elements (:func:`protocols.context.affine_expansion`), AES for key bytes.

    Bonawitz et al.'s simulator (Thm 6.3) programs the random oracle; the audit does the same
    so that what a coalition unmasks with a seed it reconstructs (SecAgg's y_u − PRG(b_u))
    is affine in the shares it holds: a masked input that leaves out its pair masks then shows
    as a GF(p)-affine relation. Every other draw is ``inner``'s. The simulator must expand with
    the same oracle (SecAgg: ``oracle=affine`` in the variant).
    """

    def __init__(self, inner: Randomness, field_: PrimeField) -> None:
        self.inner = inner
        self.field = field_
        self.party = getattr(inner, "party", 0)

    @property
    def pair_seeds(self) -> Mapping[int, bytes]:
        return getattr(self.inner, "pair_seeds", {})

    def expand(self, seed: Seed, call: Call, n: int) -> np.ndarray:
        if isinstance(seed, bytes):
            return self.inner.expand(seed, call, n)
        return affine_expansion(seed, call, n, self.field)

    def private(self, call: Call, n: int, sub: int = 0) -> np.ndarray:
        return self.inner.private(call, n, sub)

    def pairwise(self, peer: int, call: Call, n: int, sub: int = 0) -> np.ndarray:
        return self.inner.pairwise(peer, call, n, sub)

    def pairwise_many(
        self, peers: tuple[int, ...], call: Call, n: int, sub: int = 0
    ) -> np.ndarray:
        return self.inner.pairwise_many(peers, call, n, sub)

    def pairwise_mask(
        self, peers: tuple[int, ...], call: Call, half: int, sub: int = 0
    ) -> np.ndarray:
        return self.inner.pairwise_mask(peers, call, half, sub)


def affine_oracle(factory: RandomnessFactory) -> RandomnessFactory:
    """``factory`` with every party's PRG programmed by :class:`AffineOracle`."""
    return lambda party, field_: AffineOracle(factory(party, field_), field_)
