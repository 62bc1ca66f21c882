"""The reviewer's audit matrix (``benchmarks/audit_matrix.py``): its leaks are real.

The matrix's verdicts change as the audits are fixed, so they are not asserted here. What is
asserted is the grounding: for every planted leak, an attack that reads only the coalition's
observation (its views, or the abort notice a peer receives) names a function of an honest
input correctly on two input sets with the same sum — in GF(2^61 − 1) and in GF(5), the two
fields the matrix audits in — while the same attack fails against the honest SecureSum, so it
is the bug, not the attack, that carries the information. The input pairs are checked against
the functionality with numpy (same column sums mod p). And a quick cell of the matrix runs
through the public API and prints a well-formed JSON line.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from parties.audit import VERDICTS
from protocols.field import prime_field

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "audit_matrix.py"
_SPEC = importlib.util.spec_from_file_location("audit_matrix", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
matrix = importlib.util.module_from_spec(_SPEC)
sys.modules["audit_matrix"] = matrix
_SPEC.loader.exec_module(matrix)

LEAKS = [c for c in matrix.CASES if c.expected == matrix.LEAK]
CLASSES = ("1 metadata", "2 abort", "3 output beyond functionality", "4 determined call",
           "5 randomness to wrong party")
FIELDS = [(2**61 - 1, 2), (5, 1)]


def test_at_least_two_leaks_per_class_and_controls() -> None:
    for cls in CLASSES:
        assert sum(c.cls == cls for c in LEAKS) >= 2, cls
    honest = {c.cls for c in matrix.CASES if c.expected == matrix.PRIVATE}
    assert {"0 honest control", "FA1 same broadcast", "FA2 AES seed expansion"} <= honest
    assert all(c.attack is not None and c.secret is not None for c in LEAKS)


@pytest.mark.parametrize(("p", "d"), FIELDS)
@pytest.mark.parametrize("case", LEAKS, ids=lambda c: c.name)
def test_input_pairs_share_the_sum_and_differ_in_the_secret(case, p: int, d: int) -> None:
    fld = prime_field(p)
    a, b = matrix.input_pair(case, fld, d)
    col_a = np.sum([np.asarray(x[:d], dtype=object) for x in a], axis=0) % p
    col_b = np.sum([np.asarray(x[:d], dtype=object) for x in b], axis=0) % p
    assert list(col_a) == list(col_b)
    assert case.secret(a, fld) != case.secret(b, fld)


@pytest.mark.parametrize(("p", "d"), FIELDS)
@pytest.mark.parametrize("case", LEAKS, ids=lambda c: c.name)
def test_attack_recovers_the_honest_secret(case, p: int, d: int) -> None:
    assert matrix.ground(case, prime_field(p), d) is True


@pytest.mark.parametrize("case", LEAKS, ids=lambda c: c.name)
def test_attack_fails_against_the_honest_protocol(case) -> None:
    """The same attack, inputs and coalition against honest SecureSum (prg) learns nothing."""
    honest = replace(case, program=matrix.secure_sum_program("prg"))
    assert matrix.ground(honest, prime_field(2**61 - 1), 2) is False


def test_quick_cell_prints_a_row(capsys: pytest.CaptureFixture[str]) -> None:
    matrix.main(["--quick", "--program", "notify_if_odd", "--program", "secure_sum/prg",
                 "--method", "linear"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    rows = [r for r in lines if r["bench"] == "audit_matrix"]
    assert [r["program"] for r in rows] == ["secure_sum/prg", "notify_if_odd"]
    for row in rows:
        assert set(row) >= {"program", "class", "method", "coalition", "verdict", "expected",
                            "seconds", "attack_recovers", "details"}
        assert row["verdict"] in VERDICTS or row["verdict"].startswith("error: ")
    assert rows[1]["attack_recovers"] is True and rows[0]["attack_recovers"] is None
    assert lines[-1]["bench"] == "audit_matrix_summary" and lines[-1]["cells"] == 2
