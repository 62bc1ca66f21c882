"""``[[audit]] method = "simulation"`` on capePCA (seed 003; sim/experiments/cape/cape_pca.py).

Each site releases the D(D + 1)/2 free entries of its symmetric second moment A_s
(``pack_matrix``: the upper triangle), so every noise value appears once in a view and the
Gaussian residual tests see independent coordinates. The honest scenario is ``private`` for the
aggregator, a site and the noise generator, with the Gaussian power stated; a site that
releases A_s without noise or without its zero-sum share e_s is a ``leak`` (its shares no
longer cancel: the aggregate is beyond the functionality), one that also sends its own noise
to the aggregator is a ``leak`` at that message — and the raw release is shown real: the
aggregator decodes A_s itself (numpy).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from algorithms.cape.pca import (
    cape_pca_aggregator,
    cape_pca_noise_generator,
    cape_pca_site,
    pca_plan,
    second_moment,
    sensitivity,
)
from algorithms.cape.symmetric import pack_matrix
from protocols.cape_dp_check import Budget
from protocols.field import FixedPoint
from protocols.registry import cape_declaration
from sim.experiments.cape.cape_setup import cape_parties
from sim.privacy import SimPyRunner, audit
from sim.runner import run_scenario

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "parties"))
from planted_cape import LEAKY, leaky_site

P = 2**61 - 1
FRAC = 20
EPSILON, DELTA, D, S = 1.0, 0.01, 4, 5


def test_the_cape_pca_scenario_is_audited_by_simulation() -> None:
    spec = {"seed": 3, "network": {"parties": S, "sealing": False},
            "data": {"source": "synthetic", "kind": "spiked", "rows": 1000, "cols": 6, "k": 2},
            "algorithm": {"name": "cape_pca", "k": 2, "epsilon": EPSILON, "trials": 1,
                          "samples_per_site": 100},
            "audit": [{"method": "simulation", "coalition": [c], "trials": 60}
                      for c in (S, 0, S + 1)]}  # the aggregator, a site, the noise generator
    entries = run_scenario(spec).report["privacy"]
    assert [e["coalition"] for e in entries] == [[S], [0], [S + 1]]
    assert all(e["verdict"] == "private" for e in entries), entries
    for e in entries[:2]:  # the noise generator receives nothing from an honest party
        assert e["power"]["gaussian"]["variance_ratio"] < 1.0


def _parties(leak: str | None) -> tuple[list, Any, list[np.ndarray]]:
    rng = np.random.default_rng(4)
    shards = [rng.uniform(-1, 1, size=(60, D)) / np.sqrt(D) for _ in range(S)]
    plan = pca_plan([len(x) for x in shards], EPSILON, DELTA)

    def site(ctx: Any, X: np.ndarray) -> Any:
        if leak is None:
            return (yield from cape_pca_site(ctx, X, plan))
        return (yield from leaky_site(ctx, pack_matrix(second_moment(X)), plan, leak))

    parties = cape_parties(site, [{"X": x} for x in shards],
                           (cape_pca_aggregator, {"plan": plan, "dim": D, "k": 2}),
                           (cape_pca_noise_generator, {"plan": plan, "dim": D}))
    return parties, plan, shards


def _audit(parties: list, plan: Any, shards: list[np.ndarray], coalition: tuple[int, ...]):
    budget = Budget(np.full(S, EPSILON), np.full(S, DELTA),
                    np.array([sensitivity(len(x)) for x in shards]))
    return audit(parties, None, coalition, prime=P, frac_bits=FRAC, trials=60,
                 protocol=cape_declaration(plan, FRAC, budget=budget))


def test_the_honest_pca_run_is_private_for_the_aggregator() -> None:
    result = _audit(*_parties(None), (S,))
    assert result.verdict == "private", result.details


@pytest.mark.parametrize("leak,where", [
    ("raw", f"cape#1.aggregate output at {S}"),  # e_s missing: the shares do not cancel
    ("drop_share", f"cape#1.aggregate output at {S}"),
    ("share_to_aggregator", f"cape#1.noise_share from {LEAKY} to {S}"),
])
def test_a_pca_site_that_skips_or_sends_its_noise_is_a_leak(leak: str, where: str) -> None:
    result = _audit(*_parties(leak), (S,))
    assert result.verdict == "leak", result.details
    assert result.call == 1 and result.message == where, result.message


def test_the_raw_release_gives_the_aggregator_the_sites_second_moment() -> None:
    parties, _, shards = _parties("raw")
    runner = SimPyRunner(P, FRAC)
    views = runner(parties, None)
    got = next(m.payload for m in views[S].received if m.sender == LEAKY and m.step == "release")
    decoded = FixedPoint(runner.field, FRAC).decode(np.asarray(got))
    np.testing.assert_allclose(decoded, pack_matrix(second_moment(shards[LEAKY])), atol=1e-5)
