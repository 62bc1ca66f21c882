"""The randomness an audit injects into the runs it records.

A coalition can explain whatever in its view follows from its own inputs and randomness; only
the rest — its *residual* view — can carry information about honest inputs. The statistical
and simulation audits therefore hold the coalition's randomness fixed across their trials and
draw the honest parties' afresh (:class:`ConditionedRandomness`): every element of the view
is then a constant the coalition knows plus its residual, so tests on the recorded views are
tests on the residual (shifted by a known constant), and a mask pattern that the coalition's
own masks would otherwise blur stays visible. A stream belongs to the coalition when a member
knows it: its private streams, and every pair stream with a member at one end.

The exact audit replaces the randomness by an enumerated tape (:class:`TapeRandomness`).

Audits never import a driver (the package ladder): they are handed a :class:`Runner`, which
runs parties with the randomness given here and returns their views
(:class:`sim.privacy.SimPyRunner` runs them on the SimPy driver).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from parties.party import Party
from parties.view import View
from protocols.context import AesRandomness, Randomness, pairwise_mask_from_streams
from protocols.effects import Call
from protocols.errors import InputError
from protocols.field import PrimeField
from protocols.prg import derive_key
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
    state = np.random.SeedSequence(seed, spawn_key=path).generate_state(8, np.uint32)
    return state.astype("<u4").tobytes()


class ConditionedRandomness:
    """Mask sources for one audit trial: the coalition's streams fixed, the honest ones fresh.

    Every party gets an :class:`~protocols.context.AesRandomness` holding only its own keys —
    its private key and one seed per peer. A key the coalition knows is derived from
    ``audit_seed`` alone (the same in every trial); any other from ``audit_seed`` and
    ``trial``.

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
    """

    def __init__(
        self, parties: Sequence[int], coalition: Sequence[int], audit_seed: int, trial: int
    ) -> None:
        self.parties = tuple(sorted(parties))
        self.coalition = frozenset(coalition)
        self._fixed = _seed_material(audit_seed, 0)
        self._fresh = _seed_material(audit_seed, 1, trial)

    def _key(self, owners: set[int], label: str) -> bytes:
        material = self._fixed if owners & self.coalition else self._fresh
        return derive_key(material, label)

    def __call__(self, party: int, field: PrimeField) -> AesRandomness:
        source = AesRandomness(field, self._key({party}, f"audit/private/{party}"), party)
        for peer in self.parties:
            if peer != party:
                lo, hi = sorted((party, peer))
                source.set_pair_seed(peer, self._key({lo, hi}, f"audit/pair/{lo}/{hi}"))
        return source


class TapeRandomness:
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


def tape_factory(
    tape: dict[StreamKey, np.ndarray] | None, discovered: dict[StreamKey, Any] | None = None
) -> RandomnessFactory:
    """A factory of :class:`TapeRandomness` reading ``tape`` (or discovering streams)."""
    return lambda party, field_: TapeRandomness(party, field_, tape, discovered)
