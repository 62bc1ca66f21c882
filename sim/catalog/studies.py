"""Catalogue entries of the studies: π-KSDP against party size (thesis §3.1–3.4) and each
party's learning uplift from PD-NMF (thesis §3.3.1).

Declarations only (:mod:`sim.catalog`): names, keys, ranges and vocabularies as data, each
entry's code named ``"module:function"`` and imported when it runs. Nothing here imports
numpy; the experiment modules read their vocabularies from here.
"""

from __future__ import annotations

from typing import Any

from protocols.errors import ScenarioError
from sim.catalog.nmf import DP_PD_NMF_PARAMS, NMF_PARAMS
from sim.entry import (
    MAX_RANK,
    Algorithm,
    Param,
    choice,
    described,
    integer,
    number,
)

MECHANISMS = ("one_bit_sum", "pd_nmf", "pd_svd", "sigma_revealing_svd")


def check_mechanisms(name: str, value: Any) -> tuple[str, ...]:
    names = [value] if isinstance(value, str) else value
    if (not isinstance(names, list) or not names
            or not all(isinstance(v, str) and v in MECHANISMS for v in names)
            or len(set(names)) != len(names)):
        raise ScenarioError(f"{name} = {value!r} must be one of {', '.join(MECHANISMS)}, or a "
                            "list of distinct ones")
    if "one_bit_sum" in names and len(names) > 1:
        raise ScenarioError(f"{name} = {value!r}: one_bit_sum samples bits, not documents; "
                            "run it on its own")
    return tuple(names)


def check_sizes(name: str, value: Any) -> tuple[int, ...]:
    if (not isinstance(value, list) or not value
            or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 2 for v in value)
            or len(set(value)) != len(value)):
        raise ScenarioError(f"{name} = {value!r} must be a list of distinct database sizes ≥ 2")
    return tuple(sorted(value))


def check_probability(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
        raise ScenarioError(f"{name} = {value!r} must be a number in (0, 1)")
    return float(value)

KSDP_PARAMS = {
    "mechanism": Param("pd_nmf", described(check_mechanisms, " | ".join(MECHANISMS)
                                           + ", or a list of distinct ones"),
                       " | ".join(MECHANISMS) + ", or a list"),
    "samples": Param(50, integer(low=2, high=100_000), "databases with x, and as many without"),
    "documents": Param(5, integer(low=1, high=10_000),
                       "documents of interest x (one_bit_sum: repetitions)"),
    "party_sizes": Param([5, 20, 80],
                         described(check_sizes, "non-empty list of distinct integers ≥ 2"),
                         "victim database sizes n_v"),
    "simulator": Param("resample", choice("resample", "swap"),
                       "databases without x: fresh (resample) or x swapped for another (swap)"),
    "p": Param(0.5, described(check_probability, "number, 0 < x < 1"), "one_bit_sum: P(bit = 1)"),
    "k": Param(3, integer(1, MAX_RANK), "topics / singular vectors"),
    "iterations": Param(20, integer(low=1, high=10_000), "sweeps of the mechanism"),
    "adversary_size": Param(100, integer(1, 100_000_000),
                            "documents of the adversary's own database"),
}

KSDP = Algorithm(
    name="ksdp",
    summary="π-KSDP of the one-bit sum, PD-NMF and PD-SVD against the victim's database size",
    reference="Tsikhanovich thesis (seed 001), §3.1–3.4, Algorithm 11, Figs. 3.5, 3.9, 3.10",
    params=KSDP_PARAMS,
    run="sim.experiments.studies.ksdp:run",
    estimate="sim.experiments.studies.ksdp:estimate",
    data_kind="topics",
    nonnegative=True,
    min_parties=2,
)


MAX_RESTARTS = 100

UPLIFT_PARAMS = {**NMF_PARAMS, **DP_PD_NMF_PARAMS,
          "holdout": Param(0.2, number(0.0, 1.0, strict_low=True, strict_high=True),
                           "fraction held out per party"),
          "local_restarts": Param(3, integer(1, MAX_RESTARTS),
                                  "local runs; the best is the baseline")}

UPLIFT = Algorithm(
    name="pd_nmf_uplift",
    summary="each party's % decrease of held-out error with the global T vs its local model",
    reference="Tsikhanovich thesis (seed 001), §3.3.1, Figure 3.7 (a, b); with dp_epsilon, "
              "DP-PD-NMF's (c)",
    params=UPLIFT_PARAMS,
    run="sim.experiments.studies.uplift:run",
    estimate="sim.experiments.studies.uplift:estimate",
    data_kind="topics",
    nonnegative=True,
    allow_missing=True,
)


TOPIC_QUALITY_PARAMS = {
    **NMF_PARAMS,
    "holdout": Param(0.2, number(0.0, 1.0, strict_low=True, strict_high=True),
                     "fraction of every party's documents held out"),
    "trials": Param(5, integer(2, 1000), "trials (new starts each)"),
    "top_words": Param(10, integer(2, 100), "M, the top words per topic that coherence reads"),
    "baseline": Param("random_2x", choice("random_2x", "random", "nndsvd"),
                      "start of the centralized RRI-NMF"),
}

TOPIC_QUALITY = Algorithm(
    name="pd_nmf_topic_quality",
    summary="UMass / NPMI coherence, perplexity, held-out fit: PD-NMF vs centralized NMF",
    reference="Tsikhanovich thesis (seed 001), §1.5, eqs. 1.27–1.28, Figs. 1.11–1.12, "
              "Tables 1.4–1.5",
    params=TOPIC_QUALITY_PARAMS,
    run="sim.experiments.studies.topic_quality:run",
    estimate="sim.experiments.studies.topic_quality:estimate",
    data_kind="topics",
    nonnegative=True,
)


TOPIC_CORPORA = ("nips", "20ng", "reuters")
"""The shaped corpora of the topic-model comparison (thesis Table 1.3's data sets)."""


def check_corpora(name: str, value: Any) -> tuple[str, ...]:
    names = [value] if isinstance(value, str) else value
    if (not isinstance(names, list) or not names
            or not all(isinstance(v, str) and v in TOPIC_CORPORA for v in names)
            or len(set(names)) != len(names)):
        raise ScenarioError(f"{name} = {value!r} must be one of {', '.join(TOPIC_CORPORA)}, "
                            "or a list of distinct ones")
    return tuple(names)


TOPIC_MODELS_PARAMS = {
    "corpora": Param(list(TOPIC_CORPORA),
                     described(check_corpora, " | ".join(TOPIC_CORPORA)
                               + ", or a list of distinct ones"),
                     "the shaped synthetic corpora (Table 1.3's NIPS, 20NG, Reuters)"),
    "repetitions": Param(3, integer(1, 100), "draws of each corpus"),
    "scale": Param(1.0, number(0.0, 1.0, strict_low=True),
                   "fraction of each shape's documents and vocabulary (at least 5 per topic)"),
    "tuning": Param("none", choice("none", "hyperband"),
                    "'none': each model at the planted k and one setting; 'hyperband': each "
                    "(corpus, model) tuned by Hyperband, Algorithm 5 (see tuning_R, tuning_k_max)"),
    "tuning_R": Param(27, integer(1, 729), "Hyperband's R: iterations per configuration (η = 3; "
                      "the thesis: 81)"),
    "tuning_k_max": Param(50, integer(5, 200), "top of the k grid {5, 10, …} Hyperband draws "
                          "from (the thesis: 200)"),
}

TOPIC_MODELS = Algorithm(
    name="topic_models",
    summary="NMF vs LDA vs K-means on 17 topic measures, Tables 1.4/1.5 (centralized models)",
    reference="Tsikhanovich thesis (seed 001), §1.5, Tables 1.3–1.5, Figs. A.1–A.17",
    params=TOPIC_MODELS_PARAMS,
    run="sim.experiments.studies.topic_tuning:run",
    estimate="sim.experiments.studies.topic_tuning:estimate",
    data_kind="topics",
    nonnegative=True,
    min_parties=1,
)
