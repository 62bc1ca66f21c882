"""The simulation method on SecAgg / SecAgg+ (:class:`protocols.secagg_simulator.SecAggSimulator`).

Honest runs are ``private``, with power, for coalitions below the threshold — the aggregator
included or not, with a dropout, on the complete and the Harary graph; planted leaks
(:mod:`planted_secagg`) are ``leak`` at the call and message where they depart; each leak is
shown real by an attack that recovers site 0's input from the coalition's views.
"""

from __future__ import annotations

import itertools

import numpy as np
import planted_secagg as ps
import pytest

from parties.audit.calls import split_run
from parties.audit.randomness import ConditionedRandomness
from protocols.errors import InputError
from protocols.field import prime_field
from protocols.secagg import Config, config_of, variant_of
from protocols.secagg_simulator import SecAggSimulator
from sim.faults import parse_faults
from sim.network import Network
from sim.privacy import SimPyRunner
from sim.simulation import Simulation

P61 = 2**61 - 1
F = prime_field(P61)
M, T = 4, 3
AGG = M
CONFIG = Config(threshold=T)


def inputs_for(m: int = M, d: int = 3, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [F.elements(rng.integers(0, 1000, d)) for _ in range(m)]


def run_audit(parties, coalition, config=CONFIG, trials=200, faults=None, seed=2,
              oracle="aes"):
    runner = SimPyRunner(P61, 0, 0, Network.build(len(parties)),
                         None if faults is None else parse_faults(faults), oracle)
    from parties.audit.simulation import simulation_audit

    return simulation_audit(runner, parties, coalition, trials=trials, seed=seed,
                            protocol="secagg", variant=variant_of(config, oracle))


DROP_BEFORE_UNMASK = [{"kind": "crash", "party": 1, "call": "secagg", "step": "unmask"}]
DROP_BEFORE_MASKING = [{"kind": "crash", "party": 2, "call": "secagg",
                        "step": "masked_input"}]


# -- honest runs ------------------------------------------------------------------------------


@pytest.mark.parametrize(("coalition", "faults", "trials"), [
    ((0,), None, 120),
    pytest.param((0, 1), DROP_BEFORE_UNMASK, 120, marks=pytest.mark.slow),
    pytest.param((AGG,), DROP_BEFORE_MASKING, 300, marks=pytest.mark.slow),
    ((0, AGG), DROP_BEFORE_UNMASK, 200),
    pytest.param((0, 3, AGG), None, 200, marks=pytest.mark.slow),
])
def test_honest_secagg_is_private_with_power(coalition, faults, trials) -> None:
    parties = ps.leaky_parties(inputs_for(), CONFIG, None)
    r = run_audit(parties, coalition, trials=trials, faults=faults)
    assert r.verdict == "private", r.details
    assert r.power["linear"]["undetermined"] == 0
    assert r.power["sup_cdf_distance"] < 0.5


@pytest.mark.slow
def test_honest_secagg_is_private_for_every_coalition_below_the_threshold() -> None:
    parties = ps.leaky_parties(inputs_for(), CONFIG, None)
    for size in range(T):
        for sites in itertools.combinations(range(M), size):
            for coalition in (sites, (*sites, AGG)):
                if coalition:
                    r = run_audit(parties, coalition, trials=300, faults=DROP_BEFORE_UNMASK)
                    assert r.verdict == "private", (coalition, r.details)


@pytest.mark.slow  # 22 s
def test_honest_secagg_plus_on_a_harary_graph_is_private() -> None:
    """SecAgg+ (Bell et al.): H_{2,5}, a ring; t = 2, so one site at most colludes."""
    config = Config(threshold=2, graph="harary", degree=2)
    parties = ps.leaky_parties(inputs_for(5), config, None)
    for coalition, trials in (((0,), 100), ((5,), 300), ((0, 5), 300)):
        r = run_audit(parties, coalition, config, trials=trials,
                      faults=[{"kind": "crash", "party": 3, "call": "secagg", "step": "unmask"}])
        assert r.verdict == "private", (coalition, r.details)


def test_a_coalition_at_the_threshold_is_told_it_reveals_the_inputs() -> None:
    """t sites hold t shares of every honest site's secrets: beyond Thm 6.3, a leak."""
    r = run_audit(ps.leaky_parties(inputs_for(), CONFIG, None), (0, 1, 2), trials=20)
    assert r.verdict == "leak" and r.call == 1
    assert "≥ t = 3 shares of site 3" in r.details["reason"]


def test_a_harary_aggregator_coalition_that_separates_the_honest_survivors_is_a_leak() -> None:
    """On the ring 0-1-2-3-4-5, the aggregator with sites 0 and 3 sees the sums of {1, 2} and
    of {4, 5} apart: the simulator from the total cannot produce that view."""
    config = Config(threshold=3, graph="harary", degree=2)
    r = run_audit(ps.leaky_parties(inputs_for(6), config, None), (0, 3, 6), config, trials=20)
    assert r.verdict == "leak" and "2 groups [[1, 2], [4, 5]]" in r.details["reason"]


# -- the simulator itself -----------------------------------------------------------------------


def _lagrange_at_zero(points: list[int], values: np.ndarray) -> np.ndarray:
    """Σ_i v_i Π_{j≠i} x_j / (x_j − x_i) mod p, in Python integers (independent of shamir)."""
    out = [0] * values.shape[1]
    for i, xi in enumerate(points):
        num, den = 1, 1
        for j, xj in enumerate(points):
            if j != i:
                num, den = num * xj % P61, den * (xj - xi) % P61
        coef = num * pow(den, -1, P61) % P61
        out = [(o + coef * int(v)) % P61 for o, v in zip(out, values[i], strict=True)]
    return np.array(out, dtype=object)


def test_simulated_unmasking_reconstructs_the_simulated_seeds_and_gives_the_sum() -> None:
    """For the aggregator alone: the unmasking shares of each survivor's b_u lie on one
    polynomial (any t of them interpolate to the same b_u), and Σ_u (y_u − PRG(b_u)) is the
    declared sum — the consistency Bonawitz's simulator programs the oracle for."""
    from Crypto.Cipher import AES  # the test oracle for the AES-CTR expansion

    from protocols.secagg import secret_key, secret_length

    inputs = inputs_for()
    runner = SimPyRunner(P61, 0, 0, Network.build(M + 1))
    views = runner(ps.leaky_parties(inputs, CONFIG, None),
                   ConditionedRandomness(list(range(M + 1)), (AGG,), 1, 0))
    view = next(iter(split_run(views, (AGG,), F, tuple(range(M))).values())).view
    drawn = SecAggSimulator(variant_of(CONFIG)).simulate(view, np.random.default_rng(3), 2)
    lsec, d = secret_length(F), 3
    for k in range(2):
        seeds = {}
        for u in range(M):
            shares = np.stack([drawn[(AGG, w, "unmask")][k].reshape(M, lsec)[u]
                               for w in range(M)])
            first = _lagrange_at_zero([1, 2, 3], shares[:3])
            last = _lagrange_at_zero([2, 3, 4], shares[1:])
            assert list(first) == list(last)
            seeds[u] = F.elements(np.array(first, dtype=object))
        total = 0
        for u in range(M):
            cipher = AES.new(secret_key(seeds[u]), AES.MODE_CTR,
                             nonce=view.call.index.to_bytes(8, "big"), initial_value=0)
            prg = []  # little-endian 64-bit words masked to 61 bits, p itself rejected
            while len(prg) < d:
                word = int.from_bytes(cipher.encrypt(bytes(8)), "little") & P61
                if word < P61:
                    prg.append(word)
            y = [int(v) for v in drawn[(AGG, u, "masked_input")][k]]
            total = np.array([(a - b) % P61 for a, b in zip(y, prg, strict=True)],
                             dtype=object) + total
        expected = [int(sum(int(x[i]) for x in inputs) % P61) for i in range(d)]
        assert [int(v) % P61 for v in total] == expected


def test_the_variant_names_the_configuration() -> None:
    assert config_of(variant_of(Config(3))) == Config(3)
    assert config_of("t=2,harary,k=4") == Config(2, "harary", 4)
    assert config_of(variant_of(Config(3), "affine")) == Config(3)
    with pytest.raises(InputError, match="t=<threshold>"):
        config_of("threshold three")
    with pytest.raises(InputError, match="unknown fields"):
        config_of("t=2,ring")


# -- planted leaks, caught and located ----------------------------------------------------------


@pytest.mark.parametrize(("leak", "coalition", "calls", "where"), [
    ("both_secrets", (AGG,), 1, (1, "secagg#1.unmask from 0 to 4")),
    ("share_to_aggregator", (1, 2, AGG), 1, (1, "secagg#1.unmask from 0 to 4")),
    ("reused_seed", (1,), 2, (2, "secagg#2.shares from 0 to 1")),
    ("reused_seed", (AGG,), 2, (2, "secagg#2.unmask from 0 to 4")),
    ("reused_key", (AGG,), 2, (2, "secagg#2.public_key from 0 to 4")),
])
def test_planted_secagg_leaks_are_caught_and_located(leak, coalition, calls, where) -> None:
    parties = ps.leaky_parties(inputs_for(), CONFIG, leak, calls)
    r = run_audit(parties, coalition, trials=150)
    assert r.verdict == "leak", r.details
    assert (r.call, r.message) == where


def test_a_pair_mask_left_out_on_one_side_is_an_output_beyond_the_sum() -> None:
    r = run_audit(ps.leaky_parties(inputs_for(), CONFIG, "omitted_pair"), (0,), trials=20)
    assert r.verdict == "leak" and r.call == 1
    assert r.message == "secagg#1.sum output at 0"
    assert "output beyond the functionality" in r.details["reason"]


def test_pair_masks_left_out_on_both_sides_are_caught_with_the_programmed_oracle() -> None:
    """The sum is right, and y_0 − PRG(b_0) = x̂_0 holds only through the PRG: with the real
    AES expansion no value or GF(p)-affine test sees it. The audit programs the oracle
    (PRG(b) affine in b, as the proof's simulator programs it), and the relation between the
    masked input and the unmasking shares is then affine: caught at the call's unmasking."""
    parties = ps.leaky_parties(inputs_for(), CONFIG, "omitted_pairs_both_sides")
    r = run_audit(parties, (AGG,), trials=300, oracle="affine")
    assert r.verdict == "leak" and r.call == 1, r.details
    assert r.message.startswith("secagg#1.unmask from ")


def test_the_public_audit_of_secagg_programs_the_oracle_by_default() -> None:
    """``sim.privacy.audit`` with a SecAgg target and no ``oracle`` audits with the programmed
    one, so the leak that the AES expansion hides from every value test is caught; an explicit
    ``oracle="aes"`` is kept (and answers what that oracle can see)."""
    from sim.privacy import audit, default_oracle

    assert default_oracle("simulation", "secagg", None, None) == ("affine", "oracle=affine")
    assert default_oracle("simulation", ("secure_sum", "secagg"), "t=3", None) == (
        "affine", "t=3,oracle=affine")
    assert default_oracle("statistical", "secagg", None, None) == ("aes", None)
    assert default_oracle("simulation", "secure_sum", None, None) == ("aes", None)
    assert default_oracle("simulation", "secagg", "t=3", "aes") == ("aes", "t=3")
    with pytest.raises(InputError, match="oracle"):
        default_oracle("simulation", "secagg", None, "sha")
    parties = ps.leaky_parties(inputs_for(), CONFIG, "omitted_pairs_both_sides")
    r = audit(parties, None, [AGG], prime=P61, trials=300, seed=2, protocol="secagg",
              variant=variant_of(CONFIG))
    assert r.verdict == "leak" and r.call == 1, r.details
    assert r.message.startswith("secagg#1.unmask from ")


def test_honest_secagg_is_private_with_the_programmed_oracle() -> None:
    r = run_audit(ps.leaky_parties(inputs_for(), CONFIG, None), (AGG,), trials=300,
                  oracle="affine", faults=DROP_BEFORE_UNMASK)
    assert r.verdict == "private", r.details


def test_the_honest_program_with_two_calls_stays_private_where_the_reuse_is_caught() -> None:
    r = run_audit(ps.leaky_parties(inputs_for(), CONFIG, None, calls=2), (1,), trials=150)
    assert r.verdict == "private", r.details


# -- the attacks: each leak recovers site 0's input ----------------------------------------------


def _views(parties, faults=None, seed=4):
    sim = Simulation(Network.build(len(parties)), prime=P61, seed=seed,
                     faults=None if faults is None else parse_faults(faults))
    return sim.run(parties).views


def _secagg_calls(view) -> list[int]:
    return sorted({m.call for m in view.received if m.protocol == "secagg"})


def test_both_secrets_lets_the_aggregator_read_site_0s_input() -> None:
    inputs = inputs_for(seed=7)
    views = _views(ps.leaky_parties(inputs, CONFIG, "both_secrets"))
    got = ps.recover_from_both_secrets(F, views[AGG], M, T, _secagg_calls(views[AGG])[0])
    assert [int(v) for v in got] == [int(v) for v in inputs[0]]


def test_a_share_sent_to_the_aggregator_lets_it_and_two_sites_read_site_0s_input() -> None:
    inputs = inputs_for(seed=8)
    views = _views(ps.leaky_parties(inputs, CONFIG, "share_to_aggregator"))
    got = ps.recover_from_wrong_share(F, views, [1, 2], M, T, _secagg_calls(views[AGG])[0])
    assert [int(v) for v in got] == [int(v) for v in inputs[0]]


def test_pair_masks_left_out_on_both_sides_let_the_aggregator_read_site_0s_input() -> None:
    inputs = inputs_for(seed=10)
    views = _views(ps.leaky_parties(inputs, CONFIG, "omitted_pairs_both_sides"))
    got = ps.recover_from_omitted_pairs(F, views[AGG], M, T, _secagg_calls(views[AGG])[0])
    assert [int(v) for v in got] == [int(v) for v in inputs[0]]


def test_a_reused_mask_key_lets_the_aggregator_unmask_the_first_call_after_a_dropout() -> None:
    inputs = inputs_for(seed=9)
    faults = [{"kind": "crash", "party": 0, "call": "secagg#2", "step": "masked_input"}]
    views = _views(ps.leaky_parties(inputs, CONFIG, "reused_key", calls=2), faults)
    calls = _secagg_calls(views[AGG])
    got = ps.recover_from_reused_key(F, views[AGG], M, T, calls[0], calls[1])
    assert [int(v) for v in got] == [int(v) for v in inputs[0]]
