"""Catalogue entries of the NMF papers: PD-NMF, RRI-NMF and the initialisation comparison
(thesis seed 001), DP robust NMF with outliers (seed 000), corrective NMF and its tables (seed 002).

Declarations only (:mod:`sim.catalog`): names, keys, ranges and vocabularies as data, each
entry's code named ``"module:function"`` and imported when it runs. Nothing here imports
numpy; the experiment modules read their vocabularies from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from algorithms.vocabulary import (
    CORRECTIVE_FILLS,
    CORRECTIVE_MISSING_RULES,
    CORRECTIVE_MODES,
    CORRECTIVE_REPLACE_BASES,
    PD_NMF_INITS,
)
from protocols.errors import ScenarioError
from sim.catalog.sums import ALL_VARIANTS, MAX_TIMEOUT_S, VARIANTS
from sim.catalog.svd import SVD_VARIANTS
from sim.checks import MAX_PARTIES
from sim.entry import (
    MAX_ITERATIONS,
    MAX_RANK,
    MAX_TRIALS,
    MAX_WEIGHT,
    Algorithm,
    Param,
    auto_or,
    boolean,
    choice,
    described,
    integer,
    number,
    optional,
)

INITS = PD_NMF_INITS
"""PD-NMF's initialisations (:data:`algorithms.vocabulary.PD_NMF_INITS`)."""


@dataclass(frozen=True)
class InitCheck:
    """The ``init`` key: a named initialisation or ``{ path = "T0.npy" }``."""

    def __call__(self, name: str, value: Any) -> Any:
        if isinstance(value, dict):
            if set(value) != {"path"} or not isinstance(value["path"], str):
                raise ScenarioError(
                    f"{name} = {value!r}: a T0 file is given as {{ path = \"T0.npy\" }}"
                )
            return {"path": value["path"]}
        if value not in INITS:
            raise ScenarioError(
                f"{name} = {value!r} is unknown; use one of {', '.join(INITS)} or "
                "{ path = \"T0.npy\" }"
            )
        return value

    def describe(self) -> str:
        return " | ".join(INITS) + ' | { path = "T0.npy" }'

NMF_PARAMS: dict[str, Param] = {
    "k": Param(5, integer(1, MAX_RANK), "number of topics; also k ≤ min(n, d)"),
    "iterations": Param(30, integer(1, MAX_ITERATIONS), "sweeps of PD-NMF-Iter"),
    "form": Param("topic", choice("topic", "plain"), "topic: rows on simplices; plain: W, T ≥ 0"),
    "variant": Param("prg", choice(*ALL_VARIANTS), "SecureSum variant"),
    "init": Param("pd_nmf_init", InitCheck(), "initialisation"),
    "l1_w": Param(0.0, number(0.0, MAX_WEIGHT), "ℓ1 on W"),
    "l2_w": Param(0.0, number(-MAX_WEIGHT, MAX_WEIGHT), "ℓ2 on W (< 0 only in the topic form)"),
    "l1_t": Param(0.0, number(0.0, MAX_WEIGHT), "ℓ1 on T"),
    "l2_t": Param(0.0, number(-MAX_WEIGHT, MAX_WEIGHT), "ℓ2 on T (< 0 only in the topic form)"),
    "loss": Param("auto", choice("auto", "full", "observed"),
                  "auto: observed if the data holds NaN (= unobserved), else full"),
    "init_iterations": Param(None, optional(integer(1, MAX_ITERATIONS), "iterations"),
                             "sweeps of PD-NMF-Init step 9"),
    "local_iterations": Param(200, integer(1, MAX_ITERATIONS),
                              "cap on the local RRI-NMF of step 2"),
    "svd_iterations": Param(20, integer(1, MAX_ITERATIONS),
                            "init = pd_svd: PD-SVD's power iterations"),
    "svd_variant": Param("secure_sum", choice(*SVD_VARIANTS), "init = pd_svd: PD-SVD variant"),
}

DP_PD_NMF_PARAMS: dict[str, Param] = {
    "dp_epsilon": Param(None, optional(number(0.0, 1e6, strict_low=True), "no DP"),
                        "DP-PD-NMF (thesis §3.3): ε per SecureSum of the sweeps"),
    "dp_delta": Param(0.01, number(0.0, 1.0, strict_low=True, strict_high=True),
                      "DP-PD-NMF: δ per SecureSum"),
    "dp_clip": Param(1.0, number(0.0, MAX_WEIGHT, strict_low=True),
                     "DP-PD-NMF: L2 bound C on a row's statistic (sensitivity Δ = C)"),
}
"""DP-PD-NMF's keys (:mod:`algorithms.nmf.dp_pd_nmf`), of ``pd_nmf`` and ``pd_nmf_uplift``."""

PD_NMF = Algorithm(
    name="pd_nmf",
    summary="PD-NMF: PD-NMF-Init then PD-NMF-Iter over SecureSum; W^(m) never leaves party m",
    reference="Tsikhanovich thesis (seed 001), §2.2, Algorithms 7 and 8; Theorem 2",
    params={
        **NMF_PARAMS,
        "secure_sum": Param("secure_sum", choice("secure_sum", "secagg"),
                            "secure_sum | secagg (dropout-tolerant, with an aggregator)"),
        "secagg_threshold": Param(0, integer(0, MAX_PARTIES), "secagg: t (0: ⌊M/2⌋ + 1)"),
        "secagg_timeout_s": Param(1.0, number(0.0, MAX_TIMEOUT_S, strict_low=True),
                                  "secagg: the aggregator's wait per round (simulated s)"),
        **DP_PD_NMF_PARAMS,
    },
    run="sim.experiments.nmf.pd_nmf:run_entry",
    estimate="sim.experiments.nmf.pd_nmf:nmf_workload",
    data_kind="topics",
    nonnegative=True,
    allow_missing=True,
    other_roles="sim.experiments.nmf.pd_nmf:pd_nmf_roles",
)

RRI_NMF = Algorithm(
    name="rri_nmf",
    summary="centralized RRI-NMF on the pooled data (the reference PD-NMF must equal)",
    reference="Tsikhanovich thesis (seed 001), Algorithm 2 and Eq. 2.31",
    params=NMF_PARAMS,
    run="sim.experiments.nmf.pd_nmf:run_rri_entry",
    estimate="sim.experiments.nmf.pd_nmf:estimate_rri_nmf",
    data_kind="topics",
    nonnegative=True,
    allow_missing=True,
)


COMPARED = INITS
"""What ``pd_nmf_init_comparison`` may compare: every initialisation of PD-NMF."""

DEFAULT_INITS = COMPARED[:4]
"""What ``inits`` compares when the scenario does not say (``pd_svd`` is opt-in)."""

MAX_COMPARISON_TRIALS = 1000


@dataclass(frozen=True)
class InitsCheck:
    """``inits``: a non-empty list of distinct initialisations to compare."""

    def __call__(self, name: str, value: Any) -> list[str]:
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise ScenarioError(f"{name} = {value!r} must be a list of initialisations")
        unknown = [v for v in value if v not in COMPARED]
        if unknown:
            raise ScenarioError(f"{name} names {unknown}; choose from {', '.join(COMPARED)}")
        if len(set(value)) != len(value):
            raise ScenarioError(f"{name} = {value!r} repeats an initialisation; list each once")
        return list(value)

    def describe(self) -> str:
        return "a list of " + " | ".join(COMPARED)

INIT_COMPARISON_PARAMS = {**NMF_PARAMS,
          "inits": Param(list(DEFAULT_INITS), InitsCheck(), "initialisations to compare"),
          "trials": Param(10, integer(1, MAX_COMPARISON_TRIALS), "trials per initialisation")}

INIT_COMPARISON = Algorithm(
    name="pd_nmf_init_comparison",
    summary="objective vs sweep for each PD-NMF initialisation, mean ± sd over trials",
    reference="Tsikhanovich thesis (seed 001), §2.4, Figures 2.4 and 2.5",
    params=INIT_COMPARISON_PARAMS,
    run="sim.experiments.nmf.init_comparison:run",
    estimate="sim.experiments.nmf.init_comparison:estimate",
    data_kind="topics",
    nonnegative=True,
    allow_missing=True,
    other_roles="sim.experiments.nmf.init_comparison:roles",
)


def open_unit(name: str, value: Any) -> float:
    v = number()(name, value)
    if not 0 < v < 1:
        hint = (" (the Gaussian mechanism's calibration, Def. 3, holds for ε < 1; use a "
                "per-iteration ε in (0, 1))" if name.endswith("epsilon") else ", e.g. 1e-5")
        raise ScenarioError(f"{name} = {value!r} must lie in (0, 1){hint}")
    return v


def check_epsilons(name: str, value: Any) -> list[float]:
    if not isinstance(value, list) or not value:
        raise ScenarioError(f"{name} = {value!r} must be a non-empty list of ε in (0, 1)")
    out = [open_unit(f"{name}[{i}]", v) for i, v in enumerate(value)]
    if len(set(out)) != len(out):
        raise ScenarioError(f"{name} = {value!r} repeats a value")
    return sorted(out)

OPEN_UNIT = described(open_unit, "number, 0 < x < 1")

DP_POSITIVE = number(0.0, MAX_WEIGHT, strict_low=True)

DP_COMMON: dict[str, Param] = {
    "k": Param(5, integer(1, MAX_RANK), "latent dimension K"),
    "iterations": Param(100, integer(1, MAX_ITERATIONS), "noisy releases T_iter"),
    "delta": Param(1e-5, OPEN_UNIT, "δ of every release"),
    "lam": Param(0.1, number(0.0, MAX_WEIGHT), "λ, the ℓ1 weight on R"),
    "bound": Param(1.0, DP_POSITIVE, "M, the ℓ∞ bound on R's entries"),
    "eta_w": Param("auto", auto_or(DP_POSITIVE, "η_H/1e4, §4"), "W step"),
    "eta_h": Param("auto", auto_or(DP_POSITIVE, "N/‖WᵀW‖₂"), "H step"),
    "outliers": Param(True, boolean(), "update R (Δ_B = 4/N) or keep R = 0 (Δ_B = 2/N)"),
    "inner_iterations": Param(10, integer(1, MAX_ITERATIONS), "(H, R) rounds per release"),
    "w_steps": Param(1, integer(1, MAX_ITERATIONS), "W steps per release"),
    "init": Param("nndsvd", choice("nndsvd", "random"), "nndsvd (paper) | random (private)"),
    "planted_fraction": Param(0.0, number(0.0, 1.0), "fraction of samples contaminated"),
    "planted_entries": Param(0.7, number(0.0, 1.0), "fraction of a sample's entries contaminated"),
    "variant": Param("prg", choice(*VARIANTS), "SecureSum variant among the curators"),
}

DP_PARAMS = {**DP_COMMON, "epsilon": Param(0.5, OPEN_UNIT, "ε per release")}

DP_SWEEP_PARAMS = {
    **DP_COMMON,
    "epsilons": Param([0.1, 0.3, 0.5, 0.7, 0.9],
                      described(check_epsilons, "non-empty list of distinct numbers, 0 < x < 1"),
                      "ε per release"),
    "trials": Param(2, integer(1, MAX_TRIALS), "private runs per ε"),
}

DP_NMF_OUTLIERS = Algorithm(
    name="dp_nmf_outliers",
    summary="DP robust NMF with outliers: curators release noisy statistics, the analyst learns W",
    reference="Saha & Imtiaz (seed 000), Algorithm 2, §3.2–3.3",
    params=DP_PARAMS,
    run="sim.experiments.nmf.dp_nmf_outliers:run",
    estimate="sim.experiments.nmf.dp_nmf_outliers:estimate",
    data_kind="topics",
    nonnegative=True,
    min_parties=1,
    other_roles=lambda params: ("analyst",),
)

DP_NMF_OUTLIERS_EPSILON = Algorithm(
    name="dp_nmf_outliers_epsilon",
    summary="objective of DP robust NMF against ε, with the non-private level (gap shrinks)",
    reference="Saha & Imtiaz (seed 000), §4, Figs. 4–8",
    params=DP_SWEEP_PARAMS,
    run="sim.experiments.nmf.dp_nmf_outliers:run_sweep",
    estimate="sim.experiments.nmf.dp_nmf_outliers:estimate_sweep",
    data_kind="topics",
    nonnegative=True,
    min_parties=1,
    other_roles=lambda params: ("analyst",),
)

DPNMF_COMPARISON_PARAMS = {
    "kind": Param("ratings", choice("ratings", "topics"),
                  "ratings (Table 4: RMSE, ML-1M-shaped) | topics (Table 3: UMass coherence)"),
    "epsilons": Param([0.3, 0.5, 0.7],
                      described(check_epsilons, "non-empty list of distinct numbers, 0 < x < 1"),
                      "ε per release"),
    "trials": Param(3, integer(1, MAX_TRIALS), "draws of the data, each with its own noise"),
    "iterations": Param(100, integer(1, MAX_ITERATIONS), "noisy releases of each method"),
    "scale": Param(1.0, number(0.0, 1.0, strict_low=True),
                   "fraction of the shaped data's samples and features (at least 5 per factor)"),
}

DPNMF_COMPARISON = Algorithm(
    name="dpnmf_comparison",
    summary="DP robust NMF vs the DPNMF baseline: RMSE / coherence against ε (one curator)",
    reference="Saha & Imtiaz (seed 000), §4, Tables 3–4; DPNMF: Ran et al. (2022)",
    params=DPNMF_COMPARISON_PARAMS,
    run="sim.experiments.nmf.dpnmf_comparison:run",
    estimate="sim.experiments.nmf.dpnmf_comparison:estimate",
    data_kind="topics",
    nonnegative=True,
    min_parties=1,
)

DP_DATASETS = ("guardian", "uci_news", "rcv1", "tdt2", "yaleb", "cbcl")
"""Seed 000's Table 2, text sets then face sets (shapes: :mod:`sim.experiments.nmf.
dp_nmf_datasets`)."""


def check_datasets(name: str, value: Any) -> tuple[str, ...]:
    names = [value] if isinstance(value, str) else value
    if (not isinstance(names, list) or not names
            or not all(isinstance(v, str) and v in DP_DATASETS for v in names)
            or len(set(names)) != len(names)):
        raise ScenarioError(f"{name} = {value!r} must be one of {', '.join(DP_DATASETS)}, "
                            "or a list of distinct ones")
    return tuple(names)


DP_DATASETS_PARAMS = {
    "datasets": Param(list(DP_DATASETS),
                      described(check_datasets, " | ".join(DP_DATASETS)
                                + ", or a list of distinct ones"),
                      "Table 2's data sets, drawn synthetically in their shapes"),
    "epsilons": Param([0.1, 0.3, 0.5, 0.9],
                      described(check_epsilons, "non-empty list of distinct numbers, 0 < x < 1"),
                      "ε per release"),
    "trials": Param(3, integer(1, MAX_TRIALS), "private runs per set and ε, each its own noise"),
    "iterations": Param(100, integer(1, MAX_ITERATIONS), "noisy releases of each run"),
    "cells": Param(250_000, integer(1_000, 50_000_000),
                   "N·D budget: a larger set shrinks by s on N and s² on D (noise ratio kept)"),
}

DP_NMF_DATASETS = Algorithm(
    name="dp_nmf_datasets",
    summary="DP robust NMF on Table 2's six data sets (shaped): overall ε and gap per ε",
    reference="Saha & Imtiaz (seed 000), §4, Table 2, Figs. 2–6",
    params=DP_DATASETS_PARAMS,
    run="sim.experiments.nmf.dp_nmf_datasets:run",
    estimate="sim.experiments.nmf.dp_nmf_datasets:estimate",
    data_kind="topics",
    nonnegative=True,
    min_parties=1,
)


MISSING_RULES = CORRECTIVE_MISSING_RULES
"""As :data:`algorithms.vocabulary.CORRECTIVE_MISSING_RULES`."""

ATTACK_MODELS = ("profile_injection", "informed")

fraction_param = number(0.0, 1.0, strict_low=True, strict_high=True)
"""A scenario check: a number in (0, 1) (:mod:`sim.experiments.nmf.corrective_nmf_tables` too)."""

CORRECTIVE_POSITIVE = number(0.0, MAX_WEIGHT, strict_low=True)

CORRECTIVE_COMMON: dict[str, Param] = {
    "k": Param(5, integer(1, MAX_RANK), "rank k"),
    "iterations": Param(300, integer(1, MAX_ITERATIONS), "iterations of Algorithm 1"),
    "missing": Param("ignore", choice(*MISSING_RULES), "ignore | replace (missing entries)"),
    "lam": Param(None, optional(CORRECTIVE_POSITIVE, "1, or from p and σ"), "λ"),
    "corrupt_probability": Param(None, optional(fraction_param, "λ is given"),
                                 "p of §2.3, with noise_sd"),
    "noise_sd": Param(None, optional(CORRECTIVE_POSITIVE, "λ is given"),
                      "σ of §2.3, with corrupt_probability"),
    "holdout": Param(0.1, fraction_param, "fraction of each genuine user's ratings held out"),
    "variant": Param("prg", choice(*VARIANTS), "SecureSum variant"),
}

CORRECTIVE_PARAMS = {
    **CORRECTIVE_COMMON,
    "mode": Param("ignore", choice(*CORRECTIVE_MODES),
                  "standard | ignore | replace (corrupt entries)"),
    "interpolate": Param(True, boolean(), "replace-corrupt with the 0.99^t interpolation"),
}

CORRECTIVE_NMF = Algorithm(
    name="corrective_nmf",
    summary="NMF under adversarial noise: masked updates, corrupt entries ignored or replaced",
    reference="Ballen (seed 002), Algorithm 1, §2–3.5",
    params=CORRECTIVE_PARAMS,
    run="sim.experiments.nmf.corrective_nmf:run",
    estimate="sim.experiments.nmf.corrective_nmf:estimate",
    data_kind="ratings",
    nonnegative=True,
    allow_missing=True,
    attack="sim.experiments.nmf.corrective_nmf:check_attack",
)


TABLES = ("both", "1", "2")
BUDGETS = ("iterations", "time")

REPLACE_BASES = CORRECTIVE_REPLACE_BASES
"""As :data:`algorithms.vocabulary.CORRECTIVE_REPLACE_BASES`."""

TABLES_PARAMS = {
    **{key: CORRECTIVE_COMMON[key]
       for key in ("lam", "corrupt_probability", "noise_sd", "holdout")},
    "k": Param(20, integer(1, MAX_RANK), "rank k (the paper: 20)"),
    "iterations": Param(50, integer(1, MAX_ITERATIONS),
                        "iterations of every method (the common budget)"),
    "repetitions": Param(5, integer(1, MAX_TRIALS), "repetitions averaged (the paper: 20)"),
    "table": Param("both", choice(*TABLES), "1 (Models 1–2), 2 (Models 3–4) or both"),
    "flip_probability": Param(0.1, fraction_param, "Model 2: probability a training rating flips"),
    "replace_base": Param("original", choice(*REPLACE_BASES),
                          "replace-corrupt from the original V (digest item 51) or the running V"),
    "fill": Param("every", choice(*CORRECTIVE_FILLS),
                  "Algorithm 1's replace-missing fill: every iteration, or once (step 4 read "
                  "literally: filled entries are then marked and replaced as data)"),
    "budget": Param("iterations", choice(*BUDGETS),
                    "the common budget: iterations, or modelled time (operation counts)"),
}

CORRECTIVE_NMF_COMPARISON = Algorithm(
    name="corrective_nmf_comparison",
    summary="Tables 1–2: five masked NMF methods under noise Models 1–2 and attacks 3–4",
    reference="Ballen (seed 002), §3, Tables 1–2",
    params=TABLES_PARAMS,
    run="sim.experiments.nmf.corrective_nmf_tables:run",
    estimate="sim.experiments.nmf.corrective_nmf_tables:estimate",
    data_kind="movielens",
    nonnegative=True,
    allow_missing=True,
    min_parties=1,
    attack="sim.experiments.nmf.corrective_nmf_tables:check_table_attack",
)
