"""Issue 27, classes 3 and 4 and the broadcast false alarm: the functionality is the protocol's.

Class 3 — outputs beyond the functionality: programs (:mod:`planted_functionality`) that run
SecureSum honestly on more than they record and declare the result; the simulator, handed that
output, reproduces every message, so only the check of every declared output against the
protocol's ideal functionality (:mod:`parties.audit.functionality`) catches them — in every
method. The audit target, not the program, names the protocol that judges the calls.

Class 4 — determined calls (one honest party) are simulated with the honest inputs their
outputs determine, so a share that carries an input of no call is caught.

False alarm — one honest broadcast of an undeclared value to two members is one pad, not two.

Expected values are computed here from the inputs with Python integers and numpy, never taken
from the code under test; each leak is shown real by reading the honest value from the views.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import planted_functionality as pf
import pytest
from auditing import F5, F61, P, field_inputs, ints, run_views

from algorithms.nmf import pd_nmf as pd_nmf_module
from parties.audit import SIMULATORS, ConditionedRandomness
from parties.audit.functionality import call_instances, check_outputs
from parties.party import site_parties
from protocols.effects import Call
from protocols.errors import InputError
from protocols.field import prime_field
from protocols.functionality import Ideal, beyond
from protocols.registry import REGISTRY, Declaration, resolve, with_declaration
from protocols.secure_sum import SecureSumSimulator
from protocols.secure_sum import functionality as secure_sum_functionality
from sim.privacy import SimPyRunner, audit, secure_sum_program
from sim.runner import run_scenario

METHODS = ("simulation", "statistical", "exact", "linear")
CLASS_3 = (pf.extra_coordinate, pf.extra_output, pf.shifted_sum)


def _inputs(method: str, n: int = 3, d: int = 3, seed: int = 4) -> list[np.ndarray]:
    """Field inputs; in GF(5) for the exact method, with x̂_1 ≠ 0 so the shift shows on A."""
    if method != "exact":
        return field_inputs(F61, n, d, seed)
    return [F5.elements([v]) for v in (2, 3, 1, 4)[:n]]


def _prime(method: str) -> int:
    return 5 if method == "exact" else P


# -- the registry and the rule of the audit target ----------------------------------------------


def test_every_protocol_declares_a_functionality_and_a_simulator() -> None:
    assert set(REGISTRY) == {"secure_sum", "all_reduce", "normed_secure_sum", "dealer", "cape",
                             "secagg", "all_gather", "sketch_seed", "ring_all_reduce"}
    assert set(SIMULATORS) == set(REGISTRY)
    assert isinstance(SIMULATORS["secure_sum"]("prg"), SecureSumSimulator)


def test_the_target_names_the_judges_and_what_they_use() -> None:
    judges = resolve("normed_secure_sum")
    assert judges.allowed == {"normed_secure_sum", "dealer"}
    assert judges.judge("dealer") is REGISTRY["dealer"]
    assert judges.judge("secure_sum") is None and "not part of it" in judges.why_not(
        "secure_sum")
    assert resolve("all_reduce").allowed == {"all_reduce", "secure_sum"}
    anything = resolve(None)
    assert anything.judge("secure_sum") is REGISTRY["secure_sum"]
    assert anything.judge("mine") is None and "no protocol 'mine'" in anything.why_not("mine")
    mine = Declaration("mine", secure_sum_functionality, SecureSumSimulator)
    assert resolve(mine).judge("mine") is mine
    assert with_declaration(mine)["mine"] is mine and "mine" not in REGISTRY
    for bad in (5, [], ["secure_sum", 3]):
        with pytest.raises(InputError, match="must name the protocol under audit"):
            resolve(bad)
    with pytest.raises(InputError, match="protocol = 5"):
        audit(pf.extra_output, field_inputs(F61, 3, 2, 0), (0,), prime=P, protocol=5)


def test_the_secure_sum_functionality_is_the_column_sum() -> None:
    inputs = field_inputs(F61, 3, 4, 1)
    views = run_views(pf.extra_coordinate, inputs)
    (inst,) = call_instances(views, F61, (0, 1, 2)).values()
    ideal = secure_sum_functionality(inst)["sum"].value
    assert ints(ideal) == [sum(int(x[i]) for x in inputs) % P for i in range(4)]
    declared = dict(inst.outputs[0])["sum"]
    assert ints(declared)[-1] == int(inputs[1][0])  # the attack: party 0 reads x̂_1[0]
    assert beyond({"sum": Ideal(ideal)}, (("sum", declared),))[0] == "sum"
    assert beyond({"sum": Ideal(ideal)}, (("sum", ideal),)) is None
    assert beyond({"sum": Ideal(np.array([1.0]), 1e-3)}, (("sum", np.array([1.0005])),)) is None


# -- class 3: outputs beyond the functionality ---------------------------------------------------


@pytest.mark.parametrize("program", CLASS_3, ids=lambda p: p.__name__)
@pytest.mark.parametrize("method", METHODS)
def test_an_output_beyond_the_functionality_is_a_leak_for_every_method(program, method) -> None:
    inputs = _inputs(method)
    for coalition in ((0,), (0, 2)):
        r = audit(program, inputs, coalition, prime=_prime(method), method=method, trials=24)
        assert r.verdict == "leak", (coalition, r.details)
        assert r.call == 1 and r.details["check"] == "functionality"
        assert "output beyond the functionality" in r.details["reason"]
        assert r.message.startswith("secure_sum#1.")


def test_the_leaked_outputs_carry_an_honest_input() -> None:
    """The attacks: a coalition without party 1 reads x̂_1 from its declared outputs."""
    inputs = field_inputs(F61, 3, 3, 7)
    views = run_views(pf.extra_coordinate, inputs)
    assert ints(next(v for _, lab, v in views[0].outputs if lab == "sum"))[-1] == int(inputs[1][0])
    views = run_views(pf.extra_output, inputs)
    assert ints(next(v for _, lab, v in views[2].outputs if lab == "check")) == ints(inputs[1])
    views = run_views(pf.shifted_sum, inputs)
    (shifted,) = [v for _, lab, v in views[0].outputs if lab == "sum"]
    # {0, 2}: the declared sum minus their inputs and the true remainder is x̂_1 once more
    true = [sum(int(x[i]) for x in inputs) % P for i in range(3)]
    assert [(int(s) - t) % P for s, t in zip(shifted, true, strict=True)] == ints(inputs[1])


def test_the_exact_method_checks_the_functionality_on_every_enumerated_input() -> None:
    """On A the shifted sum is right (x̂_1 = 0); the enumeration finds an input where not."""
    inputs = [F5.elements([v]) for v in (2, 0, 1)]
    r = audit(pf.shifted_sum, inputs, (0,), prime=5, method="exact")
    assert r.verdict == "leak" and r.details["check"] == "functionality"
    assert r.details["alternative"][1] != 0


def test_the_program_does_not_choose_its_judge() -> None:
    inputs = field_inputs(F61, 3, 3, 2)
    # the honest explicit SecureSum, named "all_reduce" by its program
    r = audit(pf.renamed_sum, inputs, (0,), prime=P, trials=24, protocol="secure_sum")
    assert r.verdict == "not applicable" and "not part of it" in r.details["reason"]
    for method in ("statistical", "linear"):
        r = audit(pf.renamed_sum, inputs, (0,), prime=P, method=method, trials=24,
                  protocol="secure_sum")
        assert r.verdict == "not applicable", method
    # named all_reduce by the target, it is judged as the (clear) All-Reduce declares
    r = audit(pf.renamed_sum, inputs, (0,), prime=P, trials=24, protocol="all_reduce")
    assert r.verdict == "leak" and r.details["declared_by"] == "all_reduce"
    # an honest SecureSum under the target all_reduce: its calls are one it uses
    r = audit(pf.extra_coordinate, inputs, (1,), prime=P, trials=24, protocol="all_reduce")
    assert r.verdict == "leak"  # judged by secure_sum's functionality all the same


def test_a_users_own_declaration_judges_its_calls() -> None:
    inputs = field_inputs(F61, 3, 3, 2)
    mine = Declaration("all_reduce", secure_sum_functionality, SecureSumSimulator)
    r = audit(pf.renamed_sum, inputs, (0,), prime=P, trials=48, protocol=mine)
    assert r.verdict == "private", r.details
    assert r.details["judged_by"] == "the audit target: all_reduce"


def test_a_scenario_audit_reports_an_output_beyond_the_functionality(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pd_nmf_module, "secure_sum", pf.pd_nmf_extra_coordinate)
    run = run_scenario({
        "seed": 3, "network": {"parties": 3, "sealing": False},
        "data": {"source": "synthetic", "rows": 12, "cols": 4},
        "algorithm": {"name": "pd_nmf", "k": 2, "iterations": 1, "init": "random"},
        "audit": [{"coalition": [0], "trials": 12},
                  {"coalition": [2], "method": "statistical", "trials": 10}]})
    sim, ab = run.report["privacy"]
    assert sim["verdict"] == "leak" and sim["call"] == 1, sim
    assert "output beyond the functionality" in sim["details"]["reason"]
    assert sim["message"] == "secure_sum#1.sum output at 0"
    assert ab["verdict"] != "private"


def test_normed_secure_sum_outputs_pass_and_a_shifted_direction_does_not() -> None:
    """PD-SVD's NormedSecureSum calls: their outputs are s/‖s‖ within the stated tolerance."""
    run = run_scenario({
        "seed": 5, "network": {"parties": 3, "sealing": False},
        "field": {"prime": "2^127-1"},
        "data": {"source": "synthetic", "rows": 30, "cols": 4},
        "algorithm": {"name": "pd_svd", "k": 2, "iterations": 2}})
    views = run.run.result.views
    sites = tuple(run.run.result.sites)
    field_ = prime_field(2**127 - 1)
    judges = resolve(("secure_sum", "normed_secure_sum"))
    assert check_outputs(views, (0,), field_, sites, judges) is None
    nss = [c for c in call_instances(views, field_, sites) if c.protocol == "normed_secure_sum"]
    assert nss
    inst = call_instances(views, field_, sites)[nss[0]]
    sums = np.sum([np.asarray(inst.input_of(p), dtype=np.float64) for p in sites], axis=0)
    rows = sums.reshape(-1, sums.shape[-1])
    want = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    (got,) = [v for lab, v in inst.outputs[0] if lab == "direction"]
    assert np.allclose(np.reshape(got, want.shape), want, atol=1e-4)
    ideal = REGISTRY["normed_secure_sum"].functionality(inst)
    assert ideal["direction"].tol < 1e-4  # on the 2^-20 grid of the default parameters
    # party 0's output carrying 0.01 · x_1 (scaled to at most 1): beyond the functionality
    x1 = np.asarray(inst.input_of(1), dtype=np.float64)
    nudged = np.asarray(got) + 0.01 * (x1 / np.max(np.abs(x1))).reshape(np.shape(got))
    assert beyond(ideal, (("direction", nudged),))[0] == "direction"
    inst_nudged = replace(inst, outputs={0: (("direction", nudged),)})
    assert beyond(REGISTRY["normed_secure_sum"].functionality(inst_nudged),
                  (("direction", nudged),))[0] == "direction"


# -- class 4: determined calls are simulated ------------------------------------------------------


def test_a_share_carrying_an_input_of_no_call_is_caught_with_one_honest_party() -> None:
    rng = np.random.default_rng(3)
    inputs = [{"x": F61.random(rng, 3), "y": F61.random(rng, 3)} for _ in range(2)]
    r = audit(pf.share_is_secret, inputs, (0,), prime=P, trials=48)
    assert r.verdict == "leak" and r.message == "secure_sum#1.share from 1 to 0", r.details
    for method in ("statistical", "exact", "linear"):  # kw inputs: the others cannot apply
        assert audit(pf.share_is_secret, inputs, (0,), prime=P, method=method,
                     trials=8).verdict == "not applicable"
    # the attack: party 0 reads y_1 from the share it receives
    parties = site_parties(pf.share_is_secret, inputs)
    views = SimPyRunner(P)(parties, ConditionedRandomness([0, 1], (0,), 0, 0))
    (share,) = [m.payload for m in views[0].received if m.step == "share"]
    assert ints(share) == ints(inputs[1]["y"])


@pytest.mark.parametrize(("n_parties", "coalition"), [(2, (0,)), (3, (0, 2))])
def test_a_share_carrying_the_part_of_x_no_call_sums_is_caught(n_parties, coalition) -> None:
    for method in METHODS:
        inputs = ([F5.elements(v) for v in ([1, 2], [3, 4], [0, 1])[:n_parties]]
                  if method == "exact" else field_inputs(F61, n_parties, 4, 9))
        r = audit(pf.share_is_tail, inputs, coalition, prime=_prime(method), method=method,
                  trials=48, max_runs=20_000)
        if method == "statistical":  # one honest party, whose input the sums do not determine
            assert r.verdict == "not applicable" and "not determined" in r.details["reason"]
        else:
            assert r.verdict == "leak", (method, r.details)
    views = run_views(pf.share_is_tail, field_inputs(F61, n_parties, 4, 9))
    (share,) = [m.payload for m in views[0].received if m.step == "share" and m.sender == 1]
    assert ints(share) == ints(field_inputs(F61, n_parties, 4, 9)[1][2:])  # the attack


def test_a_second_copy_of_the_input_departs_from_the_simulator_only() -> None:
    """x̂_1 in place of a share: determined by the sum, so the coalition learns nothing new —
    the other methods, which test information, say private; the simulation method flags the
    share that should be uniform (the call is simulated although its outputs determine x̂_1)."""
    inputs = field_inputs(F61, 3, 3, 5)
    r = audit(pf.share_is_copy, inputs, (0, 2), prime=P, trials=48)
    assert r.verdict == "leak" and r.message == "secure_sum#1.share from 1 to 0"
    for method in ("statistical", "linear"):
        assert audit(pf.share_is_copy, inputs, (0, 2), prime=P, method=method,
                     trials=24).verdict == "private", method


@pytest.mark.parametrize("variant", ["prg", "explicit"])
def test_honest_secure_sum_with_one_honest_party_stays_private(variant: str) -> None:
    for n_parties in (2, 3):
        inputs = field_inputs(F61, n_parties, 3, n_parties)
        coalition = tuple(range(n_parties - 1))
        r = audit(secure_sum_program(variant), inputs, coalition, prime=P, trials=48)
        assert r.verdict == "private", (variant, n_parties, r.details)
        assert r.details["determined_calls"] == 1


# -- the broadcast false alarm ---------------------------------------------------------------------


def test_one_honest_broadcast_to_two_members_is_not_a_leak() -> None:
    inputs = field_inputs(F61, 4, 3, 8)
    r = audit(pf.honest_broadcast, inputs, (0, 1), prime=P, trials=48)
    assert r.verdict == "private", r.details
    assert r.power["sup_cdf_distance"] < 1.0 and r.power["linear"]["undetermined"] == 0
    views = run_views(pf.honest_broadcast, inputs)
    beacons = {m.sender: [] for m in views[0].received}
    for member in (0, 1):
        for m in views[member].received:
            if m.step == "beacon" and m.sender in (2, 3):
                beacons[m.sender].append(ints(m.payload))
    assert all(len(v) == 2 and v[0] == v[1] for s, v in beacons.items() if s in (2, 3))


@pytest.mark.parametrize("program", [pf.broadcast_input, pf.broadcast_offset],
                         ids=lambda p: p.__name__)
def test_a_broadcast_that_carries_an_input_is_still_caught(program) -> None:
    inputs = field_inputs(F61, 4, 3, 8)
    r = audit(program, inputs, (0, 1), prime=P, trials=48)
    assert r.verdict == "leak" and r.message.startswith("secure_sum#1.beacon from 3 to ")
    views = run_views(program, inputs)
    got = {m_: next(ints(m.payload) for m in views[m_].received if m.step == "beacon"
                and m.sender == 3) for m_ in (0, 1)}
    if program is pf.broadcast_input:
        assert got[0] == [int(inputs[3][0])]
    else:  # r to its first peer (0), r + x̂_3[0] to 1: the difference is the input
        assert (got[1][0] - got[0][0]) % P == int(inputs[3][0])


def test_call_instances_name_every_party_and_sender() -> None:
    inputs = field_inputs(F61, 3, 2, 1)
    views = run_views(pf.extra_output, inputs)
    inst = call_instances(views, F61, (0, 1, 2))[Call("secure_sum", 1)]
    assert inst.contributors == (0, 1, 2)
    assert inst.senders[(0, "share")] == (1, 2)
    assert {lab for lab, _ in inst.outputs[1]} == {"sum", "check"}
