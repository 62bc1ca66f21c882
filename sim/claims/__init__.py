"""The papers' checkable claims, every seed, each run at its small scale: the claims table.

One row per claim of ``shared/spec/seeds_digest.md`` §8 — seed 001 (the thesis, C1–C13 and
Fig. 3.8), seed 000 (C14–C16), seed 002 (C17, and C18 in its three parts C18a–c), seed 004
(C19–C24 and Figs. 8–9) — and of seed 003's experiment claims (``shared/spec/cape.md`` §7:
CAPE-mean, PCA-1–4, OTD-1–4): id, source, what the paper says, what this run measured, a status
(:mod:`sim.claims.table`) and the tests that assert it.

Every figure comes from the project's own code paths (scenarios through
:func:`sim.runner.run_scenario`, or the library calls the tests make); nothing here
re-implements an algorithm. ``mpcsim claims`` (:mod:`sim.cli`) prints it; the README's
reproduction section is ``mpcsim claims --markdown``.

The catalogue (:mod:`sim.claims.catalog`, which imports numpy and the seed modules) loads on
first use of a name below, so that ``mpcsim --help`` stays quick.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["CLAIMS", "RECORDED", "STATUSES", "check_ids", "claims", "markdown", "text"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("sim.claims.catalog"), name)
    raise AttributeError(f"module 'sim.claims' has no attribute {name!r}")
