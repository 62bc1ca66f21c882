"""The names a user chooses among in the algorithms: one spelling, read by the algorithms and by
the scenario catalogue (:mod:`sim.catalog`).

This module imports nothing, so that the catalogue — which ``mpcsim --help`` and ``mpcsim list``
load without numpy — reads the same tuples the algorithms check their arguments against.
"""

from __future__ import annotations

__all__ = [
    "CAPE_MODELS",
    "CAPE_PCA_ORDERS",
    "CAPE_TENSOR_MODES",
    "CORRECTIVE_FILLS",
    "CORRECTIVE_MISSING_RULES",
    "CORRECTIVE_MODES",
    "CORRECTIVE_REPLACE_BASES",
    "PD_NMF_INITS",
    "PD_SVD_VARIANTS",
    "SYNTHETIC_KINDS",
]

PD_NMF_INITS: tuple[str, ...] = ("random", "random_2x", "nndsvd", "pd_nmf_init", "pd_svd")
"""PD-NMF's initialisations (:mod:`algorithms.nmf.pd_nmf`)."""

CORRECTIVE_MODES: tuple[str, ...] = ("standard", "ignore", "replace")
"""Corrective NMF's modes (:mod:`algorithms.nmf.corrective`)."""

CORRECTIVE_MISSING_RULES: tuple[str, ...] = ("ignore", "replace")
"""How corrective NMF treats missing entries."""

CORRECTIVE_REPLACE_BASES: tuple[str, ...] = ("original", "running")
"""What corrective NMF's ``replace`` rule replaces from."""

CORRECTIVE_FILLS: tuple[str, ...] = ("every", "once")
"""When corrective NMF's replace-missing rule fills the missing entries."""

CAPE_PCA_ORDERS: tuple[str, ...] = ("eigenvalue", "abs")
"""How CAPE PCA orders its eigenvectors (:mod:`algorithms.cape.pca`)."""

CAPE_MODELS: tuple[str, ...] = ("stm", "mog")
"""The latent variable models of CAPE's orthogonal tensor decomposition
(:mod:`algorithms.cape.moments`)."""

CAPE_TENSOR_MODES: tuple[str, ...] = ("paper", "robust")
"""The tensor power method's modes (:mod:`algorithms.cape.tensor_power`)."""

PD_SVD_VARIANTS: tuple[str, ...] = ("normed", "secure_sum", "sigma_revealing")
"""PD-SVD's variants (:mod:`algorithms.svd.pd_svd`)."""

SYNTHETIC_KINDS: tuple[str, ...] = ("uniform", "topics", "ratings", "movielens", "spiked", "mog",
                                    "stm", "mnist")
"""The synthetic data sets ``[data] kind`` may name (:mod:`algorithms.data.synthetic`)."""
