"""NormedSecureSum under the simulation method (program-rerun simulator).

* The honest ``normed`` call is ``private`` with stated power for every coalition of at most
  M − 1 data holders (M = 3), and for the dealer alone (it receives nothing online).
* The dealer together with a data holder is a ``leak`` whose reason names what is revealed;
  the ``reveal_norm`` / ``secure_sum`` variants are judged relative to the leakage they
  declare (‖S‖², S), which the verdict reports.
* Each planted leak (tests/parties/planted_nss.py) is caught at the opening it plants
  (call 0, the step named), and the repeated-triples leak is shown real: the coalition's
  view gives S_i − S_0 of the encoded sum (numpy, from the inputs).
* The opening laws the simulator draws from have the declared ranges (Python integers).
"""

from __future__ import annotations

import numpy as np
import pytest
from planted_nss import PARAMS, nss_parties

from parties.audit.calls import split_run
from parties.audit.randomness import ConditionedRandomness
from parties.party import site_parties
from protocols.field.mersenne127 import mpc_field
from protocols.mpc.public import to_ints
from protocols.mpc.simulator import OpeningStandIn, bitdec_opening, masked_offset
from protocols.normed_secure_sum import encode_inputs, normed_secure_sum
from sim.experiments.svd.normed_secure_sum import with_dealer
from sim.privacy import SimPyRunner, audit

P = 2**61 - 1
TRIALS = 40


def _inputs(d: int = 4, m: int = 3) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    return [rng.normal(size=d) for _ in range(m)]


def _honest(variant: str = "normed", d: int = 4, m: int = 3):
    inputs = _inputs(d, m)
    program = lambda ctx, x: normed_secure_sum(ctx, x, variant=variant, params=PARAMS)  # noqa: E731
    return with_dealer(site_parties(program, [{"x": x} for x in inputs]), [(1, d)], variant,
                       PARAMS)


@pytest.mark.parametrize("coalition", [(0,), pytest.param((1, 2), marks=pytest.mark.slow)])
def test_the_honest_call_is_private_with_power(coalition: tuple[int, ...]) -> None:
    result = audit(_honest(), None, coalition, prime=P, trials=TRIALS, seed=2)
    assert result.verdict == "private", result.details
    assert result.power is not None and result.power["linear"]["undetermined"] == 0
    assert result.details["simulated_runs"] == TRIALS * 8
    assert "normed_secure_sum (inferred)" in result.details["protocols"]


@pytest.mark.slow
@pytest.mark.parametrize("coalition", [(1,), (2,), (0, 1), (0, 2)])
def test_every_other_coalition_below_threshold_is_private(coalition: tuple[int, ...]) -> None:
    result = audit(_honest(), None, coalition, prime=P, trials=TRIALS, seed=2)
    assert result.verdict == "private", result.details
    assert result.power is not None


def test_the_dealer_alone_sees_nothing_and_with_a_site_sees_everything() -> None:
    alone = audit(_honest(), None, (3,), prime=P, trials=8, seed=2)
    assert alone.verdict == "private" and alone.details["view_elements"] == 0
    both = audit(_honest(), None, (0, 3), prime=P, trials=8, seed=2)
    assert both.verdict == "leak" and both.call == 1
    assert "dealer" in both.details["reason"]


@pytest.mark.parametrize("variant,what", [("reveal_norm", "‖S‖²"), ("secure_sum", "S (")])
def test_the_revealing_variants_are_reported_with_what_they_reveal(variant: str,
                                                                   what: str) -> None:
    """Private relative to the leakage they declare (tests/parties/test_nss_variant_leakage)."""
    result = audit(_honest(variant), None, (0,), prime=P, trials=8, seed=2)
    assert result.verdict != "leak", result.details
    assert result.details["reveals"]["normed_secure_sum#1"].startswith(what)


@pytest.mark.parametrize("leak,coalition,step", [
    ("unmasked_trunc", (0,), ".masked.x from 0 to 0"),
    pytest.param("open_carry", (1,), ".masked.x.carry from 1 to 1", marks=pytest.mark.slow),
    ("repeated_triples", (0,), "01.beaver.norm_sq"),
    ("repeated_output_masks", (0,), ".masked.output from 0 to 0"),
    pytest.param("reused_input_mask", (0, 1), "00.input.share from 2 to",
                 marks=pytest.mark.slow),
])
def test_each_planted_leak_is_caught_at_its_opening(leak: str, coalition: tuple[int, ...],
                                                    step: str) -> None:
    result = audit(nss_parties(leak, _inputs()), None, coalition, prime=P, trials=TRIALS,
                   seed=2)
    assert result.verdict == "leak", result.details
    assert result.call == 1 and step in result.message, result.message


@pytest.mark.slow
def test_the_honest_plant_baseline_is_private() -> None:
    result = audit(nss_parties(None, _inputs()), None, (2,), prime=P, trials=TRIALS, seed=2)
    assert result.verdict == "private", result.details


def test_repeated_triples_give_away_differences_of_the_sum() -> None:
    """The attack: ε_i − ε_0 of the squares' opening equals S_i − S_0 (S the encoded sum)."""
    inputs = _inputs()
    parties = nss_parties("repeated_triples", inputs)
    runner = SimPyRunner("2^61-1")
    ids = [p.id for p in parties]
    views = runner(parties, ConditionedRandomness(ids, (0,), 3, 0))
    field = mpc_field(P)
    record = next(r for c, r in split_run(views, (0,), runner.field, (0, 1, 2)).items()
                  if c.protocol == "normed_secure_sum")
    step = "01.beaver.norm_sq"
    eps = record.view.sent[(1, 0, step)]
    for h in (1, 2):
        eps = field.add(eps, record.received[(0, h, step, 0)])
    eps = [int(v) for v in to_ints(field, eps)]
    total = sum(encode_inputs(x, PARAMS).astype(object) for x in inputs)
    assert [(e - eps[0]) % P for e in eps] == [int(t - total[0]) % P for t in total]
    honest = audit(nss_parties(None, inputs), None, (0,), prime=P, trials=4, seed=3)
    assert honest.verdict != "leak"


def test_repeated_output_masks_give_away_exact_ratios_of_the_sum() -> None:
    """The attack: the output TruncPr's c_i − c_0 = W_i − W_0 = (S′_i − S′_0)·u, so
    (c_i − c_0)(S_j − S_0) = (c_j − c_0)(S_i − S_0) exactly (S the encoded sum, from numpy)."""
    inputs = _inputs()
    parties = nss_parties("repeated_output_masks", inputs)
    runner = SimPyRunner("2^61-1")
    views = runner(parties, ConditionedRandomness([p.id for p in parties], (0,), 3, 0))
    field = mpc_field(P)
    record = next(r for c, r in split_run(views, (0,), runner.field, (0, 1, 2)).items()
                  if c.protocol == "normed_secure_sum")
    step = next(k[2] for k in record.view.sent if k[2].endswith(".masked.output"))
    c = record.view.sent[(1, 0, step)]
    for h in (1, 2):
        c = field.add(c, record.received[(0, h, step, 0)])
    diff = [int(v) - int(to_ints(field, c)[0]) for v in to_ints(field, c)]
    total = [int(t) for t in sum(encode_inputs(x, PARAMS).astype(object) for x in inputs)]
    ds = [t - total[0] for t in total]
    assert any(diff[1:])
    for i in range(1, len(ds)):
        for j in range(1, len(ds)):
            assert diff[i] * ds[j] == diff[j] * ds[i]


def test_the_opening_laws_have_their_declared_ranges() -> None:
    field = mpc_field(P)
    rng = np.random.default_rng(0)
    K, kappa = 20, 20
    c = [int(v) for v in to_ints(field, masked_offset(field, rng, 4000, K, kappa))]
    assert min(c) >= 1 << (K - 1) and max(c) < (1 << (K - 1)) + (1 << (K + kappa))
    assert max(c) > (1 << (K - 1)) + (1 << (K + kappa - 1))  # spread over the window
    ell = 30
    b = [int(v) for v in to_ints(field, bitdec_opening(field, rng, 4000, ell, kappa))]
    assert min(b) > 0 and max(b) <= 1 << (ell + kappa)


def test_the_stand_in_completes_each_opening_from_the_members_shares() -> None:
    field = mpc_field(P)
    rng = np.random.default_rng(1)
    opened = field.random(np.random.default_rng(9), 5)
    side = OpeningStandIn(field, (1, 2), lambda kind, label, n, g: opened, rng)
    own = field.random(np.random.default_rng(4), 5)
    heard = {(h, 0, "03.beaver.z"): own for h in (1, 2)}
    got = {h: side.reply(h, "03.beaver.z", heard, {0: 5})[0] for h in (1, 2)}
    total = [(int(a) + int(b) + int(c)) % P for a, b, c in
             zip(to_ints(field, got[1]), to_ints(field, got[2]), to_ints(field, own),
                 strict=True)]
    assert total == [int(v) for v in to_ints(field, opened)]
    again = side.reply(1, "03.beaver.z", heard, {0: 5})[0]
    assert [int(v) for v in to_ints(field, again)] == [int(v) for v in to_ints(field,
                                                                                 got[1])]
