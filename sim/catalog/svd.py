"""Catalogue entries of PD-SVD and NormedSecureSum (thesis seed 001, §2.3, Fig. 2.3).

Declarations only (:mod:`sim.catalog`): names, keys, ranges and vocabularies as data, each
entry's code named ``"module:function"`` and imported when it runs. Nothing here imports
numpy; the experiment modules read their vocabularies from here.
"""

from __future__ import annotations

from typing import Any

from algorithms.vocabulary import PD_SVD_VARIANTS
from protocols.vocabulary import NSS_PRESET_NAMES, NSS_VARIANTS
from sim.entry import (
    MAX_ITERATIONS,
    MAX_RANK,
    Algorithm,
    Param,
    auto_or,
    boolean,
    choice,
    integer,
    number,
    optional,
)

PRESET_NAMES = NSS_PRESET_NAMES
"""The keys of :data:`protocols.normed_secure_sum.PRESETS`."""

MAX_SCALE = 1e12
"""Largest public input factor ``scale``."""


def preset_or(check: Any) -> Any:
    return optional(check, "the preset's value")

NSS_PARAMS: dict[str, Param] = {
    "preset": Param("p127-default", choice(*PRESET_NAMES), "parameter set of spec §1.5"),
    "input_bits": Param(None, preset_or(integer(2, 62)), "k_in: |x·2^f| ≤ 2^(k_in−1) − 1"),
    "input_frac_bits": Param(None, preset_or(integer(0, 60)), "f: fractional bits of the inputs"),
    "kappa": Param(None, preset_or(integer(1, 200)), "κ: statistical security parameter"),
    "work_bits": Param(None, preset_or(integer(2, 200)), "F: working precision of 1/√"),
    "out_bits": Param(None, preset_or(integer(1, 200)), "f_out: fractional bits of the output"),
    "newton_steps": Param(None, preset_or(integer(0, 10)), "t: Newton iterations"),
    "demo": Param(False, boolean(), "opt in to κ < 40 (weak masking)"),
    "scale": Param(1.0, number(0.0, MAX_SCALE, strict_low=True),
                   "public factor applied to every input"),
}
"""Keys shared by ``normed_secure_sum`` and ``pd_svd``."""

NORMED_SECURE_SUM = Algorithm(
    name="normed_secure_sum",
    summary="NormedSecureSum of the parties' column sums: everyone learns only s/‖s‖",
    reference="Tsikhanovich thesis (seed 001), Fig. 2.3 and Table 2.2; "
              "spec/normed_secure_sum.md",
    params={"variant": Param("normed", choice(*NSS_VARIANTS), " | ".join(NSS_VARIANTS)),
            **NSS_PARAMS,
            "audit_instances": Param(0, integer(0, 100_000),
                                     "scale-invariance audit: instances per side (0: off)")},
    run="sim.experiments.svd.normed_secure_sum:run",
    estimate="sim.experiments.svd.normed_secure_sum:estimate",
    data_kind="uniform",
    other_roles=lambda params: ("dealer",),
)


SVD_VARIANTS = PD_SVD_VARIANTS
"""PD-SVD's variants (:data:`algorithms.vocabulary.PD_SVD_VARIANTS`)."""

PD_SVD = Algorithm(
    name="pd_svd",
    summary="PD-SVD: block power iteration over NormedSecureSum (Σ hidden) or SecureSum",
    reference="Tsikhanovich thesis (seed 001), §2.3, Algorithms 9 and 10; §3.3.2",
    params={
        "k": Param(3, integer(1, MAX_RANK), "rank, also k ≤ d"),
        "iterations": Param(20, integer(1, MAX_ITERATIONS), "power iterations τ"),
        "variant": Param("normed", choice(*SVD_VARIANTS), " | ".join(SVD_VARIANTS)),
        **{key: param for key, param in NSS_PARAMS.items() if key != "scale"},
        "scale": Param("auto", auto_or(number(0.0, MAX_SCALE, strict_low=True), "from the data"),
                       "public factor on NSS inputs"),
        "holdout": Param(0.0, number(0.0, 1.0, strict_high=True),
                         "fraction of every party's rows held out (Fig. 3.8; 0: none)"),
    },
    run="sim.experiments.svd.pd_svd:run",
    estimate="sim.experiments.svd.pd_svd:estimate",
    data_kind="uniform",
    other_roles="sim.experiments.svd.pd_svd:roles",
)


