"""Catalogue entries of CAPE (seed 003): averaging, capePCA, capeAGN and their sweeps.

Declarations only (:mod:`sim.catalog`): names, keys, ranges and vocabularies as data, each
entry's code named ``"module:function"`` and imported when it runs. Nothing here imports
numpy; the experiment modules read their vocabularies from here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from algorithms.vocabulary import CAPE_MODELS, CAPE_PCA_ORDERS, CAPE_TENSOR_MODES
from protocols.errors import ScenarioError
from protocols.vocabulary import CAPE_NOISE_KINDS, CAPE_SCHEMES
from sim.entry import (
    MAX_RANK,
    MAX_TRIALS,
    MAX_WEIGHT,
    Algorithm,
    Param,
    boolean,
    choice,
    described,
    integer,
    number,
)

# The vocabulary of the CAPE entries: the libraries' own tuples (numpy-free modules).
NOISE_KINDS = CAPE_NOISE_KINDS
SCHEMES = CAPE_SCHEMES
ORDERS = CAPE_PCA_ORDERS
MODELS = CAPE_MODELS
MODES = CAPE_TENSOR_MODES

MAX_EPSILON = 1000.0

MAX_SAMPLES_PER_SITE = 100_000_000

EPSILON = number(0.0, MAX_EPSILON, strict_low=True)  # 0 < ε ≤ 1000

DELTA = number(0.0, 1.0, strict_low=True, strict_high=True)  # 0 < δ < 1


def epsilon_param(default: float) -> Param:
    return Param(default, EPSILON, "ε")


def delta_param(default: float) -> Param:
    return Param(default, DELTA, "δ")

PRIVACY_PARAMS: dict[str, Param] = {
    "epsilon": epsilon_param(1.0),
    "delta": delta_param(0.01),
    "noise": Param("float", choice(*NOISE_KINDS),
                   "float (Gaussian in float64, rounded to the grid) | discrete (on the grid)"),
    "aggregator_noise": Param(True, boolean(), "the aggregator's f_s (JSTSP Algorithm 1)"),
}

TRIAL_PARAMS: dict[str, Param] = {
    "trials": Param(10, integer(1, MAX_TRIALS), "independent runs averaged"),
    "samples_per_site": Param(0, integer(0, MAX_SAMPLES_PER_SITE),
                              "N_s rows per site drawn at random each trial (0: the shards)"),
}


def cape_roles(params: Mapping[str, Any]) -> tuple[str, ...]:
    """The participants beyond the sites of a run that simulates the CAPE scheme."""
    return ("aggregator", "noise generator")


def scheme_param() -> Param:
    return Param("cape", choice(*SCHEMES), "cape | conventional")


def check_list(name: str, value: Any, check: Callable[[str, Any], Any]) -> list[Any]:
    """A non-empty list whose every item passes ``check``."""
    if not isinstance(value, list) or not value:
        raise ScenarioError(f"{name} = {value!r} must be a non-empty list")
    return [check(f"{name}[{i}]", v) for i, v in enumerate(value)]

SWEEP_LABELS = {"epsilon": "ε", "delta": "δ", "samples_per_site": "samples per site N_s"}


def check_values(name: str, value: Any) -> list[Any]:
    return check_list(name, value, lambda _n, v: v)


def sweep_params(values: list[Any]) -> dict[str, Param]:
    """The keys ``sweep`` (which key) and ``values`` (its values; each checked as that key by
    :func:`sweep_points`), with default ``values``."""
    return {"sweep": Param("epsilon", choice(*SWEEP_LABELS), "the swept key"),
            "values": Param(values, described(check_values,
                                                 "non-empty list of values of the swept key"),
                            "its values")}


MEAN_PARAMS: dict[str, Param] = {
    **PRIVACY_PARAMS,
    "trials": Param(200, integer(2, MAX_TRIALS), "releases of the same means"),
    "scheme": scheme_param(),
    "norm_bound": Param(1.0, number(0.0, MAX_WEIGHT, strict_low=True), "B: every row has ‖x‖₂ ≤ B"),
}

CAPE_MEAN = Algorithm(
    name="cape_mean",
    summary="CAPE averaging of the sites' means: aggregate vs pooled variance, site releases, "
            "collusion",
    reference="Imtiaz & Sarwate 2018 (seed 003), §3, eq. (2), Lemma 1, Theorem 1, §3.1",
    params=MEAN_PARAMS,
    run="sim.experiments.cape.cape_mean:run",
    estimate="sim.experiments.cape.cape_mean:estimate",
    data_kind="uniform",
    other_roles="sim.experiments.cape.cape_mean:roles",
)


OTD_METHODS = ("cape", "conventional", "local", "nonprivate", "random")

OTD_PARAMS: dict[str, Param] = {
    "model": Param("mog", choice(*MODELS), "stm | mog"),
    "k": Param(5, integer(1, MAX_RANK), "components K < D"),
    **PRIVACY_PARAMS,
    **TRIAL_PARAMS,
    "sensitivity": Param("paper", choice("paper", "replace_one"), "MOG sensitivity bounds"),
    "tpm": Param("paper", choice(*MODES), "tensor power method: paper | robust"),
}

OTD_SWEEP_PARAMS: dict[str, Param] = {**OTD_PARAMS, **sweep_params([0.1, 0.5, 1.0, 5.0])}

CAPE_OTD = Algorithm(
    name="cape_otd",
    summary="capeAGN (CAPE whitening + projected tensor) vs conventional, local, non-private",
    reference="Imtiaz & Sarwate 2018 (seed 003), Algorithm 2, Theorem 2, §6.2",
    params=OTD_PARAMS,
    run="sim.experiments.cape.cape_otd:run",
    estimate="sim.experiments.cape.cape_otd:estimate",
    data_kind="mog",
    other_roles=cape_roles,
)

CAPE_OTD_SWEEP = Algorithm(
    name="cape_otd_sweep",
    summary="recovery error of capeAGN and its baselines vs ε, δ or samples per site",
    reference="Imtiaz & Sarwate 2018 (seed 003), Figures 3–5",
    params=OTD_SWEEP_PARAMS,
    run="sim.experiments.cape.cape_otd:run_sweep",
    estimate="sim.experiments.cape.cape_otd:estimate",
    data_kind="mog",
    other_roles=cape_roles,
)


PCA_METHODS = ("cape", "pooled_ag", "conventional", "dpdispca", "local", "nonprivate")

PREPROCESS = ("center_scale", "none")

PCA_PARAMS: dict[str, Param] = {
    "k": Param(5, integer(1, MAX_RANK), "number of principal directions K ≤ D"),
    **PRIVACY_PARAMS,
    **TRIAL_PARAMS,
    "sensitivity": Param("paper", choice("paper", "replace_one"), "Δ = 1/N_s or √2/N_s"),
    "order": Param("eigenvalue", choice(*ORDERS), "eigenvector order"),
    "preprocess": Param("center_scale", choice(*PREPROCESS),
                        "centre and divide by the largest norm (non-private, as the paper)"),
}

PCA_SWEEP_PARAMS: dict[str, Param] = {**PCA_PARAMS, **sweep_params([0.1, 0.5, 1.0, 5.0, 10.0])}

CAPE_PCA = Algorithm(
    name="cape_pca",
    summary="capePCA (CAPE on the second-moment matrices) vs pooled AG, conventional, local",
    reference="Imtiaz & Sarwate 2018 (seed 003), Algorithm 1, Theorem 1, §6.1",
    params=PCA_PARAMS,
    run="sim.experiments.cape.cape_pca:run",
    estimate="sim.experiments.cape.cape_pca:estimate",
    data_kind="spiked",
    other_roles=cape_roles,
)

CAPE_PCA_SWEEP = Algorithm(
    name="cape_pca_sweep",
    summary="captured energy of capePCA and its baselines vs ε, δ or samples per site",
    reference="Imtiaz & Sarwate 2018 (seed 003), Figure 2",
    params=PCA_SWEEP_PARAMS,
    run="sim.experiments.cape.cape_pca:run_sweep",
    estimate="sim.experiments.cape.cape_pca:estimate",
    data_kind="spiked",
    other_roles=cape_roles,
)
