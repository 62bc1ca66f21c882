"""Tests of :mod:`sim.pd_svd_cost`: the thesis's study-time arithmetic (claim C8, digest §1.6)
against the digest's own numbers, and the extrapolation's closed forms."""

from __future__ import annotations

import math

import pytest

from protocols.errors import InputError
from sim.pd_svd_cost import (
    TABLE_2_2,
    Line,
    call_elements,
    extrapolate,
    fit_line,
    measure_call_seconds,
    thesis_seconds,
)


def test_thesis_arithmetic_gives_1_2_hours_and_4_days():
    # digest §1.6: 300 × 7 × 2.1 s = 4410 s = 1.225 h; 300 × 7 × 168.1 s = 353,010 s ≈ 4.09 days
    assert thesis_seconds(100) == pytest.approx(4410.0)
    assert thesis_seconds(100) / 3600 == pytest.approx(1.225)
    assert thesis_seconds(10000) == pytest.approx(353010.0)
    assert round(thesis_seconds(10000) / 86400, 2) == 4.09
    # Table 2.2's shape: about ×10 per ×10 in d, increasing in M
    for m in (2, 3, 4, 5):
        assert 7 < TABLE_2_2[(m, 1000)] / TABLE_2_2[(m, 100)] < 12
        assert 9 < TABLE_2_2[(m, 10000)] / TABLE_2_2[(m, 1000)] < 11
    with pytest.raises(InputError, match=r"Table 2\.2"):
        thesis_seconds(500)


def test_fit_line_and_extrapolation_closed_forms():
    line = fit_line([10, 20, 40], [3 + 2 * 10, 3 + 2 * 20, 3 + 2 * 40])
    assert line.intercept == pytest.approx(3.0) and line.slope == pytest.approx(2.0)
    with pytest.raises(InputError, match="distinct"):
        fit_line([5, 5], [1, 2])
    flat = extrapolate(Line(1.0, 0.0), 100)  # one second per call, whatever its size
    assert flat.per_column_s == pytest.approx(300 * 7) and flat.batched_s == pytest.approx(300)
    assert flat.thesis_s == pytest.approx(4410.0)
    per_element = extrapolate(Line(0.0, 1.0), 100)  # cost ∝ elements: batching saves nothing
    assert per_element.batched_s == pytest.approx(per_element.per_column_s)


def test_batched_call_sends_k_times_the_elements_of_one():
    for d in (10, 100):
        assert call_elements(3, d, batch=7) == 7 * call_elements(3, d)
    assert call_elements(3, 1000) > call_elements(3, 100) > call_elements(2, 100)


def test_simulated_call_time_is_at_least_its_rounds_of_latency():
    cpu_s, simulated_s = measure_call_seconds(3, 20, calls=2)
    assert cpu_s > 0
    # online rounds 10 + 2L + 2t (spec §2.6 with O1 and O2), L = ⌈log₂ ℓ⌉: at M = 3, d = 20,
    # p127-default (k_in = 32, t = 3) k = 34 and ℓ = 2(k − 1) + ⌈log₂ d⌉ = 71 → 72, so L = 7
    k = 32 + math.ceil(math.log2(3))
    ell = 2 * (k - 1) + math.ceil(math.log2(20))
    ell += ell % 2
    rounds = 10 + 2 * math.ceil(math.log2(ell)) + 2 * 3
    assert rounds == 30
    assert simulated_s >= rounds * 0.010  # each round waits at least one 10 ms link latency
