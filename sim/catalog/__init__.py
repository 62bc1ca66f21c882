"""The catalogue of runnable algorithms: what ``[algorithm] name = ...`` may say.

The entries (:class:`sim.entry.Algorithm`) are declared here as data, one module per family
(:mod:`sim.catalog.sums`, :mod:`~sim.catalog.nmf`, :mod:`~sim.catalog.svd`,
:mod:`~sim.catalog.cape`, :mod:`~sim.catalog.dsanls`, :mod:`~sim.catalog.studies`): each
entry's name, summary, reference, keys with their ranges and vocabularies, and its code named
``"module:function"`` in :mod:`sim.experiments` (:class:`sim.entry.Code`), imported only when it
runs. The catalogue imports no numpy by construction — a test imports it in a fresh interpreter
and looks — so ``mpcsim list`` and ``--help`` answer at once, and the experiment modules read
their vocabularies from here (one spelling of each). This module looks entries up by name.
An installed distribution
adds entries through the entry-point group ``mpcsim.algorithms`` (each names an
:class:`~sim.entry.Algorithm`), read afresh on every look-up; a scenario may also run a user's
own program (``[algorithm] program = "pkg.module:function"``,
:mod:`sim.experiments.user_program`) without any entry.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from protocols.errors import ScenarioError
from sim.catalog.cape import CAPE_MEAN, CAPE_OTD, CAPE_OTD_SWEEP, CAPE_PCA, CAPE_PCA_SWEEP
from sim.catalog.dsanls import (
    ASYN_SD,
    ASYN_SSD,
    DSANLS,
    NMF_BASELINES,
    SECURE_NMF_COMPARISON,
    SYN_SD,
    SYN_SSD,
)
from sim.catalog.nmf import (
    CORRECTIVE_NMF,
    CORRECTIVE_NMF_COMPARISON,
    DP_NMF_DATASETS,
    DP_NMF_OUTLIERS,
    DP_NMF_OUTLIERS_EPSILON,
    DPNMF_COMPARISON,
    INIT_COMPARISON,
    PD_NMF,
    RRI_NMF,
)
from sim.catalog.studies import KSDP, TOPIC_MODELS, TOPIC_QUALITY, UPLIFT
from sim.catalog.sums import SECAGG, SECURE_SUM
from sim.catalog.svd import NORMED_SECURE_SUM, PD_SVD
from sim.entry import Algorithm, Code

ENTRY_POINT_GROUP = "mpcsim.algorithms"

ENTRIES = (SECURE_SUM, PD_NMF, RRI_NMF, INIT_COMPARISON, UPLIFT, CAPE_MEAN, CAPE_PCA,
           CAPE_PCA_SWEEP, CAPE_OTD, CAPE_OTD_SWEEP, DP_NMF_OUTLIERS, DP_NMF_OUTLIERS_EPSILON,
           CORRECTIVE_NMF, CORRECTIVE_NMF_COMPARISON, NORMED_SECURE_SUM, PD_SVD, DSANLS, SYN_SD,
           SYN_SSD, ASYN_SD, ASYN_SSD, SECURE_NMF_COMPARISON, KSDP, SECAGG,
           NMF_BASELINES, TOPIC_QUALITY, TOPIC_MODELS, DPNMF_COMPARISON, DP_NMF_DATASETS)
"""The built-in entries, in the order ``mpcsim list`` shows them."""

USER_PROGRAM = Code("sim.experiments.user_program:program_entry")
"""What builds the entry of a scenario's ``program = "pkg.module:function"``."""


def installed(
    entry_points: Sequence[importlib.metadata.EntryPoint] | None = None,
) -> dict[str, Algorithm]:
    """The entries installed distributions add (``mpcsim.algorithms`` entry points).

    Raises
    ------
    ScenarioError
        When one does not load, is not an Algorithm of its entry point's name, or would
        replace a built-in entry.
    """
    found = (importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
             if entry_points is None else entry_points)
    builtin = {entry.name for entry in ENTRIES}
    out: dict[str, Algorithm] = {}
    for point in found:
        where = f"entry point {point.name} = {point.value!r} ({ENTRY_POINT_GROUP})"
        try:
            entry = point.load()
        except Exception as exc:  # an installed package's import error, named
            raise ScenarioError(f"{where} does not load: {type(exc).__name__}: {exc}") from exc
        if not isinstance(entry, Algorithm) or entry.name != point.name:
            raise ScenarioError(f"{where} must name a sim.entry.Algorithm called "
                                f"{point.name!r}, got {entry!r:.80}")
        if point.name in builtin:
            raise ScenarioError(f"{where} would replace the built-in entry {point.name!r}")
        out[point.name] = entry
    return out


def algorithms() -> dict[str, Algorithm]:
    """Every runnable algorithm, by name: :data:`ENTRIES`, then the installed."""
    return {**{entry.name: entry for entry in ENTRIES}, **installed()}


def entry_for(table: Mapping[str, Any], base_dir: Path | None = None) -> Algorithm:
    """The entry a scenario's ``[algorithm]`` table runs: ``program = ...`` (a user's own
    program, imported from ``base_dir`` first) or ``name = ...`` (:func:`get`)."""
    if "program" in table:
        return USER_PROGRAM(table, base_dir)
    return get(table.get("name"))


def get(name: Any) -> Algorithm:
    """The entry called ``name``, or a ScenarioError listing the known names."""
    table = algorithms()
    if name not in table:
        raise ScenarioError(
            f"algorithm.name = {name!r} is unknown; use one of {', '.join(sorted(table))} "
            "(`mpcsim list` describes them)"
        )
    return table[name]
