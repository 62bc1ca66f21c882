"""The exact method and honest seed expansions in a tiny field (issue 27, false alarm 2).

A short drawn seed expanded by AES has p^n values in GF(p), so its expansion is not uniform
there; the exact method must not call that a leak, nor call the program private. The
recogniser (:func:`parties.audit.seeded.expansion_of`) is checked on tables computed here from
closed forms (SHA-256 into GF(5), draws reduced to bits, affine maps, a carried seed); the
audit on planted programs: honest expansions end in ``not applicable`` naming the key, while
badly used draws — bits of an expansion, a published or piecewise carried seed, a copied
share — stay ``leak``. An attack recovers a bit of x̂_1 from party 0's view of
:func:`planted_draws.seeded_bits`.
"""

from __future__ import annotations

import hashlib
import itertools

import numpy as np
import planted_draws as pd
import planted_leaks as pl
import pytest

from parties.audit import ConditionedRandomness
from parties.audit.seeded import expansion_of
from parties.party import site_parties
from protocols.field import prime_field
from sim.privacy import SimPyRunner, audit

F5 = prime_field(5)
P61 = (1 << 61) - 1
F61 = prime_field(P61)
INPUTS5 = [F5.elements([1]), F5.elements([2]), F5.elements([3])]


def _table(f, p: int = 5, n: int = 2) -> np.ndarray:
    return np.array([f(s) for s in itertools.product(range(p), repeat=n)], dtype=np.int64)


def _hash(s, k: int = 0) -> int:
    return hashlib.sha256(bytes([k, *s])).digest()[0] % 5


def test_a_hashed_seed_is_an_expansion() -> None:
    for k in range(3):
        got = expansion_of(_table(lambda s, k=k: [_hash(s, k), _hash(s, k + 7), 3]), 5, 2)
        assert got.seeded and got.columns == (0, 1)


@pytest.mark.parametrize(("f", "why"), [
    (lambda s: [s[0] % 2, 1], "depends on one draw"),
    (lambda s: [(s[0] + 2 * s[1] + 1) % 5], "affine"),
    (lambda s: [s[0], s[1]], "depends on one draw"),  # the seed itself, carried
    (lambda s: [(s[0] % 2 + s[1] % 2)], "far from uniform"),
    (lambda s: [_hash(s) % 2], "far from uniform"),  # an expansion reduced to bits
])
def test_badly_used_draws_are_not_expansions(f, why: str) -> None:
    got = expansion_of(_table(f), 5, 2)
    assert not got.seeded and why in got.why


def test_an_element_that_ignores_the_draws_is_not_judged() -> None:
    assert expansion_of(_table(lambda s: [4, 2]), 5, 2).columns == ()


def test_exact_says_not_applicable_for_an_honest_expansion() -> None:
    result = audit(pd.seeded_shares, INPUTS5, [0], prime=5, method="exact", seed=3)
    assert result.verdict == "not applicable"
    assert result.details["seeded_by"] == "private mask key of party 1"
    assert "seed expansion" in result.details["reason"]


@pytest.mark.parametrize("name", ["published_key", "key_in_pieces", "seeded_bits",
                                  "cc_shares"])
def test_exact_still_catches_draws_used_badly(name: str) -> None:
    result = audit(getattr(pd, name), INPUTS5, [0], prime=5, method="exact", seed=3)
    assert result.verdict == "leak", result.details


@pytest.mark.parametrize("variant", ["explicit", "prg"])
def test_exact_still_catches_small_range_masks(variant: str) -> None:
    result = audit(pl.LEAKS["small_range"][variant], INPUTS5, [0], prime=5, method="exact",
                   seed=3)
    assert result.verdict == "leak", result.details


def test_seeded_bits_attack_recovers_a_bit_of_the_honest_input() -> None:
    """colsum_1 − s_{0→1} + s_{1→0} = x̂_1 + s_{2→1} − s_{1→2}, the bits' difference in
    {−1, 0, 1}: x̂_1 ∈ {0, 1} gives values in {−1, 0, 1, 2}, x̂_1 = 5 in {4, 5, 6}."""
    runner = SimPyRunner(P61, 0, 5)
    for x1, big in ((0, False), (1, False), (5, True)):
        inputs = [F61.elements([7]), F61.elements([x1]), F61.elements([20 - x1])]
        views = runner(site_parties(pd.seeded_bits, [{"x": x} for x in inputs]),
                       ConditionedRandomness([0, 1, 2], [0], 5, 0))
        view = views[0]
        (key,) = [v for k, v in view.draws if k[0] == "private"]
        mine = np.asarray(pd.expand(F61, key, 0, 2)) % 2  # s_{0→1}, s_{0→2}
        got = {(m.sender, m.step): int(np.ravel(m.payload)[0]) for m in view.received}
        sent = {1: int(mine[0])}
        residual = (got[(1, "column_sum")] - sent[1] + got[(1, "share")]) % P61
        signed = residual - P61 if residual > P61 // 2 else residual
        assert (signed >= 3) is big


# -- through a scenario's [[audit]] --------------------------------------------------------------


@pytest.mark.parametrize(("name", "verdict"), [("seeded_shares", "not applicable"),
                                               ("published_key", "leak"),
                                               ("seeded_bits", "leak")])
def test_a_scenario_exact_audit_tells_an_expansion_from_a_leak(
        name: str, verdict: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The secure_sum entry's field program replaced by the planted one (the run itself
    stays honest); ``[[audit]] method = "exact"`` runs it in GF(5)."""
    for where in ("sim.privacy", "sim.experiments.secure_sum"):  # the entry imports it by name
        monkeypatch.setattr(f"{where}.secure_sum_program",
                            lambda variant, label="x": getattr(pd, name))
    from sim.runner import run_scenario

    run = run_scenario({
        "name": "seeded", "seed": 5, "network": {"parties": 3},
        "data": {"source": "synthetic", "kind": "uniform", "rows": 9, "cols": 2},
        "algorithm": {"name": "secure_sum", "variant": "explicit"},
        "audit": [{"coalition": [0], "method": "exact", "prime": 5, "max_runs": 100000}]})
    (entry,) = run.audits
    assert entry.verdict == verdict, entry.details
