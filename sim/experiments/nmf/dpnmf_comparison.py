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
from sim import plots
from sim.audited_runs import RevealingRun
from sim.console import table
from sim.entry import AlgorithmRun, EstimateInput, RunInput, Workload

DELTA = 1e-5
STARS = 5.0
"""Ratings are scored on the unit-maximum scale (stars / 5), as the paper normalises V."""
RATINGS_SHAPE = {"users": 3000, "items": 500, "k": 10, "density": 0.045}
"""ML-1M (6,040 users × 3,706 movies, 4.5 % rated) cut to half its users and 500 movies (the
DP noise on A and B scales as 1/N, N the users)."""
TOPICS_SHAPE = {"docs": 600, "words": 500, "k": 8, "doc_length": 150}
"""Guardian-like (4,551 × 10,285, K = 8) cut to run in seconds."""


def shape(kind: str, scale: float = 1.0) -> dict[str, Any]:
    """The data's shape (:data:`RATINGS_SHAPE`, :data:`TOPICS_SHAPE`), with ``scale`` of its
    samples and features, at least 5 per factor."""
    if kind not in ("ratings", "topics"):
        raise InputError(f"kind {kind!r}: choose ratings or topics")
    base = dict(RATINGS_SHAPE if kind == "ratings" else TOPICS_SHAPE)
    if scale != 1.0:
        for key in ("users", "items") if kind == "ratings" else ("docs", "words"):
            base[key] = max(round(scale * base[key]), 5 * base["k"])
    return base


def _data(kind: str, seed: int, trial: int,
          scale: float = 1.0) -> tuple[np.ndarray, np.ndarray | None]:
    """(V, observed mask): V is D × N with samples in columns; mask None for topics."""
    rng = seeds.rng(seed, "dpnmf_comparison.data", index=(kind, trial))
    s = shape(kind, scale)
    if kind == "ratings":
        r = synthetic_ratings(s["users"], s["items"], s["k"], density=s["density"], rng=rng)
        observed = ~np.isnan(r.ratings)
        return np.where(observed, r.ratings, 0.0).T, observed.T
    if kind == "topics":
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
            seed: int = 0, scale: float = 1.0) -> dict[str, Any]:
    """Per method (``ours``: Algorithm 2; ``dpnmf``) the score (ratings: RMSE in stars, lower is
    better; topics: mean UMass coherence, higher is better) at each ε and without privacy,
    ``{method: {"private": [trials × ε], "nonprivate": [trials]}}``; ``scale`` < 1 shrinks the
    data (:func:`shape`)."""
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise InputError(f"trials = {trials!r} must be an integer ≥ 1")
    out: dict[str, Any] = {"epsilons": list(epsilons), "kind": kind, "trials": trials,
                           "iterations": iterations,
                           "ours": {"private": [], "nonprivate": []},
                           "dpnmf": {"private": [], "nonprivate": []}}
    settings = RobustSettings(outliers=True)
    for trial in range(trials):
        V, mask = _data(kind, seed, trial, scale)
        Vs = unit_columns(V)
        k = shape(kind)["k"]
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


METHODS = {"ours": "DP robust NMF (Algorithm 2)", "dpnmf": "DPNMF (Ran et al.)"}
ONE_CURATOR = RevealingRun(
    "the pooled samples to the one curator that factorises them; what it publishes is a DP "
    "release (no protocol runs here — the curators' SecureSum protocol of Algorithm 2 is "
    "audited by dp_nmf_outliers)", "one curator")
"""What ``[[audit]]`` answers for each method (:mod:`sim.audited_runs`): both run centralized."""


def run(inp: RunInput) -> AlgorithmRun:
    """Entry ``dpnmf_comparison``: Table 4 (``kind = "ratings"``) or Table 3 (``"topics"``).

    The data are generated in the paper's shape (:func:`shape`, scaled by ``scale``) from the
    scenario's seed; the scenario's ``[data]`` and parties are not used: one curator holds
    every sample, as in the paper's experiments.
    """
    p = inp.params
    kind = p["kind"]
    found = compare(kind, p["epsilons"], p["trials"], p["iterations"], inp.seed, p["scale"])
    eps = found["epsilons"]
    summary: dict[str, Any] = {}
    for method in METHODS:
        private = np.asarray(found[method]["private"])
        nonprivate = np.asarray(found[method]["nonprivate"])
        summary[method] = {
            "private_mean": private.mean(axis=0).tolist(),
            "private_sd": private.std(axis=0, ddof=1).tolist() if p["trials"] > 1 else None,
            "nonprivate_mean": float(nonprivate.mean())}
    lower = kind == "ratings"
    ours, base = (np.asarray(found[m]["private"]) for m in METHODS)
    better = ours < base if lower else ours > base
    measure = "RMSE (stars / 5)" if lower else "mean UMass coherence"
    metrics: dict[str, Any] = {
        "kind": kind, "measure": measure, "lower_is_better": lower, "epsilons": eps,
        "trials": p["trials"], "iterations": p["iterations"], "delta": DELTA,
        "shape": shape(kind, p["scale"]), **summary,
        "ours_better_fraction": float(better.mean()),
        "ours_better_at_every_epsilon_mean": bool(np.all(
            (np.mean(ours, axis=0) < np.mean(base, axis=0)) if lower
            else (np.mean(ours, axis=0) > np.mean(base, axis=0)))),
        "centralized": True}
    if "zero_predictor" in found:
        metrics["zero_predictor"] = float(np.mean(found["zero_predictor"]))
    outputs = {"epsilons": np.asarray(eps)}
    for method in METHODS:
        outputs[f"{method}_private"] = np.asarray(found[method]["private"])
        outputs[f"{method}_nonprivate"] = np.asarray(found[method]["nonprivate"])

    def cell(method: str, j: int) -> str:
        sd = summary[method]["private_sd"]
        return f"{summary[method]['private_mean'][j]:.4g}" + (f" ± {sd[j]:.2g}" if sd else "")

    rows = [[f"{e:g}", cell("ours", j), cell("dpnmf", j)] for j, e in enumerate(eps)]
    rows.append(["non-private", f"{summary['ours']['nonprivate_mean']:.4g}",
                 f"{summary['dpnmf']['nonprivate_mean']:.4g}"])
    if "zero_predictor" in metrics:
        rows.append(["predict 0", f"{metrics['zero_predictor']:.4g}", ""])
    number = "4" if lower else "3"
    title = (f"Table {number} analogue: {measure}, {p['trials']} trial(s), {p['iterations']} "
             f"releases, δ = {DELTA:g}, one curator")
    reference = {"non-private (ours)": summary["ours"]["nonprivate_mean"]}
    if "zero_predictor" in metrics:
        reference["predict 0"] = metrics["zero_predictor"]
    return AlgorithmRun(
        result=None, outputs=outputs, metrics=metrics,
        tables=[table(["ε per release", METHODS["ours"], METHODS["dpnmf"]], rows, title)],
        plots={f"table_{number}": lambda: plots.sweep(
            eps, {METHODS[m]: summary[m]["private_mean"] for m in METHODS}, "ε per release",
            measure, title, logx=False, reference=reference)},
        audit_runs=dict.fromkeys(METHODS, ONE_CURATOR),
    )


def estimate(inp: EstimateInput) -> Workload:
    """Centralized fits only: per trial and ε both methods' releases, and the non-private
    runs; each release a few D × N × k products."""
    p = inp.params
    s = shape(p["kind"], p["scale"])
    cells = (s["users"] * s["items"] if p["kind"] == "ratings" else s["docs"] * s["words"])
    fits = p["trials"] * 2 * (len(p["epsilons"]) + 1)
    return Workload(simulations=0, flops=float(fits * p["iterations"] * 20 * cells * s["k"]),
                    basis="centralized DP robust NMF and DPNMF fits, no protocol")
