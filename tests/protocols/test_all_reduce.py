"""All-Reduce over SecureSum and in the clear (seed 004's MPI All-Reduce).

Expected sums come from Python's ``fractions`` / numpy on the pooled inputs; message counts from
the closed forms (N − 1 messages and (N − 1)d elements per party for ``plain`` and ``prg``,
twice that for ``explicit``).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parties.party import site_parties
from protocols.all_reduce import METHODS, all_reduce, all_reduce_cost
from protocols.errors import InputError, ProtocolAbort
from sim.network import Network
from sim.simulation import Simulation


def run(inputs: list[np.ndarray], method: str, variant: str = "prg", average: bool = False,
        seed: int = 3):
    sim = Simulation(Network.build(len(inputs)), seed=seed, keys="preshared", sealing=False)
    return sim.run(site_parties(
        lambda ctx, x: all_reduce(ctx, x, method=method, variant=variant, average=average,
                                  output="total"),
        [{"x": x} for x in inputs],
    ))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 5), shape=st.sampled_from([(1,), (3,), (2, 3)]),
       method=st.sampled_from(METHODS), average=st.booleans(), data=st.data())
def test_every_party_gets_the_same_sum_or_average(n, shape, method, average, data) -> None:
    floats = st.floats(-1e3, 1e3, allow_nan=False, width=32)
    inputs = [np.array(data.draw(st.lists(floats, min_size=int(np.prod(shape)),
                                          max_size=int(np.prod(shape)))),
                       dtype=np.float64).reshape(shape) for _ in range(n)]
    result = run(inputs, method, average=average)
    expected = np.sum(inputs, axis=0) / (n if average else 1)
    tol = n * 2.0 ** -25 + 1e-9 * np.abs(expected).max(initial=0)  # fixed point, f = 24
    for m in range(n):
        out = result.outputs[m]
        assert out.shape == shape
        np.testing.assert_allclose(out, expected, atol=tol, rtol=0)
        np.testing.assert_array_equal(out, result.outputs[0])  # bitwise the same everywhere
        # the reduced value is the call's declared output
        labels = [(label, value) for _, label, value in result.views[m].outputs
                  if label == "total"]
        assert len(labels) == 1
        np.testing.assert_array_equal(labels[0][1], out)


@pytest.mark.parametrize("method,variant", [("plain", "prg"), ("secure_sum", "prg"),
                                            ("secure_sum", "explicit")])
@pytest.mark.parametrize("n", [2, 3, 5])
def test_ledger_matches_the_declared_cost(method: str, variant: str, n: int) -> None:
    d = 6
    inputs = [np.full(d, float(m)) for m in range(n)]
    result = run(inputs, method, variant)
    cost = all_reduce_cost(method, variant, n, d)
    factor = 2 if variant == "explicit" and method == "secure_sum" else 1
    assert (cost.messages_sent, cost.elements_sent) == (factor * (n - 1), factor * (n - 1) * d)
    sent = Counter(r.sender for r in result.ledger)
    elements = Counter()
    for r in result.ledger:
        elements[r.sender] += r.elements
    assert all(sent[m] == cost.messages_sent for m in range(n))
    assert all(elements[m] == cost.elements_sent for m in range(n))
    assert result.ledger.rounds() == cost.rounds


def test_plain_all_reduce_shows_every_input_and_secure_sum_shows_none() -> None:
    inputs = [np.array([1.5, -2.0, 3.25]), np.array([0.5, 4.0, -1.0]),
              np.array([2.0, 2.0, 2.0])]
    plain = run(inputs, "plain")
    for m in range(3):
        seen = {msg.sender: np.asarray(msg.payload) for msg in plain.views[m].received}
        for peer, x in enumerate(inputs):
            if peer != m:
                np.testing.assert_array_equal(seen[peer], x)
    secure = run(inputs, "secure_sum")
    for m in range(3):
        for msg in secure.views[m].received:
            assert msg.payload.dtype == np.uint64  # field elements, not the floats
            decoded = np.asarray(msg.payload, dtype=np.float64) / 2**24
            for x in inputs:
                assert not np.allclose(decoded, x)


def test_mismatched_shapes_abort_naming_the_party() -> None:
    with pytest.raises(ProtocolAbort, match="party 1 sent 2 numbers"):
        run([np.zeros(3), np.zeros(2)], "plain")


def test_unknown_method_is_refused() -> None:
    with pytest.raises(InputError, match="all-reduce method 'mpi' is unknown"):
        all_reduce_cost("mpi", "prg", 3, 4)
