"""Declared thresholds of coalition studies, from the papers' statements.

* SecureSum: any M − 1 parties (thesis seed 001, §2.2).
* NormedSecureSum: M − 1 data holders with the dealer trusted — coalitions holding the dealer
  are outside the declaration (the dealer alone receives nothing online; with a data holder it
  unmasks every opening).
* SecAgg: the server with fewer than t users (Bonawitz et al., CCS 2017, Thm 6.3), so t − 1
  sites with the aggregator uncounted; on a Harary graph of degree k also fewer than k sites.
* CAPE: S_C ≤ ⌈S/3⌉ − 1 sites with the aggregator, the noise generator trusted
  (arXiv:1904.10059 v3; spec cape.md).

The study's t counted as the declaration counts is checked on hand-built verdict patterns and
on a real NormedSecureSum run audited by the simulation method for every coalition.
"""

from __future__ import annotations

import itertools
import math

import pytest

from parties.audit.coalitions import CoalitionStudy, Threshold
from parties.audit.result import AuditResult
from protocols.normed_secure_sum import preset
from sim.coalitions import declared_threshold, study_table
from sim.experiments.svd.normed_secure_sum import nss_declaration
from sim.runner import run_scenario


@pytest.mark.parametrize("m", [2, 3, 7])
def test_secure_sum_and_normed_secure_sum_declare_m_minus_one(m: int) -> None:
    assert declared_threshold("secure_sum", None, m) == Threshold(m - 1, source=(
        "thesis seed 001, §2.2: any coalition of M − 1 parties"))
    nss = declared_threshold((nss_declaration(preset("p61-demo")),), "normed", m)
    assert nss is not None and nss.t == m - 1 and nss.excluded_roles == ("dealer",)
    both = declared_threshold(("secure_sum", nss_declaration(preset("p61-demo"))), None, m)
    assert both is not None and both.t == m - 1 and both.excluded_roles == ("dealer",)


@pytest.mark.parametrize("variant,m,t", [("t=3", 5, 2), ("t=3,oracle=affine", 10, 2),
                                         ("t=6", 10, 5), ("t=3,harary,k=2", 8, 1),
                                         ("t=3,harary,k=4", 8, 2)])
def test_secagg_declares_t_minus_one_sites_with_the_aggregator(variant: str, m: int,
                                                               t: int) -> None:
    got = declared_threshold("secagg", variant, m)
    assert got is not None and got.t == t and got.free_roles == ("aggregator",)
    assert declared_threshold("secagg", "oracle=affine", m) is None  # t not named


@pytest.mark.parametrize("s", [3, 4, 5, 6, 7, 10])
def test_cape_declares_ceil_s_over_3_minus_one(s: int) -> None:
    got = declared_threshold(("cape",), None, s)
    assert got is not None and got.t == -(-s // 3) - 1 == math.ceil(s / 3) - 1
    assert got.free_roles == ("aggregator",) and got.excluded_roles == ("noise_generator",)


def _study(participants, sites, roles, private, threshold) -> CoalitionStudy:
    results = tuple(AuditResult(c, "simulation", "private" if private(c) else "leak")
                    for t in range(1, len(participants))
                    for c in itertools.combinations(participants, t)
                    if not set(sites) <= set(c))
    return CoalitionStudy("simulation", results, tuple(participants), tuple(sites), roles,
                          threshold.t, threshold)


def test_the_dealer_is_left_out_of_normed_secure_sums_count() -> None:
    """M = 3, dealer 3: every coalition with the dealer and a site leaks, all else private."""
    roles = {0: "site", 1: "site", 2: "site", 3: "dealer"}
    study = _study((0, 1, 2, 3), (0, 1, 2), roles,
                   lambda c: not (3 in c and len(c) > 1),
                   declared_threshold("normed_secure_sum", None, 3))
    assert study.largest_private_t == 1  # every participant counted: {0, 3} leaks
    assert study.largest_private_t_as_declared == 2
    summary = study.summary()
    assert summary["meets_declared_threshold"] is True
    assert "no dealer" in summary["declared_counts"]
    assert "counted so = 2" in study_table(0, study)


def test_secaggs_aggregator_joins_uncounted() -> None:
    """M = 5, t = 3, aggregator 5: private iff fewer than 3 sites (aggregator or not)."""
    roles = {**{i: "site" for i in range(5)}, 5: "aggregator"}
    sites = tuple(range(5))
    threshold = declared_threshold("secagg", "t=3", 5)
    study = _study(tuple(range(6)), sites, roles, lambda c: len(set(c) & set(sites)) < 3,
                   threshold)
    assert study.largest_private_t == 2 and study.largest_private_t_as_declared == 2
    assert study.summary()["meets_declared_threshold"] is True
    weaker = _study(tuple(range(6)), sites, roles,  # the aggregator with 2 sites leaks
                    lambda c: len(set(c) & set(sites)) < (2 if 5 in c else 3), threshold)
    assert weaker.largest_private_t == 2  # every coalition of ≤ 2 participants is private
    assert weaker.largest_private_t_as_declared == 1  # …but not 2 sites with the aggregator
    assert weaker.summary()["meets_declared_threshold"] is False


@pytest.mark.slow
def test_a_normed_secure_sum_study_meets_its_declared_threshold() -> None:
    spec = {"seed": 5, "network": {"parties": 3, "sealing": False},
            "field": {"prime": "2^61-1"},
            "data": {"source": "synthetic", "rows": 30, "cols": 4},
            "algorithm": {"name": "normed_secure_sum", "preset": "p61-demo"},
            "audit": [{"method": "simulation", "coalitions": "all", "trials": 40}]}
    study = run_scenario(spec).report["coalition_studies"][0]
    assert study["declared_threshold"] == 2
    assert study["largest_private_t_as_declared"] == 2
    assert study["largest_private_t"] == 1  # a data holder with the dealer is a leak
    assert study["meets_declared_threshold"] is True
    leaks = {tuple(r["coalition"]) for r in study["table"] if r["verdict"] == "leak"}
    assert leaks == {c for t in (2, 3) for c in itertools.combinations(range(4), t)
                     if 3 in c}
