"""Catalogue entry ``dp_nmf_datasets``: seed 000's Figs. 3 and 6 on its six data sets.

Saha & Imtiaz (seed 000), §4, Table 2 and Figs. 2–6: DP robust NMF (Algorithm 2) on four text
sets (Guardian 4,551 × 10,285, K = 8; UCI-news 3,000 × 93, K = 7; RCV1 9,625 × 2,999, K = 4;
TDT2 9,394 × 3,677, K = 30) and two face sets (YaleB 2,414 × 1,024, K = 38; CBCL 2,429 × 361,
K = 50). Figs. 3 / 6 plot, per ε_i (the ε of one release), the overall ε (RDP composition over
the releases) and the Objective Value (Eq. 15) of the private run against the non-private one;
the text says the gap is small and shrinks as ε grows, and that private learning needs more
epochs. None of the six sets is shipped, so each is drawn synthetically in its shape (N
samples, D features, K): text as TF rows of an LDA-style corpus with K planted topics
(:func:`algorithms.data.synthetic.synthetic_topic_corpus`: sparse counts), faces as dense
images from K parts (:func:`algorithms.data.faces_like.synthetic_faces`, CBCL's
preprocessing); every sample is divided by its largest entry (§4), then scaled to ℓ2 norm ≤ 1
(the Δ_B normalisation, :func:`algorithms.nmf.dp_robust.unit_columns`).

**Scaling** (:func:`scaled_shape`). A run is D × N × (inner steps) per release, so the full
sets (up to 47 M cells) do not run in minutes. Each set with N·D above ``cells`` is shrunk by a
factor s on N and s² on D (s = (cells / (N·D))^(1/3)): the released statistic B is D × K with
ℓ2 norm O(1) and its noise has norm τ_B·√(DK) with τ_B ∝ 1/N, so the noise-to-signal ratio
√(DK)/N — what decides the gap — is the paper's at every scale (reported as
``noise_ratio_paper`` and ``noise_ratio_run``; faces have a whole number of pixels per side,
so theirs is kept only to rounding). K is the paper's.

Runs are centralized (one curator, as in the paper; the curators' SecureSum protocol of
Algorithm 2 is audited by ``dp_nmf_outliers``): per set one NNDSVD start (§4.1), one
non-private run (σ = 0) and ``trials`` private runs per ε, each with its own noise, all for
``iterations`` releases with δ = 10⁻⁵ and Δ_B = 4/N (R updated). Per set and ε the report gives
the mean and spread of the private objective, the gap to the non-private one, the relative gap
(gap / non-private objective, comparable across sets), the epochs each run needs to reach the
private run's final loss (:func:`sim.experiments.nmf.dp_nmf_outliers.epochs_to_private_final`)
and the overall ε (paper's RDP at α_opt, and dp-accounting's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from algorithms.data.faces_like import synthetic_faces
from algorithms.data.outliers import unit_max_rows
from algorithms.data.synthetic import synthetic_topic_corpus
from algorithms.nmf.dp_robust import (
    RobustSettings,
    clean_objective,
    dp_robust_nmf,
    nndsvd_start,
    unit_columns,
)
from algorithms.nmf.dp_robust_privacy import account, gaussian_sigma, sensitivities
from protocols import seeds
from protocols.errors import InputError
from sim import plots
from sim.audited_runs import RevealingRun
from sim.console import table
from sim.entry import AlgorithmRun, EstimateInput, RunInput, Workload
from sim.experiments.nmf.dp_nmf_outliers import epochs_to_private_final

DELTA = 1e-5
TEXT_DOC_LENGTH = {"guardian": 20, "uci_news": 8, "rcv1": 20, "tdt2": 20}
"""Mean words per synthetic document: short against the scaled vocabularies, so the TF matrices
stay sparse (a few per cent of cells non-zero) as the paper's are; UCI-news's are headlines."""


@dataclass(frozen=True)
class SetShape:
    """One of Table 2's data sets: its name, kind (``text`` | ``faces``) and (N, D, K)."""

    title: str
    kind: str
    n: int
    d: int
    k: int


SETS: dict[str, SetShape] = {
    "guardian": SetShape("Guardian", "text", 4551, 10285, 8),
    "uci_news": SetShape("UCI-news", "text", 3000, 93, 7),
    "rcv1": SetShape("RCV1", "text", 9625, 2999, 4),
    "tdt2": SetShape("TDT2", "text", 9394, 3677, 30),
    "yaleb": SetShape("YaleB", "faces", 2414, 1024, 38),
    "cbcl": SetShape("CBCL", "faces", 2429, 361, 50),
}
"""Table 2 of seed 000 (the keys are :data:`sim.catalog.nmf.DP_DATASETS`)."""


def scaled_shape(name: str, cells: int) -> dict[str, Any]:
    """The shape run for set ``name`` under a budget of ``cells`` = N·D (see the module
    docstring): ``n``, ``d``, ``k``, ``side`` (faces), the factor ``s`` and the noise ratios
    √(DK)/N of the paper's shape and of the run's."""
    if name not in SETS:
        raise InputError(f"data set {name!r}: choose among {', '.join(SETS)}")
    shape = SETS[name]
    s = min(1.0, (cells / (shape.n * shape.d)) ** (1 / 3))
    n = max(round(s * shape.n), 5 * shape.k)
    side = None
    if shape.kind == "faces":
        side = max(round(s * math.sqrt(shape.d)), math.ceil(math.sqrt(shape.k)))
        d = side * side
    else:
        d = max(round(s * s * shape.d), shape.k)
    return {"n": n, "d": d, "k": shape.k, "side": side, "s": s,
            "noise_ratio_paper": math.sqrt(shape.d * shape.k) / shape.n,
            "noise_ratio_run": math.sqrt(d * shape.k) / n}


def data(name: str, cells: int, seed: int) -> np.ndarray:
    """V (D × N, samples in columns) of set ``name`` at its scaled shape, every sample divided
    by its largest entry (§4)."""
    s = scaled_shape(name, cells)
    rng = seeds.rng(seed, "dp_nmf_datasets.data", index=(name,))
    if SETS[name].kind == "faces":
        X = synthetic_faces(s["n"], s["side"], s["k"], rng=rng)
    else:
        X = synthetic_topic_corpus(s["n"], s["d"], s["k"], doc_length=TEXT_DOC_LENGTH[name],
                                   rng=rng).tf
    return unit_max_rows(X).T


def sweep(name: str, epsilons: list[float], trials: int, iterations: int, cells: int,
          seed: int) -> dict[str, Any]:
    """One set's Fig. 3 / 6 sweep: the objectives (trials × ε) and loss curves of the private
    runs, and the non-private run's, from one NNDSVD start."""
    V = data(name, cells, seed)
    V_clean = unit_columns(V)
    d, n = V.shape
    k = SETS[name].k
    W0, H0 = nndsvd_start(V_clean, k)
    settings = RobustSettings(outliers=True)
    d_a, d_b = sensitivities(n, outliers=True)
    nonprivate = dp_robust_nmf(V, W0, H0, iterations=iterations, settings=settings,
                               sigma_a=0.0, sigma_b=0.0)
    values = np.zeros((trials, len(epsilons)))
    curves = np.zeros((trials, len(epsilons), iterations))
    for j, eps in enumerate(epsilons):
        for t in range(trials):
            rng = seeds.rng(seed, "dp_nmf_datasets.noise", index=(name, j, t))
            fit = dp_robust_nmf(V, W0, H0, iterations=iterations, settings=settings,
                                sigma_a=gaussian_sigma(d_a, eps, DELTA),
                                sigma_b=gaussian_sigma(d_b, eps, DELTA), rng=rng)
            values[t, j] = clean_objective(V_clean, fit.W, fit.H, n)
            curves[t, j] = fit.loss
    return {"values": values, "curves": curves, "loss_nonprivate": nonprivate.loss,
            "objective_nonprivate": clean_objective(V_clean, nonprivate.W, nonprivate.H, n),
            "objective_init": clean_objective(V_clean, W0, H0, n),
            "density": float(np.mean(V > 0)), "n": n, "d": d}


def summarise(found: dict[str, Any], epsilons: list[float]) -> dict[str, Any]:
    """Per-ε figures of one set's sweep (the report's metrics)."""
    values = found["values"]
    trials = values.shape[0]
    mean = values.mean(axis=0)
    sd = values.std(axis=0, ddof=1) if trials > 1 else np.zeros_like(mean)
    base = found["objective_nonprivate"]
    gap = mean - base
    epochs = [epochs_to_private_final(found["curves"][:, j].mean(axis=0),
                                      found["loss_nonprivate"]) for j in range(len(epsilons))]
    return {
        "objective_private_mean": mean.tolist(), "objective_private_sd": sd.tolist(),
        "objective_nonprivate": base, "objective_init": found["objective_init"],
        "gap": gap.tolist(), "gap_se": (sd / math.sqrt(trials)).tolist(),
        "relative_gap": (gap / base).tolist(),
        "epochs_private": [e[0] for e in epochs], "epochs_nonprivate": [e[1] for e in epochs],
        "density": found["density"], "n": found["n"], "d": found["d"],
    }


ONE_CURATOR = RevealingRun(
    "the pooled samples to the one curator that factorises them; what it publishes is a DP "
    "release (no protocol runs here — the curators' SecureSum protocol of Algorithm 2 is "
    "audited by dp_nmf_outliers)", "one curator")


def run(inp: RunInput) -> AlgorithmRun:
    """Entry ``dp_nmf_datasets``: the sweep on every set of ``datasets`` (the scenario's
    ``[data]`` and parties are not used: one curator holds every sample, as in the paper)."""
    p = inp.params
    eps = list(p["epsilons"])
    sets: dict[str, Any] = {}
    outputs: dict[str, np.ndarray] = {"epsilons": np.asarray(eps)}
    for i, name in enumerate(p["datasets"]):
        found = sweep(name, eps, p["trials"], p["iterations"], p["cells"], inp.seed)
        sets[name] = {**scaled_shape(name, p["cells"]), **summarise(found, eps),
                      "kind": SETS[name].kind}
        outputs[f"{name}_private"] = found["values"]
        outputs[f"{name}_nonprivate"] = np.asarray([found["objective_nonprivate"]])
        if inp.progress is not None:
            inp.progress("data sets", i + 1, len(p["datasets"]))
    accounting = [account(e, DELTA, p["iterations"]) for e in eps]
    metrics: dict[str, Any] = {
        "epsilons": eps, "trials": p["trials"], "iterations": p["iterations"],
        "cells": p["cells"], "delta": DELTA, "centralized": True,
        "epsilon_total_paper": [a.epsilon_paper for a in accounting],
        "epsilon_total_accountant": [a.epsilon_accountant for a in accounting],
        "sets": sets}
    rows = []
    for name, m in sets.items():
        for j, e in enumerate(eps):
            rows.append([SETS[name].title, f"{m['n']} × {m['d']}", e,
                         accounting[j].epsilon_paper, m["objective_private_mean"][j],
                         m["objective_nonprivate"], m["relative_gap"][j],
                         f"{m['epochs_nonprivate'][j]} / {m['epochs_private'][j]}"])
    title = (f"Figs. 3 / 6 analogue: DP robust NMF, {p['iterations']} releases, δ = {DELTA:g}, "
             f"{p['trials']} trial(s) per ε, one curator")
    return AlgorithmRun(
        result=None, outputs=outputs, metrics=metrics,
        tables=[table(["data set", "N × D run", "ε_i", "ε overall", "objective private",
                       "non-private", "relative gap", "epochs non-private / private"],
                      rows, title)],
        plots={"relative_gap": lambda: plots.sweep(
            eps, {SETS[s].title: m["relative_gap"] for s, m in sets.items()}, "ε per release",
            "relative gap (private − non-private) / non-private", title, logx=False)},
        audit_runs={"centralized": ONE_CURATOR},
    )


def estimate(inp: EstimateInput) -> Workload:
    """Centralized fits only: per set (1 + trials·|ε|) runs of ``iterations`` releases, each
    release 10 (H, R) rounds counted as N·D·(3 + K/4) flops — the element-wise steps and the
    D × N × K products, fitted to measured runs of the six sets at 250,000 cells (12–28 CPU
    seconds per set for 9 runs of 100 releases, within 25 % of this count at 10⁹ flop/s)."""
    p = inp.params
    flops = 0.0
    for name in p["datasets"]:
        s = scaled_shape(name, p["cells"])
        runs = 1 + p["trials"] * len(p["epsilons"])
        flops += runs * p["iterations"] * 10.0 * s["n"] * s["d"] * (3 + s["k"] / 4)
    return Workload(simulations=0, flops=flops,
                    basis="centralized DP robust NMF fits, no protocol")
