"""Why WR-NMF ends above random_2x on ratings at k = 50 (claim C12, thesis §2.4, Fig. 2.5).

A centralized probe of ``scenarios/pd_nmf_init_comparison_ratings_k50.toml`` (its data, its
shards and its trial seeds; the PD-NMF sweeps run as centralized RRI sweeps, which compute the
same W and T). Per trial it prints JSON lines:

* ``local``: each party's local model (Algorithm 8 steps 1–4: RRI-NMF from NNDSVD, 200
  iterations) fitted on 80 % of its observed ratings, its RMSE on those (train) and on the
  other 20 % of the same users (held-out), at local rank 5 and 50, for M = 9 and M = 3;
* ``curve``: the objective (Eq. 2.28, observed entries) of each start with W fitted to it
  (``start``) and after every one of the τ sweeps, for random, nndsvd and WR-NMF with M = 9,
  WR-NMF with M = 3 (≈ 270 users per party) and WR-NMF with local rank 5 (M = 9).

Run: ``PYTHONPATH=$PWD nice -n 10 python benchmarks/wr_nmf_ratings_k50.py [TRIALS]``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from algorithms.nmf.nndsvd import nndsvd
from algorithms.nmf.objective import objective
from algorithms.nmf.pd_nmf import InitSettings, local_weighted_topics, normalize_rows
from algorithms.nmf.rri import RRIParams, fit_weights, rri_nmf, rri_sweep
from protocols import seeds
from sim.experiments.nmf.pd_nmf import NmfSetup, centralized_sweeps, public_start
from sim.runner import plan_scenario

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / (
    "pd_nmf_init_comparison_ratings_k50.toml")


def parties(shards: list[np.ndarray], m: int) -> list[np.ndarray]:
    """The scenario's 9 shards, or (m = 3) each three consecutive ones joined."""
    per = len(shards) // m
    return [np.vstack(shards[i * per:(i + 1) * per]) for i in range(m)]


def local_fit(X: np.ndarray, k: int, rng: np.random.Generator) -> tuple[float, float]:
    """(train RMSE, held-out RMSE) of one party's local RRI-NMF on 80 / 20 % of its ratings."""
    obs = np.argwhere(~np.isnan(X))
    held = obs[rng.random(len(obs)) < 0.2]
    train = X.copy()
    train[held[:, 0], held[:, 1]] = np.nan
    kk = min(k, *train.shape)
    W0, T0 = nndsvd(np.nan_to_num(train), kk)
    fit = rri_nmf(train, kk, T0=T0, W0=W0, max_iter=200, tol=1e-4, loss="observed")
    P = fit.W @ fit.T
    tr = ~np.isnan(train)
    return (float(np.sqrt(np.mean((P[tr] - train[tr]) ** 2))),
            float(np.sqrt(np.mean((P[held[:, 0], held[:, 1]]
                                   - X[held[:, 0], held[:, 1]]) ** 2))))


def wr_start(X: list[np.ndarray], m: int, k: int, k_local: int, sweeps: int,
             rng: np.random.Generator) -> np.ndarray:
    """PD-NMF-Init (Algorithm 8) run centrally: stacked weighted local topics, then τ sweeps
    of plain RRI-NMF on them from a random row-normalised start."""
    plain = RRIParams(form="plain")
    t_hat = np.vstack([local_weighted_topics(x, k_local, plain, InitSettings(sweeps),
                                             "observed") for x in parties(X, m)])
    t0 = normalize_rows(rng.uniform(0.0, 1.0, size=(k, X[0].shape[1])))
    W = fit_weights(t_hat, t0, params=plain)
    T = t0
    for _ in range(sweeps):
        W, T = rri_sweep(t_hat, W, T, plain, loss="full")
    return normalize_rows(T)


def curve(X: np.ndarray, T0: np.ndarray, setup: NmfSetup) -> list[float]:
    plain = setup.params
    W0 = fit_weights(X, T0, params=plain, loss="observed")
    out = [objective(X, W0, T0, plain, loss="observed")]
    centralized_sweeps(X, T0, setup.sweeps, setup, callback=lambda W, T: out.append(
        objective(X, W, T, plain, loss="observed")))
    return out


def main(trials: int) -> None:
    plan = plan_scenario(SCENARIO)
    X = np.asarray(plan.data, dtype=np.float64)
    shards = [np.asarray(x, dtype=np.float64) for x in plan.shards]
    p = plan.params
    k, tau = p["k"], p["iterations"]
    setup = NmfSetup.from_params({**p, "init": "random"}, X)
    for trial in range(trials):
        seed = seeds.derive_int(plan.seed, "pd_nmf_init_comparison.trial", index=(trial,),
                                bits=32)
        rng = seeds.rng(seed, "pd_nmf.init")
        for m in (9, 3):
            for kl in (5, 50):
                fits = [local_fit(x, kl, rng) for x in parties(shards, m)]
                tr, ho = np.mean(fits, axis=0)
                print(json.dumps({"kind": "local", "trial": trial, "parties": m,
                                  "local_k": kl, "users": len(X) // m,
                                  "train_rmse": round(float(tr), 4),
                                  "heldout_rmse": round(float(ho), 4)}), flush=True)
        starts = {
            "random": public_start(setup, X, seed, SCENARIO.parent, init="random"),
            "nndsvd": public_start(setup, X, seed, SCENARIO.parent, init="nndsvd"),
            "wr_m9": wr_start(shards, 9, k, k, tau, rng),
            "wr_m3": wr_start(shards, 3, k, k, tau, rng),
            "wr_m9_local5": wr_start(shards, 9, k, 5, tau, rng),
        }
        for name, T0 in starts.items():
            c = curve(X, T0, setup)
            print(json.dumps({"kind": "curve", "trial": trial, "start": name,
                              "objective": [round(v, 1) for v in c]}), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
