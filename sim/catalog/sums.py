"""Catalogue entries of the secure sums: ``secure_sum`` (thesis seed 001, §2.2) and ``secagg``
(Bonawitz et al., CCS 2017; SecAgg+'s Harary graph).

Declarations only (:mod:`sim.catalog`): names, keys, ranges and vocabularies as data, each
entry's code named ``"module:function"`` and imported when it runs. Nothing here imports
numpy; the experiment modules read their vocabularies from here.
"""

from __future__ import annotations

from protocols.vocabulary import SECAGG_GRAPHS, SECURE_SUM_ALL_VARIANTS, SECURE_SUM_VARIANTS
from sim.checks import MAX_PARTIES
from sim.entry import (
    Algorithm,
    Param,
    choice,
    integer,
    number,
)

VARIANTS = SECURE_SUM_VARIANTS
"""SecureSum's variants (:data:`protocols.vocabulary.SECURE_SUM_VARIANTS`)."""

ALL_VARIANTS = SECURE_SUM_ALL_VARIANTS
"""With the thesis's two-share PRG form (:data:`protocols.vocabulary.SECURE_SUM_ALL_VARIANTS`)."""

SECURE_SUM = Algorithm(
    name="secure_sum",
    summary="SecureSum of the parties' column sums (explicit shares or PRG-seeded shares)",
    reference="Tsikhanovich thesis (seed 001), §2.2 and Table 2.1",
    params={"variant": Param("prg", choice(*ALL_VARIANTS), " | ".join(ALL_VARIANTS))},
    run="sim.experiments.secure_sum:run",
    estimate="sim.experiments.secure_sum:estimate",
    data_kind="uniform",
)


GRAPHS = SECAGG_GRAPHS
"""SecAgg's graphs (:data:`protocols.vocabulary.SECAGG_GRAPHS`)."""

MAX_TIMEOUT_S = 3_600.0
"""Longest wait per round (simulated seconds) a scenario may give the aggregator: an hour,
sixty times the longest latency a link may have (``network.latency_ms``)."""

SECAGG = Algorithm(
    name="secagg",
    summary="Dropout-tolerant secure aggregation of column sums (SecAgg / SecAgg+)",
    reference="Bonawitz et al., CCS 2017 (Fig. 4, semi-honest); Bell et al., CCS 2020 (SecAgg+)",
    params={
        "threshold": Param(0, integer(0, MAX_PARTIES),
                           "t, shares needed to unmask (0: ⌊M/2⌋ + 1)"),
        "graph": Param("complete", choice(*GRAPHS), "complete | harary"),
        "degree": Param(0, integer(0, MAX_PARTIES - 1), "k, the Harary graph's degree"),
        "timeout_s": Param(1.0, number(0.0, MAX_TIMEOUT_S, strict_low=True),
                           "the aggregator's wait per round (simulated s)"),
    },
    run="sim.experiments.secagg:run",
    estimate="sim.experiments.secagg:estimate",
    data_kind="uniform",
    other_roles=lambda params: ("aggregator",),
)
