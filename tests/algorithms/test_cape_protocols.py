"""capePCA and capeAGN as party programs on the simulator (seed 003 Algorithms 1 and 2;
spec checklist 5 and 6): the aggregator's matrix is pooled Analyze Gauss in distribution, the
projected tensor is exactly (M3 + G3)(W, W, W), and sites send O(D² + K³) numbers."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from algorithms.cape.moments import third_moment
from algorithms.cape.otd import (
    TpmSettings,
    cape_agn_aggregator,
    cape_agn_noise_generator,
    cape_agn_site,
    whiten,
)
from algorithms.cape.pca import (
    cape_pca_aggregator,
    cape_pca_noise_generator,
    cape_pca_site,
    check_rank,
    pca_plan,
    second_moment,
)
from algorithms.cape.symmetric import matrix_size, tensor_size, unpack_matrix, unpack_tensor
from algorithms.data import synthetic_mog
from parties.party import Party
from protocols.cape_noise_plans import cape_plan
from protocols.correlated_noise import AGGREGATOR, NOISE_GENERATOR
from protocols.errors import InputError
from protocols.field import FixedPoint, Mersenne61Field
from sim.network import Network
from sim.simulation import Simulation


def run(parties, S, seed):
    return Simulation(Network.build(S), seed=seed, keys="preshared", sealing=False).run(parties)


def pca_parties(shards, plan, k):
    S, D = len(shards), shards[0].shape[1]
    parties = [Party(s, cape_pca_site, {"X": x, "plan": plan}) for s, x in enumerate(shards)]
    parties.append(Party(S, cape_pca_aggregator, {"plan": plan, "dim": D, "k": k},
                         role=AGGREGATOR))
    if plan.uses_generator:
        parties.append(Party(S + 1, cape_pca_noise_generator, {"plan": plan, "dim": D},
                             role=NOISE_GENERATOR))
    return parties


def test_cape_pca_aggregate_is_pooled_analyze_gauss() -> None:
    """Â − A has i.i.d. symmetric entries of variance τ_pool² = (c/N)² (Lemma 1 for PCA)."""
    S, D, n = 4, 6, 50
    rng = np.random.default_rng(0)
    X = rng.normal(size=(S * n, D))
    X /= np.linalg.norm(X, axis=1).max()
    shards = np.split(X, S)
    plan = pca_plan([n] * S, 1.0, 0.01)
    A = second_moment(X)
    free = []
    for seed in range(40):
        result = run(pca_parties(shards, plan, 2), S, seed)
        agg = result.views[S].outputs
        packed = next(v for call, label, v in agg if label == "aggregate")
        free.append(unpack_matrix(packed, D)[np.triu_indices(D)] - A[np.triu_indices(D)])
        rows = result.ledger.select(protocol="cape")
        assert all(r.elements == matrix_size(D) for r in rows if r.sender < S)
    free = np.concatenate(free)
    target = plan.tau_pool**2
    lo, hi = stats.chi2.ppf([0.0005, 0.9995], free.size) / free.size
    assert lo * target < np.mean(free**2) < hi * target
    assert stats.kstest(free / plan.tau_pool, "norm").pvalue > 1e-3


def test_k_above_d_is_refused() -> None:
    with pytest.raises(InputError, match=r"k = 9 must be an integer in \[1, D = 8\]"):
        check_rank(9, 8)


def test_cape_agn_tensor_is_the_projected_noisy_pooled_moment() -> None:
    S, D, k = 3, 6, 3
    rng = np.random.default_rng(1)
    data = synthetic_mog(3 * 400, D, k, rng)
    shards = np.split(data.X, S)
    plans = (cape_plan(0.01, S), cape_plan(0.02, S))
    parties = [Party(s, cape_agn_site, {"data": x, "model": "mog", "k": k, "plans": plans,
                                        "sigma2": data.sigma2}) for s, x in enumerate(shards)]
    parties.append(Party(S, cape_agn_aggregator, {"model": "mog", "dim": D, "k": k,
                                                  "plans": plans, "tpm": TpmSettings()},
                         role=AGGREGATOR))
    parties.append(Party(S + 1, cape_agn_noise_generator, {"dim": D, "k": k, "plans": plans},
                         role=NOISE_GENERATOR))
    result = run(parties, S, 7)
    agg_view = result.views[S]
    aggregates = [v for call, label, v in agg_view.outputs if label == "aggregate"]
    M2_hat = unpack_matrix(aggregates[0], D)
    W = whiten(M2_hat, k)[0]
    # every site got the same W — on the wire as fixed-point field elements, so within half a
    # grid step of numpy's whitening — and the stage-2 aggregate is the mean of the sites'
    # (M_3s + G_3s)(W, W, W) as recorded in their own views (up to the fixed-point grid)
    fixed = FixedPoint(Mersenne61Field(), 24)
    sent = [next(m.payload for m in result.views[s].received if m.step == "whitening")
            for s in range(S)]
    for s in range(S):
        np.testing.assert_array_equal(sent[s], sent[0])
    np.testing.assert_allclose(fixed.decode(sent[0]), W, rtol=0, atol=2.0**-24)
    W = fixed.decode(sent[0])
    site_terms = []
    for s in range(S):
        inputs = {label: v for call, label, v in result.views[s].protocol_inputs
                  if call is not None and call.index == max(
                      c.index for c, _, _ in result.views[s].protocol_inputs if c is not None)}
        site_terms.append(inputs["M3(W,W,W)"] + inputs["site_noise"])
        np.testing.assert_allclose(unpack_tensor(inputs["M3(W,W,W)"], k),
                                   third_moment("mog", shards[s], W, data.sigma2), atol=1e-12)
    np.testing.assert_allclose(aggregates[1], np.mean(site_terms, axis=0), atol=S * 2.0**-24)
    # sites send D(D+1)/2 + C(K+2, 3) elements, never D³
    sent = sum(r.elements for r in result.ledger.select(protocol="cape") if r.sender == 0)
    assert sent == matrix_size(D) + tensor_size(k)
    assert result.outputs[S].means.shape == (k, D)
