"""capeAGN: distributed DP orthogonal tensor decomposition with correlated noise (seed 003,
Algorithm 2, §5; spec §5–§6), and the AGN baselines.

Orthogonal tensor decomposition (OTD) recovers the weights w_k and components μ_k of a latent
variable model from its moments (:mod:`algorithms.cape.moments`): whiten with the top-K
eigenpairs of M2, W = U_K |Λ_K|^{−1/2}, so that T = M3(W, W, W) = Σ_k λ_k v_k^{⊗3} with
orthonormal v_k; decompose T by the tensor power method (:mod:`algorithms.cape.tensor_power`);
un-whiten, μ̂_k = λ̂_k U_K |Λ_K|^{1/2} θ̂_k and ŵ_k = 1/λ̂_k² (normalised to sum 1).

**AGN** (Analyze Gauss for OTD, pooled or one site): with the budget split ε1 = ε2 = ε/2,
δ1 = δ2 = δ/2, add Sym_D(Δ2·c(ε1, δ1)) to M2 and SymT_D(Δ3·c(ε2, δ2)) to M3, then proceed
as above (:func:`agn`). With one site's data and its own N_s this is the *local* baseline.

**capeAGN** (party programs :func:`cape_agn_site`, :func:`cape_agn_aggregator`,
:func:`cape_agn_noise_generator`): stage 1 runs CAPE (:mod:`protocols.correlated_noise`) on
the D(D+1)/2 free entries of each site's M_2s; the aggregator whitens the aggregate and sends
W (D×K, public: it is (ε1, δ1)-DP) to every site. Stage 2 runs CAPE on the K×K×K projected
tensor: site s draws its own noise as a symmetric D×D×D tensor G_3s (C(D+2,3) free entries),
releases the free entries of (M_3s + G_3s)(W, W, W) plus the NG's and the aggregator's
K-space noise, and the aggregator obtains (M_3 + G_3)(W, W, W) with G_3 the average of the
G_3s — exactly pooled AGN's projected tensor (linearity of the multilinear map). The aggregator
then runs the tensor power method and un-whitens. Sites send O(D² + K³) numbers, not O(D³).

Departures and caveats (spec §10):

* P1 — the NG's and aggregator's stage-2 noise lives in the projected K-space while the
  sensitivity is that of the D-space tensor; the per-site (ε2, δ2) claim of Theorem 2 is
  therefore not rigorous, but the aggregate is pooled AGN. Reported as the paper states it.
* T4 — eigenvalues are ordered by magnitude (the authors use an SVD of the noisy M2), and W
  uses |λ|; a (numerically) zero eigenvalue is floored at 1e−12 to keep W finite.
* The *conventional* scheme reuses the same two-stage messages with each site adding its full
  local noise (CAPE plan :func:`protocols.cape_noise_plans.conventional_plan`). The paper's
  conventional sites ship the full noisy D×D×D tensor; by linearity the aggregator's tensor
  has the same distribution either way, at a fraction of the traffic.
* Error metric (§6.2): the mean over recovered components of the distance to the nearest
  true component, after post-processing — MOG: unit ℓ2 norm (the means are recovered up to
  the data's scale); STM: negative entries set to 0 and the column divided by its sum (a
  probability vector; an all-non-positive column becomes uniform rather than NaN).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import numpy as np

from algorithms.cape.moments import check_model, second_moment, sensitivities, third_moment
from algorithms.cape.symmetric import (
    matrix_size,
    multilinear,
    pack_matrix,
    pack_tensor,
    projected_noise_cov,
    sym_matrix_noise,
    sym_tensor_noise,
    tensor_size,
    unpack_matrix,
    unpack_tensor,
)
from algorithms.cape.tensor_power import tensor_power_method
from protocols.cape_noise_plans import NoisePlan
from protocols.context import PartyContext
from protocols.correlated_noise import (
    AGGREGATOR,
    cape_aggregator,
    cape_noise_generator,
    cape_site,
    gaussian_noise_scale,
    role_id,
)
from protocols.effects import Output, Recv, SendEach
from protocols.errors import InputError
from protocols.functionality import CallInstance, Ideal
from protocols.simulator import CallView, MessageKey, SimulatorMismatch

EIGEN_FLOOR = 1e-12
WHITENING = "cape_agn"


@dataclass(frozen=True)
class TpmSettings:
    """Settings of the tensor power method (:func:`tensor_power_method`)."""

    mode: str = "paper"
    tol: float = 1e-6
    max_iter: int = 1000
    n_restarts: int = 10
    n_iters: int = 100

    def run(self, T: np.ndarray, k: int, rng: np.random.Generator) -> tuple[np.ndarray,
                                                                              np.ndarray]:
        return tensor_power_method(T, k, rng, mode=self.mode, tol=self.tol,
                                   max_iter=self.max_iter, n_restarts=self.n_restarts,
                                   n_iters=self.n_iters)


@dataclass(frozen=True)
class Decomposition:
    """Recovered weights (k,) and components (k, D), rows, after post-processing."""

    weights: np.ndarray
    means: np.ndarray


def whiten(M2: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """W = U_K |Λ_K|^{−1/2} from the top-k eigenpairs of (symmetrised) M2 by magnitude.

    Returns W (D, k), U_K (D, k) and |Λ_K| (k,).
    """
    M2 = np.asarray(M2, dtype=np.float64)
    if not 1 <= k <= M2.shape[0]:
        raise InputError(f"k = {k} must lie in [1, D = {M2.shape[0]}]")
    values, vectors = np.linalg.eigh((M2 + M2.T) / 2.0)
    order = np.argsort(-np.abs(values), kind="stable")[:k]
    s = np.maximum(np.abs(values[order]), EIGEN_FLOOR)
    U = vectors[:, order]
    return U / np.sqrt(s), U, s


def unwhiten(lams: np.ndarray, thetas: np.ndarray, U: np.ndarray,
             s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ŵ_k = 1/λ̂_k² (normalised) and μ̂_k = λ̂_k U |Λ|^{1/2} θ̂_k (rows, shape (k, D))."""
    means = (U * np.sqrt(s)) @ (thetas * lams)
    w = 1.0 / np.maximum(lams, 1e-300) ** 2
    return w / w.sum(), means.T


def postprocess(model: str, means: np.ndarray) -> np.ndarray:
    """MOG: unit-norm rows. STM: clip at 0 and normalise each row to sum 1 (uniform if empty)."""
    check_model(model)
    means = np.asarray(means, dtype=np.float64)
    if model == "mog":
        norms = np.linalg.norm(means, axis=1, keepdims=True)
        return means / np.where(norms > 0, norms, 1.0)
    clipped = np.maximum(means, 0.0)
    sums = clipped.sum(axis=1, keepdims=True)
    uniform = np.full_like(clipped, 1.0 / clipped.shape[1])
    return np.where(sums > 0, clipped / np.where(sums > 0, sums, 1.0), uniform)


def recovery_error(means: np.ndarray, truth: np.ndarray) -> float:
    """(1/K) Σ_k min_k' ‖μ̂_k − μ_k'‖₂ (seed 003 §6.2): rows are components."""
    diff = np.asarray(means)[:, None, :] - np.asarray(truth)[None, :, :]
    return float(np.linalg.norm(diff, axis=2).min(axis=1).mean())


def random_error(model: str, truth: np.ndarray, rng: np.random.Generator) -> float:
    """The error of K random vectors (Gaussian, post-processed): the paper's "Rand. vect."."""
    return recovery_error(postprocess(model, rng.normal(size=truth.shape)), truth)


def decompose(M2: np.ndarray, T: np.ndarray, U: np.ndarray, s: np.ndarray, k: int, model: str,
              rng: np.random.Generator, tpm: TpmSettings) -> Decomposition:
    """Tensor power method on the whitened T, un-whitening and post-processing."""
    lams, thetas = tpm.run(T, k, rng)
    weights, means = unwhiten(lams, thetas, U, s)
    return Decomposition(weights, postprocess(model, means))


def nonprivate(model: str, data: Any, k: int, rng: np.random.Generator, sigma2: float = 0.0,
               tpm: TpmSettings = TpmSettings()) -> Decomposition:
    """OTD of the moments of ``data`` without noise (the paper's "Non-priv.")."""
    M2 = second_moment(model, data, sigma2)
    W, U, s = whiten(M2, k)
    return decompose(M2, third_moment(model, data, W, sigma2), U, s, k, model, rng, tpm)


def agn_scales(model: str, n: int, dim: int, epsilon: float, delta: float, sigma2: float = 0.0,
               convention: str = "paper") -> tuple[float, float, float, float]:
    """(τ2, τ3, Δ2, Δ3) of AGN with the budget split ε/2, δ/2 for n samples."""
    d2, d3 = sensitivities(model, n, dim, sigma2, convention)
    return (gaussian_noise_scale(d2, epsilon / 2, delta / 2),
            gaussian_noise_scale(d3, epsilon / 2, delta / 2), d2, d3)


def agn(model: str, data: Any, k: int, epsilon: float, delta: float, rng: np.random.Generator,
        sigma2: float = 0.0, convention: str = "paper",
        tpm: TpmSettings = TpmSettings()) -> Decomposition:
    """AGN on the moments of ``data`` (pooled AGN, or the *local* baseline on one site)."""
    n, D = data.shape
    tau2, tau3, _, _ = agn_scales(model, n, D, epsilon, delta, sigma2, convention)
    M2 = second_moment(model, data, sigma2) + sym_matrix_noise(rng, D, tau2)
    W, U, s = whiten(M2, k)
    T = third_moment(model, data, W, sigma2) + multilinear(sym_tensor_noise(rng, D, tau3), W)
    return decompose(M2, T, U, s, k, model, rng, tpm)


# -- capeAGN party programs --------------------------------------------------------------------


def cape_agn_site(
    ctx: PartyContext,
    data: Any,
    model: str,
    k: int,
    plans: tuple[NoisePlan, NoisePlan],
    sigma2: float = 0.0,
    noise: str = "float",
) -> Generator[Any, Any, None]:
    """Site s of capeAGN (Algorithm 2): CAPE on M_2s, receive W, CAPE on (M_3s + G_3s)(W,W,W)."""
    D = data.shape[1]
    with ctx.in_phase("stage1"):
        yield from cape_site(ctx, pack_matrix(second_moment(model, data, sigma2)), plans[0],
                             noise=noise, label="M2")
    call = ctx.new_call(WHITENING)
    encoded = np.asarray((yield Recv(role_id(ctx, AGGREGATOR), call, "whitening")))
    yield Output("whitening", encoded, call)  # public: the declared release of stage 1
    W = ctx.fixed.decode(encoded)

    def project(b: np.ndarray) -> np.ndarray:
        return pack_tensor(multilinear(unpack_tensor(b, D), W))

    with ctx.in_phase("stage2"):
        yield from cape_site(ctx, pack_tensor(third_moment(model, data, W, sigma2)), plans[1],
                             noise=noise, noise_length=tensor_size(D), noise_map=project,
                             label="M3(W,W,W)", noise_cov=projected_noise_cov(W))


def cape_agn_aggregator(
    ctx: PartyContext,
    model: str,
    dim: int,
    k: int,
    plans: tuple[NoisePlan, NoisePlan],
    noise: str = "float",
    tpm: TpmSettings = TpmSettings(),
) -> Generator[Any, Any, Decomposition]:
    """The aggregator of capeAGN: whitening from stage 1, OTD of stage 2's tensor."""
    with ctx.in_phase("stage1"):
        packed = yield from cape_aggregator(ctx, plans[0], matrix_size(dim), noise=noise)
    M2 = unpack_matrix(packed, dim)
    W, U, s = whiten(M2, k)
    call = ctx.new_call(WHITENING)
    encoded = ctx.fixed.encode(W, what="capeAGN whitening W")  # on the wire as field elements
    yield SendEach(dict.fromkeys(range(plans[0].n_sites), encoded), call, "whitening")
    yield Output("whitening", encoded, call)
    with ctx.in_phase("stage2"):
        packed3 = yield from cape_aggregator(
            ctx, plans[1], tensor_size(k), noise=noise,
            site_noise_cov=projected_noise_cov(ctx.fixed.decode(encoded)))
    T = unpack_tensor(packed3, k)
    result = decompose(M2, T, U, s, k, model, ctx.rng, tpm)
    yield Output("weights", result.weights)
    yield Output("means", result.means)
    return result


def cape_agn_noise_generator(
    ctx: PartyContext, dim: int, k: int, plans: tuple[NoisePlan, NoisePlan], noise: str = "float"
) -> Generator[Any, Any, None]:
    """The NG of capeAGN: zero-sum noise for stage 1 (D×D free entries) and stage 2 (K×K×K)."""
    with ctx.in_phase("stage1"):
        yield from cape_noise_generator(ctx, plans[0], matrix_size(dim), noise=noise)
    ctx.new_call(WHITENING)  # keep the call counter in step with the other parties
    with ctx.in_phase("stage2"):
        yield from cape_noise_generator(ctx, plans[1], tensor_size(k), noise=noise)


# -- the whitening broadcast, declared for the audits (protocols.registry) -----------------------


def whitening_functionality(inst: CallInstance) -> dict[str, Ideal]:
    """The whitening call's ideal output: one W, the same for every party that declares it.

    W = U_K |Λ_K|^{−1/2} is the aggregator's post-processing of stage 1's CAPE aggregate, which
    is (ε1, δ1)-DP (Theorem 2); Algorithm 2 hands it to every site in the clear. Whether W is
    that function of the aggregate is the algorithm's correctness (tested against
    :func:`whiten`), not the call's privacy; the call declares W as public and the check holds
    every party's copy to one value.
    """
    declared = [np.asarray(v) for records in inst.outputs.values() for label, v in records
                if label == "whitening"]
    return {"whitening": Ideal(declared[0], 0.0)} if declared else {}


@dataclass(frozen=True)
class WhiteningSimulator:
    """The simulator of capeAGN's whitening call (``cape_agn``): the aggregator sends each site
    W, which is the site's declared output — so every message a member site receives from an
    honest aggregator is that output, and a member aggregator's messages are its own. The
    aggregator is party S (as :func:`sim.experiments.cape.cape_setup.cape_parties` numbers it)
    unless given."""

    aggregator: int | None = None
    name: str = WHITENING
    uniform_on_hull: bool = False

    def determined(self, view: CallView) -> bool:
        """The call has no inputs to determine."""
        return False

    def simulate(self, view: CallView, rng: np.random.Generator,
                 n: int) -> dict[MessageKey, np.ndarray]:
        agg = len(view.parties) if self.aggregator is None else self.aggregator
        out: dict[MessageKey, np.ndarray] = {}
        for m in view.members:
            if m not in view.parties:
                continue
            if agg in view.members:
                value = np.ravel(view.sent[(m, agg, "whitening")])
            else:
                found = [np.ravel(np.asarray(v)) for label, v in view.outputs.get(m, ())
                         if label == "whitening"]
                if len(found) != 1:
                    raise SimulatorMismatch(f"site {m} declared {len(found)} outputs "
                                            f"'whitening' of {view.call.tag('').rstrip('.')}")
                value = found[0]
            out[(m, agg, "whitening")] = np.broadcast_to(value, (n, value.size))
        return out
