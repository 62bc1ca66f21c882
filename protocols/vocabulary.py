"""The names a user chooses among in the protocols: one spelling, read by the protocols and by
the scenario catalogue (:mod:`sim.catalog`).

This module imports nothing, so that the catalogue — which ``mpcsim --help`` and ``mpcsim list``
load without numpy — reads the same tuples the protocols check their arguments against.
"""

from __future__ import annotations

__all__ = [
    "CAPE_NOISE_KINDS",
    "CAPE_SCHEMES",
    "NSS_PRESET_NAMES",
    "NSS_VARIANTS",
    "SECAGG_GRAPHS",
    "SECURE_SUM_ALL_VARIANTS",
    "SECURE_SUM_VARIANTS",
]

SECURE_SUM_VARIANTS: tuple[str, ...] = ("prg", "explicit")
"""SecureSum's variants the planted-leak suites audit (``prg`` is the default;
:mod:`protocols.secure_sum`, Tsikhanovich thesis §2.2)."""

SECURE_SUM_ALL_VARIANTS: tuple[str, ...] = (*SECURE_SUM_VARIANTS, "prg_two_share")
"""Every SecureSum variant a program or scenario may select, with the thesis's two-share PRG
form."""

SECAGG_GRAPHS: tuple[str, ...] = ("complete", "harary")
"""SecAgg's communication graphs (:mod:`protocols.secagg`)."""

CAPE_SCHEMES: tuple[str, ...] = ("cape", "conventional")
"""CAPE's noise schemes (:mod:`protocols.correlated_noise`, seed 003 Algorithm 1)."""

CAPE_NOISE_KINDS: tuple[str, ...] = ("float", "discrete")
"""How CAPE's Gaussian noise is drawn: floating point, or discrete on the fixed-point grid."""

NSS_VARIANTS: tuple[str, ...] = ("normed", "reveal_norm", "secure_sum")
"""NormedSecureSum's variants (:mod:`protocols.normed_secure_sum`)."""

NSS_PRESET_NAMES: tuple[str, ...] = ("p127-default", "p127-wide-d", "p127-fast", "p61-demo")
"""The names of NormedSecureSum's parameter sets (spec §1.5), in the order of
:data:`protocols.normed_secure_sum.PRESETS`."""
