"""Catalogue entries ``dp_nmf_outliers`` and ``dp_nmf_outliers_epsilon`` (seed 000, Algorithm 2).

Saha & Imtiaz, *Privacy-preserving NMF with outliers* (digest §2): curators (sites 0..M−1) hold
the samples, the analyst (role ``"analyst"``, id M) learns only the noisy statistics and
releases W (:mod:`algorithms.nmf.dp_robust`). ``network.parties`` counts the curators (≥ 1).

Data pipeline (§4, and the contamination of the outlier experiment): every sample is divided by
its largest entry; then, if ``planted_fraction`` > 0, that fraction of samples gets U[−1, 1]
noise on ``planted_entries`` of its entries, clipped to [0, 1]
(:func:`algorithms.data.plant_outliers`); the curators scale each sample to ℓ2 norm ≤ 1
(the Δ_B normalisation). The reported objective is the paper's Objective Value (Eq. 15),
(1/(2N))‖V° − WH‖², with V° the data before contamination, scaled as the curators scaled V.

``dp_nmf_outliers`` runs Algorithm 2 once on the simulator and, from the same start, the
non-private run (σ = 0, the centralized reference :func:`~algorithms.nmf.dp_robust.dp_robust_nmf`
with the same settings). Metrics: ``epsilon_total_paper`` (the paper's RDP composition at
α_opt), ``epsilon_total_accountant`` (``dp-accounting``'s RDP accountant), ``objective_private``,
``objective_nonprivate``, ``objective_init``, the noise levels and sensitivities, and the
elements each role sent per iteration against the declared formula.

``dp_nmf_outliers_epsilon`` repeats the private run for every ε in ``epsilons`` and ``trials``
seeds (each a simulation) and plots the objective against ε with the non-private level: the gap
shrinks as ε grows (§4, digest claim C16). ``epochs_private`` and ``epochs_nonprivate`` give,
for every ε, the epochs (loss-history index) at which the private run's mean loss and the
non-private run's loss first reach the private run's final loss: "the private version needs
more epochs" is ``epochs_nonprivate < epochs_private``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from algorithms import data as data_io
from algorithms.nmf.dp_robust import (
    ANALYST,
    PROTOCOL,
    RobustSettings,
    analyst,
    clean_objective,
    curator,
    declared_iteration_elements,
    dp_robust_nmf,
    nndsvd_start,
    random_start,
    unit_columns,
)
from algorithms.nmf.dp_robust_privacy import (
    account,
    coalition_noise_variance,
    gaussian_sigma,
    sensitivities,
)
from parties.party import Party
from protocols import seeds
from protocols.errors import ScenarioError
from protocols.publication import Publication, PublicationSimulator
from protocols.registry import declare_protocol
from sim import plots
from sim.audited_runs import RevealingRun
from sim.console import table
from sim.entry import (
    AlgorithmRun,
    EstimateInput,
    RunInput,
    Workload,
)
from sim.experiments.secure_sum import secure_sum_workload
from sim.privacy import AuditTarget, first_call_inputs, secure_sum_program
from sim.simulation import Result

RELEASES = declare_protocol(PROTOCOL, functionality=Publication(),
                            simulator=PublicationSimulator(PROTOCOL))
"""The exchange with the analyst (calls ``dp_robust_nmf``) as a publication
(:mod:`protocols.publication`): the first curator forwards the DP release (the noised SecureSum)
and the count N, the analyst sends back W_t; each message is the value its sender declares
published, and nothing more."""


@dataclass(frozen=True)
class Prepared:
    """The scenario's data and start, in the paper's orientation (samples in columns)."""

    V: np.ndarray  # (D, N), contaminated, before the curators' ℓ2 scaling
    V_clean: np.ndarray  # (D, N), clean, scaled as the curators scale V
    blocks: list[slice]  # the curators' columns
    W0: np.ndarray
    H0: np.ndarray
    settings: RobustSettings
    planted: int

    @property
    def n(self) -> int:
        return self.V.shape[1]


def prepare(inp: RunInput) -> Prepared:
    """Normalise, contaminate, split and initialise (see the module docstring)."""

    p = inp.params
    X = np.asarray(inp.data, dtype=np.float64)
    n, d = X.shape
    if p["k"] > min(n, d):
        raise ScenarioError(f"algorithm.k = {p['k']} must be ≤ min(N, D) = {min(n, d)} for "
                            f"data of shape {X.shape}")
    rng = seeds.rng(inp.seed, "dp_nmf_outliers.plant")
    planted = data_io.plant_outliers(data_io.unit_max_rows(X), p["planted_fraction"],
                                     p["planted_entries"], rng)
    V = planted.X.T
    scale = np.maximum(1.0, np.linalg.norm(V, axis=0))
    V_clean = planted.clean.T / scale
    sizes = [shard.shape[0] for shard in inp.shards]
    edges = np.concatenate([[0], np.cumsum(sizes)])
    blocks = [slice(int(a), int(b)) for a, b in itertools.pairwise(edges)]
    k = p["k"]
    if p["init"] == "nndsvd":
        W0, H0 = nndsvd_start(unit_columns(V), k)
    else:
        init_rng = seeds.rng(inp.seed, "dp_nmf_outliers.init")
        W0, H0 = random_start(d, k, init_rng), np.zeros((k, n))
    settings = RobustSettings(
        lam=p["lam"], bound=p["bound"], outliers=p["outliers"],
        inner_iterations=p["inner_iterations"], w_steps=p["w_steps"],
        eta_h=None if p["eta_h"] == "auto" else p["eta_h"],
        eta_w=None if p["eta_w"] == "auto" else p["eta_w"],
    )
    return Prepared(V, V_clean, blocks, W0, H0, settings, int(planted.rows.sum()))


def noise_levels(n: int, outliers: bool, epsilon: float, delta: float) -> tuple[float, ...]:
    """(Δ_A, Δ_B, τ_A, τ_B)."""

    d_a, d_b = sensitivities(n, outliers)
    return d_a, d_b, gaussian_sigma(d_a, epsilon, delta), gaussian_sigma(d_b, epsilon, delta)


def simulate(inp: RunInput, prep: Prepared, epsilon: float,
             seed: int) -> tuple[Result, np.ndarray, np.ndarray, list[float]]:
    """One private run of Algorithm 2 on the simulator: (result, W, H, loss history)."""

    m = len(prep.blocks)
    result = inp.simulation.run(dp_parties(inp, prep, epsilon), seed=seed)
    W = result.outputs[m].W
    H = np.hstack([result.outputs[c].H for c in range(m)])
    loss = np.sum([result.outputs[c].loss for c in range(m)], axis=0).tolist()
    return result, W, H, loss


def dp_parties(inp: RunInput, prep: Prepared, epsilon: float) -> list[Party]:
    """The curators and the analyst of one private run (an audit replays them)."""

    p = inp.params
    _, _, tau_a, tau_b = noise_levels(prep.n, p["outliers"], epsilon, p["delta"])
    m = len(prep.blocks)
    common = {"iterations": p["iterations"], "settings": prep.settings}
    parties = [
        Party(c, lambda ctx, **kw: curator(ctx, **kw),
              {"V": prep.V[:, block], "H0": prep.H0[:, block], **common, "sigma_a": tau_a,
               "sigma_b": tau_b, "analyst": m, "variant": p["variant"]})
        for c, block in enumerate(prep.blocks)
    ]
    parties.append(Party(m, lambda ctx, **kw: analyst(ctx, **kw), {"W0": prep.W0, **common},
                         role=ANALYST))
    return parties


def nonprivate(inp: RunInput, prep: Prepared) -> tuple[float, list[float]]:
    """The objective and loss history of the same run without noise (σ = 0)."""

    fit = dp_robust_nmf(prep.V, prep.W0, prep.H0, iterations=inp.params["iterations"],
                        settings=prep.settings, sigma_a=0.0, sigma_b=0.0)
    return clean_objective(prep.V_clean, fit.W, fit.H, prep.n), fit.loss


def initial_objective(prep: Prepared) -> float:
    return clean_objective(prep.V_clean, prep.W0, prep.H0, prep.n)


def measured_iteration_elements(result: Result, m: int, iterations: int) -> dict[str, float]:
    """Elements each role sent per iteration, from the ledger (the ``setup`` phase excluded)."""
    sent = dict.fromkeys(range(m + 1), 0)
    for r in result.ledger:
        if r.phase == "" and r.protocol in ("dp_robust_nmf", "secure_sum"):
            sent[r.sender] += r.elements
    per = {"curator_0": sent[0] / iterations, "analyst": sent[m] / iterations}
    if m > 1:
        per["curator"] = sent[m - 1] / iterations
    return per


def run(inp: RunInput) -> AlgorithmRun:
    p = inp.params
    prep = prepare(inp)
    m, n = len(prep.blocks), prep.n
    d, k = prep.V.shape[0], p["k"]
    result, W, H, loss = simulate(inp, prep, p["epsilon"], inp.seed)
    obj_private = clean_objective(prep.V_clean, W, H, n)
    obj_nonprivate, loss_nonprivate = nonprivate(inp, prep)
    acc = account(p["epsilon"], p["delta"], p["iterations"])
    d_a, d_b, tau_a, tau_b = noise_levels(n, p["outliers"], p["epsilon"], p["delta"])
    declared = declared_iteration_elements(m, d, k, p["variant"])
    metrics: dict[str, Any] = {
        "epsilon_total_paper": acc.epsilon_paper,
        "alpha_opt": acc.alpha_opt,
        "epsilon_total_accountant": acc.epsilon_accountant,
        "epsilon_total_exact": acc.epsilon_exact,
        "delta": p["delta"],
        "neighbouring": "replace-one sample (bounded DP)",
        "dp_covers_init": p["init"] == "random",
        "objective_private": obj_private,
        "objective_nonprivate": obj_nonprivate,
        "objective_init": initial_objective(prep),
        "loss_private": loss,
        "loss_nonprivate": loss_nonprivate,
        "delta_A": d_a, "delta_B": d_b, "sigma_A": tau_a, "sigma_B": tau_b,
        "noise_variance_unknown_to_coalition_of_M-1_curators_B": coalition_noise_variance(
            tau_b, m, m - 1),
        "curators": m, "n": n, "d": d, "k": k, "planted_outlier_samples": prep.planted,
        "elements_sent_per_iteration_declared": declared,
    }
    metrics["elements_sent_per_iteration"] = measured_iteration_elements(result, m,
                                                                         p["iterations"])
    audit = audited(inp, prep, p["epsilon"], result)
    title = f"DP robust NMF, ε = {p['epsilon']} per release, M = {m} curator(s)"
    return AlgorithmRun(
        result=result,
        outputs={"W": W},
        metrics=metrics,
        audit_target=audit if m > 1 else None,
        audit_runs={} if m > 1 else {"one_curator": audit},
        communication_by_phase=True,
        plots={"objective": lambda: plots.objective(
            {"private": loss, "non-private": loss_nonprivate}, title, ylabel="robust loss L")},
        tables=[table(["", "Objective Value (Eq. 15)"],
                      [["initial (W0, H0)", metrics["objective_init"]],
                       ["private", obj_private], ["non-private", obj_nonprivate]],
                      f"ε_total = {acc.epsilon_paper:.4g} (paper's RDP), "
                      f"{acc.epsilon_accountant:.4g} (dp-accounting), δ = {p['delta']:g}")],
    )


def audited(inp: RunInput, prep: Prepared, epsilon: float, result: Result) -> Any:
    """What ``[[audit]]`` examines of one private run: the curators and the analyst, judged
    by SecureSum (the A/B and exact methods on the first call's field inputs) and, for the
    exchange with the analyst (calls ``dp_robust_nmf``: the released statistics, W_t), by
    :data:`RELEASES`; one curator alone sends its noisy statistics to the analyst by design
    (:mod:`sim.audited_runs`)."""

    if len(prep.blocks) == 1:
        return RevealingRun("its Gaussian-noised statistics (A, B) to the analyst, in the "
                            "clear: a DP release, not a secure computation", "one curator")
    variant = inp.params["variant"]
    return AuditTarget(
        tuple(dp_parties(inp, prep, epsilon)), ("secure_sum", RELEASES), variant,
        field_program=secure_sum_program(variant),
        field_inputs=first_call_inputs(result.views, result.sites, "secure_sum"))


def run_sweep(inp: RunInput) -> AlgorithmRun:
    p = inp.params
    prep = prepare(inp)
    eps_list, trials = p["epsilons"], p["trials"]
    values = np.zeros((trials, len(eps_list)))
    losses: list[list[list[float]]] = [[] for _ in eps_list]
    result = None
    total = trials * len(eps_list)
    audit_runs: dict[str, Any] = {}
    for j, eps in enumerate(eps_list):
        for t in range(trials):
            seed = seeds.derive_int(inp.seed, "dp_nmf_outliers.trial", index=(j, t))
            result, W, H, loss = simulate(inp, prep, eps, seed)
            losses[j].append(loss)
            if t == 0:  # [[audit]] audits each ε's first trial (sim.audited_runs)
                audit_runs[f"epsilon={eps:g}"] = audited(inp, prep, eps, result)
            values[t, j] = clean_objective(prep.V_clean, W, H, prep.n)
            if inp.progress is not None:
                inp.progress("private runs", j * trials + t + 1, total)
    obj_nonprivate, loss_nonprivate = nonprivate(inp, prep)
    epochs = [epochs_to_private_final(np.mean(curves, axis=0), loss_nonprivate)
              for curves in losses]
    accounting = [account(eps, p["delta"], p["iterations"]) for eps in eps_list]
    mean = values.mean(axis=0)
    gap = mean - obj_nonprivate
    metrics = {
        "epsilons": eps_list,
        "objective_private_mean": mean.tolist(),
        "objective_private_sd": values.std(axis=0, ddof=1).tolist() if trials > 1 else None,
        "objective_nonprivate": obj_nonprivate,
        "objective_init": initial_objective(prep),
        "gap": gap.tolist(),
        "gap_shrinks_with_epsilon": bool(np.all(np.diff(gap) <= 0)),
        "epochs_private": [e[0] for e in epochs],
        "epochs_nonprivate": [e[1] for e in epochs],
        "epsilon_total_paper": [a.epsilon_paper for a in accounting],
        "epsilon_total_accountant": [a.epsilon_accountant for a in accounting],
        "trials": trials, "iterations": p["iterations"], "n": prep.n,
        "d": prep.V.shape[0], "k": p["k"], "curators": len(prep.blocks),
        "planted_outlier_samples": prep.planted,
    }
    rows = [[eps, float(mean[j]), float(gap[j]), accounting[j].epsilon_paper,
             accounting[j].epsilon_accountant] for j, eps in enumerate(eps_list)]
    rows.append(["non-private", obj_nonprivate, 0.0, math.inf, math.inf])
    title = (f"DP robust NMF, {p['iterations']} releases, δ = {p['delta']:g}, "
             f"{len(prep.blocks)} curator(s), {prep.planted} of {prep.n} samples contaminated")
    return AlgorithmRun(
        result=result,
        outputs={"epsilons": np.asarray(eps_list), "objective_private": values,
                 "objective_nonprivate": np.asarray([obj_nonprivate])},
        metrics=metrics,
        plots={"objective_vs_epsilon": lambda: plots.objective_vs_epsilon(
            eps_list, values, obj_nonprivate, metrics["objective_init"], title)},
        tables=[table(["ε per release", "objective (mean)", "gap", "ε_total paper",
                       "ε_total accountant"], rows, title)],
        audit_runs=audit_runs,
    )


def epochs_to_private_final(private: np.ndarray,
                            nonprivate: list[float]) -> tuple[int, int | None]:
    """Epochs each run needs to reach the private run's final loss (§4: "the private version
    needs more epochs"): the first index at which the private (mean over trials) loss
    history, and the non-private one, is at or below ``private[-1]``; None if the
    non-private run never gets there."""
    target = float(private[-1])
    first_private = int(np.argmax(private <= target))
    below = np.flatnonzero(np.asarray(nonprivate) <= target)
    return first_private, int(below[0]) if below.size else None


def _workload(inp: EstimateInput, runs: int) -> Workload:
    """``runs`` private runs: per release the curators' SecureSum of k² + d·k statistics,
    curator 0's forward to the analyst and the analyst's W (d·k) to every curator
    (:func:`algorithms.nmf.dp_robust.declared_iteration_elements`), and the local (H, R) steps."""
    p = inp.params
    k, d, m = p["k"], inp.n_cols, inp.n_parties
    stats = k * k + d * k
    per = secure_sum_workload(p["variant"], m, stats) + Workload(messages=m + 1,
                                                               elements=m * d * k + stats)
    local = Workload(flops=1.0 * p["inner_iterations"] * inp.n_rows * d * k,
                     working_bytes=8 * 3 * inp.n_rows * d)
    return (per + local).times(p["iterations"] * runs).described(
        f"{runs} run{'s' if runs > 1 else ''} × {p['iterations']} releases (declared cost)",
        simulations=runs)


def estimate(inp: EstimateInput) -> Workload:
    return _workload(inp, 1)


def estimate_sweep(inp: EstimateInput) -> Workload:
    return _workload(inp, len(inp.params["epsilons"]) * inp.params["trials"])


