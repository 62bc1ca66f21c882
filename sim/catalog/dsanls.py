"""Catalogue entries of Qian et al. (seed 004): DSANLS, Syn-SD, Syn-SSD, Asyn-SD, Asyn-SSD
and their comparison.

Declarations only (:mod:`sim.catalog`): names, keys, ranges and vocabularies as data, each
entry's code named ``"module:function"`` and imported when it runs. Nothing here imports
numpy; the experiment modules read their vocabularies from here.
"""

from __future__ import annotations

from typing import Any

from protocols.errors import ScenarioError
from sim.catalog.sums import VARIANTS
from sim.entry import (
    MAX_ITERATIONS,
    MAX_RANK,
    MAX_WEIGHT,
    Algorithm,
    Param,
    choice,
    described,
    integer,
    number,
)

SKETCHES = ("gaussian", "subsampling")

SOLVERS = ("rcd", "pgd")

ALLREDUCE = ("secure_sum", "plain", "ring")


MAX_GFLOPS = 1e6
"""Largest node speed (GFLOP/s) for the simulated clock."""


def sketch_size(name: str, value: Any) -> int | float | None:
    """A sketch size: an integer ≥ 1 (columns) or a fraction in (0, 1]; None = the default."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ScenarioError(f"{name} = {value!r} must be a number of columns (an integer ≥ 1) "
                            "or a fraction in (0, 1] of the dimension it sketches")
    if isinstance(value, int):
        if value < 1:
            raise ScenarioError(f"{name} = {value} must be ≥ 1 (columns of the sketch)")
        return value
    if not 0 < value <= 1:
        raise ScenarioError(f"{name} = {value} must be an integer number of columns, or a "
                            "fraction in (0, 1] of the dimension it sketches")
    return float(value)


def check_positive(name: str, value: Any) -> float:
    v = number()(name, value)
    if not 0 < v <= MAX_WEIGHT:
        raise ScenarioError(f"{name} = {value} must be > 0 (and ≤ {MAX_WEIGHT:g})")
    return v

positive = described(check_positive, f"number, 0 < x ≤ {MAX_WEIGHT:g}")
"""A finite number in (0, MAX_WEIGHT]."""

SKETCH_SIZE = described(sketch_size, "integer ≥ 1 (columns) | number, 0 < x ≤ 1 (a fraction of "
                        "the dimension sketched)")

OPTIONAL_SKETCH_SIZE = described(sketch_size, "as sketch_size; left out: sketch_size")

SKETCH_PARAMS: dict[str, Param] = {
    "k": Param(10, integer(1, MAX_RANK), "rank, 1 ≤ k ≤ min(m, n)"),
    "sketch": Param("subsampling", choice(*SKETCHES), "gaussian | subsampling"),
    "sketch_size": Param(0.1, SKETCH_SIZE, "columns of a sketch, or a fraction of the "
                         "dimension it sketches"),
    "sketch_size_u": Param(None, OPTIONAL_SKETCH_SIZE, "d' of the sketch on U (of the m features)"),
    "sketch_size_v": Param(None, OPTIONAL_SKETCH_SIZE, "d of the sketch on V (of the samples)"),
    "solver": Param("rcd", choice(*SOLVERS), "rcd (Algorithm 3) | pgd (Eq. 14)"),
    "alpha": Param(1.0, positive, "μ_t = α + βt: α > 0"),
    "beta": Param(1.0, number(0.0, MAX_WEIGHT), "μ_t = α + βt: β ≥ 0"),
    "gflops": Param(1.0, number(0.0, MAX_GFLOPS), "node speed for local work; 0: free"),
}

REDUCE_PARAMS: dict[str, Param] = {
    "allreduce": Param("secure_sum", choice(*ALLREDUCE), "secure_sum | plain | ring"),
    "variant": Param("prg", choice(*VARIANTS), "SecureSum variant"),
}

DSANLS_PARAMS: dict[str, Param] = {
    **SKETCH_PARAMS,
    **REDUCE_PARAMS,
    "iterations": Param(100, integer(1, MAX_ITERATIONS), "T"),
    "setting": Param("general", choice("general", "federated"), "general | federated"),
}

DSANLS = Algorithm(
    name="dsanls",
    summary="DSANLS: distributed sketched ANLS, general or federated setting (Algorithm 2)",
    reference="Qian et al. (seed 004), §3.3 Algorithms 2-3 and §4.1 (modified DSANLS)",
    params=DSANLS_PARAMS,
    run="sim.experiments.dsanls.dsanls:run",
    estimate="sim.experiments.dsanls.dsanls:dsanls_workload",
    data_kind="uniform",
    nonnegative=True,
)


LOOP_PARAMS: dict[str, Param] = {
    "outer": Param(20, integer(1, MAX_ITERATIONS),
                   "T_1 (synchronous); rounds per client (asynchronous)"),
    "inner": Param(5, integer(1, MAX_ITERATIONS),
                   "T_2 (synchronous); T, local iterations per round"),
}

UNSKETCHED = {key: SKETCH_PARAMS[key] for key in ("k", "solver", "alpha", "beta", "gflops")}


def check_time_budget(name: str, value: Any) -> float | None:
    return None if value is None else positive(name, value)

ASYNC_PARAMS: dict[str, Param] = {
    "rho": Param(1.0, positive, "ω_t = ρ/(ρ + t), ρ > 0"),
    "time_budget_s": Param(None, described(check_time_budget,
                                           f"{positive.describe()}; left out: no budget"),
                           "server stops after this simulated time"),
}

LABELS = {("syn_sd", ""): "Syn-SD", ("syn_ssd", "u"): "Syn-SSD-U",
          ("syn_ssd", "v"): "Syn-SSD-V", ("syn_ssd", "uv"): "Syn-SSD-UV",
          ("asyn_sd", ""): "Asyn-SD", ("asyn_ssd", "v"): "Asyn-SSD-V"}


def sketch_on_check(*allowed: str) -> Any:
    def check(name: str, value: Any) -> str:
        if value not in allowed:
            raise ScenarioError(f"{name} = {value!r} is unknown; use one of "
                                f"{', '.join(allowed)}" + (
                                    " (U cannot be sketched asynchronously: a shared S_2 needs "
                                    "a synchronous All-Reduce)" if allowed == ("v",) else ""))
        return str(value)

    return check


def secure_entry(name: str, summary: str, reference: str, params: dict[str, Param]) -> Algorithm:
    """One of the secure variants: run and estimated by the entry's name
    (:func:`sim.experiments.dsanls.secure_nmf.run`,
    :func:`~sim.experiments.dsanls.secure_nmf.estimate`)."""
    roles = ("server",) if name.startswith("asyn") else ()
    return Algorithm(name=name, summary=summary, reference=reference, params=params,
                     run="sim.experiments.dsanls.secure_nmf:run",
                     estimate="sim.experiments.dsanls.secure_nmf:estimate", data_kind="uniform",
                     nonnegative=True, other_roles=lambda params: roles)

SKETCHED = {key: SKETCH_PARAMS[key] for key in SKETCH_PARAMS if key not in UNSKETCHED}

SYN_SD = secure_entry(
    "syn_sd", "Syn-SD: local NMF with a local copy of U, averaged every T_2 iterations",
    "Qian et al. (seed 004), §4.2 Algorithm 4",
    {**UNSKETCHED, **LOOP_PARAMS, **REDUCE_PARAMS})

SYN_SSD = secure_entry(
    "syn_ssd", "Syn-SSD(-U/-V/-UV): Syn-SD with sketched updates and All-Reduced S_2U",
    "Qian et al. (seed 004), §4.2 Algorithm 5",
    {**UNSKETCHED, **LOOP_PARAMS, **SKETCHED, **REDUCE_PARAMS,
     "sketch_on": Param("uv", described(sketch_on_check("u", "v", "uv"), "u | v | uv"),
                        "u | v | uv")})

ASYN_SD = secure_entry(
    "asyn_sd", "Asyn-SD: clients send local copies of U to a server that relaxes them in",
    "Qian et al. (seed 004), §4.3 Algorithms 6 and 7",
    {**UNSKETCHED, **LOOP_PARAMS, **ASYNC_PARAMS})

ASYN_SSD = secure_entry(
    "asyn_ssd", "Asyn-SSD(-V): Asyn-SD with the clients' U update sketched on V",
    "Qian et al. (seed 004), §4.3 Algorithms 6 and 7 (line 7 from Algorithm 5)",
    {**UNSKETCHED, **LOOP_PARAMS, **SKETCHED, **ASYNC_PARAMS,
     "sketch_on": Param("v", described(sketch_on_check("v"), "v"),
                        "v (U cannot be sketched asynchronously)")})


COMPARED_METHODS = {label: key for key, label in LABELS.items()}
"""The six methods by label: "Syn-SSD-UV" -> ("syn_ssd", "uv")."""

MAX_OUTER = 100_000


def check_methods(name: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(v in COMPARED_METHODS for v in value):
        raise ScenarioError(f"{name} = {value!r} must be a non-empty list of "
                            f"{', '.join(COMPARED_METHODS)}")
    if len(set(value)) != len(value):
        raise ScenarioError(f"{name} = {value!r} names a method twice")
    return tuple(value)

COMPARISON_PARAMS: dict[str, Param] = {
    **SKETCH_PARAMS,
    **REDUCE_PARAMS,
    "inner": LOOP_PARAMS["inner"],
    "rho": Param(1.0, positive, "ω_t = ρ/(ρ + t), ρ > 0 (asynchronous server)"),
    "time_budget_s": Param(1.0, positive, "simulated seconds every method runs"),
    "methods": Param(list(COMPARED_METHODS),
                     described(check_methods,
                               "non-empty list of distinct " + " | ".join(COMPARED_METHODS)),
                     "which of the six methods to run"),
}

SECURE_NMF_COMPARISON = Algorithm(
    name="secure_nmf_comparison",
    summary="relative error vs simulated time of the six secure NMF methods (Figs. 6, 7)",
    reference="Qian et al. (seed 004), §5.3, Figs. 6 and 7",
    params=COMPARISON_PARAMS,
    run="sim.experiments.dsanls.secure_nmf_comparison:run",
    estimate="sim.experiments.dsanls.secure_nmf_comparison:estimate",
    data_kind="uniform",
    nonnegative=True,
    other_roles="sim.experiments.dsanls.secure_nmf_comparison:roles",
)


SKETCHED_METHODS = {"DSANLS/S": ("subsampling", "rcd"), "DSANLS/G": ("gaussian", "rcd"),
                    "DSANLS/S-PGD": ("subsampling", "pgd"), "DSANLS/G-PGD": ("gaussian", "pgd")}
"""DSANLS's labels: (sketch, solver)."""
GATHERED_METHODS = ("MU", "HALS", "ANLS/BPP")
"""The baselines' labels."""
BASELINE_METHODS = (*SKETCHED_METHODS, *GATHERED_METHODS)


def check_baseline_methods(name: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(v in BASELINE_METHODS for v in value):
        raise ScenarioError(f"{name} = {value!r} must be a non-empty list of "
                            f"{', '.join(BASELINE_METHODS)}")
    if len(set(value)) != len(value):
        raise ScenarioError(f"{name} = {value!r} names a method twice")
    return tuple(value)


BASELINE_PARAMS: dict[str, Param] = {
    **{key: param for key, param in SKETCH_PARAMS.items() if key not in ("sketch", "solver")},
    "iterations": Param(30, integer(1, MAX_ITERATIONS), "T of MU, HALS and ANLS/BPP"),
    "sketched_iterations": Param(100, integer(1, MAX_ITERATIONS), "T of the DSANLS runs"),
    "allreduce": Param("plain", choice("plain", "ring"),
                       "the DSANLS runs' All-Reduce: plain (to every peer) | ring (MPI's)"),
    "time_budget_s": Param(0.0, number(0.0, MAX_WEIGHT),
                           "simulated seconds of the time comparison; 0: the shortest run's"),
    "methods": Param(list(BASELINE_METHODS),
                     described(check_baseline_methods,
                               "non-empty list of distinct " + " | ".join(BASELINE_METHODS)),
                     "which methods to run"),
}


NMF_BASELINES = Algorithm(
    name="nmf_baselines",
    summary="DSANLS (S/G, RCD/PGD) vs distributed MU, HALS, ANLS/BPP: error vs time and "
            "iterations (Figs. 2-5)",
    reference="Qian et al. (seed 004), §5.2, Figs. 2-5; Lee & Seung 2001; Cichocki & Phan "
              "2009; Kim & Park 2011",
    params=BASELINE_PARAMS,
    run="sim.experiments.dsanls.nmf_baselines:run",
    estimate="sim.experiments.dsanls.nmf_baselines:estimate",
    data_kind="uniform",
    nonnegative=True,
)
