"""Experiment ``pd_nmf_uplift``: each party's learning uplift from PD-NMF (thesis §3.3.1).

Thesis seed 001, §3.3.1 and Figure 3.7 (a, b): a party joins PD-NMF if the global model
serves it better than a model of its own data alone. For every party:

* topic modelling (data without missing entries): the % decrease of the Frobenius
  reconstruction error ‖E − W_E T‖_F on the party's held-out documents E, where W_E is refit
  with T fixed (RRI with T frozen, "out-of-sample Fro2", §1.5), using the global T instead of
  the party's best local T;
* recommender systems (NaN marks unobserved ratings): the % decrease of the RMSE on held-out
  ratings of the party's own users, predicted as (W^(m) T)_ij — with the party's W^(m) and
  the global T from PD-NMF, against its local W and T — clipped to the range of the party's
  training ratings for both models (a small party's unregularised local model otherwise
  predicts far outside the rating scale, which would inflate the uplift).

uplift = 100·(error_local − error_global) / error_local, reported against the party's size
(its share of the training rows). "Best local topics" (digest §7.1 item 31) is read as the
lowest training objective among ``local_restarts`` local RRI-NMF runs at the same k — one from
NNDSVD, the others from random starts — each run until the relative change of the objective
is below 10^−4 or ``local_iterations`` sweeps. The global model is PD-NMF on the parties'
training rows (a real simulation), with the scenario's initialisation and ``iterations``.

With ``dp_epsilon`` the global model is DP-PD-NMF's (:mod:`algorithms.nmf.dp_pd_nmf`; thesis
Fig. 3.7c, the uplift for various ε), and with ratings every party also reports
``error_random``, the expected RMSE of guessing uniformly on its rating range — the "random
guessing" the thesis says DP-PD-NMF's RMSE is "only slightly better than".

Scenario keys: those of ``pd_nmf`` (the ``dp_*`` keys included) plus ``holdout`` (fraction
held out per party) and ``local_restarts``. Party sizes come from ``[data] partition``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from algorithms.data import holdout_entries, holdout_rows
from algorithms.nmf.nndsvd import nndsvd
from algorithms.nmf.row_blocks import zero_filled
from algorithms.nmf.rri import fit_weights, random_init, rri_nmf
from protocols import seeds
from sim import plots
from sim.console import table
from sim.entry import (
    AlgorithmRun,
    EstimateInput,
    RunInput,
    Workload,
)
from sim.experiments.nmf.pd_nmf import (
    TYPICAL_LOCAL_SWEEPS,
    NmfSetup,
    nmf_workload,
    pd_nmf_parties,
    public_start,
    run_pd_nmf,
)
from sim.privacy import AuditTarget


def _is_ratings(X: Any) -> bool:
    return not sp.issparse(X) and bool(np.isnan(X).any())


def _frobenius_error(test: Any, T: np.ndarray, setup: NmfSetup) -> float:
    W_test = fit_weights(test, T, params=setup.params)
    dense = test.toarray() if sp.issparse(test) else np.asarray(test)
    return float(np.linalg.norm(dense - W_test @ T))


def _rmse(test: np.ndarray, W: np.ndarray, T: np.ndarray, low: float, high: float) -> float:
    mask = ~np.isnan(test)
    pred = np.clip(W @ T, low, high)
    return float(np.sqrt(np.mean((test[mask] - pred[mask]) ** 2)))


def _random_guess_rmse(test: np.ndarray, low: float, high: float) -> float:
    """The expected RMSE of guessing every held-out rating uniformly on [low, high] — the
    "random guessing" Fig. 3.7c compares DP-PD-NMF with: E(U − y)² = (y − mid)² + (high − low)²/12,
    averaged over the held-out ratings y, in closed form (no draw)."""
    y = test[~np.isnan(test)]
    mid = (low + high) / 2.0
    return float(np.sqrt(np.mean((y - mid) ** 2) + (high - low) ** 2 / 12.0))


def _best_local(train: Any, setup: NmfSetup, restarts: int, max_iter: int,
                rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    n_rows, d = train.shape
    k = int(min(setup.k, n_rows, d))
    starts = [nndsvd(zero_filled(train), k)]
    for _ in range(restarts - 1):
        starts.append(random_init(n_rows, d, k, rng=rng))
    best = None
    for W0, T0 in starts:
        fit = rri_nmf(train, k, T0=T0, W0=W0, max_iter=max_iter, tol=1e-4,
                      params=setup.params, loss=setup.loss)  # type: ignore[arg-type]
        value = fit.objective[-1] if fit.n_iter else fit.initial_objective
        if best is None or value < best[0]:
            best = (value, fit.W, fit.T)
    assert best is not None  # restarts ≥ 1
    return best[1], best[2]


def run(inp: RunInput) -> AlgorithmRun:
    p = inp.params
    ratings = _is_ratings(inp.data)
    rng = seeds.rng(inp.seed, "uplift.init")
    trains, tests = [], []
    for shard in inp.shards:
        if ratings:
            h = holdout_entries(shard, p["holdout"], rng)
            trains.append(h.train)
            tests.append(h.test)
        else:
            hr = holdout_rows(shard, p["holdout"], rng)
            trains.append(hr.train)
            tests.append(hr.test)
    pooled = sp.vstack(trains, format="csr") if sp.issparse(trains[0]) else np.vstack(trains)
    setup = NmfSetup.from_params(p, pooled)
    T0 = public_start(setup, pooled, inp.seed, inp.scenario.base_dir)
    train_input = RunInput(inp.scenario, p, pooled, trains, inp.simulation, inp.seed,
                           inp.progress, inp.extras)
    result, models = run_pd_nmf(train_input, setup, T0)
    T_global = models[0].T
    total = sum(t.shape[0] for t in trains)
    parties = []
    for m, (train, test, model) in enumerate(zip(trains, tests, models, strict=True)):
        W_local, T_local = _best_local(train, setup, p["local_restarts"],
                                       p["local_iterations"], rng)
        if ratings:
            low, high = float(np.nanmin(train)), float(np.nanmax(train))
            err_local = _rmse(test, W_local, T_local, low, high)
            err_global = _rmse(test, model.W, T_global, low, high)
            extra = {"error_random": _random_guess_rmse(test, low, high)}
        else:
            err_local = _frobenius_error(test, T_local, setup)
            err_global = _frobenius_error(test, T_global, setup)
            extra = {}
        parties.append({
            "party": m,
            "train_rows": int(train.shape[0]),
            "size_fraction": train.shape[0] / total,
            "error_local": err_local,
            "error_global": err_global,
            "uplift_pct": 100.0 * (err_local - err_global) / err_local if err_local else 0.0,
            **extra,
        })
        if inp.progress is not None:
            inp.progress("local models", m + 1, len(trains))
    measure = "held-out RMSE" if ratings else "held-out Frobenius error"
    metrics = {"measure": measure, "parties": parties,
               "mean_uplift_pct": float(np.mean([q["uplift_pct"] for q in parties]))}
    if ratings:  # Fig. 3.7c's reference: the uplift random guessing would have
        metrics["mean_uplift_random_pct"] = float(np.mean(
            [100.0 * (q["error_local"] - q["error_random"]) / q["error_local"] for q in parties]))
    rows = [[q["party"], q["train_rows"], f"{100 * q['size_fraction']:.1f}%", q["error_local"],
             q["error_global"], f"{q['uplift_pct']:.2f}%"] for q in parties]
    return AlgorithmRun(
        result=result,
        outputs={"T": T_global,
                 "uplift_pct": np.array([q["uplift_pct"] for q in parties]),
                 "size_fraction": np.array([q["size_fraction"] for q in parties])},
        metrics=metrics,
        plots={"uplift": lambda: plots.uplift(parties, measure, setup.k)},
        tables=[table(["party", "train rows", "size", "local error", "global error", "uplift"],
                      rows, f"learning uplift ({measure})")],
        communication_by_phase=True,
        audit_runs={"pd_nmf": _audited(train_input, setup, T0)},
    )


def _audited(train_input: RunInput, setup: NmfSetup, T0: Any) -> Any:
    """The one run that communicates: PD-NMF on the training rows, judged by SecureSum as
    ``pd_nmf`` judges it (the local models exchange nothing; :mod:`sim.audited_runs`)."""

    return AuditTarget(tuple(pd_nmf_parties(train_input, setup, T0)), "secure_sum",
                       setup.variant)


def estimate(inp: EstimateInput) -> Workload:
    p = inp.params
    train_rows = inp.n_rows - round(p["holdout"] * inp.n_rows) if not inp.missing else inp.n_rows
    sweeps = min(p["local_iterations"], TYPICAL_LOCAL_SWEEPS)  # each stops at its tolerance
    local = nmf_workload(inp, {**p, "iterations": sweeps, "init": "random"}, train_rows,
                         private=False)
    work = nmf_workload(inp, p, train_rows) + local.times(p["local_restarts"])
    return work.described("PD-NMF's declared cost, plus the local restarts", 1)


