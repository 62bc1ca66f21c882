"""Small scenarios for every catalogue entry, and a canonical digest of a run's views.

The MPI tests run each scenario under both drivers; the digest lets them compare views
without depending on the order in which unread messages arrived.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from parties.view import View


def _scenario(name: str, algorithm: dict[str, Any], *, parties: int = 3, rows: int = 30,
              cols: int = 6, data: dict[str, Any] | None = None,
              **extra: Any) -> dict[str, Any]:
    spec = {"name": name, "seed": 11, "network": {"parties": parties},
            "data": {"source": "synthetic", "rows": rows, "cols": cols, **(data or {})},
            "algorithm": {"name": algorithm.pop("entry", name), **algorithm}}
    return spec | extra


NMF = {"k": 2, "iterations": 2, "local_iterations": 5, "svd_iterations": 3}
DSANLS = {"k": 2, "iterations": 3}
SECURE_NMF = {"k": 2, "outer": 2, "inner": 2}
CAPE = {"k": 2, "trials": 2}
P127 = {"prime": "2^127-1", "frac_bits": 24}

SCENARIOS: dict[str, dict[str, Any]] = {
    "secure_sum_prg": _scenario("secure_sum_prg", {"entry": "secure_sum", "variant": "prg"}),
    "secure_sum_explicit": _scenario("secure_sum_explicit",
                                     {"entry": "secure_sum", "variant": "explicit"}),
    "pd_nmf": _scenario("pd_nmf", dict(NMF), rows=40, cols=12),
    "rri_nmf": _scenario("rri_nmf", dict(NMF, init="nndsvd"), rows=40, cols=12),
    "pd_nmf_init_comparison": _scenario("pd_nmf_init_comparison", dict(NMF, trials=1),
                                        rows=40, cols=12),
    "pd_nmf_uplift": _scenario("pd_nmf_uplift", dict(NMF, local_restarts=1), rows=60, cols=12),
    "pd_nmf_topic_quality": _scenario("pd_nmf_topic_quality", dict(NMF, trials=2, top_words=4),
                                      rows=60, cols=12),
    "cape_mean": _scenario("cape_mean", {"trials": 3}, data={"kind": "spiked", "k": 2}),
    "cape_pca": _scenario("cape_pca", dict(CAPE), rows=60, cols=6),
    "cape_pca_sweep": _scenario("cape_pca_sweep", dict(CAPE, values=[1.0, 5.0]), rows=60),
    "cape_otd": _scenario("cape_otd", dict(CAPE), rows=60, cols=6, data={"k": 2}),
    "cape_otd_sweep": _scenario("cape_otd_sweep", dict(CAPE, values=[1.0, 5.0]), rows=60,
                                data={"k": 2}),
    "dp_nmf_outliers": _scenario("dp_nmf_outliers", {"k": 2, "iterations": 3,
                                                     "inner_iterations": 2}, rows=40, cols=12),
    "dp_nmf_outliers_epsilon": _scenario("dp_nmf_outliers_epsilon", {
        "k": 2, "iterations": 3, "inner_iterations": 2, "epsilons": [0.5], "trials": 1},
        rows=40, cols=12),
    "corrective_nmf": _scenario("corrective_nmf", {"k": 2, "iterations": 3}, rows=40, cols=12),
    "corrective_nmf_comparison": _scenario(
        "corrective_nmf_comparison", {"k": 2, "iterations": 3}, parties=2, rows=120, cols=30,
        data={"kind": "ratings", "k": 2, "density": 0.3},
        attack={"fake_users": 4, "target_items": [3], "party": 1}),
    "normed_secure_sum": _scenario("normed_secure_sum", {}, cols=3, field=P127),
    "pd_svd": _scenario("pd_svd", {"k": 2, "iterations": 2}, cols=5, field=P127),
    "dsanls": _scenario("dsanls", dict(DSANLS), rows=40, cols=20),
    "syn_sd": _scenario("syn_sd", dict(SECURE_NMF), rows=40, cols=20),
    "syn_ssd": _scenario("syn_ssd", dict(SECURE_NMF), rows=40, cols=20),
    "asyn_sd": _scenario("asyn_sd", dict(SECURE_NMF), rows=40, cols=20),
    "asyn_ssd": _scenario("asyn_ssd", dict(SECURE_NMF), rows=40, cols=20),
    "secure_nmf_comparison": _scenario("secure_nmf_comparison", {
        "k": 2, "inner": 2, "time_budget_s": 0.05, "methods": ["Syn-SD", "Asyn-SD"]},
        rows=40, cols=20),
    "nmf_baselines": _scenario("nmf_baselines", {
        "k": 2, "iterations": 2, "sketched_iterations": 3, "methods": ["DSANLS/S", "HALS"]},
        rows=40, cols=20),
    "secagg": _scenario("secagg", {"threshold": 2}, rows=30, cols=6),
    "topic_models": _scenario("topic_models", {"corpora": ["nips"], "repetitions": 1,
                                               "scale": 0.02}, parties=2, rows=20, cols=8),
    "dpnmf_comparison": _scenario("dpnmf_comparison", {"kind": "topics", "epsilons": [0.5],
                                                       "trials": 1, "iterations": 3,
                                                       "scale": 0.05}, parties=2, rows=20,
                                  cols=8),
    "dp_nmf_datasets": _scenario("dp_nmf_datasets", {"datasets": ["uci_news"],
                                                     "epsilons": [0.5], "trials": 1,
                                                     "iterations": 3, "cells": 2000},
                                 parties=2, rows=20, cols=8),
    "ksdp": _scenario("ksdp", {"mechanism": "one_bit_sum", "p": 0.5, "party_sizes": [4, 8],
                               "samples": 20, "documents": 2}, rows=3, cols=4),
}
"""Scenario name → a small scenario; every catalogue entry appears at least once."""

ARRIVAL_ORDER = {
    "asyn_sd": "its server serves clients in order of arrival (RecvAny): real arrival order "
               "differs from the simulated one, and so do its updates",
    "asyn_ssd": "its server serves clients in order of arrival (RecvAny)",
    "secure_nmf_comparison": "it runs the asynchronous variants (RecvAny) and a time budget "
                             "read from the parties' clocks (Compute), which are wall clocks "
                             "under MPI",
    "nmf_baselines": "its curves carry the parties' clocks (Compute), which are wall clocks "
                     "under MPI",
}
"""Entries whose results depend on real arrival order or clocks: under MPI they must run to
completion with a consistent ledger, but cannot equal the SimPy run."""


def _canonical(value: Any) -> bytes:
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            return b"O" + repr(value.tolist()).encode()
        return (str(value.dtype).encode() + repr(value.shape).encode()
                + np.ascontiguousarray(value).tobytes())
    if isinstance(value, Mapping):
        return b"{" + b",".join(_canonical(k) + b":" + _canonical(v)
                                for k, v in sorted(value.items(), key=lambda kv: repr(kv[0])))
    if isinstance(value, list | tuple):
        return b"(" + b",".join(_canonical(v) for v in value) + b")"
    if hasattr(value, "__dataclass_fields__"):
        return type(value).__name__.encode() + _canonical(
            {f: getattr(value, f) for f in value.__dataclass_fields__})
    return repr(value).encode()


def views_digest(views: Mapping[int, View]) -> str:
    """One line per party: SHA-256 of its inputs, seeds, outputs, draws and received messages
    (as a multiset), arrival times left out: simulated under SimPy, the wall clock under MPI."""
    lines = []
    for pid, view in sorted(views.items()):
        received = sorted(_canonical(dataclasses.replace(m, arrived_s=0.0))
                          for m in view.received)
        parts = [view.role, view.inputs, view.seeds, view.protocol_inputs, view.outputs,
                 view.draws]
        digest = hashlib.sha256(b"|".join([_canonical(p) for p in parts] + received))
        lines.append(f"{pid} {len(view.received)} {digest.hexdigest()}")
    return "\n".join(lines) + "\n"
