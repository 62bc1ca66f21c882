"""Simulators declared by the protocols that arrived after SecureSum, and declared absences.

* The plain All-Reduce (:class:`protocols.all_reduce.AllReduceSimulator`) hands every peer the
  honest inputs: a whole-run audit answers "leak" at its first honest message whenever two or
  more parties are honest, and "private" with one (the declared sum then determines the honest
  input). The test reads the views itself: the flagged message *is* the honest input, and
  the A/B method, which knows nothing of the declaration, flags the same coalitions.
* Its simulator's draws keep the declared sum (checked with Python integers mod p).
* NormedSecureSum and its dealer are simulated by re-running the coalition's programs:
  PD-SVD's ``normed`` run is audited whole (``private`` with power), its SecureSum variant
  too, and the ``sigma_revealing`` baseline is a ``leak`` named as revealing Σ. CAPE's
  simulator needs the declared noise plan (:mod:`protocols.cape_simulator`): without it the
  audit of a run that calls CAPE answers "not applicable", naming the call — never "private".
"""

from __future__ import annotations

import numpy as np
import pytest
from auditing import F61, P, coalitions, field_inputs, run_views

from parties.audit.calls import CallRecord, select_calls, split_run
from protocols.all_reduce import AllReduceSimulator, all_reduce, all_reduce_field
from protocols.cape_noise_plans import cape_plan
from protocols.correlated_noise import cape_aggregator, cape_noise_generator, cape_site
from protocols.effects import Call
from protocols.errors import InputError
from protocols.registry import cape_declaration
from sim.experiments.cape.cape_setup import cape_parties
from sim.privacy import audit
from sim.runner import run_scenario


def plain(ctx, x):
    return all_reduce_field(ctx, x, "plain")


@pytest.mark.parametrize("n_parties", [3, 4])
def test_the_plain_all_reduce_leaks_exactly_when_two_parties_are_honest(n_parties: int) -> None:
    inputs = field_inputs(F61, n_parties, 3, seed=4)
    views = run_views(plain, inputs)
    for coalition in coalitions(n_parties):
        result = audit(plain, inputs, coalition, prime=P, trials=12, seed=1)
        honest = [h for h in range(n_parties) if h not in coalition]
        if len(honest) == 1:
            assert result.verdict == "private", (coalition, result.details)
            continue
        assert result.verdict == "leak" and result.call == 1, (coalition, result.details)
        # "all_reduce#1.value from H to R": that message carries H's input, read off the view
        head, receiver = result.message.rsplit(" to ", 1)
        sender = int(head.rsplit(" from ", 1)[1])
        assert sender in honest and int(receiver) in coalition
        (payload,) = [m.payload for m in views[int(receiver)].received if m.sender == sender]
        assert [int(v) for v in payload] == [int(v) for v in inputs[sender]]


def test_the_ab_method_flags_the_plain_all_reduce_without_the_declaration() -> None:
    inputs = field_inputs(F61, 4, 3, seed=5)
    result = audit(plain, inputs, (1, 3), prime=P, method="statistical", trials=48, seed=2)
    assert result.verdict == "leak", result.details
    secure = audit(lambda ctx, x: all_reduce_field(ctx, x, "secure_sum"), inputs, (1, 3),
                   prime=P, method="statistical", trials=48, seed=2)
    assert secure.verdict == "private", secure.details


def test_the_all_reduce_simulator_keeps_the_declared_sum() -> None:
    n_parties, members = 4, (0, 2)
    inputs = field_inputs(F61, n_parties, 5, seed=6)
    views = run_views(plain, inputs)
    view = split_run(views, members, F61, range(n_parties))[Call("all_reduce", 1)].view
    draws = AllReduceSimulator("plain").simulate(view, np.random.default_rng(0), 40)
    total = sum(int(v) for x in inputs for v in np.ravel(x)[:1])  # coordinate 0, in Python ints
    first = {key: [int(v) for v in values[:, 0]] for key, values in draws.items()}
    for receiver in members:
        honest_sum = [sum(col) % P for col in zip(first[(receiver, 1, "value")],
                                                   first[(receiver, 3, "value")], strict=True)]
        assert honest_sum == [(total - int(inputs[0][0]) - int(inputs[2][0])) % P] * 40
        assert len(set(first[(receiver, 1, "value")])) == 40  # drawn, not copied
    assert [int(v) for v in draws[(0, 2, "value")][7]] == [int(v) for v in inputs[2]]


def test_a_plain_all_reduce_of_real_numbers_is_audited_too() -> None:
    rng = np.random.default_rng(3)
    shards = [{"x": rng.random(4)} for _ in range(3)]

    def program(ctx, x):
        return all_reduce(ctx, x, method="plain", average=True, output="mean")

    leak = audit(program, shards, (0,), prime=P, frac_bits=20, trials=12)
    assert leak.verdict == "leak" and leak.message.startswith("all_reduce#1.value from ")
    determined = audit(program, shards, (0, 2), prime=P, frac_bits=20, trials=12)
    assert determined.verdict == "private", determined.details


def test_cape_without_a_declared_plan_answers_not_applicable_and_says_what_to_declare() -> None:
    """CAPE's simulator draws from the declared noise law: the registry's own declaration has
    none, so it names the call and the declaration to pass; with it the run is audited."""
    plan = cape_plan(0.5, 3)
    rng = np.random.default_rng(1)
    parties = cape_parties(
        lambda ctx, x: cape_site(ctx, x, plan),
        [{"x": rng.random(4)} for _ in range(3)],
        (lambda ctx: cape_aggregator(ctx, plan, 4), {}),
        (lambda ctx: cape_noise_generator(ctx, plan, 4), {}),
    )
    result = audit(parties, None, (0, 1), prime=P, frac_bits=20, trials=10)
    assert result.verdict == "not applicable" and result.call == 1
    assert "cape_declaration(plan, frac_bits)" in result.details["reason"]
    declared = audit(parties, None, (0, 1), prime=P, frac_bits=20, trials=60,
                     protocol=cape_declaration(plan, 20))
    assert declared.verdict == "private", declared.details


def _scenario(name: str, **algorithm) -> dict:
    return {
        "seed": 5,
        "network": {"parties": 3, "sealing": False},
        "field": {"prime": "2^127-1"},
        "data": {"source": "synthetic", "rows": 30, "cols": 4},
        "algorithm": {"name": name, **algorithm},
        "audit": [{"coalition": [0], "trials": 40}],
    }


@pytest.mark.parametrize("name,algorithm,prime", [
    pytest.param("normed_secure_sum", {}, "2^127-1", marks=pytest.mark.slow),
    pytest.param("pd_svd", {"k": 2, "iterations": 2}, "2^127-1", marks=pytest.mark.slow),
    ("pd_svd", {"k": 2, "iterations": 2, "preset": "p61-demo"}, "2^61-1"),
])
def test_normed_secure_sum_runs_are_audited_whole(name: str, algorithm: dict,
                                                  prime: str) -> None:
    """NormedSecureSum's simulator re-runs the coalition's programs (issue 28)."""
    spec = _scenario(name, **algorithm)
    spec["field"] = {"prime": prime}
    (entry,) = run_scenario(spec).report["privacy"]
    assert entry["verdict"] == "private", entry
    assert entry["power"] is not None
    assert entry["details"]["simulated_runs"] > 0


def test_pd_svd_sigma_revealing_is_reported_as_revealing_sigma() -> None:
    spec = _scenario("pd_svd", k=2, iterations=2, variant="sigma_revealing")
    spec["field"] = {"prime": "2^61-1"}
    (entry,) = run_scenario(spec).report["privacy"]
    assert entry["verdict"] == "leak", entry
    assert entry["details"]["reason"].startswith("revealing Σ"), entry


def test_pd_svd_over_secure_sum_is_audited_whole() -> None:
    spec = _scenario("pd_svd", k=2, iterations=2, variant="secure_sum")
    spec["field"] = {"prime": "2^61-1"}
    (entry,) = run_scenario(spec).report["privacy"]
    assert entry["verdict"] == "private", entry
    assert entry["details"]["calls"] == 4  # V_init, then S_m V in each of 2 iterations, σ
    assert entry["power"] is not None



def test_a_call_number_selects_every_call_that_has_it() -> None:
    """The dealer tags its material by instance: its call 0 and SecureSum's call 0 coexist."""
    records = {c: CallRecord(c) for c in [Call("secure_sum", 1), Call("dealer", 0),
                                          Call("secure_sum", 0)]}
    assert select_calls(records, [0]) == [Call("dealer", 0), Call("secure_sum", 0)]
    assert select_calls(records, None)[-1] == Call("secure_sum", 1)
    with pytest.raises(InputError, match=r"calls = \[2\] are not in the run"):
        select_calls(records, [2])
