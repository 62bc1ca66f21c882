"""Experiment ``pd_nmf_init_comparison``: the initialisation comparison of thesis §2.4.

Figures 2.4/2.5 of the thesis (seed 001) plot, for each initialisation of PD-NMF, the
objective against the iteration, as mean ± one standard deviation of the mean over 10 trials,
with M = 9 parties. The initialisations compared here are ``random``, ``random_2x`` (random
run for twice the sweeps: the benchmark every initialisation should beat), ``nndsvd``
(centralized, non-private), ``pd_nmf_init`` (WR-NMF through SecureSum, Algorithm 8) and
``pd_svd`` (nndsvd from PD-SVD's V_k and the parties' U^(m), :mod:`algorithms.svd.pd_svd`; the
thesis's "PD-SVD" line, Algorithms 9–10; ``svd_variant`` and ``svd_iterations`` as in
``pd_nmf``).

Every trial is a real simulation of PD-NMF among the scenario's parties, seeded from the
scenario seed and the trial number; the randomness that differs between trials is the random
T0 (``random``, ``random_2x``) or the random start of PD-NMF-Init's step 6. ``nndsvd`` is
deterministic, so its spread is zero. The x-axis counts sweeps of PD-NMF-Iter on X; the
``pd_nmf_init`` curve does not include the init's own sweeps on the k_m-row weighted topics,
which is why ``random_2x`` is the fair comparison (the thesis's argument).

Scenario keys: those of ``pd_nmf`` (``init`` is ignored) plus ``inits`` (the list to compare)
and ``trials``. ``outputs.npz`` holds ``objective_<init>`` (trials × sweeps); the report's
``communication`` is that of the first ``pd_nmf_init`` trial (or of the first trial run).

``[[audit]]`` audits the first trial of each initialisation (``run = "<init>"`` picks one;
:mod:`sim.audited_runs`); ``nndsvd``, whose start is computed centrally, is reported as
revealing it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from algorithms.nmf.pd_nmf import total_objective
from protocols import seeds
from sim import plots
from sim.audited_runs import RevealingRun
from sim.console import table
from sim.entry import AlgorithmRun, EstimateInput, RunInput, Workload
from sim.experiments.nmf.pd_nmf import (
    NmfSetup,
    nmf_workload,
    pd_nmf_parties,
    pd_nmf_roles,
    public_start,
    run_pd_nmf,
)
from sim.privacy import AuditTarget


def run(inp: RunInput) -> AlgorithmRun:
    p = inp.params
    curves: dict[str, np.ndarray] = {}
    first_result = None
    audit_runs: dict[str, Any] = {}
    n_runs = len(p["inits"]) * p["trials"]
    done = 0
    for init in p["inits"]:
        setup = NmfSetup.from_params({**p, "init": init}, inp.data)
        histories = []
        for trial in range(p["trials"]):
            seed = seeds.derive_int(inp.seed, "pd_nmf_init_comparison.trial", index=(trial,),
                                    bits=32)
            trial_input = _with_seed(inp, seed)
            T0 = public_start(setup, inp.data, seed, inp.scenario.base_dir)
            result, models = run_pd_nmf(trial_input, setup, T0)
            histories.append(total_objective(models))
            if first_result is None or (init == "pd_nmf_init" and trial == 0):
                first_result = result
            if trial == 0:
                audit_runs[init] = _audited(trial_input, setup, T0, init)
            done += 1
            if inp.progress is not None:
                inp.progress("trials", done, n_runs)
        curves[init] = np.asarray(histories)
    rows, metrics = [], {}
    for init, h in curves.items():
        final = h[:, -1]
        sem = float(final.std(ddof=1) / np.sqrt(len(final))) if len(final) > 1 else 0.0
        at_tau = h[:, p["iterations"] - 1]
        metrics[f"final_objective_{init}"] = float(final.mean())
        metrics[f"final_objective_sem_{init}"] = sem
        metrics[f"objective_at_iterations_{init}"] = float(at_tau.mean())
        rows.append([init, h.shape[1], float(at_tau.mean()), float(final.mean()), sem])
    metrics["ranking_at_iterations"] = [r[0] for r in sorted(rows, key=lambda r: r[2])]
    title = (f"initialisations, M = {inp.scenario.n_parties}, k = {p['k']}, "
             f"{p['trials']} trials")
    return AlgorithmRun(
        result=first_result,
        outputs={f"objective_{init}": h for init, h in curves.items()},
        metrics=metrics,
        plots={"init_comparison": lambda: plots.objective_bands(curves, title)},
        tables=[table(["init", "sweeps", f"objective @ {p['iterations']}", "final mean",
                       "final sd of mean"], rows, "objective by initialisation")],
        communication_by_phase=True,
        audit_runs=audit_runs,
    )


def _audited(trial_input: RunInput, setup: NmfSetup, T0: Any, init: str) -> Any:
    """What ``[[audit]]`` examines of one initialisation (its first trial,
    :mod:`sim.audited_runs`): PD-NMF's parties judged by SecureSum, as ``pd_nmf`` audits them;
    ``nndsvd`` starts from the centralized NNDSVD of the pooled rows, which no secure
    protocol computes, and is reported as revealing it."""
    if init == "nndsvd":
        return RevealingRun("T0 = NNDSVD of the pooled rows (a function of every party's "
                            "data, computed centrally and handed to all)",
                            "the nndsvd initialisation")
    return AuditTarget(tuple(pd_nmf_parties(trial_input, setup, T0)), "secure_sum",
                       setup.variant)


def _with_seed(inp: RunInput, seed: int) -> RunInput:
    return RunInput(inp.scenario, inp.params, inp.data, inp.shards, inp.simulation, seed,
                    inp.progress, inp.extras)


def estimate(inp: EstimateInput) -> Workload:
    p = inp.params
    total = Workload()
    for init in p["inits"]:
        total = total + nmf_workload(inp, {**p, "init": init}).times(p["trials"])
    return total.described("PD-NMF's declared cost × initialisations × trials",
                           len(p["inits"]) * p["trials"])


def roles(params: Mapping[str, Any]) -> tuple[str, ...]:
    """PD-NMF's roles under the initialisation that has the most."""
    return max((pd_nmf_roles({**params, "init": init}) for init in params["inits"]), key=len)


