"""Aborts and masked constants under the key flow (:class:`parties.audit.keyflow.KnownKeysRunner`).

* An abort that depends on an honest input in a *later* call (the audit matrix's
  ``abort_on_zero_later``: a division by x[0] after a SecureSum of a public constant) is a
  ``leak`` of the simulation method located at that call: the key flow's runner hands the
  abort back, and a re-split that keeps the sum but crashes a party is a pattern leak.
* A SecureSum in which an honest input is zero (a sparse sketched factor in DSANLS) is
  ``private``: its masked message equals its net mask, which is no key flow.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

from protocols.field import prime_field
from protocols.secure_sum import secure_sum_field
from sim.network import Network
from sim.privacy import audit
from sim.simulation import Simulation

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "audit_matrix.py"
_SPEC = importlib.util.spec_from_file_location("audit_matrix", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
matrix = importlib.util.module_from_spec(_SPEC)
sys.modules.setdefault("audit_matrix", matrix)
_SPEC.loader.exec_module(matrix)

P = 2**61 - 1
F = prime_field(P)
CASE = next(c for c in matrix.CASES if c.name == "abort_on_zero_later")


def test_an_abort_in_a_later_call_is_a_leak_located_at_that_call() -> None:
    a, b = matrix.input_pair(CASE, F, 2)
    assert int(a[1][0]) + int(a[2][0]) == int(b[1][0]) + int(b[2][0])  # the same sum
    result = audit(CASE.program, a, CASE.coalition, prime=P, method="simulation", trials=24,
                   seed=matrix.SEED)
    assert result.verdict == "leak", result.details
    assert result.call == 2 and "aborted in call secure_sum#2" in str(result.message)
    # the attack: party 0 learns from the abort notice which honest input is zero
    sim = Simulation(Network.build(3), seed=1, sealing=False)
    try:
        sim.run(matrix.site_parties(CASE.program, [{"x": x} for x in b]))
        aborted = False
    except Exception:  # the run on b aborts, the one on a does not
        aborted = True
    assert aborted and int(b[1][0]) == 0


def test_a_zero_honest_input_is_no_key_flow() -> None:
    inputs = [F.elements([3, 5]), F.zeros(2), F.elements([13, 17])]
    assert not np.any(np.asarray(inputs[1], dtype=np.int64))
    result = audit(lambda ctx, x: secure_sum_field(ctx, x, "prg"), inputs, (0,), prime=P,
                   method="simulation", trials=200, seed=3)
    assert result.verdict == "private", result.details
    assert not result.details.get("key_flow")
    assert result.power
