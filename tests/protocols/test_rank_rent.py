"""The audits' GF(2^61 − 1) ranks load numba's kernels only once they pay (ski rental).

:func:`protocols.field.fast_field.fast_field` ranks with numpy while its estimated numpy work stays
within :data:`protocols.field.fast_field.RANK_RENT_SECONDS`, then with the compiled kernels.
The ranks
are checked against galois (``np.linalg.matrix_rank`` over ``galois.GF(p)``) and against ranks
known by construction, on both paths; which path runs is observed by counting the calls into
the kernels; and a one-shot CLI run of the quickstart, in a fresh process, must not import
numba at all while writing the outputs it writes with the kernels.
"""

from __future__ import annotations

import filecmp
import subprocess
import sys
from pathlib import Path

import galois
import numpy as np
import pytest

from protocols.field import MERSENNE61, prime_field
from protocols.field import fast_field as fast_field_module
from protocols.field import ranks as mersenne_ranks
from protocols.field.fast_field import RANK_RENT_SECONDS, fast_field, numpy_rank_seconds

ROOT = Path(__file__).resolve().parents[2]
F61 = prime_field(MERSENNE61)
GF61 = galois.GF(MERSENNE61)


def _low_rank(rng: np.random.Generator, shape: tuple[int, int, int], k: int) -> np.ndarray:
    """A stack of r×c matrices of rank k (with probability 1 − O(c/p)): a product, mod p."""
    s, r, c = shape
    a = GF61.Random((s, r, k), seed=rng)
    b = GF61.Random((s, k, c), seed=rng)
    return np.stack([np.asarray(a[i] @ b[i], dtype=np.uint64) for i in range(s)])


class _Kernels:
    """Counts the stacks handed to the compiled kernels, and ranks them there."""

    def __init__(self, real) -> None:
        self.real, self.stacks = real, 0

    def __call__(self, p: int, stack: np.ndarray) -> np.ndarray:
        self.stacks += 1
        return self.real(p, stack)


@pytest.fixture
def kernels(monkeypatch) -> _Kernels:
    counter = _Kernels(mersenne_ranks.ranks)
    monkeypatch.setattr(mersenne_ranks, "ranks", counter)
    monkeypatch.setattr(mersenne_ranks, "loaded", lambda: False)  # a fresh process
    return counter


def test_small_stacks_rank_with_numpy_exactly_and_large_work_moves_to_the_kernels(kernels):
    rng = np.random.default_rng(5)
    twin = fast_field(F61)
    small = _low_rank(rng, (2, 12, 9), 4)
    small[1, 3] = small[1, 0]  # a duplicated row: rank unchanged
    want = [int(np.linalg.matrix_rank(GF61(m.astype(np.int64)))) for m in small]
    assert want == [4, 4]
    assert numpy_rank_seconds(small.shape) < RANK_RENT_SECONDS
    assert twin.ranks(small).tolist() == want
    assert kernels.stacks == 0  # numpy: the kernels were not needed
    # rent until the estimated numpy work would pass the budget, then buy
    calls = 0
    while kernels.stacks == 0:
        assert twin.ranks(small).tolist() == want
        calls += 1
    assert calls == int(RANK_RENT_SECONDS // numpy_rank_seconds(small.shape))
    assert twin.ranks(small).tolist() == want and kernels.stacks == 2  # bought: stays compiled


def test_a_stack_too_large_to_rent_goes_to_the_kernels_at_once(kernels):
    rng = np.random.default_rng(6)
    big = _low_rank(rng, (100, 20, 20), 7)
    assert numpy_rank_seconds(big.shape) > RANK_RENT_SECONDS
    got = fast_field(F61).ranks(big)
    assert kernels.stacks == 1 and got.tolist() == [7] * 100
    assert F61.ranks(big[:3]).tolist() == [7] * 3  # the numpy path agrees


def test_each_twin_rents_on_its_own_and_kernels_once_loaded_are_used(monkeypatch, kernels):
    small = _low_rank(np.random.default_rng(7), (1, 5, 5), 5)
    first, second = fast_field(F61), fast_field(F61)
    assert first == second == F61  # twins are equal values; each keeps its own rent
    first.ranks(small)
    second.ranks(small)
    assert kernels.stacks == 0
    monkeypatch.setattr(mersenne_ranks, "loaded", lambda: True)
    assert fast_field(F61).ranks(small).tolist() == [5] and kernels.stacks == 1


def test_the_cost_model_orders_shapes_as_the_elimination_does():
    # more columns, rows or matrices never cost less; more than SMALL_INV pivots per column
    # switch to the vectorised inverse (a fixed cost per column)
    base = numpy_rank_seconds((1, 49, 40))
    assert numpy_rank_seconds((1, 99, 40)) > base and numpy_rank_seconds((1, 49, 80)) > base
    assert numpy_rank_seconds((49, 10, 10)) > numpy_rank_seconds((48, 10, 10))
    assert fast_field_module.numpy_rank_seconds is numpy_rank_seconds


def test_the_quickstart_one_shot_run_does_not_load_numba(tmp_path):
    """Its audit ranks three small matrices: numpy, no numba; outputs as the kernels give."""
    probe = ("import runpy, sys\n"
             "sys.argv = ['mpcsim', 'run', 'scenarios/quickstart.toml', '--quiet', '--out',"
             " sys.argv[1]]\n"
             "try:\n    runpy.run_module('sim.cli', run_name='__main__')\n"
             "except SystemExit as stop:\n    assert not stop.code, stop.code\n"
             "print('numba' in sys.modules)\n")
    plain = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "plain")], cwd=ROOT,
                           capture_output=True, text=True, check=True)
    assert plain.stdout.split()[-1] == "False"
    # the same run with the kernels loaded first writes the same outputs and ledger
    loaded = subprocess.run([sys.executable, "-c",
                             "from protocols.field import ranks as mersenne_ranks\n"
                             "mersenne_ranks._kernels()\n" + probe,
                             str(tmp_path / "loaded")],
                            cwd=ROOT, capture_output=True, text=True, check=True)
    assert loaded.stdout.split()[-1] == "True"
    for name in ("outputs.npz", "ledger.csv"):
        assert filecmp.cmp(tmp_path / "plain" / name, tmp_path / "loaded" / name, shallow=False)
