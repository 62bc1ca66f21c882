"""Seed 000's Tables 3–4: DP robust NMF (Algorithm 2) against the DPNMF baseline.

Saha & Imtiaz (seed 000), §4: Table 4 gives the RMSE on MovieLens 1M of their method and of
DPNMF (Ran et al., :mod:`algorithms.nmf.dpnmf`) at ε = 0.3, 0.5, 0.7 and without privacy —
"our method outperforms the DPNMF"; Table 3 the average topic coherence of their method's topics
at ε = 0.5 … 0.999 and without privacy. Here both run on synthetic data shaped like the paper's
(ratings: :func:`algorithms.data.synthetic.synthetic_ratings`, ML-1M's 4.5 % density on a cut of
its 6,040 × 3,706; topics: an LDA-style corpus, :func:`~algorithms.data.synthetic.
synthetic_topic_corpus`), samples (users, documents) in columns as Algorithm 2 has them, δ =
10⁻⁵, from the same NNDSVD start, each for ``iterations`` releases. Both methods see the same
data on one scale (digest §7 item 44: the paper's two columns are on different scales).

* RMSE is the paper's (1/√N)‖V − V̂ ⊙ X‖₂ with N the number of user–item pairs (U·I, not the
  observed ones — which is how the paper's 0.0624 arises from ratings scaled to unit maximum at
  ML-1M's 4.5 % density), on ratings / 5: each method fits the unit-ℓ2 columns of V
  (unobserved ratings read as 0, as a dense method must), and its prediction is scaled back by
  each column's factor (an evaluation, not a release). ``zero_predictor`` is the RMSE of
  predicting 0 everywhere, the level a noise-dominated fit falls to.
* Coherence is the UMass coherence (:func:`algorithms.nmf.topic_quality.umass_coherence`) of
  the columns of W (topics over words), averaged over topics — the paper's TC-W2V needs word
  embeddings of real words, which a synthetic vocabulary has not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from algorithms.data.synthetic import synthetic_ratings, synthetic_topic_corpus
from algorithms.nmf.dp_robust import RobustSettings, dp_robust_nmf, nndsvd_start, unit_columns
from algorithms.nmf.dp_robust_privacy import gaussian_sigma, sensitivities
from algorithms.nmf.dpnmf import dpnmf
from algorithms.nmf.topic_quality import umass_coherence
from protocols import seeds
from protocols.errors import InputError

DELTA = 1e-5
STARS = 5.0
"""Ratings are scored on the unit-maximum scale (stars / 5), as the paper normalises V."""
RATINGS_SHAPE = {"users": 3000, "items": 500, "k": 10, "density": 0.045}
"""ML-1M (6,040 users × 3,706 movies, 4.5 % rated) cut to half its users and 500 movies (the
DP noise on A and B scales as 1/N, N the users)."""
TOPICS_SHAPE = {"docs": 600, "words": 500, "k": 8, "doc_length": 150}
"""Guardian-like (4,551 × 10,285, K = 8) cut to run in seconds."""


def _data(kind: str, seed: int, trial: int) -> tuple[np.ndarray, np.ndarray | None]:
    """(V, observed mask): V is D × N with samples in columns; mask None for topics."""
    rng = seeds.rng(seed, "dpnmf_comparison.data", index=(kind, trial))
    if kind == "ratings":
        s = RATINGS_SHAPE
        r = synthetic_ratings(s["users"], s["items"], s["k"], density=s["density"], rng=rng)
        observed = ~np.isnan(r.ratings)
        return np.where(observed, r.ratings, 0.0).T, observed.T
    if kind == "topics":
        s = TOPICS_SHAPE
        c = synthetic_topic_corpus(s["docs"], s["words"], s["k"], doc_length=s["doc_length"],
                                   rng=rng)
        return c.tf.T, None
    raise InputError(f"kind {kind!r}: choose ratings or topics")


def _score(kind: str, V: np.ndarray, mask: np.ndarray | None, W: np.ndarray,
           H: np.ndarray) -> float:
    if kind == "ratings":
        factor = np.maximum(1.0, np.linalg.norm(V, axis=0))
        pred = (W @ H) * factor
        return float(np.sqrt(np.sum((V[mask] - pred[mask]) ** 2) / V.size)) / STARS
    return float(umass_coherence(V.T, W.T).mean())


def compare(kind: str, epsilons: Sequence[float], trials: int = 3, iterations: int = 100,
            seed: int = 0) -> dict[str, Any]:
    """Per method (``ours``: Algorithm 2; ``dpnmf``) the score (ratings: RMSE in stars, lower is
    better; topics: mean UMass coherence, higher is better) at each ε and without privacy,
    ``{method: {"private": [trials × ε], "nonprivate": [trials]}}``."""
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise InputError(f"trials = {trials!r} must be an integer ≥ 1")
    out: dict[str, Any] = {"epsilons": list(epsilons), "kind": kind, "trials": trials,
                           "iterations": iterations,
                           "ours": {"private": [], "nonprivate": []},
                           "dpnmf": {"private": [], "nonprivate": []}}
    settings = RobustSettings(outliers=True)
    for trial in range(trials):
        V, mask = _data(kind, seed, trial)
        Vs = unit_columns(V)
        k = RATINGS_SHAPE["k"] if kind == "ratings" else TOPICS_SHAPE["k"]
        W0, H0 = nndsvd_start(Vs, k)
        n = V.shape[1]
        d_a, d_b = sensitivities(n, outliers=True)
        rng = seeds.rng(seed, "dpnmf_comparison.noise", index=(kind, trial))
        ours, base = [], []
        for eps in epsilons:
            fit = dp_robust_nmf(V, W0, H0, iterations=iterations, settings=settings,
                                sigma_a=gaussian_sigma(d_a, eps, DELTA),
                                sigma_b=gaussian_sigma(d_b, eps, DELTA), rng=rng)
            ours.append(_score(kind, V, mask, fit.W, fit.H))
            b = dpnmf(V, W0, iterations=iterations, epsilon=eps, rng=rng)
            base.append(_score(kind, V, mask, b.W, b.H))
        fit = dp_robust_nmf(V, W0, H0, iterations=iterations, settings=settings, sigma_a=0.0,
                            sigma_b=0.0)
        b = dpnmf(V, W0, iterations=iterations, epsilon=None)
        out["ours"]["private"].append(ours)
        out["dpnmf"]["private"].append(base)
        out["ours"]["nonprivate"].append(_score(kind, V, mask, fit.W, fit.H))
        out["dpnmf"]["nonprivate"].append(_score(kind, V, mask, b.W, b.H))
        if kind == "ratings":  # predicting 0 everywhere: what a dense fit of sparse data nears
            out.setdefault("zero_predictor", []).append(
                float(np.sqrt(np.sum(V[mask] ** 2) / V.size)) / STARS)
    return out
