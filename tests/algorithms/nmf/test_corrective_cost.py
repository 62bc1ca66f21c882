"""Tests of algorithms.nmf.corrective_cost: the modelled cost of an iteration of seed 002's
Algorithm 1 and the common time budget.

The expected counts are written out from the products one iteration performs (the module
docstring lists them), with the entries the mask can make non-zero.
"""

from __future__ import annotations

import itertools

import pytest

from algorithms.nmf.corrective import CorrectiveSettings
from algorithms.nmf.corrective_cost import iteration_flops, iterations_for_budget
from protocols.errors import InputError


def test_products_run_on_the_entries_the_mask_allows() -> None:
    n, m, k, obs = 30, 20, 4, 120
    per_entry = 12 * k + 2  # six products of 2k per entry, Z∘(WH) twice
    rows_cols = 3 * k * (n + m)  # the two elementwise updates
    assert iteration_flops(CorrectiveSettings(mode="standard", missing="ignore"),
                           n, m, k, obs) == per_entry * obs + rows_cols
    assert iteration_flops(CorrectiveSettings(mode="standard", missing="replace"),
                           n, m, k, obs) == per_entry * n * m + rows_cols
    # steps 2-3: three operations per entry that step 2 looks at
    assert iteration_flops(CorrectiveSettings(mode="ignore"), n, m, k, obs) == (
        per_entry * obs + rows_cols + 3 * obs)
    assert iteration_flops(CorrectiveSettings(mode="replace", missing="replace"),
                           n, m, k, obs) == per_entry * n * m + rows_cols + 3 * obs
    assert iteration_flops(CorrectiveSettings(mode="replace", missing="replace", fill="once"),
                           n, m, k, obs) == per_entry * n * m + rows_cols + 3 * n * m


@pytest.mark.parametrize("iterations", [1, 7, 50])
def test_a_common_budget_is_honoured_within_one_iteration(iterations: int) -> None:
    costs = {"a": 1_000, "b": 333, "c": 77, "d": 1_000}
    its = iterations_for_budget(costs, iterations)
    assert its["a"] == its["d"] == iterations
    budget = iterations * 1_000
    for label, cost in costs.items():
        assert budget - cost < its[label] * cost <= budget
    for a, b in itertools.combinations(costs, 2):
        assert abs(its[a] * costs[a] - its[b] * costs[b]) <= max(costs[a], costs[b])


def test_bad_cost_inputs_are_refused() -> None:
    with pytest.raises(InputError, match="iterations = 0"):
        iterations_for_budget({"a": 1}, 0)
    with pytest.raises(InputError, match="cost > 0"):
        iterations_for_budget({"a": 0}, 3)
    with pytest.raises(InputError, match="n_observed = 601"):
        iteration_flops(CorrectiveSettings(), 30, 20, 4, 601)
    with pytest.raises(InputError, match="k = 0"):
        iteration_flops(CorrectiveSettings(), 30, 20, 0, 10)
