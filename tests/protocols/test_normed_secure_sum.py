"""NormedSecureSum (thesis Fig. 2.3; spec ``normed_secure_sum.md``) in real simulated runs.

Expected values are computed independently: directions with numpy from the encoded sums
(inputs are drawn on the 2^−f grid, so numpy's s/‖s‖ of the real inputs is the exact ideal
output), rounds and opened elements from the closed forms of spec §3, and the headroom bounds
of spec §1.5 by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parties.party import Party
from protocols.errors import EncodingError, FieldOverflowError, InputError, ProtocolAbort
from protocols.normed_secure_sum import (
    PRESETS,
    PROTOCOL,
    HeadroomError,
    NssParams,
    check_layout,
    declared_cost,
    encode_inputs,
    normed_secure_sum,
    nss_dealer,
    spec_formula,
)
from sim.simulation import Result, Simulation

P127, P61 = (1 << 127) - 1, (1 << 61) - 1
F_IN = 16


def run_nss(xs: list[np.ndarray], variant: str = "normed", params: NssParams | None = None,
            prime: int = P127, seed: int = 3, **sim: object) -> Result:
    m = len(xs)
    shape = np.shape(xs[0])
    batch, dim = (1, shape[0]) if len(shape) == 1 else shape
    kw = {"variant": variant, "params": params}
    parties = [Party(i, normed_secure_sum, {"x": xs[i], **kw}) for i in range(m)]
    parties.append(Party(m, nss_dealer, {"calls": [(batch, dim)], **kw}, role="dealer"))
    options = {"keys": "preshared", "sealing": False, **sim}
    return Simulation(prime=prime, seed=seed, **options).run(parties)  # type: ignore[arg-type]


def grid_inputs(rng: np.random.Generator, m: int, d: int, norm: float) -> list[np.ndarray]:
    """M inputs on the 2^−16 grid whose sum has roughly the given norm."""
    raw = rng.normal(size=(m, d))
    raw *= norm / max(np.linalg.norm(raw.sum(axis=0)), 1e-300)
    return [np.rint(r * 2**F_IN) / 2**F_IN for r in raw]


def numpy_direction(xs: list[np.ndarray]) -> np.ndarray:
    s = np.sum(xs, axis=0)
    n = np.linalg.norm(s, axis=-1, keepdims=True)
    return np.divide(s, n, out=np.zeros_like(s), where=n > 0)


@pytest.mark.parametrize(("m", "d"), [(2, 1), (3, 5), (8, 64), (3, 1000)])
def test_direction_within_1e6_of_numpy_for_norms_across_2_to_the_pm10(m: int, d: int) -> None:
    rng = np.random.default_rng(10 * m + d)
    for norm in (2.0**-10, 1.0, 2.0**10):
        xs = grid_inputs(rng, m, d, norm)
        result = run_nss(xs, seed=int(rng.integers(1 << 30)))
        y = result.outputs[0]
        assert np.abs(y - numpy_direction(xs)).max() < 1e-6
        for party in range(1, m):
            assert np.array_equal(result.outputs[party], y)  # everyone learns the same


def test_direction_within_1e6_of_numpy_at_d_10000() -> None:
    rng = np.random.default_rng(7)
    xs = grid_inputs(rng, 3, 10_000, 3.0)
    y = run_nss(xs).outputs[0]
    assert np.abs(y - numpy_direction(xs)).max() < 1e-6


def test_exact_cases_one_hot_equal_pair_powers_of_two_and_zero() -> None:
    one_hot = [np.zeros(6), np.zeros(6)]
    one_hot[0][4] = 3.0
    one_hot[1][4] = -1.0
    y = run_nss(one_hot).outputs[0]
    assert np.array_equal(y, np.eye(6)[4])  # exactly the basis vector
    pair = [np.array([0.5, 0.5]), np.array([0.25, 0.25])]
    assert np.abs(run_nss(pair).outputs[0] - 1 / math.sqrt(2)).max() <= 2.0**-20
    # S and 2^j·S give identical outputs from the same seed: q′ and S′ are identical
    base = [np.array([0.75, -0.25, 1.5]), np.array([0.5, 0.125, -0.25])]
    y0 = run_nss(base, seed=11).outputs[0]
    y1 = run_nss([x * 8 for x in base], seed=11).outputs[0]
    assert np.array_equal(y0, y1)
    zero = [np.array([1.0, -2.0]), np.array([-1.0, 2.0])]
    assert np.array_equal(run_nss(zero).outputs[0], np.zeros(2))


def test_output_is_unbiased() -> None:
    """Mean of Y over 3000 instances (one batched call) agrees with y*·2^f_out within 4σ."""
    k = 3000
    xs = [np.tile([0.25, 0.75, -0.125], (k, 1)), np.tile([0.0625, 0.125, 0.0], (k, 1))]
    y = run_nss(xs).outputs[0] * 2**20
    ystar = numpy_direction([xs[0][0], xs[1][0]]) * 2**20
    frac = ystar - np.floor(ystar)
    sigma = np.sqrt(frac * (1 - frac) / k) + 1e-9
    assert np.all(np.abs(y.mean(axis=0) - ystar) < 4 * sigma + 2**-10)


def protocol_rows(result: Result) -> list:
    return [r for r in result.ledger if r.protocol == PROTOCOL]


@pytest.mark.parametrize(("m", "d", "t"), [(2, 1, 3), (3, 8, 3), (5, 100, 2), (4, 300, 1)])
def test_ledger_equals_declared_cost_and_the_spec_formulas(m: int, d: int, t: int) -> None:
    params = NssParams(newton_steps=t)
    rng = np.random.default_rng(d)
    result = run_nss(grid_inputs(rng, m, d, 5.0), params=params)
    layout = check_layout(params, P127, m, d)
    cost = declared_cost(layout)
    rounds, opened = spec_formula(layout)
    assert (cost.rounds, cost.opened) == (rounds, opened)
    # spec §3 by hand: rounds 11 + 2L + 4t, less O2's 1 + 2t (§2.6)
    assert rounds == 11 + 2 * math.ceil(math.log2(layout.ell)) + 4 * t - (1 + 2 * t)
    rows = protocol_rows(result)
    assert max(r.round for r in rows) - min(r.round for r in rows) + 1 == cost.rounds
    for party in range(m):
        sent = sum(r.elements for r in rows if r.sender == party)
        assert sent == cost.sent == (m - 1) * (d + opened)
    offline = [r for r in result.ledger if r.protocol == "dealer"]
    assert {r.phase for r in offline} == {"offline"} and {r.sender for r in offline} == {m}
    assert sorted(r.elements for r in offline) == [cost.offline] * m
    assert all(r.phase == "" for r in rows)


def test_spec_worked_examples_for_opened_elements() -> None:
    """Spec §3 table: ℓ = 80 at d = 1024 → 37 rounds, 8 442 openings; ℓ = 84 at 16 384 →
    116 024 — less O2's saving in the seed and the Newton steps (1 + 2t rounds, 1 + 6t
    openings) and O1's in the two products by one value per row (2(d − 1) openings) (§2.6)."""
    def saved(rounds: int, opened: int, t: int, d: int) -> tuple[int, int]:
        return rounds - (1 + 2 * t), opened - (1 + 6 * t) - 2 * (d - 1)

    assert spec_formula(check_layout(NssParams(input_bits=34), P127, 3, 1024)
                        ) == saved(37, 8442, 3, 1024)
    assert spec_formula(check_layout(NssParams(input_bits=34), P127, 4, 16384)
                        ) == saved(37, 116024, 3, 16384)
    assert spec_formula(check_layout(NssParams(input_bits=33, newton_steps=2), P127, 5, 100)
                        ) == saved(33, 1919, 2, 100)


def test_a_batch_runs_k_instances_in_the_rounds_of_one() -> None:
    rng = np.random.default_rng(1)
    xs = [np.rint(rng.normal(size=(4, 7)) * 2**F_IN) / 2**F_IN for _ in range(3)]
    result = run_nss(xs)
    assert np.abs(result.outputs[0] - numpy_direction(xs)).max() < 1e-6
    layout = check_layout(PRESETS["p127-default"], P127, 3, 7)
    rows = protocol_rows(result)
    assert max(r.round for r in rows) - min(r.round for r in rows) + 1 == declared_cost(
        layout).rounds
    assert sum(r.elements for r in rows if r.sender == 0) == 4 * declared_cost(layout).sent


@pytest.mark.parametrize(("variant", "rounds", "opened"),
                         [("reveal_norm", 4, lambda d: 2 * d + 1), ("secure_sum", 2, lambda d: d)])
def test_variants_are_accurate_and_cost_what_they_declare(variant: str, rounds: int,
                                                          opened) -> None:
    rng = np.random.default_rng(4)
    m, d = 3, 50
    xs = grid_inputs(rng, m, d, 20.0)
    result = run_nss(xs, variant=variant)
    assert np.abs(result.outputs[0] - numpy_direction(xs)).max() < 1e-6
    cost = declared_cost(check_layout(PRESETS["p127-default"], P127, m, d, variant))
    assert (cost.rounds, cost.opened) == (rounds, opened(d))
    rows = protocol_rows(result)
    assert max(r.round for r in rows) - min(r.round for r in rows) + 1 == rounds
    assert sum(r.elements for r in rows if r.sender == 1) == (m - 1) * (d + opened(d))


def test_reveal_norm_runs_at_p61_without_demo_parameters() -> None:
    params = NssParams(frac_bits=8, input_bits=20, out_bits=16)
    xs = [np.array([1.5, -2.0, 0.25]), np.array([0.5, 1.0, 0.0])]
    y = run_nss(xs, variant="reveal_norm", params=params, prime=P61).outputs[0]
    assert np.abs(y - numpy_direction(xs)).max() < 2.0**-15


def test_p61_is_refused_unless_the_demo_parameters_are_chosen() -> None:
    with pytest.raises(HeadroomError, match="p61-demo"):
        check_layout(PRESETS["p127-default"], P61, 3, 16)
    with pytest.raises(HeadroomError, match="p61-demo"):
        check_layout(NssParams(kappa=20), P61, 3, 16)
    layout = check_layout(PRESETS["p61-demo"], P61, 4, 16)
    assert layout.ell == 38
    xs = [np.array([1.5, -2.0, 0.25, 3.0]), np.array([0.5, 1.0, 0.0, -1.0]),
          np.array([0.0, 0.5, 0.5, 0.5])]
    y = run_nss(xs, params=PRESETS["p61-demo"], prime=P61).outputs[0]
    assert np.abs(y - numpy_direction(xs)).max() < 1.5 * 2.0**-10


def test_headroom_bounds_are_named_and_presets_accepted() -> None:
    for name in ("p127-default", "p127-fast"):
        check_layout(PRESETS[name], P127, 16, 1 << 12)
    check_layout(PRESETS["p127-wide-d"], P127, 16, 1 << 20)
    with pytest.raises(HeadroomError, match=r"ℓ \+ κ \+ 2"):
        check_layout(PRESETS["p127-default"], P127, 3, 1 << 20)
    with pytest.raises(HeadroomError, match=r"2F \+ κ \+ 6"):
        check_layout(NssParams(work_bits=41), P127, 3, 10)
    with pytest.raises(HeadroomError, match="demo"):
        check_layout(NssParams(kappa=30), P127, 3, 10)
    check_layout(NssParams(kappa=2, demo=True), P127, 3, 10)
    with pytest.raises(InputError, match="variant"):
        check_layout(PRESETS["p127-default"], P127, 3, 10, "plain")
    with pytest.raises(InputError, match="out_bits"):
        check_layout(NssParams(out_bits=40), P127, 3, 10)


def test_inputs_at_the_range_edge_pass_and_the_next_value_is_refused() -> None:
    params = PRESETS["p127-default"]
    top = ((1 << 31) - 1) / 2**16
    xs = [np.full(4, top), np.full(4, top), np.full(4, top)]  # maximum Q
    y = run_nss(xs).outputs[0]
    assert np.abs(y - 0.5).max() <= 2.0**-20
    with pytest.raises(FieldOverflowError, match="input_bits = 32"):
        encode_inputs(np.array([top + 2**-16]), params)
    with pytest.raises(EncodingError, match="nan"):
        encode_inputs(np.array([np.nan]), params)


def test_out_of_range_input_aborts_before_anything_is_sent() -> None:
    xs = [np.array([1.0, 2.0]), np.array([1e6, 0.0])]
    with pytest.raises(ProtocolAbort) as info:
        run_nss(xs)
    assert isinstance(info.value.__cause__, FieldOverflowError)


def test_same_seed_replays_ledger_views_and_outputs() -> None:
    rng = np.random.default_rng(9)
    xs = grid_inputs(rng, 3, 6, 1.0)
    a, b = run_nss(xs, seed=21), run_nss(xs, seed=21)
    assert a.ledger.to_csv() == b.ledger.to_csv()
    for party in a.views:
        msgs_a = [(m.sender, m.step, m.payload.tobytes()) for m in a.views[party].received]
        msgs_b = [(m.sender, m.step, m.payload.tobytes()) for m in b.views[party].received]
        assert msgs_a == msgs_b
    assert np.array_equal(a.outputs[0], b.outputs[0])
    c = run_nss(xs, seed=22)
    assert a.ledger.to_csv() == c.ledger.to_csv()  # sizes do not depend on the randomness
    assert any(not np.array_equal(x.payload, y.payload)
               for x, y in zip(a.views[0].received, c.views[0].received, strict=True))


@settings(max_examples=8, deadline=None)
@given(st.integers(2, 5), st.integers(1, 6), st.data())
def test_property_any_parties_dimension_and_inputs_in_range(m: int, d: int, data) -> None:
    """Any M ≥ 2, any d, any inputs on the grid within the declared range: the output is
    within one output ulp (plus the Newton and fixed-point terms) of S/‖S‖ (spec §4.1)."""
    limit = (1 << 31) - 1
    ints = data.draw(st.lists(st.lists(st.integers(-limit, limit), min_size=d, max_size=d),
                              min_size=m, max_size=m))
    xs = [np.array(row, dtype=np.float64) / 2**16 for row in ints]
    result = run_nss(xs, seed=data.draw(st.integers(0, 1 << 20)))
    total = np.sum(np.array(ints, dtype=object), axis=0)
    norm = math.sqrt(sum(int(v) * int(v) for v in total))
    ystar = np.array([float(v) / norm if norm else 0.0 for v in total])
    assert np.abs(result.outputs[0] - ystar).max() <= 2.0**-20 * (1 + 1e-4)


def test_every_received_message_lies_in_exactly_one_view() -> None:
    rng = np.random.default_rng(12)
    result = run_nss(grid_inputs(rng, 3, 5, 2.0))
    received = [(m.sender, party, m.protocol, m.call, m.step) for party, view in
                result.views.items() for m in view.received]
    assert len(received) == len(set(received)) == len(result.ledger)
    assert sorted(received) == sorted((r.sender, r.receiver, r.protocol, r.call, r.step)
                                      for r in result.ledger)
