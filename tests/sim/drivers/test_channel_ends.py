"""What sealing keeps per run (:class:`sim.drivers.envelopes.RunChannels`).

A sealed channel end holds an AES-GCM key schedule (~3 KB); keeping both ends of every directed
channel made a sealed SecureSum among M = 1,000 parties hold ~6 GB of them. A run now builds
one end per directed channel when the two parties' keys agree and keeps at most
``CHANNELS_KEPT`` ends per direction — and neither changes a byte of what the run produces.
"""

from __future__ import annotations

import numpy as np
import pytest

import sim.drivers.envelopes as envelopes
from parties.party import site_parties
from protocols.crypto.channel import SealedChannel
from protocols.secure_sum import secure_sum
from sim.drivers.rank_views import view_digest
from sim.network import Network
from sim.simulation import Simulation

M = 5


def program(ctx, x):
    first = yield from secure_sum(ctx, x)
    return (yield from secure_sum(ctx, first + x))


def run(keys: str) -> tuple[list, dict, dict]:
    rng = np.random.default_rng(8)
    inputs = [{"x": rng.uniform(0.0, 1.0, 6)} for _ in range(M)]
    result = Simulation(Network.build(M), seed=3, keys=keys).run(site_parties(program, inputs))
    return (list(result.ledger), {p: np.asarray(v).tobytes() for p, v in result.outputs.items()},
            {p: view_digest(v) for p, v in result.views.items()})


@pytest.mark.parametrize("keys", ["preshared", "x25519"])
def test_one_key_schedule_per_directed_channel(monkeypatch, keys) -> None:
    built: list[tuple[int, int]] = []

    class Counted(SealedChannel):
        __slots__ = ()

        def __init__(self, key: bytes, sender: int, receiver: int) -> None:
            built.append((sender, receiver))
            super().__init__(key, sender, receiver)

    monkeypatch.setattr(envelopes, "SealedChannel", Counted)
    run(keys)
    channels = {(a, b) for a in range(M) for b in range(M) if a != b}
    assert sorted(built) == sorted(channels)  # each once: two calls, one end per channel


def test_a_run_that_drops_channel_ends_produces_the_same_bytes(monkeypatch) -> None:
    kept = run("preshared")
    built: list[tuple[int, int]] = []

    class Counted(SealedChannel):
        __slots__ = ()

        def __init__(self, key: bytes, sender: int, receiver: int) -> None:
            built.append((sender, receiver))
            super().__init__(key, sender, receiver)

    monkeypatch.setattr(envelopes, "CHANNELS_KEPT", 3)
    monkeypatch.setattr(envelopes, "SealedChannel", Counted)
    dropped = run("preshared")
    assert len(built) > M * (M - 1)  # the cap bit: ends were dropped and rebuilt
    assert dropped == kept  # ledger rows, outputs and views, byte for byte
